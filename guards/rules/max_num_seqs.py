"""K002 max-num-seqs: no more concurrent sequences than the KV pool holds.

Why: vLLM sizes the KV pool from free memory, not from the requested context. When
``--max-num-seqs`` exceeds the sequences the pool holds (pool tokens // tokens per sequence:
max-model-len, or the ``tokens-per-sequence`` an estate states as its policy), long requests do
not fail: vLLM preempts and recomputes, and users see ~10 tok/s decode (watch
``vllm:num_preemptions``). The pool comes from a measured figure in the comments (``KV pool
212,977 tok``, ``GPU KV cache size: N tokens``, ``1,795,289-token pool``, ``1.03×
concurrency``), header first. A figure counts only when what its sentence says it was measured
on agrees with the compose: one measured on other GPUs (``TP=2``, ``2 cards``, ``2×3090``), at
another context (``at 128K``), or for another compose (its sentence names ``dual/ultrafast`` or
a ``sibling``) is not this compose's pool. One measured at another utilisation or KV dtype than
the service runs (``@0.90`` against an operator's 0.95) is rescaled: the utilisation adds its
share of the GPU's memory per card (weights and reserved memory stay put) at the KV bytes per
token per card, and a KV dtype scales the pool by the ratio of bytes per token; without those
figures it is not used. Else the pool is computed from registry facts (KV bytes per token per
dtype, KV heads, weights, reserved memory) and the GPU's memory: the GPU model the header's
Topology names (3090: 24 GiB, 5090: 32 GiB, ...), else the registry, else ``gpu-memory-gib``.
When nothing is known ``--verbose`` says so and nothing is guessed. For llama.cpp, ``-np``
splits ``-c`` into slots: more slots than ``-c`` // the header's promised context means no
request gets the context the header promises.

Bad:
    # Profile (at-a-glance):
    #   Max ctx:   204800 (~200K) — MEASURED (KV pool 212,977 tok)
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "204800", --max-num-seqs, "3"]

Finds:
    composes/example.yml:6:58: K002 max-num-seqs 3 > 1: the KV pool of 212,977 tokens (KV pool 212,977 tok, line 2) holds 1 sequence of 204,800 tokens (the full context); max-num-seqs 3 invites preemption and recompute — watch vllm:num_preemptions

Good:
    # Profile (at-a-glance):
    #   Max ctx:   204800 (~200K) — MEASURED (KV pool 212,977 tok)
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "204800", --max-num-seqs, "1"]
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from ..facts.figures import Sizes, applicable_pool, compose_figures, compose_names, setting
from ..facts.kv import Pool, bytes_per_token, computed_pool, gib, gpu_memory, per_card
from ..facts.scope import fact
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import LLAMACPP, VLLM
from ..sources.compose.engines.vllm import kv_dtype
from ..sources.compose.header import first_count, same_count
from .base import Context, Rule, provenance
from .options import RuleOptions


class Options(RuleOptions):
    """Memory figures for the computed pool, used where no active registry claim sets them,
    and the length of a sequence the estate plans for."""

    gpu_memory_gib: float | None = Field(None, gt=0, description="Memory of one GPU, GiB.")
    weights_gib: float | None = Field(None, gt=0, description="Model weights, GiB (all cards).")
    reserved_gib: float | None = Field(
        None, ge=0, description="Memory per card outside vLLM's pool (CUDA context, activations)."
    )
    kv_heads: int | None = Field(
        None, ge=1, description="KV heads: per-card KV divides by min(TP, KV heads)."
    )
    kv_bytes_per_token: dict[str, int] = Field(
        default_factory=dict, description="Whole-model KV bytes per token, by dtype."
    )
    tokens_per_sequence: float | None = Field(
        None,
        gt=0,
        description="Tokens to plan per sequence: a count (32768), or a fraction of "
        "max-model-len when at most 1 (0.25). Default: the full context.",
    )

    @field_validator("tokens_per_sequence")
    @classmethod
    def _whole(cls, value: float | None) -> float | None:
        if value is not None and value > 1 and value != int(value):
            raise ValueError("a count of tokens is a whole number (or a fraction up to 1)")
        return value


def check(compose: Compose, context: Context) -> list[Finding] | None:
    checked, findings = False, []
    for service in compose.services:
        seqs, length = whole_number(service, "max_num_seqs"), whole_number(service, "max_model_len")
        if seqs is None or length is None:
            continue
        if service.engine == VLLM:
            result = _vllm(compose, service, context, seqs, length)
        elif service.engine == LLAMACPP:
            result = _llamacpp(compose, service, seqs, length)
        else:
            continue
        if result is not None:
            checked = True
            findings += result
    return findings if checked else None


def kv_pool(compose: Compose, service: Service, context: Context) -> Pool | None:
    """The pool K002 sets against a vLLM service: measured in its comments, else computed
    from the registry's facts (also read by ``guards evidence read --compose``)."""
    return _measured(compose, service, context)[0] or _computed(compose, service, context)


def whole_number(service: Service, name: str) -> int | None:
    """A knob's value as a whole number of at least 1 (max-num-seqs, max-model-len)."""
    knob = service.knob(name)
    number = knob.number if knob else None
    return int(number) if number is not None and number >= 1 else None


def _vllm(
    compose: Compose, service: Service, context: Context, seqs: int, length: int
) -> list[Finding] | None:
    pool, quoted = _measured(compose, service, context)
    pool = pool or _computed(compose, service, context)
    if pool is None:
        that = " that applies" if quoted else ""
        context.remark(
            RULE,
            compose.path,
            f"service {service.name}: no measured KV pool{that} in its "
            "comments and no registry facts to compute one; max-num-seqs not checked",
        )
        return None
    where = f"line {pool.line}" if pool.line else "computed"
    note = f", {pool.note}" if pool.note else ""
    pool_text = f"the KV pool of {pool.tokens:,} tokens ({pool.text}, {where}{note})"
    if pool.tokens < length:
        return [_does_not_fit(compose, service, context, pool, pool_text, length)]
    per_sequence, label = sequence_tokens(context, length)
    holds = pool.tokens // per_sequence
    if seqs <= holds:
        return []
    knob = service.knob("max_num_seqs")
    assert knob is not None
    cost = _kv_cost(compose, service, context, per_sequence)
    plural = "s" if holds != 1 else ""
    message = (
        f"max-num-seqs {seqs}{provenance(knob)} > {holds}: {cost}{pool_text} holds {holds} "
        f"sequence{plural} of {per_sequence:,} tokens ({label}); max-num-seqs {seqs} "
        "invites preemption and recompute — watch vllm:num_preemptions"
    )
    grow = (
        f"lower max-model-len to {pool.tokens // seqs:,} so {seqs} full-length sequences fit"
        if per_sequence == length
        else f"give the KV pool {seqs * per_sequence:,} tokens so {seqs} sequences of "
        f"{per_sequence:,} fit"
    )
    return [
        RULE.at(
            compose.path,
            knob.line,
            knob.column,
            message,
            knob="max_num_seqs",
            hint=f"ship max-num-seqs {holds}, or {grow}",
        )
    ]


def _does_not_fit(
    compose: Compose, service: Service, context: Context, pool: Pool, pool_text: str, length: int
) -> Finding:
    length_knob = service.knob("max_model_len")
    assert length_knob is not None
    return RULE.at(
        compose.path,
        length_knob.line,
        length_knob.column,
        f"max-model-len {length:,}{provenance(length_knob)} does not fit: "
        f"{_kv_cost(compose, service, context, length)}{pool_text} is smaller than one "
        "full-length sequence; vLLM refuses to start",
        knob="max_model_len",
        hint=f"lower max-model-len to {pool.tokens:,} or less, or free memory",
    )


def sequence_tokens(context: Context, length: int) -> tuple[int, str]:
    """Tokens per sequence and where that number comes from."""
    planned = context.options(RULE).tokens_per_sequence
    if planned is None or planned == 1:
        return length, "the full context"
    if planned < 1:
        return max(1, int(planned * length)), f"tokens-per-sequence {planned:g} × the context"
    if planned >= length:
        return length, "the full context"
    return int(planned), "tokens-per-sequence"


def _kv_cost(compose: Compose, service: Service, context: Context, tokens: int) -> str:
    """``bf16 KV 65,536 B/token × 204,800 = 12.5 GiB (6.25 GiB/card at TP=2); `` or ''."""
    table = _figure(compose, service, context, "kv_bytes_per_token")
    dtype = kv_dtype(service.value("kv_cache_dtype") or "auto", service.value("dtype"))
    size = bytes_per_token(table, dtype) if table else None
    if size is None:
        return ""
    total = size * tokens
    tp = whole_number(service, "tensor_parallel_size") or 1
    heads = _figure(compose, service, context, "kv_heads")
    card = per_card(total, tp, heads)
    split = f" ({gib(card)}/card at TP={tp})" if tp > 1 else ""
    return f"{dtype} KV {size:,} B/token × {tokens:,} = {gib(total)}{split}; "


def _figure(compose: Compose, service: Service, context: Context, name: str) -> Any:
    """A registry fact for the service, else the rule's option of that name."""
    found = fact(context.estate.registry, compose, service, name)
    return found.value if found else getattr(context.options(RULE), name)


def _gpu_memory(compose: Compose, service: Service, context: Context) -> tuple[float, str] | None:
    """The memory of one GPU and how it reads in a message: the GPU model the header's
    Topology names, else a registry fact, else the option."""
    field = compose.header.field("Topology")
    named = gpu_memory(field.value) if field else None
    if named and field:
        return named[0], f"{named[0]:g} GiB ({named[1]}, line {field.line})"
    memory = _figure(compose, service, context, "gpu_memory_gib")
    return (memory, f"{memory:g} GiB") if memory else None


def _measured(compose: Compose, service: Service, context: Context) -> tuple[Pool | None, bool]:
    """The measured pool that applies to the service as it runs, and whether the comments
    quote any figure; a remark says why each figure was left out when none applies."""
    shipped = next((s for s in compose.shipped if s.name == service.name), service)
    sizes = Sizes(
        _figure(compose, service, context, "kv_bytes_per_token") or {},
        _figure(compose, service, context, "kv_heads"),
        _gpu_memory(compose, service, context),
    )
    names = context.estate.compose_names
    found = compose_figures(compose.comments, names, compose_names(compose.path))
    pool, reasons = applicable_pool(found, setting(shipped), setting(service), sizes)
    if pool is None:
        for reason in reasons:
            context.remark(RULE, compose.path, f"service {service.name}: {reason}; not used")
    return pool, bool(found)


def _computed(compose: Compose, service: Service, context: Context) -> Pool | None:
    table, weights = (
        _figure(compose, service, context, "kv_bytes_per_token"),
        _figure(compose, service, context, "weights_gib"),
    )
    reserved = _figure(compose, service, context, "reserved_gib") or 0.0
    util = service.knob("gpu_memory_utilization")
    dtype = kv_dtype(service.value("kv_cache_dtype") or "auto", service.value("dtype"))
    size = bytes_per_token(table, dtype) if table else None
    memory = _gpu_memory(compose, service, context)
    if not (size and memory and weights and util and util.number):
        return None
    tp = whole_number(service, "tensor_parallel_size") or 1
    card = per_card(size, tp, _figure(compose, service, context, "kv_heads"))
    tokens = computed_pool(memory[0], util.number, weights, reserved, tp, card)
    text = (
        f"computed: {memory[1]} × {util.number:g} − {weights:g} GiB weights / TP {tp} − "
        f"{reserved:g} GiB reserved, at {card:,.0f} B/token/card"
    )
    return Pool(tokens, "computed", None, text)


def _llamacpp(
    compose: Compose, service: Service, slots: int, context_size: int
) -> list[Finding] | None:
    field = compose.header.field("Default ctx", "Max ctx")
    promised = first_count(field.first_value) if field else None
    if promised is None:
        return None
    per_request = promised[0] if not same_count(promised, context_size) else context_size
    holds = context_size // per_request if per_request else 0
    if slots <= max(holds, 1):
        return []
    knob = service.knob("max_num_seqs")
    assert knob is not None and field is not None
    return [
        RULE.at(
            compose.path,
            knob.line,
            knob.column,
            f"-np {slots}{provenance(knob)} splits -c {context_size:,} into {slots} slots "
            f"of {context_size // slots:,} tokens, but the header's {field.key} (line "
            f"{field.line}) promises {per_request:,} per request",
            knob="max_num_seqs",
            hint=f"ship -np {max(holds, 1)}, or raise -c to {per_request * slots:,}",
        )
    ]


RULE = Rule(
    "K002",
    "max-num-seqs",
    "knobs",
    ("compose",),
    Severity.ERROR,
    "max-num-seqs (-np) stays within the full-length sequences the KV pool holds.",
    check,
    __doc__,
    Options,
)
