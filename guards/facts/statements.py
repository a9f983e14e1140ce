"""Prose that states what a compose ships — a summary line, a "shipped default (…)" note, a
sibling's row in a tier table — read the way a maintainer reads it, and set beside the body.

A statement is read in its affirmed clauses only (``header.affirmed``): what a clause negates
is not a claim. Reading and comparing are apart: :func:`said_in` reads what a text says, knob
by knob (the words and the value they give), and :func:`contradiction` sets one value beside
the service it is about and returns what is true instead and the knob it comes from;
:func:`disagreements` does both. The knobs: context (``160K ctx``, ``200K default``,
``262,144-token window``), KV (``fp8 KV``, ``FP8 E4M3 KV``), drafter depth (``MTP n=3``, ``no
spec-decode``) and vision (``VISION ON``, ``text-only``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from ..sources.compose.engines import SGLANG, VLLM, Knob
from ..sources.compose.engines.kvtypes import KV_ALIASES, KV_NAMES, same_kv
from ..sources.compose.engines.vllm import kv_dtype
from ..sources.compose.header import affirmed, first_count, same_count
from ..sources.compose.services import Service
from ..sources.patterns import lazy
from .vision import stated_vision, vision

KV_WORD = lazy(
    r"\b("
    + "|".join(sorted({*KV_ALIASES, *KV_NAMES, "fp8", "auto"}, key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)
KV_PAIR = lazy(r"\b(\w+)\s+K\s*\+\s*(\w+)\s+V\b")
COUNT = r"~?\d[\d,.]*+\s*[KkM]?"
CTX = lazy(
    rf"(?P<a>{COUNT})(?:[\s-]*tok(?:en)?s?)?[\s-]*(?:ctx|context|default|window)\b"
    rf"|\b(?:ctx|context)\s*[:=]?\s*(?P<b>{COUNT})",
    re.IGNORECASE,
)
# In a tier table a bare "262K" is the context; a pool, a size or a ratio says so.
BARE_CTX = lazy(
    r"(?<![\w.,])(?P<a>\d+(?:\.\d+)?\s*[KM])\b(?!\s*(?:tok|tokens|pool|GiB|GB|B\b|[×x]\b|concurrency))"
)
KV = lazy(rf"{KV_WORD.pattern}(?:[\s_-]+e[45]m[23])?\s+KV\b", re.IGNORECASE)
DEPTH = lazy(r"\bn\s*=\s*(\d+)\b")
DRAFTER_WORD = lazy(r"\b(?:MTP|EAGLE\d?|DFlash\d?|drafter|spec\w*|n-?gram)\b", re.I)
NO_DRAFTER = lazy(
    r"\bno\s+(?:spec\w*(?:[\s-]decod\w+)?|drafter|draft\w*|MTP)\b|\bspec(?:[\s-]decode)?\s+off\b",
    re.IGNORECASE,
)
VISION = lazy(r"\bvision\s*[:=]?\s*(?:on|off|yes|no)\b|\bno\s+vision\b|\btext[\s-]only\b", re.I)


class Stated(NamedTuple):
    """A statement about a tier: where it is, and its text."""

    label: str  # how a message names it: "summary line", "comment"
    number: int
    text: str
    column: int  # where ``text`` starts on its line
    tier_table: bool = False  # a bare "262K" is a context here


class Disagreement(NamedTuple):
    said: re.Match[str]  # in ``Stated.text``
    actual: str  # what is true instead ("--max-model-len is 131072")
    knob: Knob | None


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


class Said(NamedTuple):
    """What a tier statement's text says of one knob: the words that say it and the value
    they give (a count as written, a KV type, ``on``/``off``, a depth or ``off``)."""

    knob: str  # max_model_len | kv_cache_dtype | drafter_depth | vision
    said: re.Match[str]  # in ``Stated.text``
    value: str


def said_in(stated: Stated) -> list[Said]:
    """What a tier statement says, knob by knob: drafter depth, context, KV, vision."""
    return [found for read in READERS if (found := read(stated)) is not None]


def _said_depth(stated: Stated) -> Said | None:
    off = NO_DRAFTER.search(stated.text)
    if off is not None:
        return Said("drafter_depth", off, "off")
    found = search(DEPTH, stated.text, about=DRAFTER_WORD)
    return Said("drafter_depth", found, found.group(1)) if found is not None else None


def _said_context(stated: Stated) -> Said | None:
    found = search(CTX, stated.text) or (
        search(BARE_CTX, stated.text) if stated.tier_table else None
    )
    if found is None:
        return None
    return Said("max_model_len", found, found.group("a") or found.groupdict().get("b") or "")


def _said_kv(stated: Stated) -> Said | None:
    found = search(KV, stated.text)
    return Said("kv_cache_dtype", found, found.group(1)) if found is not None else None


def _said_vision(stated: Stated) -> Said | None:
    found = VISION.search(stated.text)
    said = stated_vision(found.group(0)) if found is not None else None
    if found is None or said is None:
        return None
    return Said("vision", found, "on" if said else "off")


READERS: tuple[Callable[[Stated], Said | None], ...] = (
    _said_depth,
    _said_context,
    _said_kv,
    _said_vision,
)


def contradiction(knob: str, value: str, service: Service) -> tuple[str, Knob | None] | None:
    """What is true instead of ``value`` for ``knob`` on ``service`` ("--max-model-len is
    131072") and the knob it comes from; None when they agree or the body does not say."""
    compare = CONTRADICTIONS.get(knob)
    return compare(value, service) if compare is not None else None


def _context(value: str, service: Service) -> tuple[str, Knob | None] | None:
    knob = service.knob("max_model_len")
    if knob is None or knob.number is None:
        return None
    count = first_count(value)
    if count is None or same_count(count, int(knob.number)):
        return None
    return f"{knob.flag or 'max-model-len'} is {knob.value}", knob


def _kv(value: str, service: Service) -> tuple[str, Knob | None] | None:
    knob = service.knob("kv_cache_dtype")
    if knob is None or knob.value is None:
        return None
    said, actual = effective_kv(value, service), effective_kv(knob.value, service)
    if said is None or actual is None or same_kv(said, actual):
        return None
    return f"{knob.flag or 'the KV cache type'} is {knob.value}", knob


def _depth(value: str, service: Service) -> tuple[str, Knob | None] | None:
    knob = service.knob("drafter_depth")
    depth = knob.value if knob is not None else None
    if knob is not None and depth is None:
        return None  # not known: K003 says why
    if value == "off":
        return None if depth in (None, "0") else (f"the default drafter depth is {depth}", knob)
    if value == depth:
        return None
    if depth is None:
        return "no drafter is configured", knob
    return f"the default drafter depth is {depth}", knob


def _vision(value: str, service: Service) -> tuple[str, Knob | None] | None:
    decided = vision(service)
    if decided is None or (value == "on") == decided[0]:
        return None
    on, knob = decided
    if knob is None:
        return f"no vision projector is loaded ({service.engine})", None
    return f"{knob.flag} turns image input {'on' if on else 'off'}", knob


CONTRADICTIONS: dict[str, Callable[[str, Service], tuple[str, Knob | None] | None]] = {
    "drafter_depth": _depth,
    "max_model_len": _context,
    "kv_cache_dtype": _kv,
    "vision": _vision,
}


def disagreements(stated: Stated, service: Service) -> list[Disagreement]:
    """What a tier statement says that ``service`` does not ship, knob by knob."""
    found = []
    for said in said_in(stated):
        against = contradiction(said.knob, said.value, service)
        if against is not None:
            found.append(Disagreement(said.said, *against))
    return found
