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
When nothing is known nothing is guessed: the check is not judged (counted as such in the
summary) and ``--verbose`` says why. For llama.cpp, ``-np`` splits ``-c`` into slots: more
slots than ``-c`` // the header's promised context means no request gets the context the
header promises.

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

from ..facts.capacity import Planning, capacity, kv_size, whole_number
from ..facts.kv import Pool, gib
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import LLAMACPP, VLLM
from ..sources.compose.header import first_count, same_count
from .base import Context, Rule, provenance, unreadable
from .options import RuleOptions, option, validator


class Options(RuleOptions):
    """Memory figures for the computed pool, used where no active registry claim sets them,
    and the length of a sequence the estate plans for."""

    gpu_memory_gib: float | None = option(None, gt=0, description="Memory of one GPU, GiB.")
    weights_gib: float | None = option(None, gt=0, description="Model weights, GiB (all cards).")
    reserved_gib: float | None = option(
        None, ge=0, description="Memory per card outside vLLM's pool (CUDA context, activations)."
    )
    kv_heads: int | None = option(
        None, ge=1, description="KV heads: per-card KV divides by min(TP, KV heads)."
    )
    kv_bytes_per_token: dict[str, int] = option(
        factory=dict, description="Whole-model KV bytes per token, by dtype."
    )
    tokens_per_sequence: float | None = option(
        None,
        gt=0,
        description="Tokens to plan per sequence: a count (32768), or a fraction of "
        "max-model-len when at most 1 (0.25). Default: the full context.",
    )

    @validator("tokens_per_sequence")
    def _whole(cls, value: float | None) -> float | None:
        if value is not None and value > 1 and value != int(value):
            raise ValueError("a count of tokens is a whole number (or a fraction up to 1)")
        return value


def check(compose: Compose, context: Context) -> list[Finding] | None:
    checked, findings = False, []
    for service in compose.services:
        if service.engine == VLLM:
            result = _vllm(compose, service, context)
        elif service.engine == LLAMACPP:
            result = _llamacpp(compose, service)
        else:
            continue
        if result is not None:
            checked = True
            findings += result
    return findings if checked else None


def _planning(context: Context) -> Planning:
    """This rule's options as the plain values the capacity arithmetic takes."""
    return Planning.of(context.options(RULE))


def _vllm(compose: Compose, service: Service, context: Context) -> list[Finding] | None:
    estate = context.estate
    found = capacity(compose, service, estate.registry, estate.compose_names, _planning(context))
    if found is None:
        unresolved = _unresolved(service)
        if unresolved:
            context.not_judged(RULE, compose.path, f"service {service.name}: {unresolved}")
        return None
    for reason in found.search.left_out:
        context.remark(RULE, compose.path, f"service {service.name}: {reason}; not used")
    pool = found.pool
    if pool is None:
        that = " that applies" if found.search.quoted else ""
        context.not_judged(
            RULE,
            compose.path,
            f"service {service.name}: no measured KV pool{that} in its "
            "comments and no registry facts to compute one; max-num-seqs not checked",
        )
        return None
    where = f"line {pool.line}" if pool.line else "computed"
    note = f", {pool.note}" if pool.note else ""
    pool_text = f"the KV pool of {pool.tokens:,} tokens ({pool.text}, {where}{note})"
    if pool.tokens < found.length:
        return [_does_not_fit(compose, service, context, pool, pool_text, found.length)]
    seqs, per_sequence, holds = found.seqs, found.per_sequence, found.holds
    if seqs <= holds:
        return []
    knob = service.knob("max_num_seqs")
    assert knob is not None
    cost = _kv_cost(compose, service, context, per_sequence)
    plural = "s" if holds != 1 else ""
    message = (
        f"max-num-seqs {seqs}{provenance(knob)} > {holds}: {cost}{pool_text} holds {holds} "
        f"sequence{plural} of {per_sequence:,} tokens ({found.label}); max-num-seqs {seqs} "
        "invites preemption and recompute — watch vllm:num_preemptions"
    )
    grow = (
        f"lower max-model-len to {pool.tokens // seqs:,} so {seqs} full-length sequences fit"
        if per_sequence == found.length
        else f"give the KV pool {seqs * per_sequence:,} tokens so {seqs} sequences of "
        f"{per_sequence:,} fit"
    )
    return [
        RULE.at(
            compose.file(knob.path),
            knob.line,
            knob.column,
            message,
            knob="max_num_seqs",
            hint=f"ship max-num-seqs {holds}, or {grow}",
            end_column=knob.end_column,
        )
    ]


def _unresolved(service: Service) -> str | None:
    """Why the check cannot be made when the service sets both knobs but guards cannot read
    a count from one (a variable nothing sets); None when one is not set."""
    knobs = [service.knob("max_num_seqs"), service.knob("max_model_len")]
    if any(knob is None for knob in knobs):
        return None
    for knob in knobs:
        if knob is not None and whole_number(service, knob.name) is None:
            return f"{knob.name.replace('_', '-')} {unreadable(knob)}; not checked"
    return None


def _does_not_fit(
    compose: Compose, service: Service, context: Context, pool: Pool, pool_text: str, length: int
) -> Finding:
    length_knob = service.knob("max_model_len")
    assert length_knob is not None
    return RULE.at(
        compose.file(length_knob.path),
        length_knob.line,
        length_knob.column,
        f"max-model-len {length:,}{provenance(length_knob)} does not fit: "
        f"{_kv_cost(compose, service, context, length)}{pool_text} is smaller than one "
        "full-length sequence; vLLM refuses to start",
        knob="max_model_len",
        hint=f"lower max-model-len to {pool.tokens:,} or less, or free memory",
        end_column=length_knob.end_column,
    )


def _kv_cost(compose: Compose, service: Service, context: Context, tokens: int) -> str:
    """``bf16 KV 65,536 B/token × 204,800 = 12.5 GiB (6.25 GiB/card at TP=2); `` or ''."""
    size = kv_size(compose, service, context.estate.registry, _planning(context))
    if size is None:
        return ""
    total = gib(size.per_token * tokens)
    split = f" ({gib(size.card(tokens))}/card at TP={size.tp})" if size.tp > 1 else ""
    return f"{size.dtype} KV {size.per_token:,} B/token × {tokens:,} = {total}{split}; "


def _llamacpp(compose: Compose, service: Service) -> list[Finding] | None:
    slots, context_size = (
        whole_number(service, "max_num_seqs"),
        whole_number(service, "max_model_len"),
    )
    field = compose.header.field("Default ctx", "Max ctx")
    promised = first_count(field.first_value) if field else None
    if slots is None or context_size is None or promised is None:
        return None
    per_request = promised[0] if not same_count(promised, context_size) else context_size
    holds = context_size // per_request if per_request else 0
    if slots <= max(holds, 1):
        return []
    knob = service.knob("max_num_seqs")
    assert knob is not None and field is not None
    return [
        RULE.at(
            compose.file(knob.path),
            knob.line,
            knob.column,
            f"-np {slots}{provenance(knob)} splits -c {context_size:,} into {slots} slots "
            f"of {context_size // slots:,} tokens, but the header's {field.key} (line "
            f"{field.line}) promises {per_request:,} per request",
            knob="max_num_seqs",
            hint=f"ship -np {max(holds, 1)}, or raise -c to {per_request * slots:,}",
            end_column=knob.end_column,
        )
    ]


RULE = Rule(
    id="K002",
    name="max-num-seqs",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
