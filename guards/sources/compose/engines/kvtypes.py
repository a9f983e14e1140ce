"""KV cache dtypes as engines and headers spell them: the one table of spellings, and when two
spellings name the same cache."""

from __future__ import annotations

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
SIXTEEN_BIT = {"bf16", "fp16"}  # same size; headers say "bf16" for either


def canonical_kv(name: str) -> str:
    name = name.lower()
    return KV_ALIASES.get(name, name)


def same_kv(stated: str, actual: str) -> bool:
    """Two KV dtypes (``k/v`` pairs too) name the same cache; 16-bit floats count as one."""

    def family(name: str) -> str:
        canonical = canonical_kv(name)
        return "16-bit" if canonical in SIXTEEN_BIT else canonical

    return [family(p) for p in stated.split("/")] == [family(p) for p in actual.split("/")]
