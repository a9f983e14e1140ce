"""D005 summary-drift: the summary line restates the tier the body ships.

Why: the first prose line after the Profile block is what an operator skims when picking a
tier ("single 3090, MTP n=3, 160K ctx, fp8 KV, VISION ON"). It is written once and rarely
revisited, so when the body moves to 128K or switches the drafter off, the line keeps selling
the old tier. The line's context ("160K ctx", "200K default"), KV ("fp8 KV"), drafter depth
("MTP n=3", "no spec-decode") and vision ("VISION ON", "text-only") are compared with the body
as shipped; so is the parenthesis of a comment naming "the shipped default (combination)"
("the shipped default combination (W4A16 + MTP n=4)"). Prose is read like a profile field:
what a clause negates is not a claim, and figures with no ctx/KV/n= word beside them are not
read at all.

Bad:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    # ---------------------------------------------------------------------------
    # THE SINGLE FAST TIER — one 3090, MTP n=3, 160K ctx, fp8 KV, VISION ON.
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "131072", --kv-cache-dtype, fp8_e4m3,
                  --language-model-only,
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":2}']

Finds:
    composes/example.yml:4:40: D005 summary line says n=3 (line 4), but the compose defaults to depth 2 (command line 10)
    composes/example.yml:4:45: D005 summary line says 160K ctx (line 4), but --max-model-len is 131072 (command line 8)
    composes/example.yml:4:63: D005 summary line says VISION ON (line 4), but --language-model-only turns image input off (command line 9)

Good:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    # ---------------------------------------------------------------------------
    # THE SINGLE FAST TIER — one 3090, MTP n=2, 128K ctx, fp8 KV, text-only.
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "131072", --kv-cache-dtype, fp8_e4m3,
                  --language-model-only,
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":2}']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..compose import Compose, Service
from ..engines import Knob
from ..findings import Finding, Severity
from ..header import HeaderLine, affirmed, first_count, same_count
from ..kv import same_kv
from ..options import RuleOptions
from ..vision import stated_vision, vision
from . import Context, Rule
from .header_drift import KV_WORD, effective_kv

COUNT = r"~?\d[\d,.]*+\s*[KkM]?"
CTX = re.compile(
    rf"(?P<a>{COUNT})(?:[\s-]*tok(?:en)?s?)?[\s-]*(?:ctx|context|default|window)\b"
    rf"|\b(?:ctx|context)\s*[:=]?\s*(?P<b>{COUNT})",
    re.IGNORECASE,
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


SHIPPED = re.compile(
    r"\bshipped\s+default(?:\s+combination|\s+tier)?\s*(?:is\s*|:\s*)?"
    r"\((?P<items>[^()\n]*+)\)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Stated:
    """A statement of the tier: the summary line, or a "shipped default (…)" parenthesis."""

    label: str  # how the message names it
    number: int
    text: str
    column: int  # where ``text`` starts


def check(compose: Compose, context: Context) -> list[Finding] | None:
    stated = tier_statements(compose)
    if not stated or not compose.shipped:
        return None
    service = compose.shipped[0]
    findings = []
    for line in stated:
        for compare in (_depth, _context, _kv, _vision):
            findings += compare(compose, line, service)
    return findings


def tier_statements(compose: Compose) -> list[Stated]:
    found = []
    summary = summary_line(compose)
    if summary is not None:
        found.append(Stated("summary line", summary.number, summary.text, summary.column))
    for comment in compose.comments:
        for match in SHIPPED.finditer(comment.text):
            column = comment.column + 1 + match.start("items")
            found.append(Stated("comment", comment.line, match.group("items"), column))
    return found


def summary_line(compose: Compose) -> HeaderLine | None:
    """The first prose line after the Profile block (not a generated region, not a
    retraction callout)."""
    header = compose.header
    if header.profile_line is None:
        return None
    end = max((f.end_line for f in header.fields), default=header.profile_line)
    for section in header.sections:
        if section.line > end and not compose.is_correction(section.line) and section.lines:
            return section.lines[0]
    return None


def _search(
    pattern: re.Pattern[str], text: str, about: re.Pattern[str] | None = None
) -> re.Match[str] | None:
    """The first match in a clause that states something (see ``header.affirmed``) and, with
    ``about``, names what the figure is about."""
    for at, clause in affirmed(text):
        found = pattern.search(text, at, at + len(clause))
        if found is not None and (about is None or about.search(clause)):
            return found
    return None


def _at(
    compose: Compose, line: Stated, found: re.Match[str], actual: str, knob: Knob | None
) -> Finding:
    where = f" ({knob.source} line {knob.line})" if knob is not None else ""
    return RULE.at(
        compose.path,
        line.number,
        line.column + found.start(),
        f"{line.label} says {found.group(0).strip()} (line {line.number}), but {actual}{where}",
        knob=knob.name if knob else None,
        hint="restate the tier the body ships, or change the body to match",
    )


def _context(compose: Compose, line: Stated, service: Service) -> list[Finding]:
    found, knob = _search(CTX, line.text), service.knob("max_model_len")
    if found is None or knob is None or knob.number is None:
        return []
    stated = first_count(found.group("a") or found.group("b"))
    if stated is None or same_count(stated, int(knob.number)):
        return []
    return [_at(compose, line, found, f"{knob.flag or 'max-model-len'} is {knob.value}", knob)]


def _kv(compose: Compose, line: Stated, service: Service) -> list[Finding]:
    found, knob = _search(KV, line.text), service.knob("kv_cache_dtype")
    if found is None or knob is None or knob.value is None:
        return []
    said = effective_kv(found.group(1), service)
    actual = effective_kv(knob.value, service)
    if said is None or actual is None or same_kv(said, actual):
        return []
    return [_at(compose, line, found, f"{knob.flag or 'the KV cache type'} is {knob.value}", knob)]


def _depth(compose: Compose, line: Stated, service: Service) -> list[Finding]:
    knob = service.knob("drafter_depth")
    depth = knob.value if knob is not None else None
    if knob is not None and depth is None:
        return []  # not known: K003 says why
    off = NO_DRAFTER.search(line.text)
    if off is not None:
        if depth in (None, "0"):
            return []
        return [_at(compose, line, off, f"the compose defaults to depth {depth}", knob)]
    found = _search(DEPTH, line.text, about=DRAFTER_WORD)
    if found is None or found.group(1) == depth:
        return []
    actual = (
        "the compose configures no drafter"
        if depth is None
        else f"the compose defaults to depth {depth}"
    )
    return [_at(compose, line, found, actual, knob)]


def _vision(compose: Compose, line: Stated, service: Service) -> list[Finding]:
    found = VISION.search(line.text)
    decided = vision(service)
    if found is None or decided is None:
        return []
    said, (on, knob) = stated_vision(found.group(0)), decided
    if said is None or said == on:
        return []
    if knob is None:
        actual = f"the command loads no vision projector ({service.engine})"
    else:
        actual = f"{knob.flag} turns image input {'on' if on else 'off'}"
    return [_at(compose, line, found, actual, knob)]


RULE: Rule[RuleOptions] = Rule(
    "D005",
    "summary-drift",
    "drift",
    ("compose",),
    Severity.ERROR,
    "The summary line after the Profile restates the context, KV, drafter and vision the body ships.",
    check,
    __doc__,
)
