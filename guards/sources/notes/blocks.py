"""What reading a note gives, as records: its sections, its blocks of plain text with their
source lines, the retraction contexts that cover them, and the walk's whole result.

Apart from the markdown readers (``walk``, ``mdfast``, ``mdinline``) so that code which only
handles notes (the rules, the claim scan, a run that checks composes alone) imports the
records without the readers."""

from __future__ import annotations

from typing import NamedTuple

from ..markers import Citation, Marker


class Section(NamedTuple):
    title: str
    level: int
    line: int
    end_line: int


class RetractionContext(NamedTuple):
    kind: str  # "heading" | "callout" | "paragraph"
    marker: Marker
    line: int
    end_line: int


class Block(NamedTuple):
    kind: str  # "heading" | "paragraph" | "code" | "table"
    text: str
    line: int
    end_line: int
    section: int  # index into the note's sections (-1: before the first heading)
    quoted: bool  # inside a blockquote
    struck: tuple[str, ...]  # struck-through fragments, set aside from ``text``
    line_texts: tuple[tuple[int, str], ...]  # (source line, plain text) per line
    retraction: RetractionContext | None = None  # the innermost context covering the block

    @property
    def current(self) -> bool:
        """The block states what holds now: not inside a retraction, not a quotation."""
        return self.retraction is None and not self.quoted


class Walked(NamedTuple):
    """What the walk found in a note's body."""

    sections: list[Section]
    blocks: list[Block]
    contexts: list[RetractionContext]
    citations: list[Citation]
