"""KV-pool arithmetic.

KV bytes per token = full-attention layers x KV heads x head dim x 2 (K and V) x bytes per
element; the registry holds the per-model figure per dtype. Per card, divide by min(TP, KV
heads): past the head count, heads are replicated. vLLM sizes the pool from free memory at the
utilisation ceiling; full-length sequences the pool holds = pool tokens // max-model-len.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .numbers import to_number

GIB = 1024**3
# The one table of KV cache dtype spellings: engine and header aliases -> canonical name.
# vLLM's `fp8` is e4m3; `auto` is resolved by the engine dialect before it gets here.
KV_ALIASES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "f16": "fp16",
    "fp8": "fp8_e4m3",
    "e4m3": "fp8_e4m3",
    "e5m2": "fp8_e5m2",
    "float32": "fp32",
}
# Canonical names and llama.cpp cache types a header may state.
KV_NAMES = (
    "bf16",
    "fp16",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp32",
    "q8_0",
    "q4_0",
    "q4_1",
    "q5_0",
    "q5_1",
    "iq4_nl",
)
SIZE_KEYS = {"fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}  # registry facts key fp8 once
SIXTEEN_BIT = {"bf16", "fp16"}  # same size; headers say "bf16" for either


def canonical_kv(name: str) -> str:
    name = name.lower()
    return KV_ALIASES.get(name, name)


def size_key(dtype: str | None) -> str | None:
    """The key of ``facts.kv_bytes_per_token`` for a dtype: bf16, fp16, fp8, q8_0, ..."""
    if not dtype:
        return None
    canonical = canonical_kv(dtype)
    return SIZE_KEYS.get(canonical, canonical)


def same_kv(stated: str, actual: str) -> bool:
    """Two KV dtypes (``k/v`` pairs too) name the same cache; 16-bit floats count as one."""

    def family(name: str) -> str:
        canonical = canonical_kv(name)
        return "16-bit" if canonical in SIXTEEN_BIT else canonical

    return [family(p) for p in stated.split("/")] == [family(p) for p in actual.split("/")]


def bytes_per_token(table: dict[str, int], dtype: str | None) -> int | None:
    """Whole-model KV bytes per token for a dtype; bf16 and fp16 share a size."""
    key = size_key(dtype)
    if key is None:
        return None
    if key in table:
        return table[key]
    twin = {"bf16": "fp16", "fp16": "bf16"}.get(key)
    return table.get(twin) if twin else None


def per_card(total: float, tp: int, kv_heads: int | None) -> float:
    return total / min(tp, kv_heads) if kv_heads else total / tp


@dataclass(frozen=True)
class Pool:
    tokens: int
    source: str  # "measured" | "computed"
    line: int | None  # the comment line it was read from
    text: str  # how it was obtained, for messages


# Runs are possessive (`*+`) and numbers start only where a digit run starts, so comment text
# of any shape is scanned in linear time ("KV pool" followed by 4 KB of spaces included).
MEASURED = [
    re.compile(r"GPU KV cache size:?\s*+(?P<n>[0-9][0-9,._]*+)\s*+tokens", re.I),
    re.compile(
        r"KV pool\s*+(?:of|=|:)?\s*+~?\s*+(?P<n>[0-9][0-9,.]*+)\s*+(?P<k>[KkMm])?\s*+tok", re.I
    ),
    re.compile(
        r"(?<![0-9,.])(?P<n>[0-9][0-9,.]*+)\s*+(?P<k>[KkMm])?[- ]tokens?\s++(?:\w++\s++){0,2}"
        r"(?:KV\s++)?pool",
        re.I,
    ),
]
CONCURRENCY = re.compile(r"(?<![0-9.])(?P<x>[0-9]++(?:\.[0-9]++)?)\s*+[×x]\s*+concurrency", re.I)


def measured_pool(lines: list[tuple[int, str]], max_model_len: int | None) -> Pool | None:
    """A measured pool size quoted in comments: `KV pool 212,977 tok`, `GPU KV cache size: N
    tokens`, `1,795,289-token pool` (a phrase may wrap onto the next comment line), or
    `1.03× concurrency` (times max-model-len)."""
    text, starts = _joined(lines)
    for pattern in MEASURED:
        match = pattern.search(text)
        if match:
            tokens = _count(match.group("n"), match.groupdict().get("k"))
            if tokens:
                return Pool(
                    tokens,
                    "measured",
                    _line_at(starts, match.start("n")),
                    " ".join(match.group(0).split()),
                )
    match = CONCURRENCY.search(text)
    factor = to_number(match.group("x")) if match else None
    if match and factor and max_model_len:
        tokens = round(factor * max_model_len)
        return Pool(tokens, "measured", _line_at(starts, match.start()), match.group(0))
    return None


def _joined(lines: list[tuple[int, str]]) -> tuple[str, list[tuple[int, int]]]:
    """One text of all lines (joined by a space) and (offset, line number) starts."""
    parts, starts, offset = [], [], 0
    for number, text in lines:
        starts.append((offset, number))
        parts.append(text)
        offset += len(text) + 1
    return " ".join(parts), starts


def _line_at(starts: list[tuple[int, int]], offset: int) -> int:
    return next(number for start, number in reversed(starts) if start <= offset)


def _count(digits: str, unit: str | None) -> int | None:
    value = to_number(digits.replace(",", "").replace("_", "").rstrip("."))
    if value is None:
        return None
    scale = {"k": 1000, "m": 1_000_000}.get((unit or "").lower(), 1)
    return int(value * scale)


def computed_pool(
    gpu_gib: float,
    util: float,
    weights_gib: float,
    reserved_gib: float,
    tp: int,
    bytes_per_token_card: float,
) -> int:
    """Tokens of KV that fit per card once weights and reserved memory are taken out."""
    free = gpu_gib * util - weights_gib / tp - reserved_gib
    return max(0, int(free * GIB / bytes_per_token_card))


def gib(value: float) -> str:
    return f"{value / GIB:.2f}".rstrip("0").rstrip(".") + " GiB"
