"""Marker regexes shared by the note parser and the compose-header parser.

Only ``re`` (and two functions of bisect and functools, loaded with Python itself): the header parser runs on every compose, so importing this must stay cheap.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from .patterns import lazy

__all__ = [
    "CLAIM_ID",
    "CLAIM_REF",
    "COMMIT_REF",
    "DATE",
    "RETRACTION_MARKER",
    "RETRACTION_PHRASES",
    "RETRACTION_WORDS",
    "Citation",
    "Marker",
    "correction",
    "covered_parts",
    "find_claim_refs",
    "retraction_marker",
    "strip_struck",
    "withdrawn_citation",
]

_ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"  # kebab-case: the one definition of a claim id
CLAIM_ID = lazy(_ID)

# The lookarounds keep `reclaim:x`, `pre-claim:x` and `claim:abc_def` from counting; a
# trailing hyphen or word character means the id was not kebab-case, so nothing matches.
CLAIM_REF = lazy(rf"(?<![\w-])claim:({_ID})(?![\w-])")

DATE = lazy(r"(?<![\w-])\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\w-])")

RETRACTION_MARKER = lazy(r"\b(retracted|superseded|corrected)\b", re.IGNORECASE)

# Anything but letters and digits may precede a leading marker: emoji, `**`, `>`, `(`, spaces.
_LEADING = lazy(r"[\W_]*")

# The ways real estates withdraw a statement in running text, wherever in the sentence or table
# row they stand. A phrase that itself says the old statement failed ("did NOT reproduce", "was
# wrong", "this header previously said", "superseded by measurement") marks a correction as it
# is; a bare word ("RETRACTED", "corrected", "RESTORED to 8192") only with an anchor in the same
# unit - a date or a claim id - since "retracted in learnings/" alone retracts nothing here.
RETRACTION_PHRASES = lazy(
    r"\b(?:(?:did|does|do|could) not reproduce|not reproduced|no longer (?:true|holds|applies)|"
    r"(?:was|were|is) wrong|previously said|used to say|supersed(?:ed|es) by|"
    r"retracts? the (?:earlier|original|old))\b",
    re.IGNORECASE,
)
RETRACTION_WORDS = lazy(
    r"\b(?:retract(?:ed|s|ing|ion)?|supersed(?:ed|es|ing)|corrected|correction|restored|"
    r"reverted|withdrawn|withdrew|refuted|disproven|debunked|falsified)\b",
    re.IGNORECASE,
)


def correction(text: str) -> tuple[str, ...] | None:
    """The claim ids a correction in ``text`` (a sentence, table row or list item) names, ``()``
    when it names none (it then withdraws what the text itself says), ``None`` when ``text``
    withdraws nothing."""
    ids = tuple(claim_id for claim_id, _ in find_claim_refs(text))
    if RETRACTION_PHRASES.search(text):
        return ids
    anchored = bool(ids) or DATE.search(text) is not None
    return ids if anchored and RETRACTION_WORDS.search(text) is not None else None


# Where a marker's reach ends inside a unit: a sentence end (not an abbreviation such as
# "e.g." or "vs."), or a line that opens a bullet or a `Key:` field of a profile block.
_SENTENCE_END = lazy(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bcf)(?<!\bapprox)[.!?]+\s+(?=\S)")
_PART_START = lazy(r"^[#\s]{0,6}(?:[-*•⤷→↳▸]\s|\d+[.)]\s|[A-Z][\w ./()-]{0,30}:\s)")


def covered_parts(lines: list[str]) -> list[tuple[str, tuple[str, ...] | None]]:
    """A unit's text cut into the parts one retraction marker covers - each sentence, bullet or
    profile field (a table row stays whole) - with what each part withdraws (``correction``).
    A bare marker word takes its anchor (a date, a claim id) from anywhere in the unit."""
    parts: list[str] = []
    for line in lines:
        if parts and not _PART_START.match(line) and not line.lstrip().startswith("|"):
            parts[-1] += "\n" + line
        else:
            parts.append(line)
    pieces = [
        piece
        for part in parts
        for piece in ([part] if part.lstrip().startswith("|") else _SENTENCE_END.split(part))
        if piece.strip()
    ]
    whole = "\n".join(lines)
    anchored = bool(find_claim_refs(whole)) or DATE.search(whole) is not None
    found = []
    for piece in pieces:
        withdrawn = correction(piece)
        if withdrawn is None and anchored and RETRACTION_WORDS.search(piece):
            withdrawn = tuple(claim_id for claim_id, _ in find_claim_refs(piece))
        found.append((piece, withdrawn))
    return found


# A changelog line: a commit subject with its hash (`([6f674fa](…/commit/6f674fa…))`, `(6f674fa)`).
COMMIT_REF = lazy(r"/commits?/[0-9a-f]{7,40}\b|[(\[](?=[0-9a-f]*\d)[0-9a-f]{7,12}[)\]]")


@dataclass(frozen=True)
class Citation:
    """A ``claim:<id>`` reference (or a front-matter id) and whether it sits in a retraction."""

    claim_id: str
    line: int
    column: int
    in_retraction: bool
    front_matter: bool = False  # listed under a note's `claims:` / `retracts:`
    # just after the citation as written (0: not known); the start says which citation it is
    end_column: int = field(default=0, compare=False)


def ref_end(line: str, column: int, claim_id: str) -> int:
    """Just after ``claim:<id>`` written at ``column`` of ``line``; 0 when it is not there."""
    ref = f"claim:{claim_id}"
    return column + len(ref) if line.startswith(ref, column - 1) else 0


class Marker(NamedTuple):
    kind: str  # "retracted" | "superseded" | "corrected"
    date: str | None
    claim_ids: tuple[str, ...]


def find_claim_refs(text: str) -> list[tuple[str, int]]:
    """Every ``claim:<id>`` in ``text`` as (id, 0-based offset of the ``c`` of ``claim:``)."""
    return [(m.group(1), m.start()) for m in CLAIM_REF.finditer(text)]


# What a maintainer writes right after a citation to say the claim is withdrawn:
# `claim:x (retracted)`, `claim:x (superseded 2026-11-01)`, `(claim:x was withdrawn DATE)`.
_WITHDRAWN_AFTER = lazy(
    r"[\s,:*_`]*(?:\(\s*)?(?:(?:was|is|has been|now|since)\s+)?"
    r"(?:retracted|withdrawn|superseded|refuted|struck)\b",
    re.IGNORECASE,
)


def withdrawn_citation(text: str, offset: int) -> bool:
    """The ``claim:<id>`` at ``offset`` in ``text`` is itself written as withdrawn: struck
    (``~~claim:x~~``) or followed by a retraction word (``claim:x (retracted)``,
    ``(claim:x was withdrawn 2026-11-01)``). Such a citation records the retraction; it does not
    cite the claim as current."""
    found = CLAIM_REF.match(text, offset)
    if found is None:
        return False
    return _WITHDRAWN_AFTER.match(text, found.end()) is not None or _struck_at(text, offset)


def _struck_at(text: str, offset: int) -> bool:
    """Whether ``offset`` falls inside a ``~~struck~~`` span of ``text``."""
    spans = _struck_spans(text)
    index = bisect_right(spans, (offset, len(text) + 1)) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]


@lru_cache(maxsize=32)
def _struck_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The struck fragments of ``text`` as (start, end) offsets without the tildes, computed
    once per text: a line of many citations asks for each of them."""
    return tuple((start + 2, end) for start, end in _struck_runs(text))


def retraction_marker(line_text: str, at_start: bool = False) -> Marker | None:
    """The retraction marker in one line or heading, if it carries a date or a claim id.

    With ``at_start`` the marker word must open the line (after emoji, `**` or punctuation).
    """
    if at_start:
        lead = _LEADING.match(line_text)
        found = RETRACTION_MARKER.match(line_text, lead.end() if lead else 0)
    else:
        found = RETRACTION_MARKER.search(line_text)
    if found is None:
        return None
    date = DATE.search(line_text)
    claim_ids = tuple(claim_id for claim_id, _ in find_claim_refs(line_text))
    if date is None and not claim_ids:
        return None
    return Marker(found.group(1).lower(), date.group(0) if date else None, claim_ids)


def strip_struck(text: str) -> tuple[str, list[str]]:
    """Remove ``~~struck~~`` spans: (remaining text, struck fragments without the tildes).

    A span opens at a ``~~`` followed by a non-space and closes at the next ``~~`` preceded by
    one (a ``~~~`` run is neither), like markdown's strikethrough; one pass over the ``~~``
    positions, so a line full of unclosed ``~~`` is linear too."""
    kept, fragments, last = [], [], 0
    for start, end in _struck_runs(text):
        kept.append(text[last:start])
        fragments.append(text[start + 2 : end])
        last = end + 2
    if not fragments:
        return text, []
    kept.append(text[last:])
    return "".join(kept), fragments


def _struck_runs(text: str) -> list[tuple[int, int]]:
    """Each struck span as (offset of its opening ``~~``, offset of its closing ``~~``)."""
    marks = _tildes(text)
    runs, index = [], 0
    while index < len(marks):
        start = marks[index]
        if start + 2 < len(text) and not text[start + 2].isspace():
            close = next(
                (
                    j
                    for j in range(index + 1, len(marks))
                    if not text[marks[j] - 1].isspace() and marks[j] > start + 2
                ),
                None,
            )
            if close is None:
                break  # no closer after this opener: none after any later one either
            runs.append((start, marks[close]))
            index = close + 1
            continue
        index += 1
    return runs


def _tildes(text: str) -> list[int]:
    """Offsets of every ``~~`` that is not part of a longer run of tildes."""
    found, at = [], text.find("~~")
    while at >= 0:
        end = at
        while end < len(text) and text[end] == "~":
            end += 1
        if end - at == 2:
            found.append(at)
        at = text.find("~~", end)
    return found
