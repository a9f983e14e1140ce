"""K002 max-num-seqs: no more concurrent sequences than the KV pool holds at full length.

Why: vLLM sizes the KV pool from free memory, not from the requested context. When
``--max-num-seqs`` exceeds the full-length sequences the pool holds (pool tokens //
max-model-len), long requests do not fail: vLLM preempts and recomputes, and users see ~10 tok/s
decode (watch ``vllm:num_preemptions``). The pool comes from a measured figure in the header
(``KV pool 212,977 tok``, ``GPU KV cache size: N tokens``, ``1,795,289-token pool``,
``1.03× concurrency``), else it is computed from registry facts (KV bytes per token per dtype,
KV heads, GPU memory, weights, reserved memory; per card the KV cost divides by min(TP, KV
heads)); when neither is known ``--verbose`` says so and nothing is guessed. For llama.cpp,
``-np`` splits ``-c`` into slots: more slots than ``-c`` // the header's promised context means
no request gets the context the header promises.

Bad:
    # Profile (at-a-glance):
    #   Max ctx:   204800 (~200K) — MEASURED (KV pool 212,977 tok)
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "204800", --max-num-seqs, "3"]

Finds:
    composes/example.yml:6:58: K002 max-num-seqs 3 > 1: the KV pool of 212,977 tokens (KV pool 212,977 tok, line 2) holds 1 full-length sequence of 204,800; max-num-seqs 3 invites preemption and recompute — watch vllm:num_preemptions

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

from pydantic import Field

from ..compose import Compose, Service
from ..engines import LLAMACPP, VLLM
from ..engines.vllm import kv_dtype
from ..findings import Finding, Severity
from ..header import first_count, same_count
from ..kv import Pool, bytes_per_token, computed_pool, gib, measured_pool, per_card
from ..options import RuleOptions
from ..scope import fact
from . import Context, Rule, provenance


class Options(RuleOptions):
    """Memory figures for the computed pool, used where no active registry claim sets them."""

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


def check(compose: Compose, context: Context) -> list[Finding] | None:
    checked, findings = False, []
    for service in compose.services:
        seqs, length = _int(service, "max_num_seqs"), _int(service, "max_model_len")
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


def _int(service: Service, name: str) -> int | None:
    knob = service.knob(name)
    number = knob.number if knob else None
    return int(number) if number is not None and number >= 1 else None


def _vllm(
    compose: Compose, service: Service, context: Context, seqs: int, length: int
) -> list[Finding] | None:
    header = [(c.line, c.text) for c in compose.comments if c.where == "header"]
    body = [(c.line, c.text) for c in compose.comments if c.where != "header"]
    shipped_length = _shipped_length(compose)
    pool = (
        measured_pool(header, shipped_length)
        or measured_pool(body, shipped_length)
        or _computed(compose, service, context)
    )
    if pool is None:
        context.remark(
            RULE,
            compose.path,
            f"service {service.name}: no measured KV pool in its "
            "comments and no registry facts to compute one; max-num-seqs not checked",
        )
        return None
    holds = pool.tokens // length
    if seqs <= holds:
        return []
    knob = service.knob("max_num_seqs")
    assert knob is not None
    per_sequence = _per_sequence(compose, service, context, length)
    where = f"line {pool.line}" if pool.line else "computed"
    pool_text = f"the KV pool of {pool.tokens:,} tokens ({pool.text}, {where})"
    if holds == 0:
        length_knob = service.knob("max_model_len")
        assert length_knob is not None
        return [
            RULE.at(
                compose.path,
                length_knob.line,
                length_knob.column,
                f"max-model-len {length:,}{provenance(length_knob)} does not fit: "
                f"{per_sequence}{pool_text} is smaller than one full-length sequence; "
                "vLLM refuses to start",
                knob="max_model_len",
                hint=f"lower max-model-len to {pool.tokens:,} or less, or free memory",
            )
        ]
    plural = "s" if holds != 1 else ""
    message = (
        f"max-num-seqs {seqs}{provenance(knob)} > {holds}: {per_sequence}{pool_text} "
        f"holds {holds} full-length sequence{plural} of {length:,}; max-num-seqs {seqs} "
        "invites preemption and recompute — watch vllm:num_preemptions"
    )
    return [
        RULE.at(
            compose.path,
            knob.line,
            knob.column,
            message,
            knob="max_num_seqs",
            hint=f"ship max-num-seqs {holds}, or lower max-model-len to "
            f"{pool.tokens // seqs:,} so {seqs} full-length sequences fit",
        )
    ]


def _shipped_length(compose: Compose) -> int | None:
    for service in compose.shipped:
        knob = service.knob("max_model_len")
        if knob and knob.number is not None:
            return int(knob.number)
    return None


def _per_sequence(compose: Compose, service: Service, context: Context, length: int) -> str:
    """``bf16 KV 65,536 B/token × 204,800 = 12.5 GiB (6.25 GiB/card at TP=2); `` or ''."""
    registry = context.estate.registry
    table = fact(registry, compose, service, "kv_bytes_per_token")
    dtype = kv_dtype(service.value("kv_cache_dtype") or "auto", service.value("dtype"))
    size = bytes_per_token(table.value, dtype) if table else None
    if size is None:
        return ""
    total = size * length
    tp = _int(service, "tensor_parallel_size") or 1
    heads = fact(registry, compose, service, "kv_heads")
    card = per_card(total, tp, heads.value if heads else None)
    split = f" ({gib(card)}/card at TP={tp})" if tp > 1 else ""
    return f"{dtype} KV {size:,} B/token × {length:,} = {gib(total)}{split}; "


def _computed(compose: Compose, service: Service, context: Context) -> Pool | None:
    registry, options = context.estate.registry, context.options(RULE)

    def figure(name: str) -> Any:
        found = fact(registry, compose, service, name)
        return found.value if found else getattr(options, name)

    table, gpu, weights = (
        figure("kv_bytes_per_token"),
        figure("gpu_memory_gib"),
        figure("weights_gib"),
    )
    reserved = figure("reserved_gib") or 0.0
    util = service.knob("gpu_memory_utilization")
    dtype = kv_dtype(service.value("kv_cache_dtype") or "auto", service.value("dtype"))
    size = bytes_per_token(table, dtype) if table else None
    if not (size and gpu and weights and util and util.number):
        return None
    tp = _int(service, "tensor_parallel_size") or 1
    heads = figure("kv_heads")
    card = per_card(size, tp, heads)
    tokens = computed_pool(gpu, util.number, weights, reserved, tp, card)
    text = (
        f"computed: {gpu:g} GiB × {util.number:g} − {weights:g} GiB weights / TP {tp} − "
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
