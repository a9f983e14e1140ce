"""Markdown notes (``learnings/*.md``) -> :class:`Note`.

A note is read once into blocks of plain text with their source lines, the sections they sit
in, and the retraction contexts that cover them, so claim guards can tell a stale assertion
from a mention inside a correction. All line numbers are 1-based in the original file,
front matter included.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...errors import GuardsError, located
from .. import yamlsrc
from ..edit import unify_breaks
from ..markers import CLAIM_ID, Citation
from .blocks import Block, RetractionContext, Section

__all__ = ["Block", "Citation", "Note", "RetractionContext", "Section", "parse_note"]

_ID_KEYS = ("claims", "retracts")


@dataclass
class Note:
    path: str
    lines: list[str]  # the text is kept once, as lines (``text`` joins them when asked)
    front_matter: dict
    sections: list[Section]
    blocks: list[Block]
    retractions: list[RetractionContext]
    citations: list[Citation]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @cached_property
    def retracted_ids(self) -> set[str]:
        """Claim ids this note retracts: front matter ``retracts:`` plus marker citations."""
        ids = set(_id_list(self.front_matter.get("retracts")))
        for context in self.retractions:
            ids.update(context.marker.claim_ids)
        return ids


def parse_note(text: str, shown: str, *, fast: bool = True) -> Note:
    """Parse one markdown note; bad front matter raises :class:`GuardsError` naming ``shown``.

    ``fast`` off reads the body with markdown-it alone (the reference the fast reader is
    tested and benchmarked against); the result is the same."""
    text = unify_breaks(text)
    lines = text.split("\n")
    with located(shown):
        front_matter, fm_citations, offset = _front_matter(lines)
    from .body import walk_body  # the markdown readers: not imported by a run without notes

    found = walk_body(lines, offset, fast)
    return Note(
        shown,
        lines,
        front_matter,
        found.sections,
        found.blocks,
        found.contexts,
        fm_citations + found.citations,
    )


# --- front matter ---------------------------------------------------------------------------


def _front_matter(lines: list[str]) -> tuple[dict, list[Citation], int]:
    """(front matter data, its claim citations, number of lines it occupies)."""
    if not lines or lines[0].rstrip() != "---":
        return {}, [], 0
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if close is None:
        raise GuardsError("front matter opened with '---' is never closed", None, 1)
    node = _compose_front_matter("".join(line + "\n" for line in lines[1:close]))
    data = _construct(node)
    if data is None:
        return {}, [], close + 1
    if not isinstance(data, dict):
        raise GuardsError("front matter must be a mapping", None, 1)
    citations = []
    for key in _ID_KEYS:
        citations += _front_matter_ids(yamlsrc.get(node, key), key)
    return data, citations, close + 1


def _compose_front_matter(text: str) -> Any:
    try:
        return yamlsrc.compose(text)
    except GuardsError as exc:
        raise _shifted(exc) from None


def _construct(node: Any) -> Any:
    if node is None:
        return None
    try:
        return yamlsrc.construct(node)
    except GuardsError as exc:
        raise _shifted(exc) from None


def _shifted(exc: GuardsError) -> GuardsError:
    """The same YAML error, with its line counted from the top of the file."""
    line = exc.line + 1 if exc.line is not None else 1
    return GuardsError(exc.message, None, line, exc.column)


def _front_matter_ids(node: Any, key: str) -> list[Citation]:
    if node is None:
        return []
    items = node.value if isinstance(node, yamlsrc.SequenceNode) else [node]
    citations = []
    for item in items:
        if item.tag == "tag:yaml.org,2002:null":
            continue
        value = yamlsrc.scalar(item)
        line = yamlsrc.line_of(item) + 1
        if value is None or item.tag != "tag:yaml.org,2002:str":
            raise GuardsError(
                f"front matter '{key}' must be a claim id or a list of claim ids", None, line
            )
        if not CLAIM_ID.fullmatch(value):
            raise GuardsError(
                f"front matter '{key}': {value!r} is not a kebab-case claim id", None, line
            )
        column = yamlsrc.column_of(item)
        end = yamlsrc.end_column_of(item)
        citations.append(
            Citation(value, line, column, key == "retracts", front_matter=True, end_column=end)
        )
    return citations


def _id_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [item for item in value if item is not None]
