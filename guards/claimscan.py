"""Where claims live in an estate: stale copies of withdrawn wording, and citations.

Shared by the claim guards and ``guards claims``. A compose contributes its comment lines (header,
YAML and script comments) in runs of consecutive lines; a note contributes its blocks, section by
section. Lines inside a retraction context or a generated region are left out: a mention there
is a correct mention.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from .notes import Note
from .textmatch import ClaimMatcher, Copy

if TYPE_CHECKING:
    from .compose import Compose
    from .estate import Estate
    from .markers import Citation
    from .registry import Claim

Passage = list[tuple[int, str]]


@dataclass(frozen=True)
class Place:
    path: str
    line: int
    column: int
    how: str  # "stale copy" | "cites" | "cites in a retraction" | "retracts"


def passages(target: Compose | Note) -> list[Passage]:
    if isinstance(target, Note):
        return _note_passages(target)
    return _compose_passages(target)


def _compose_passages(compose: Compose) -> list[Passage]:
    found: list[Passage] = []
    for comment in compose.comments:
        if compose.is_correction(comment.line):
            continue
        if found and found[-1][-1][0] == comment.line - 1:
            found[-1].append((comment.line, comment.text))
        else:
            found.append([(comment.line, comment.text)])
    return found


def _note_passages(note: Note) -> list[Passage]:
    found: list[Passage] = []
    previous = None
    for block in note.blocks:
        if block.retraction is not None:
            previous = None
            continue
        if previous is not None and previous.section == block.section:
            found[-1].extend(block.line_texts)
        else:
            found.append(list(block.line_texts))
        previous = block
    return found


@lru_cache(maxsize=256)
def matcher(text: str | None, phrases: tuple[str, ...]) -> ClaimMatcher:
    return ClaimMatcher(text, list(phrases))


def stale_copies(
    claim: Claim, target: Compose | Note, texts: list[Passage] | None = None
) -> list[Copy]:
    """Copies of a withdrawn claim's wording outside every retraction context (``texts``:
    the target's passages, when the caller already has them)."""
    if not claim.is_withdrawn or not (claim.text or claim.match):
        return []
    find = matcher(claim.text, tuple(claim.match)).find
    return [copy for passage in (texts or passages(target)) for copy in find(passage)]


def targets(estate: Estate) -> Iterator[Compose | Note]:
    yield from estate.composes
    yield from estate.notes


def places(estate: Estate, claim: Claim, stale: bool = True) -> list[Place]:
    """Every place that cites, retracts or (with ``stale``) still asserts ``claim``."""
    found: list[Place] = []
    for target in targets(estate):
        for citation in target.citations:
            if citation.claim_id == claim.id:
                found.append(
                    Place(target.path, citation.line, citation.column, _how(target, citation))
                )
        if stale:
            found += [
                Place(target.path, copy.line, 1, "stale copy")
                for copy in stale_copies(claim, target)
            ]
    return sorted(found, key=lambda p: (p.path, p.line, p.column))


def _how(target: Compose | Note, citation: Citation) -> str:
    if citation.in_retraction and citation.claim_id in target.retracts():
        return "retracts"
    return "cites in a retraction" if citation.in_retraction else "cites"
