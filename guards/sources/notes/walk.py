"""The markdown walk behind :func:`guards.sources.notes.notes.parse_note`: markdown tokens (markdown-it's,
or the same ones from :mod:`guards.sources.notes.mdfast`) -> blocks of plain text with their source lines,
sections, retraction contexts and claim citations.

Each block keeps the lines its text came from; a retraction context (a heading, a callout or a
paragraph opening with a dated marker) covers a range of lines, and each block learns the
innermost context around it once every context's extent is known.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..markers import (
    Citation,
    Marker,
    find_claim_refs,
    ref_end,
    retraction_marker,
    withdrawn_citation,
)
from .blocks import Block, RetractionContext, Section, Walked

_ALERT_TAG = re.compile(r"\s*\[![A-Za-z]+\]\s*$")
_SPACES = re.compile(r"  +")


# --- inline text ----------------------------------------------------------------------------


@dataclass
class _Inline:
    """One inline run split per source line: plain text, struck fragments, citations."""

    lines: list[str]
    struck: list[str]
    refs: list[tuple[int, str, bool]]  # (line index, claim id, inside struck text)


def markdown_it_inline(token: Any) -> _Inline:
    """An inline token of markdown-it, read."""
    types, contents = [], []
    for child in token.children or ():
        kind = child.type
        types.append(_KINDS.get(kind, "other"))
        contents.append(_image_alt(child) if kind == "image" else child.content)
    return inline_runs(types, contents, True)


# markdown-it's inline token types -> the kinds inline_runs reads (any other: "other")
_KINDS = {
    "text": "text",
    "code_inline": "code_inline",
    "image": "image",
    "softbreak": "break",
    "hardbreak": "break",
    "s_open": "s_open",
    "s_close": "s_close",
}
_TEXTS = frozenset(("text", "text_special", "code_inline", "image"))


def inline_runs(types: list[str], contents: list[str], cites: bool) -> _Inline:
    """One inline run, split per source line, from its tokens: kinds (``text`` or
    ``text_special``, ``code_inline``, ``image`` with its alt text, ``break``, ``s_open``,
    ``s_close``, anything else is skipped) and contents. Adjacent text tokens are one piece,
    as markdown-it joins them; a citation must lie inside one piece. Without ``cites`` the
    caller knows no piece can hold one, and pieces are not joined."""
    if not cites and "s_open" not in types:
        # Nothing struck, no citation: each line is its pieces joined (no piece holds a break).
        text = "".join(
            [
                c if k in _TEXTS else "\n" if k == "break" else ""
                for k, c in zip(types, contents, strict=True)
            ]
        )
        return _Inline([line.strip() for line in text.split("\n")], [], [])
    if cites:
        types, contents = _joined(types, contents)
    kept: list[list[str]] = [[]]
    struck_lines: set[int] = set()
    fragments: list[str] = []
    fragment: list[str] | None = None  # the struck span being read
    refs = []
    for kind, piece in zip(types, contents, strict=True):
        if kind in _TEXTS:
            (kept[-1] if fragment is None else fragment).append(piece)
            if cites and "claim:" in piece:  # cheap pre-check: most pieces cite nothing
                refs += [
                    (len(kept) - 1, claim_id, fragment is not None)
                    for claim_id, _ in find_claim_refs(piece)
                ]
        elif kind == "break":
            kept.append([])
            if fragment is not None:
                fragment.append("\n")
        elif kind == "s_open":
            fragment = []
            struck_lines.add(len(kept) - 1)
        elif kind == "s_close" and fragment is not None:
            fragments.append("".join(fragment))
            fragment = None
    lines = [_plain(parts, index in struck_lines) for index, parts in enumerate(kept)]
    return _Inline(lines, fragments, refs)


def plain_run(text: str) -> _Inline:
    """An inline run that is all text (no markup at all)."""
    refs = (
        [(0, claim_id, False) for claim_id, _ in find_claim_refs(text)] if "claim:" in text else []
    )
    return _Inline([text.strip()], [], refs)


def _joined(types: list[str], contents: list[str]) -> tuple[list[str], list[str]]:
    """Adjacent ``text`` and ``text_special`` tokens as one ``text`` token."""
    joined_types: list[str] = []
    joined: list[str] = []
    for kind, content in zip(types, contents, strict=True):
        if kind == "text" or kind == "text_special":
            if joined_types and joined_types[-1] == "text":
                joined[-1] += content
                continue
            kind = "text"
        joined_types.append(kind)
        joined.append(content)
    return joined_types, joined


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
    # markdown-it's inline token (or the fast reader's inline content) -> its runs
    inline: Callable[[Any], _Inline] = markdown_it_inline
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
        """Handle one token; returns the index of the last token it consumed.

        Tokens are markdown-it's, or those of :mod:`guards.sources.notes.mdfast`, which carry a paragraph's,
        heading's or table's inline content on the one token (kinds ``paragraph``,
        ``heading``, ``table``)."""
        token = tokens[index]
        kind = token.type
        if kind == "paragraph":
            self.paragraph(token, token.content)
        elif kind == "heading":
            self.heading(token, token.content)
        elif kind == "table":
            self.table_rows(self.span(token), [(r + 1, cells) for r, cells in token.rows])
        elif kind == "heading_open":
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
        runs = self.inline(inline)
        title = " ".join(line for line in runs.lines if line)
        self.sections.append(Section(title, int(token.tag[1:]), start, end))
        marker = retraction_marker(title)
        if marker is not None:
            self.heading_markers[len(self.sections) - 1] = marker
        self.add_block("heading", start, end, runs, start)

    def paragraph(self, token: Any, inline: Any) -> None:
        start, end = self.span(token)
        runs = self.inline(inline)
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
        first_line = lines[0] or next((line for line in lines if line), "")
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
        span = self.span(tokens[index])
        rows: list[tuple[int, list[Any]]] = []
        while tokens[index].type != "table_close":
            token = tokens[index]
            if token.type == "tr_open":
                rows.append((token.map[0] + 1, []))
            elif token.type == "inline" and rows:
                rows[-1][1].append(token)
            index += 1
        self.table_rows(span, rows)
        return index

    def table_rows(self, span: tuple[int, int], rows: list[tuple[int, list[Any]]]) -> None:
        """A table from its rows: (0-based line in the body, the cells' inline contents)."""
        line_texts, struck = [], []
        for row, contents in rows:
            line = row + self.offset
            cells = [self.inline(content) for content in contents]
            line_texts.append((line, " | ".join(" ".join(cell.lines) for cell in cells)))
            for cell in cells:
                struck += cell.struck
                for _, claim_id, in_struck in cell.refs:
                    self.cite(line, claim_id, in_struck)
        text = "\n".join(text for _, text in line_texts)
        self.block("table", text, span[0], span[1], tuple(struck), tuple(line_texts))

    def add_block(self, kind: str, start: int, end: int, runs: _Inline, first: int) -> None:
        # `first` is the line of the block's first text line; inline line i sits at first + i.
        lines = runs.lines
        if len(lines) == 1:
            line_texts: tuple[tuple[int, str], ...] = ((first, lines[0]),)
            text = lines[0]
        else:
            line_texts = tuple((first + i, text) for i, text in enumerate(lines))
            text = "\n".join(lines)
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
        blocks = [_covered(b, around.at(b.line)) for b in self.blocks]
        around = _Innermost(contexts)
        citations = [
            Citation(
                claim_id,
                line,
                column,
                struck or around.at(line) is not None or self.withdrawn(line, column),
                end_column=ref_end(
                    self.lines[line - 1] if line <= len(self.lines) else "", column, claim_id
                ),
            )
            for line, column, claim_id, struck in sorted(self.citations)
        ]
        return Walked(sections, blocks, contexts, citations)

    def withdrawn(self, line: int, column: int) -> bool:
        """The citation is written as withdrawn (``claim:x (retracted)``, struck)."""
        raw = self.lines[line - 1] if line <= len(self.lines) else ""
        return withdrawn_citation(raw, column - 1)

    def close_sections(self) -> list[Section]:
        """Give each section its end: the last non-blank line before the next heading of the
        same or a higher level."""
        closed = []
        for index, section in enumerate(self.sections):
            following = (s.line for s in self.sections[index + 1 :] if s.level <= section.level)
            end = next(following, len(self.lines) + 1) - 1
            while end > section.end_line and not self.lines[end - 1].strip():
                end -= 1
            end = max(end, section.end_line)
            closed.append(section if end == section.end_line else section._replace(end_line=end))
        return closed

    def heading_contexts(self, sections: list[Section]) -> list[RetractionContext]:
        return [
            RetractionContext("heading", marker, sections[i].line, sections[i].end_line)
            for i, marker in self.heading_markers.items()
        ]


def _covered(block: Block, context: RetractionContext | None) -> Block:
    return block if context is None else block._replace(retraction=context)


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
