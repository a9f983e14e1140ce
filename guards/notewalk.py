"""The markdown walk behind :func:`guards.notes.parse_note`: markdown-it tokens -> blocks of
plain text with their source lines, sections, retraction contexts and claim citations.

Each block keeps the lines its text came from; a retraction context (a heading, a callout or a
paragraph opening with a dated marker) covers a range of lines, and each block learns the
innermost context around it once every context's extent is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from .markers import Citation, Marker, find_claim_refs, retraction_marker

_ALERT_TAG = re.compile(r"\s*\[![A-Za-z]+\]\s*$")
_SPACES = re.compile(r"  +")


@dataclass(frozen=True)
class Section:
    title: str
    level: int
    line: int
    end_line: int


@dataclass(frozen=True)
class RetractionContext:
    kind: str  # "heading" | "callout" | "paragraph"
    marker: Marker
    line: int
    end_line: int


@dataclass(frozen=True)
class Block:
    kind: str  # "heading" | "paragraph" | "code" | "table"
    text: str
    line: int
    end_line: int
    section: int  # index into the note's sections (-1: before the first heading)
    quoted: bool  # inside a blockquote
    struck: tuple[str, ...]  # struck-through fragments, set aside from ``text``
    line_texts: tuple[tuple[int, str], ...]  # (source line, plain text) per line
    retraction: RetractionContext | None = None  # the innermost context covering the block


@dataclass(frozen=True)
class Walked:
    """What the walk found in a note's body."""

    sections: list[Section]
    blocks: list[Block]
    contexts: list[RetractionContext]
    citations: list[Citation]


# --- inline text ----------------------------------------------------------------------------


@dataclass
class _Inline:
    """One inline run split per source line: plain text, struck fragments, citations."""

    lines: list[str]
    struck: list[str]
    refs: list[tuple[int, str, bool]]  # (line index, claim id, inside struck text)


def _inline(token: Any) -> _Inline:
    kept: list[list[str]] = [[]]
    struck_lines: set[int] = set()
    fragments: list[str] = []
    fragment: list[str] | None = None  # the struck span being read
    refs = []
    for child in token.children or ():
        kind = child.type
        if kind in ("softbreak", "hardbreak"):
            kept.append([])
            if fragment is not None:
                fragment.append("\n")
        elif kind == "s_open":
            fragment = []
            struck_lines.add(len(kept) - 1)
        elif kind == "s_close" and fragment is not None:
            fragments.append("".join(fragment))
            fragment = None
        elif kind in ("text", "code_inline", "image"):
            piece = _image_alt(child) if kind == "image" else child.content
            (kept[-1] if fragment is None else fragment).append(piece)
            if "claim:" in piece:  # cheap pre-check: most pieces cite nothing
                refs += [
                    (len(kept) - 1, claim_id, fragment is not None)
                    for claim_id, _ in find_claim_refs(piece)
                ]
    lines = [_plain(parts, index in struck_lines) for index, parts in enumerate(kept)]
    return _Inline(lines, fragments, refs)


def _plain(parts: list[str], had_struck: bool) -> str:
    text = "".join(parts).strip()
    # `a ~~b~~ c` leaves two spaces where the span was.
    return _SPACES.sub(" ", text) if had_struck else text


def _image_alt(token: Any) -> str:
    return "".join(c.content for c in token.children or () if c.type in ("text", "code_inline"))


# --- block walk -----------------------------------------------------------------------------


@dataclass
class _Quote:
    start: int
    end: int
    checked: bool = False
    after_tag: bool = False  # the first paragraph was only `[!WARNING]`: check the next one


@dataclass
class _Item:
    start: int
    end: int
    checked: bool = False


@dataclass
class Walker:
    lines: list[str]
    offset: int
    blocks: list[Block] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    contexts: list[RetractionContext] = field(default_factory=list)
    citations: list[tuple[int, int, str, bool]] = field(default_factory=list)
    quotes: list[_Quote] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    heading_markers: dict[int, Marker] = field(default_factory=dict)  # section index -> marker
    # line -> claim id -> columns of its citations not yet taken, last first
    columns: dict[int, dict[str, list[int]]] = field(default_factory=dict)

    def walk(self, tokens: list[Any]) -> None:
        index = 0
        while index < len(tokens):
            index = self.token(tokens, index) + 1

    def token(self, tokens: list[Any], index: int) -> int:
        """Handle one token; returns the index of the last token it consumed."""
        token = tokens[index]
        kind = token.type
        if kind == "heading_open":
            self.heading(token, tokens[index + 1])
            return index + 1
        if kind == "paragraph_open":
            self.paragraph(token, tokens[index + 1])
            return index + 1
        if kind in ("fence", "code_block"):
            self.code(token)
        elif kind == "table_open":
            return self.table(tokens, index)
        elif kind == "blockquote_open":
            self.quotes.append(_Quote(*self.span(token)))
        elif kind == "blockquote_close":
            self.quotes.pop()
        elif kind == "list_item_open":
            self.items.append(_Item(*self.span(token)))
        elif kind == "list_item_close":
            self.items.pop()
        return index

    def span(self, token: Any) -> tuple[int, int]:
        """1-based first and last line of a block token, trailing blank lines dropped."""
        start, end = token.map[0] + self.offset + 1, token.map[1] + self.offset
        while end > start and not self.lines[end - 1].strip():
            end -= 1
        return start, end

    def heading(self, token: Any, inline: Any) -> None:
        start, end = self.span(token)
        runs = _inline(inline)
        title = " ".join(line for line in runs.lines if line)
        self.sections.append(Section(title, int(token.tag[1:]), start, end))
        marker = retraction_marker(title)
        if marker is not None:
            self.heading_markers[len(self.sections) - 1] = marker
        self.add_block("heading", start, end, runs, start)

    def paragraph(self, token: Any, inline: Any) -> None:
        start, end = self.span(token)
        runs = _inline(inline)
        if not self.callout(runs.lines):
            self.leading_marker(runs.lines, start, end)
        self.add_block("paragraph", start, end, runs, start)

    def callout(self, lines: list[str]) -> bool:
        """Rule 2: the first paragraph of a blockquote carries a marker in its first line
        (or the line after a GitHub `[!WARNING]` tag); the context covers the blockquote."""
        quote = self.quotes[-1] if self.quotes else None
        if quote is None or quote.checked:
            return False
        lines = [line for line in lines if line]
        candidates = lines[:1]
        if quote.after_tag:
            quote.after_tag = False
        elif lines and _ALERT_TAG.match(lines[0]):
            candidates = lines[:2]
            quote.after_tag = len(lines) == 1
        quote.checked = not quote.after_tag
        for outer in self.quotes:
            outer.checked = outer.checked or outer is not quote
        marker = next(filter(None, map(retraction_marker, candidates)), None)
        if marker is None:
            return False
        self.contexts.append(RetractionContext("callout", marker, quote.start, quote.end))
        return True

    def leading_marker(self, lines: list[str], start: int, end: int) -> None:
        """Rule 3: a paragraph, or the first paragraph of a list item, opening with a marker.
        A list item's context covers the whole item, nested lists included."""
        item = self.items[-1] if self.items else None
        if item is not None and not item.checked:
            item.checked = True
            start, end = item.start, item.end
        first_line = next((line for line in lines if line), "")
        marker = retraction_marker(first_line, at_start=True)
        if marker is not None:
            self.contexts.append(RetractionContext("paragraph", marker, start, end))

    def code(self, token: Any) -> None:
        start, end = self.span(token)
        first = start + (1 if token.type == "fence" else 0)
        content = token.content[:-1] if token.content.endswith("\n") else token.content
        line_texts = tuple((first + i, text) for i, text in enumerate(content.split("\n")))
        self.block("code", content, start, end, (), line_texts if content else ())

    def table(self, tokens: list[Any], index: int) -> int:
        start, end = self.span(tokens[index])
        rows: list[tuple[int, list[_Inline]]] = []
        while tokens[index].type != "table_close":
            token = tokens[index]
            if token.type == "tr_open":
                rows.append((token.map[0] + self.offset + 1, []))
            elif token.type == "inline" and rows:
                rows[-1][1].append(_inline(token))
            index += 1
        line_texts, struck = [], []
        for line, cells in rows:
            line_texts.append((line, " | ".join(" ".join(cell.lines) for cell in cells)))
            for cell in cells:
                struck += cell.struck
                for _, claim_id, in_struck in cell.refs:
                    self.cite(line, claim_id, in_struck)
        text = "\n".join(text for _, text in line_texts)
        self.block("table", text, start, end, tuple(struck), tuple(line_texts))
        return index

    def add_block(self, kind: str, start: int, end: int, runs: _Inline, first: int) -> None:
        # `first` is the line of the block's first text line; inline line i sits at first + i.
        line_texts = tuple((first + i, text) for i, text in enumerate(runs.lines))
        text = "\n".join(runs.lines)
        self.block(kind, text, start, end, tuple(runs.struck), line_texts)
        for line_index, claim_id, struck in runs.refs:
            self.cite(first + line_index, claim_id, struck)

    def block(
        self,
        kind: str,
        text: str,
        start: int,
        end: int,
        struck: tuple[str, ...],
        line_texts: tuple[tuple[int, str], ...],
    ) -> None:
        # The retraction is set in finish(), once every context's extent is known.
        section, quoted = len(self.sections) - 1, bool(self.quotes)
        self.blocks.append(Block(kind, text, start, end, section, quoted, struck, line_texts))

    def cite(self, line: int, claim_id: str, struck: bool) -> None:
        """Record a citation, taking its column from the next unclaimed match in the raw line
        (plain text has lost markup, so its offsets are not source columns)."""
        if line not in self.columns:  # every citation's column on the line, found once
            columns: dict[str, list[int]] = {}
            raw = self.lines[line - 1] if line <= len(self.lines) else ""
            for found, at in find_claim_refs(raw):
                columns.setdefault(found, []).append(at + 1)
            self.columns[line] = {k: v[::-1] for k, v in columns.items()}
        remaining = self.columns[line].get(claim_id)
        column = remaining.pop() if remaining else 1
        self.citations.append((line, column, claim_id, struck))

    def finish(self) -> Walked:
        sections = self.close_sections()
        contexts = sorted(
            self.contexts + self.heading_contexts(sections), key=lambda c: (c.line, -c.end_line)
        )
        around = _Innermost(contexts)
        blocks = [replace(b, retraction=around.at(b.line)) for b in self.blocks]
        around = _Innermost(contexts)
        citations = [
            Citation(claim_id, line, column, struck or around.at(line) is not None)
            for line, column, claim_id, struck in sorted(self.citations)
        ]
        return Walked(sections, blocks, contexts, citations)

    def close_sections(self) -> list[Section]:
        """Give each section its end: the last non-blank line before the next heading of the
        same or a higher level."""
        closed = []
        for index, section in enumerate(self.sections):
            following = (s.line for s in self.sections[index + 1 :] if s.level <= section.level)
            end = next(following, len(self.lines) + 1) - 1
            while end > section.end_line and not self.lines[end - 1].strip():
                end -= 1
            closed.append(replace(section, end_line=max(end, section.end_line)))
        return closed

    def heading_contexts(self, sections: list[Section]) -> list[RetractionContext]:
        return [
            RetractionContext("heading", marker, sections[i].line, sections[i].end_line)
            for i, marker in self.heading_markers.items()
        ]


class _Innermost:
    """The containing context that starts last (ties: the shorter one), for lines asked in
    increasing order: one sweep over the contexts (sorted by start, longer first), so a note
    with thousands of sections and callouts is not quadratic."""

    def __init__(self, contexts: list[RetractionContext]) -> None:
        self.contexts = contexts
        self.next = 0
        self.open: list[RetractionContext] = []

    def at(self, line: int) -> RetractionContext | None:
        while self.next < len(self.contexts) and self.contexts[self.next].line <= line:
            self.open.append(self.contexts[self.next])
            self.next += 1
        while self.open and self.open[-1].end_line < line:
            self.open.pop()  # ended before this line, so before every later one too
        return self.open[-1] if self.open else None
