"""``guards fix`` for C002: a citation of a withdrawn claim written as current becomes one written
as withdrawn, and a note's front matter stops listing it among the claims it relies on.

A citation ``claim:X`` in running text gains the form :func:`guards.sources.markers.
withdrawn_citation` reads as a record — ``claim:X (retracted DATE)``, or ``claim:X, retracted
DATE`` when a parenthesis closes right after it — so the sentence says the claim is withdrawn
instead of citing it as current. A front-matter ``claims: [..., X, ...]`` flow list loses X and
``retracts:`` gains it (with the successor, if any, added to ``claims:``), as C002's hint says.

An edit is made only where it is plainly safe: not inside a generated region (``regen`` owns
those lines), a code span or a fenced block (code is quoted, not said), nor a compose's YAML
data (the data must read back equal). Anything else is left, with the exact edit printed.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import GuardsError
from ..sources import yamlsrc
from ..sources.compose.compose import Compose
from ..sources.edit import Edit, apply, line_starts
from ..sources.markers import Citation
from ..sources.notes.notes import Note
from ..sources.registry import Claim, Registry

FLOW_LIST = re.compile(r"^(?P<key>claims|retracts):[ \t]*\[(?P<items>[^\]\[#]*)\][ \t]*$")


class Left(NamedTuple):
    """A citation not marked: where, why, and the edit a person can make."""

    line: int
    column: int
    claim: str
    why: str
    edit: str  # "replace `OLD` with `NEW`", or the lines to write


class Marked(NamedTuple):
    edits: list[Edit]
    marked: list[Citation]
    left: list[Left]


def withdrawn_form(claim: Claim, following: str) -> str:
    """What follows ``claim:ID`` so that it reads as withdrawn: `` (retracted DATE)``, or
    ``, retracted DATE`` right before a closing parenthesis."""
    words = f"{claim.status} {claim.retracted}" if claim.retracted else claim.status
    return f", {words}" if following.startswith(")") else f" ({words})"


def mark_citations(
    target: Compose | Note, text: str, citations: list[Citation], registry: Registry
) -> Marked:
    """The edits that mark each of ``citations`` (C002: a withdrawn claim cited as current)."""
    starts = [*line_starts(text), len(text)]
    edits: list[Edit] = []
    marked: list[Citation] = []
    left: list[Left] = []
    inline = [c for c in citations if not c.front_matter]
    for citation in inline:
        claim = registry.get(citation.claim_id)
        if claim is None:
            continue
        at = starts[citation.line - 1] + citation.column - 1
        ref = f"claim:{claim.id}"
        end = at + len(ref)
        form = withdrawn_form(claim, text[end : end + 1])
        why = _unsafe(target, text, citation, at, ref)
        if why:
            left.append(Left(citation.line, citation.column, claim.id, why, _say(ref, form)))
            continue
        edits.append(Edit(end, end, form))
        marked.append(citation)
    if isinstance(target, Compose) and edits:
        kept = _data_kept(text, edits, target.path)
        if not kept:
            left += [
                Left(c.line, c.column, c.claim_id, "would change the YAML data", "") for c in marked
            ]
            edits, marked = [], []
    listed = [c for c in citations if c.front_matter and not c.in_retraction]
    if listed and isinstance(target, Note):
        moved = move_front_matter(text, target.path, listed, registry)
        if moved is None:
            left += [_front_matter_left(c, registry) for c in listed]
        else:
            edits.append(moved)
            marked += listed
    return Marked(edits, marked, left)


def _say(ref: str, form: str) -> str:
    return f"replace `{ref}` with `{ref}{form}`"


def _unsafe(target: Compose | Note, text: str, citation: Citation, at: int, ref: str) -> str:
    """Why the citation at offset ``at`` is not marked, or ``""``."""
    if text[at : at + len(ref)] != ref:
        return "the text has moved"
    line = target.lines[citation.line - 1]
    before = line[: citation.column - 1]
    if isinstance(target, Compose):
        if any(citation.line in region for region in target.regions):
            return "inside a generated region"
        if "#" not in before:
            return "not in a comment"
        return ""
    if before.count("`") % 2:
        return "inside a code span"
    if any(b.kind == "code" and b.line <= citation.line <= b.end_line for b in target.blocks):
        return "inside a code block"
    return ""


def _data_kept(text: str, edits: list[Edit], shown: str) -> bool:
    return yamlsrc.data(text, shown) == yamlsrc.data(apply(text, edits), shown)


# -- front matter --------------------------------------------------------------------------


def move_front_matter(
    text: str, shown: str, listed: list[Citation], registry: Registry
) -> Edit | None:
    """One edit of a note's front matter: the ``listed`` ids out of a one-line ``claims: [...]``,
    into ``retracts:`` (a one-line flow list, or a new line after ``claims:``), each successor
    into ``claims:``. None when the front matter is written another way or would not read back
    as exactly that change."""
    lines = text.split("\n")
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if not lines or lines[0].rstrip() != "---" or close is None:
        return None
    found = {m.group("key"): (i, m) for i in range(1, close) if (m := FLOW_LIST.match(lines[i]))}
    if "claims" not in found:
        return None
    ids = [c.claim_id for c in listed]
    claims_at, claims = found["claims"]
    kept = [item for item in _items(claims) if item not in ids]
    for claim_id in ids:
        claim = registry.get(claim_id)
        successor = claim.superseded_by if claim else None
        if successor and successor not in kept:
            kept.append(successor)
    new = list(lines[1:close])
    new[claims_at - 1] = f"claims: [{', '.join(kept)}]"
    if "retracts" in found:
        at, retracts = found["retracts"]
        items = _items(retracts)
        new[at - 1] = f"retracts: [{', '.join(items + [i for i in ids if i not in items])}]"
    else:
        new.insert(claims_at, f"retracts: [{', '.join(ids)}]")
    before, after = "\n".join(lines[1:close]), "\n".join(new)
    if not _front_matter_moved(before, after, ids, kept, shown):
        return None
    start = len(lines[0]) + 1
    return Edit(start, start + len(before), after)


def _items(match: re.Match[str]) -> list[str]:
    return [item.strip() for item in match.group("items").split(",") if item.strip()]


def _front_matter_moved(
    before: str, after: str, ids: list[str], kept: list[str], shown: str
) -> bool:
    """The new front matter is the old one with ``claims`` now ``kept`` and ``ids`` retracted."""
    try:
        old, new = yamlsrc.data(before, shown), yamlsrc.data(after, shown)
    except GuardsError:
        return False
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    retracts = old.get("retracts") or []
    retracts = [retracts] if isinstance(retracts, str) else list(retracts)
    expected = {**old, "claims": kept, "retracts": retracts + [i for i in ids if i not in retracts]}
    return new == expected


def _front_matter_left(citation: Citation, registry: Registry) -> Left:
    claim = registry.get(citation.claim_id)
    successor = claim.superseded_by if claim else None
    also = f", and list {successor} under `claims:`" if successor else ""
    return Left(
        citation.line,
        citation.column,
        citation.claim_id,
        "front matter not a one-line `claims: [...]` list",
        f"move {citation.claim_id} from `claims:` to `retracts:`{also}",
    )
