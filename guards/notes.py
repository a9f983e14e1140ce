"""Markdown notes (``learnings/*.md``) -> :class:`Note`.

A note is read once into blocks of plain text with their source lines, the sections they sit
in, and the retraction contexts that cover them, so claim guards can tell a stale assertion
from a mention inside a correction. All line numbers are 1-based in the original file,
front matter included.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from typing import Any

from . import yamlsrc
from .errors import GuardsError
from .markers import CLAIM_ID, Citation, Marker, find_claim_refs, retraction_marker

__all__ = ["Block", "Citation", "Note", "RetractionContext", "Section", "parse_note"]

_ALERT_TAG = re.compile(r"\s*\[![A-Za-z]+\]\s*$")
_ID_KEYS = ("claims", "retracts")
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
    section: int
    quoted: bool
    struck: tuple[str, ...]
    retraction: RetractionContext | None
    line_texts: tuple[tuple[int, str], ...]


@dataclass
class Note:
    path: str
    text: str
    front_matter: dict
    sections: list[Section]
    blocks: list[Block]
    retractions: list[RetractionContext]
    citations: list[Citation]

    def retracts(self) -> set[str]:
        """Claim ids this note retracts: front matter ``retracts:`` plus marker citations."""
        ids = set(_id_list(self.front_matter.get("retracts")))
        for context in self.retractions:
            ids.update(context.marker.claim_ids)
        return ids


def parse_note(text: str, shown: str) -> Note:
    """Parse one markdown note; bad front matter raises :class:`GuardsError` naming ``shown``."""
    lines = text.split("\n")
    front_matter, fm_citations, offset = _front_matter(lines, shown)
    body = "\n".join(lines[offset:])
    walker = _Walker(lines, offset)
    walker.walk(_parser().parse(body))
    note = walker.finish(shown, text, front_matter)
    note.citations[:0] = fm_citations
    return note


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    # Imported here: a CLI run that parses no notes should not pay for markdown-it.
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["strikethrough", "table"])


# --- front matter ---------------------------------------------------------------------------


def _front_matter(lines: list[str], shown: str) -> tuple[dict, list[Citation], int]:
    """(front matter data, its claim citations, number of lines it occupies)."""
    if not lines or lines[0].rstrip() != "---":
        return {}, [], 0
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if close is None:
        raise GuardsError("front matter opened with '---' is never closed", shown, 1)
    node = _compose_front_matter("\n".join(lines[1:close]), shown)
    data = _construct(node, shown)
    if data is None:
        return {}, [], close + 1
    if not isinstance(data, dict):
        raise GuardsError("front matter must be a mapping", shown, 1)
    citations = []
    for key in _ID_KEYS:
        citations += _front_matter_ids(yamlsrc.get(node, key), key, shown)
    return data, citations, close + 1


def _compose_front_matter(text: str, shown: str) -> Any:
    try:
        return yamlsrc.compose(text, shown)
    except GuardsError as exc:
        raise _shifted(exc, shown) from None


def _construct(node: Any, shown: str) -> Any:
    if node is None:
        return None
    try:
        return yamlsrc.construct(node, shown)
    except GuardsError as exc:
        raise _shifted(exc, shown) from None


def _shifted(exc: GuardsError, shown: str) -> GuardsError:
    """The same YAML error, with its line counted from the top of the file."""
    line = exc.line + 1 if exc.line is not None else 1
    return GuardsError(exc.message, shown, line, exc.column)


def _front_matter_ids(node: Any, key: str, shown: str) -> list[Citation]:
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
                f"front matter '{key}' must be a claim id or a list of claim ids", shown, line
            )
        if not CLAIM_ID.fullmatch(value):
            raise GuardsError(
                f"front matter '{key}': {value!r} is not a kebab-case claim id", shown, line
            )
        citations.append(Citation(value, line, 1, key == "retracts"))
    return citations


def _id_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [item for item in value if item is not None]


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
class _Walker:
    lines: list[str]
    offset: int
    blocks: list[tuple] = field(default_factory=list)  # Block arguments but the retraction
    sections: list[Section] = field(default_factory=list)
    contexts: list[RetractionContext] = field(default_factory=list)
    citations: list[tuple[int, int, str, bool]] = field(default_factory=list)
    quotes: list[_Quote] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    heading_markers: dict[int, Marker] = field(default_factory=dict)  # section index -> marker
    taken: dict[int, set[int]] = field(default_factory=dict)  # line -> columns already cited

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
        first_in_item = item is not None and not item.checked
        if first_in_item:
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
        # Blocks are built in finish(), once every retraction context's extent is known.
        self.blocks.append(
            (kind, text, start, end, len(self.sections) - 1, bool(self.quotes), struck, line_texts)
        )

    def cite(self, line: int, claim_id: str, struck: bool) -> None:
        """Record a citation, taking its column from the next unclaimed match in the raw line
        (plain text has lost markup, so its offsets are not source columns)."""
        taken = self.taken.setdefault(line, set())
        raw = find_claim_refs(self.lines[line - 1]) if line <= len(self.lines) else []
        column = next((at + 1 for found, at in raw if found == claim_id and at + 1 not in taken), 1)
        taken.add(column)
        self.citations.append((line, column, claim_id, struck))

    def finish(self, shown: str, text: str, front_matter: dict) -> Note:
        sections = self.close_sections()
        contexts = sorted(
            self.contexts + self.heading_contexts(sections), key=lambda c: (c.line, -c.end_line)
        )
        blocks = [Block(*args[:7], _innermost(contexts, args[2]), args[7]) for args in self.blocks]
        citations = [
            Citation(claim_id, line, column, struck or _innermost(contexts, line) is not None)
            for line, column, claim_id, struck in sorted(self.citations)
        ]
        return Note(shown, text, front_matter, sections, blocks, contexts, citations)

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


def _innermost(contexts: list[RetractionContext], line: int) -> RetractionContext | None:
    """The containing context that starts last (ties: the shorter one); sorted input."""
    found = None
    for context in contexts:
        if context.line > line:
            break
        if line <= context.end_line:
            found = context
    return found
