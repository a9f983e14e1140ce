"""KV-pool arithmetic.

KV bytes per token = full-attention layers x KV heads x head dim x 2 (K and V) x bytes per
element; the registry holds the per-model figure per dtype. Per card, divide by min(TP, KV
heads): past the head count, heads are replicated. vLLM sizes the pool from free memory at the
utilisation ceiling; full-length sequences the pool holds = pool tokens // max-model-len.

A pool measured at one utilisation and KV dtype is rescaled to another by memory: the memory
the KV gets grows by (new util - old util) x GPU memory per card (weights and reserved memory
stay put, so they cancel out) and holds memory / bytes per token per card. The memory of one
GPU comes from the one table of GPU models here (``GPU_MEMORY_GIB``). The figures comments
quote and what each was measured at are read in ``figures.py``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..sources.compose.engines.kvtypes import canonical_kv
from ..sources.patterns import lazy

GIB = 1024**3
SIZE_KEYS = {"fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}  # registry facts key fp8 once


def size_key(dtype: str | None) -> str | None:
    """The key of ``facts.kv_bytes_per_token`` for a dtype: bf16, fp16, fp8, q8_0, ..."""
    if not dtype:
        return None
    canonical = canonical_kv(dtype)
    return SIZE_KEYS.get(canonical, canonical)


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


class Pool(NamedTuple):
    tokens: int
    source: str  # "measured" | "computed"
    line: int | None  # the comment line it was read from
    text: str  # how it was obtained, for messages
    note: str = ""  # how a measured pool was rescaled to this service, for messages


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


def rescaled_pool(
    tokens: int,
    util_from: float,
    util_to: float,
    gpu_gib: float,
    bytes_from: float,
    bytes_to: float,
) -> int:
    """Tokens of a pool measured at ``util_from`` with ``bytes_from`` KV bytes per token per
    card, at ``util_to`` with ``bytes_to``: the KV memory grows by the utilisation difference
    times the GPU's memory (``gpu_gib`` may be 0 when the utilisation is the same)."""
    memory = tokens * bytes_from + (util_to - util_from) * gpu_gib * GIB
    return max(0, int(memory / bytes_to))


# The one table of GPU memory, GiB per card, by model as headers name them. A model sold with
# several sizes counts only with its size written beside it (``A100 80GB``, ``A100-40G``).
GPU_MEMORY_GIB: dict[str, tuple[int, ...]] = {
    "3060": (8, 12),
    "3080": (10, 12),
    "3090": (24,),
    "3090 ti": (24,),
    "4080": (16,),
    "4090": (24,),
    "5080": (16,),
    "5090": (32,),
    "a4000": (16,),
    "a5000": (24,),
    "a6000": (48,),
    "rtx 6000 ada": (48,),
    "rtx pro 6000": (96,),
    "rtx 6000 pro": (96,),
    "a10": (24,),
    "a40": (48,),
    "a100": (40, 80),
    "h100": (80,),
    "h100 nvl": (94,),
    "h200": (141,),
    "l4": (24,),
    "l40": (48,),
    "l40s": (48,),
    "t4": (16,),
    "v100": (16, 32),
}
_NAMES = sorted(GPU_MEMORY_GIB, key=len, reverse=True)  # "3090 ti" before "3090"
# A model name stands alone: "4x3090", "2×3090", "RTX3090", "3090s" count; "13090" does not.
GPU_MODEL = lazy(
    r"(?<![0-9A-WYZa-wyz])(?P<model>"
    + "|".join(r"[\s-]*+".join(map(re.escape, n.split())) for n in _NAMES)
    + r")(?=s?+(?![0-9A-Za-z]))",
    re.IGNORECASE,
)
GPU_SIZE = lazy(
    r"[\s(/-]*+(?:(?:SXM[0-9]?|PCIe|NVL)[\s-]*+)?(?P<size>[0-9]{2,3})\s*+Gi?B?(?![A-Za-z])",
    re.IGNORECASE,
)


def gpu_memory(text: str) -> tuple[float, str] | None:
    """The memory of one card of the GPU models ``text`` names, with the name as written: the
    smallest when it names several (vLLM sizes every card's pool by the tightest one); None
    when it names none, or one whose size is not written and not single."""
    found: list[tuple[float, str]] = []
    for match in GPU_MODEL.finditer(text):
        name = " ".join(match.group("model").lower().replace("-", " ").split())
        sizes = GPU_MEMORY_GIB[name]
        written = GPU_SIZE.match(text, match.end())
        size = int(written.group("size")) if written else None
        if len(sizes) == 1:
            found.append((float(sizes[0]), match.group(0)))
        elif written and size in sizes:
            found.append((float(size), text[match.start() : written.end()].strip()))
        else:
            return None
    return min(found) if found else None
