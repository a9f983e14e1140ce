"""The knob vocabulary: what engines, env catalogs and prose call the same setting.

The canonical names are the ones the engine dialects give their knobs
(``guards.sources.compose.engines``: ``max_model_len``, ``gpu_memory_utilization``,
``max_num_seqs``, ...). The flag spellings are taken from those dialects' own tables, so a flag a
dialect learns is a word here too; this module adds what no dialect reads: the environment
variables and config keys other engines take for the same setting (Ollama's
``OLLAMA_CONTEXT_LENGTH``, a Modelfile's ``num_ctx``), the flags of engines without a dialect,
and the words prose uses ("context length", "parallel sequences"). A statement in a note or a
comment is read with these words, then compared with the knob the dialect produced.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from ..sources.compose.engines import llamacpp, sglang, vllm


class KnobWords(NamedTuple):
    """One canonical knob and its spellings."""

    name: str
    flags: frozenset[str]  # command-line flags, every engine
    variables: frozenset[str]  # environment variables that set it
    keys: frozenset[str]  # config and Modelfile keys
    words: tuple[str, ...]  # how prose names it, longest first
    kind: str = "count"  # how values compare: count | fraction | kv | ids | text


# What no dialect table holds: other engines' flags, env variables, keys, prose words.
EXTRA: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], str]] = {
    # name: (flags, variables, keys, words, kind)
    "max_model_len": (
        ("--max-total-tokens", "--max-seq-len"),
        (
            "OLLAMA_CONTEXT_LENGTH",
            "MAX_MODEL_LEN",
            "CONTEXT_LENGTH",
            "CTX_SIZE",
            "LLAMA_ARG_CTX_SIZE",
        ),
        ("num_ctx", "max_model_len", "context_length", "ctx_size", "n_ctx"),
        ("context length", "context window", "context size", "ctx size", "context", "ctx"),
        "count",
    ),
    "gpu_memory_utilization": (
        (),
        ("GPU_MEMORY_UTILIZATION",),
        ("gpu_memory_utilization", "mem_fraction_static"),
        ("gpu memory utilization", "memory utilization", "memory fraction"),
        "fraction",
    ),
    "max_num_seqs": (
        ("--max-concurrent-requests", "--max-batch-size"),
        ("OLLAMA_NUM_PARALLEL", "MAX_NUM_SEQS", "LLAMA_ARG_N_PARALLEL"),
        ("max_num_seqs", "num_parallel", "max_running_requests", "n_parallel"),
        ("parallel sequences", "parallel requests", "parallel slots", "concurrent sequences"),
        "count",
    ),
    "kv_cache_dtype": (
        ("--cache-type-k",),
        ("OLLAMA_KV_CACHE_TYPE",),
        ("kv_cache_dtype", "cache_type_k"),
        ("kv cache type", "kv cache dtype", "kv type", "kv cache"),
        "kv",
    ),
    "tensor_parallel_size": (
        ("--num-shard", "--tp-size"),
        ("TENSOR_PARALLEL_SIZE", "NUM_SHARD"),
        ("tensor_parallel_size", "tp_size"),
        ("tensor parallel size", "tensor parallel", "tensor-parallel"),
        "count",
    ),
    "gpus": ((), (), ("count",), ("gpu count", "number of gpus", "gpus"), "count"),
    "gpu_ids": ((), (), ("device_ids",), ("gpu ids", "gpu id", "gpu index"), "ids"),
    "drafter_method": ((), (), ("method",), ("drafter method", "speculative method"), "text"),
    "drafter_depth": (
        ("--num-speculative-tokens",),
        (),
        ("num_speculative_tokens",),
        ("drafter depth", "speculative tokens", "draft tokens"),
        "count",
    ),
    "port": ((), ("PORT",), ("port",), ("host port", "published port", "port"), "count"),
    "container_port": ((), (), ("target",), ("container port", "target port"), "count"),
    "quantization": ((), ("QUANTIZATION",), ("quantization",), ("quantization",), "text"),
    "max_num_batched_tokens": (
        ("-b", "--batch-size", "--max-prefill-tokens", "--chunked-prefill-size"),
        (),
        ("max_num_batched_tokens", "num_batch"),
        ("batched tokens", "batch size"),
        "count",
    ),
}


@cache
def vocabulary() -> dict[str, KnobWords]:
    """Every knob with its spellings: the dialects' flags plus ``EXTRA``."""
    flags: dict[str, set[str]] = {}
    for table in (vllm.FLAGS, llamacpp.FLAGS, sglang.FLAGS):
        for flag, name in table.items():
            flags.setdefault(name, set()).add(flag)
    found = {}
    for name, (more, variables, keys, words, kind) in EXTRA.items():
        found[name] = KnobWords(
            name,
            frozenset(flags.get(name, set()) | set(more)),
            frozenset(variables),
            frozenset(keys),
            tuple(sorted(words, key=len, reverse=True)),
            kind,
        )
    return found


@cache
def _by_flag() -> dict[str, str]:
    return {flag: k.name for k in vocabulary().values() for flag in k.flags}


@cache
def _by_key() -> dict[str, str]:
    return {key: k.name for k in vocabulary().values() for key in k.keys}


def knob_of_flag(flag: str) -> str | None:
    """The knob an engine flag sets (``-c``, ``--ctx-size`` and ``--context-length`` alike)."""
    return _by_flag().get(flag.partition("=")[0])


def knob_of_key(key: str) -> str | None:
    """The knob a config or Modelfile key (``num_ctx``) sets."""
    return _by_key().get(key.lower())


@cache
def _prose() -> re.Pattern[str]:
    words = sorted({w for k in vocabulary().values() for w in k.words}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(w) for w in words) + r")(?![\w-])", re.I)


def knob_of_words(text: str) -> str | None:
    """The one knob a header cell or a phrase names ("Context", "KV cache type"), or None when
    it names none or several."""
    names = {_word_knob(m.group(1).lower()) for m in _prose().finditer(text)}
    flags = {knob_of_flag(w) for w in re.findall(r"(?<![\w-])-{1,2}[a-z][\w-]*", text)}
    keys = {knob_of_key(w) for w in re.findall(r"\b[a-z]+_[a-z_]+\b", text)}
    found = (names | flags | keys) - {None}
    return found.pop() if len(found) == 1 else None


def _word_knob(word: str) -> str | None:
    return next((k.name for k in vocabulary().values() if word in k.words), None)


def kind(name: str) -> str:
    """How values of the knob compare: count, fraction, kv, ids (a set of card ids) or text."""
    words = vocabulary().get(name)
    return words.kind if words is not None else "text"
