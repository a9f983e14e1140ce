"""Prose that states what a compose ships — a summary line, a "shipped default (…)" note, a
sibling's row in a tier table — read the way a maintainer reads it, and set beside the body.

A statement is read in its affirmed clauses only (``header.affirmed``): what a clause negates
is not a claim. Each comparison takes a statement and the service it is about and returns the
disagreements: what the prose says (the match), what is true instead, and the knob it comes
from. The comparisons: context (``160K ctx``, ``200K default``, ``262,144-token window``),
KV (``fp8 KV``, ``FP8 E4M3 KV``), drafter depth (``MTP n=3``, ``no spec-decode``) and vision
(``VISION ON``, ``text-only``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..sources.compose.engines import SGLANG, VLLM, Knob
from ..sources.compose.engines.kvtypes import KV_ALIASES, KV_NAMES, same_kv
from ..sources.compose.engines.vllm import kv_dtype
from ..sources.compose.header import affirmed, first_count, same_count
from ..sources.compose.services import Service
from .vision import stated_vision, vision

KV_WORD = re.compile(
    r"\b("
    + "|".join(sorted({*KV_ALIASES, *KV_NAMES, "fp8", "auto"}, key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)
KV_PAIR = re.compile(r"\b(\w+)\s+K\s*\+\s*(\w+)\s+V\b")
COUNT = r"~?\d[\d,.]*+\s*[KkM]?"
CTX = re.compile(
    rf"(?P<a>{COUNT})(?:[\s-]*tok(?:en)?s?)?[\s-]*(?:ctx|context|default|window)\b"
    rf"|\b(?:ctx|context)\s*[:=]?\s*(?P<b>{COUNT})",
    re.IGNORECASE,
)
# In a tier table a bare "262K" is the context; a pool, a size or a ratio says so.
BARE_CTX = re.compile(
    r"(?<![\w.,])(?P<a>\d+(?:\.\d+)?\s*[KM])\b(?!\s*(?:tok|tokens|pool|GiB|GB|B\b|[×x]\b|concurrency))"
)
KV = re.compile(rf"{KV_WORD.pattern}(?:[\s_-]+e[45]m[23])?\s+KV\b", re.IGNORECASE)
DEPTH = re.compile(r"\bn\s*=\s*(\d+)\b")
DRAFTER_WORD = re.compile(r"\b(?:MTP|EAGLE\d?|DFlash\d?|drafter|spec\w*|n-?gram)\b", re.I)
NO_DRAFTER = re.compile(
    r"\bno\s+(?:spec\w*(?:[\s-]decod\w+)?|drafter|draft\w*|MTP)\b|\bspec(?:[\s-]decode)?\s+off\b",
    re.IGNORECASE,
)
VISION = re.compile(
    r"\bvision\s*[:=]?\s*(?:on|off|yes|no)\b|\bno\s+vision\b|\btext[\s-]only\b", re.I
)


@dataclass(frozen=True)
class Stated:
    """A statement about a tier: where it is, and its text."""

    label: str  # how a message names it: "summary line", "comment"
    number: int
    text: str
    column: int  # where ``text`` starts on its line
    tier_table: bool = False  # a bare "262K" is a context here


@dataclass(frozen=True)
class Disagreement:
    said: re.Match[str]  # in ``Stated.text``
    actual: str  # what is true instead ("--max-model-len is 131072")
    knob: Knob | None


Comparison = Callable[[Stated, Service], list[Disagreement]]


def stated_kv(text: str) -> str | None:
    """The KV cache type a text names (``q8_0 K + q4_0 V`` as ``q8_0/q4_0``)."""
    pair = KV_PAIR.search(text)
    if pair:
        k, v = pair.group(1).lower(), pair.group(2).lower()
        return k if k == v else f"{k}/{v}"
    word = KV_WORD.search(text)
    return word.group(1).lower() if word else None


def effective_kv(value: str, service: Service) -> str | None:
    """What a KV type means on this service (vLLM's and SGLang's ``auto`` follows ``--dtype``)."""
    if service.engine in (VLLM, SGLANG):
        dtype = service.value("dtype")
        if value.lower() == "auto" and dtype is None:
            return None  # follows the checkpoint's dtype, which the compose does not say
        return kv_dtype(value, dtype)
    return value.lower()


def search(
    pattern: re.Pattern[str], text: str, about: re.Pattern[str] | None = None
) -> re.Match[str] | None:
    """The first match in a clause that states something and, with ``about``, names what the
    figure is about."""
    for at, clause in affirmed(text):
        found = pattern.search(text, at, at + len(clause))
        if found is not None and (about is None or about.search(clause)):
            return found
    return None


def context(stated: Stated, service: Service) -> list[Disagreement]:
    knob = service.knob("max_model_len")
    found = search(CTX, stated.text) or (
        search(BARE_CTX, stated.text) if stated.tier_table else None
    )
    if found is None or knob is None or knob.number is None:
        return []
    count = first_count(found.group("a") or found.groupdict().get("b") or "")
    if count is None or same_count(count, int(knob.number)):
        return []
    return [Disagreement(found, f"{knob.flag or 'max-model-len'} is {knob.value}", knob)]


def kv(stated: Stated, service: Service) -> list[Disagreement]:
    found, knob = search(KV, stated.text), service.knob("kv_cache_dtype")
    if found is None or knob is None or knob.value is None:
        return []
    said = effective_kv(found.group(1), service)
    actual = effective_kv(knob.value, service)
    if said is None or actual is None or same_kv(said, actual):
        return []
    return [Disagreement(found, f"{knob.flag or 'the KV cache type'} is {knob.value}", knob)]


def depth(stated: Stated, service: Service) -> list[Disagreement]:
    knob = service.knob("drafter_depth")
    value = knob.value if knob is not None else None
    if knob is not None and value is None:
        return []  # not known: K003 says why
    off = NO_DRAFTER.search(stated.text)
    if off is not None:
        if value in (None, "0"):
            return []
        return [Disagreement(off, f"the default drafter depth is {value}", knob)]
    found = search(DEPTH, stated.text, about=DRAFTER_WORD)
    if found is None or found.group(1) == value:
        return []
    actual = (
        "no drafter is configured" if value is None else f"the default drafter depth is {value}"
    )
    return [Disagreement(found, actual, knob)]


def image_input(stated: Stated, service: Service) -> list[Disagreement]:
    found, decided = VISION.search(stated.text), vision(service)
    if found is None or decided is None:
        return []
    said, (on, knob) = stated_vision(found.group(0)), decided
    if said is None or said == on:
        return []
    if knob is None:
        return [Disagreement(found, f"no vision projector is loaded ({service.engine})", None)]
    return [Disagreement(found, f"{knob.flag} turns image input {'on' if on else 'off'}", knob)]


COMPARISONS: tuple[Comparison, ...] = (depth, context, kv, image_input)


def disagreements(stated: Stated, service: Service) -> list[Disagreement]:
    return [found for compare in COMPARISONS for found in compare(stated, service)]
