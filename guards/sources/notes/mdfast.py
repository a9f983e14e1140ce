"""A faster reading of a note's markdown: the tokens markdown-it-py gives, for the constructs
notes are written in, so a note reads the same at a fraction of the cost.

``guards.sources.notes.notes`` reads every note with markdown-it-py's CommonMark preset (tables and
strikethrough on). That parser offers every line and every character to a list of rule
functions and builds a token object for each: most of a run's time on an estate with
megabytes of notes. This module is a port of the same algorithm - markdown-it-py's block
rules (table, code, fence, blockquote, hr, list, html_block, heading, lheading, paragraph,
with StateBlock's line marks and their quirks), and in :mod:`guards.sources.notes.mdinline` its inline
rules - so it finds the same blocks with the same line maps and the same inline tokens. It
tries only the rules a line's first character allows, keeps no rendering data, makes one
token where markdown-it makes an opening and an inline token, and imports nothing.

Where the port would have to follow markdown-it into a corner it does not carry, it gives up
rather than guess: :class:`Fallback` for the whole note (a link reference definition, which
changes how every ``[label]`` reads; a tab in a container's indentation; a NUL; nesting past
markdown-it's limit), and the caller parses that note with markdown-it.
``tests/test_notes_fast.py`` checks that both give the same ``Note``.
"""

from __future__ import annotations

import re
from itertools import accumulate

from ..patterns import lazy

__all__ = ["CLOSE_TAG", "OPEN_TAG", "WHITESPACE_CODES", "Fallback", "Tok", "block_tokens"]

MAX_NESTING = 20  # markdown-it's commonmark preset: deeper content is skipped, so we fall back

# The characters markdown-it's mdTrim strips (JavaScript's trim minus U+FEFF).
WHITESPACE_CODES = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x202F, 0x205F, 0x3000}
_TRIM = "".join(
    chr(c) for c in sorted(WHITESPACE_CODES | set(range(0x2000, 0x200B)) | {0x2028, 0x2029})
)


class Fallback(Exception):
    """The note uses a construct this reader does not follow: parse it with markdown-it."""


class Tok:
    """The part of a markdown-it token the note walk reads. A paragraph, heading or table is
    one token with its inline content (``content``; a table's ``rows``: each row's line and
    cell contents), where markdown-it has an opening token followed by inline tokens."""

    __slots__ = ("content", "map", "rows", "tag", "type")

    rows: list[tuple[int, list[str]]]  # set on tables only

    def __init__(self, type_: str, map_: list[int], tag: str = "", content: str = ""):
        self.type = type_
        self.map = map_
        self.tag = tag
        self.content = content


def _trim(text: str) -> str:
    return text.strip(_TRIM)


# html_block's opening and closing sequences (markdown-it's HTML_SEQUENCES), the last one
# unable to interrupt a paragraph.
_BLOCK_NAMES = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|"
    "details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|"
    "h1|h2|h3|h4|h5|h6|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    "noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|"
    "thead|title|tr|track|ul"
)
_ATTRIBUTE = (
    r"(?:\s+[a-zA-Z_:][a-zA-Z0-9:._-]*"
    r"(?:\s*=\s*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?)"
)
OPEN_TAG = r"<[A-Za-z][A-Za-z0-9\-]*" + _ATTRIBUTE + r"*\s*\/?>"
CLOSE_TAG = r"<\/[A-Za-z][A-Za-z0-9\-]*\s*>"
_HTML_SEQUENCES = (
    (
        lazy(r"^<(?a:(script|pre|style|textarea))(?=(\s|>|$))", re.IGNORECASE),
        lazy(r"<\/(?a:(script|pre|style|textarea))>", re.IGNORECASE),
        True,
    ),
    (lazy(r"^<!--"), lazy(r"-->"), True),
    (lazy(r"^<\?"), lazy(r"\?>"), True),
    (lazy(r"^<![A-Za-z]"), lazy(r">"), True),
    (lazy(r"^<!\[CDATA\["), lazy(r"\]\]>"), True),
    (
        lazy(r"^</?(?a:(" + _BLOCK_NAMES + r"))(?=(\s|/?>|$))", re.IGNORECASE),
        lazy(r"^$"),
        True,
    ),
    (lazy(r"^(?:" + OPEN_TAG + "|" + CLOSE_TAG + r")\s*$"), lazy(r"^$"), False),
)
_HEADER_CELL = lazy(r"^:?-+:?$")
_STARTERS = frozenset("`~>*-_+0123456789<#")  # where a rule other than table can start


def block_tokens(src: str) -> list[Tok]:
    """The block tokens markdown-it gives for ``src`` (a note's body), as far as the walk reads
    them; raises :class:`Fallback` when ``src`` needs a rule this port does not carry."""
    if "\0" in src:
        raise Fallback("NUL")
    state = _BlockState(src)
    state.tokenize(0, state.line_max)
    return state.tokens


class _BlockState:
    """markdown-it's StateBlock and its block rules, without rendering data."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.length = len(src)
        self.tabbed: set[int] = set()  # lines with a tab in their indentation
        self._marks(src)
        self.line_max = len(self.b_marks) - 1
        self.blk_indent = 0
        self.list_indent = -1
        self.line = 0
        self.level = 0
        self.parent_type = "root"
        self.tokens: list[Tok] = []
        self.last_ref_colon = src.rfind("]:")

    def _marks(self, src: str) -> None:
        """Line starts, ends and indents, as StateBlock's constructor finds them."""
        texts = src.split("\n")
        if src.endswith("\n") or not texts[-1].strip(" \t"):
            texts.pop()  # no line after the last break, nor a last line of only blanks
        ends = list(accumulate(len(text) + 1 for text in texts))
        self.e_marks = [end - 1 for end in ends] + [len(src)]
        self.b_marks = [0, *ends[:-1]] if texts else []
        self.b_marks.append(len(src))
        self.t_shift = [len(text) - len(text.lstrip(" \t")) for text in texts] + [0]
        self.s_count = self.t_shift.copy()
        if "\t" in src:
            for line, text in enumerate(texts):
                if "\t" in text[: self.t_shift[line]]:
                    self.tabbed.add(line)
                    offset = 0
                    for ch in text[: self.t_shift[line]]:
                        offset += 4 - offset % 4 if ch == "\t" else 1
                    self.s_count[line] = offset

    # --- helpers (StateBlock) ---

    def push(self, type_: str, nesting: int, map_: list[int], tag: str = "") -> Tok:
        self.level += nesting
        token = Tok(type_, map_, tag)
        self.tokens.append(token)
        return token

    def nest(self, nesting: int) -> None:
        """A token the note walk does not read (a list, a closing paragraph): only its level."""
        self.level += nesting

    def is_empty(self, line: int) -> bool:
        return self.b_marks[line] + self.t_shift[line] >= self.e_marks[line]

    def is_code_block(self, line: int) -> bool:
        return self.s_count[line] - self.blk_indent >= 4

    def first_char(self, line: int) -> str:
        pos = self.b_marks[line] + self.t_shift[line]
        return self.src[pos] if pos < self.length else ""

    def get_lines(self, begin: int, end: int, indent: int, keep_last_lf: bool) -> str:
        if begin >= end:
            return ""
        src, parts = self.src, []
        b_marks, e_marks, t_shift = self.b_marks, self.e_marks, self.t_shift
        for line in range(begin, end):
            first = b_marks[line]
            last = e_marks[line] + 1 if line + 1 < end or keep_last_lf else e_marks[line]
            if indent:
                # Without tabs every character of the indent (or of a list marker the indent
                # covers) is one column, and the one after it is not blank.
                cut = min(indent, t_shift[line], last - first)
                if line in self.tabbed and "\t" in src[first : first + cut]:
                    raise Fallback("tab in indentation")
                first += cut
            parts.append(src[first:last])
        return parts[0] if len(parts) == 1 else "".join(parts)

    # --- the block loop ---

    def tokenize(self, start_line: int, end_line: int) -> None:
        b_marks, e_marks, t_shift = self.b_marks, self.e_marks, self.t_shift
        line = start_line
        while line < end_line:
            while line < self.line_max and b_marks[line] + t_shift[line] >= e_marks[line]:
                line += 1  # empty lines
            self.line = line
            if line >= end_line or self.s_count[line] < self.blk_indent:
                break
            if self.level >= MAX_NESTING:
                raise Fallback("nesting")
            self.block(line, end_line)
            line = self.line
            if line < end_line and b_marks[line] + t_shift[line] >= e_marks[line]:
                line += 1
                self.line = line

    def block(self, line: int, end_line: int) -> None:
        """Try the block rules in markdown-it's order; the first that matches runs. A rule
        whose first character cannot be there is not tried (it would fail)."""
        b_marks, t_shift = self.b_marks, self.t_shift
        ch = self.src[b_marks[line] + t_shift[line]]
        following = line + 1
        if (
            ch not in _STARTERS
            and ch != "["
            and self.s_count[line] - self.blk_indent < 4
            and b_marks[following] + t_shift[following] >= self.e_marks[following]
        ):
            # A line of text followed by an empty one: only the paragraph rule matches.
            content = _trim(self.get_lines(line, following, self.blk_indent, False))
            self.line = following
            self.push("paragraph", 0, [line, following]).content = content
            self.parent_type = "paragraph"  # lheading, tried first, leaves it so
            return
        if self.table_row_follows(line, end_line) and self.table(line, end_line, False):
            return
        if self.code(line, end_line):
            return
        if ch in _STARTERS:
            if ch in "`~" and self.fence(line, end_line, False):
                return
            if ch == ">" and self.blockquote(line, end_line, False):
                return
            if ch in "*-_" and self.hr(line, False):
                return
            if (ch in "*-+" or "0" <= ch <= "9") and self.list_block(line, end_line, False):
                return
            if ch == "<" and self.html_block(line, end_line, False):
                return
            if ch == "#" and self.heading(line, False):
                return
        elif ch == "[":
            self.reference(line)
        self.text_block(line, end_line)

    def table_row_follows(self, line: int, end_line: int) -> bool:
        """The cheapest of the table rule's conditions: a next line opening with | - or :."""
        following = line + 1
        pos = self.b_marks[following] + self.t_shift[following]
        return line + 2 <= end_line and pos < self.e_marks[following] and self.src[pos] in "|-:"

    def terminates(self, line: int, end_line: int, kind: str) -> bool:
        """Whether a block rule that may interrupt ``kind`` matches at ``line`` (silent mode).

        paragraph: table fence blockquote hr list html_block heading; blockquote: the same
        without table; list: fence blockquote hr."""
        if (
            kind == "paragraph"
            and self.table_row_follows(line, end_line)
            and self.table(line, end_line, True)
        ):
            return True
        ch = self.first_char(line)
        if ch not in _STARTERS:
            return False
        if ch in "`~" and self.fence(line, end_line, True):
            return True
        if ch == ">" and self.blockquote(line, end_line, True):
            return True
        if ch in "*-_" and self.hr(line, True):
            return True
        if kind == "list":
            return False
        if (ch in "*-+" or "0" <= ch <= "9") and self.list_block(line, end_line, True):
            return True
        if ch == "<" and self.html_block(line, end_line, True):
            return True
        return ch == "#" and self.heading(line, True)

    # --- rules ---

    def reference(self, line: int) -> None:
        """A link reference definition changes how every ``[label]`` in the note reads: not
        carried. Falls back unless the reference rule certainly fails here."""
        pos = self.b_marks[line] + self.t_shift[line]
        if self.is_code_block(line) or self.last_ref_colon < pos:
            return
        close = self.src.find("]", pos + 1)
        if close < 0:
            return
        label = self.src[pos + 1 : close]
        if "\\" in label or "\n" in label:
            raise Fallback("reference")
        if "[" in label:
            return
        if self.src[close + 1 : close + 2] == ":":
            raise Fallback("reference")

    def code(self, start_line: int, end_line: int) -> bool:
        if not self.is_code_block(start_line):
            return False
        last = next_line = start_line + 1
        while next_line < end_line:
            if self.is_empty(next_line):
                next_line += 1
                continue
            if self.is_code_block(next_line):
                next_line += 1
                last = next_line
                continue
            break
        self.line = last
        token = self.push("code_block", 0, [start_line, last])
        token.content = self.get_lines(start_line, last, 4 + self.blk_indent, False) + "\n"
        return True

    def fence(self, start_line: int, end_line: int, silent: bool) -> bool:
        src = self.src
        pos = self.b_marks[start_line] + self.t_shift[start_line]
        maximum = self.e_marks[start_line]
        if self.is_code_block(start_line) or pos + 3 > maximum:
            return False
        marker = src[pos]
        if marker not in "~`":
            return False
        mem = pos
        while pos < maximum and src[pos] == marker:
            pos += 1
        length = pos - mem
        if length < 3:
            return False
        if marker == "`" and "`" in src[pos:maximum]:
            return False
        if silent:
            return True
        next_line, have_end = start_line, False
        while True:
            next_line += 1
            if next_line >= end_line:
                break
            pos = mem = self.b_marks[next_line] + self.t_shift[next_line]
            maximum = self.e_marks[next_line]
            if pos < maximum and self.s_count[next_line] < self.blk_indent:
                break
            if pos >= len(src):
                break
            if src[pos] != marker or self.is_code_block(next_line):
                continue
            while pos < len(src) and src[pos] == marker:
                pos += 1
            if pos - mem < length:
                continue
            while pos < len(src) and src[pos] in " \t":
                pos += 1
            if pos < maximum:
                continue
            have_end = True
            break
        self.line = next_line + (1 if have_end else 0)
        token = self.push("fence", 0, [start_line, self.line])
        token.content = self.get_lines(start_line + 1, next_line, self.s_count[start_line], True)
        return True

    def hr(self, start_line: int, silent: bool) -> bool:
        src = self.src
        pos = self.b_marks[start_line] + self.t_shift[start_line]
        maximum = self.e_marks[start_line]
        if self.is_code_block(start_line) or pos >= len(src):
            return False
        marker = src[pos]
        if marker not in "*-_":
            return False
        count = 1
        for ch in src[pos + 1 : maximum]:
            if ch != marker and ch not in " \t":
                return False
            if ch == marker:
                count += 1
        if count < 3:
            return False
        if not silent:
            self.line = start_line + 1
        return True

    def heading(self, start_line: int, silent: bool) -> bool:
        src = self.src
        pos = self.b_marks[start_line] + self.t_shift[start_line]
        maximum = self.e_marks[start_line]
        if self.is_code_block(start_line) or pos >= maximum or src[pos] != "#":
            return False
        level, pos = 1, pos + 1
        while pos < maximum and src[pos] == "#" and level <= 6:
            level += 1
            pos += 1
        if level > 6 or (pos < maximum and src[pos] not in " \t"):
            return False
        if silent:
            return True
        while maximum > pos and src[maximum - 1] in " \t":
            maximum -= 1
        tmp = maximum
        while tmp > pos and src[tmp - 1] == "#":
            tmp -= 1
        if tmp > pos and src[tmp - 1] in " \t":
            maximum = tmp
        self.line = start_line + 1
        heading = self.push("heading", 0, [start_line, self.line], "h" + str(level))
        heading.content = _trim(src[pos:maximum])
        return True

    def text_block(self, start_line: int, end_line: int) -> None:
        """lheading, else paragraph. Both scan the following lines alike (lheading also looks
        for an underline), so one scan serves both; the paragraph rescans only where its own
        end (the last line of all) can change the outcome."""
        old_parent, self.parent_type = self.parent_type, "paragraph"
        next_line, level = self.scan_text(start_line + 1, end_line, True)
        if level:
            content = _trim(self.get_lines(start_line, next_line, self.blk_indent, False))
            self.line = next_line + 1
            self.push("heading", 0, [start_line, self.line], "h" + str(level)).content = content
            self.parent_type = old_parent
            return
        # lheading failed and left the parent type "paragraph"; the paragraph restores that.
        if next_line >= end_line and end_line < self.line_max:
            next_line, _ = self.scan_text(start_line + 1, self.line_max, False)
        content = _trim(self.get_lines(start_line, next_line, self.blk_indent, False))
        self.line = next_line
        self.push("paragraph", 0, [start_line, next_line]).content = content

    def scan_text(self, next_line: int, end_line: int, underline: bool) -> tuple[int, int]:
        """The line a paragraph (or, with ``underline``, a setext heading) starting above
        ``next_line`` ends before, and the heading level when an underline ends it."""
        src, b_marks, e_marks = self.src, self.b_marks, self.e_marks
        t_shift, s_count, blk_indent = self.t_shift, self.s_count, self.blk_indent
        while next_line < end_line:
            pos, maximum = b_marks[next_line] + t_shift[next_line], e_marks[next_line]
            if pos >= maximum:
                break
            count = s_count[next_line]
            if count - blk_indent > 3:
                next_line += 1
                continue
            if underline and count >= blk_indent and src[pos] in "-=":
                marker = src[pos]
                while pos < maximum and src[pos] == marker:
                    pos += 1
                while pos < maximum and src[pos] in " \t":
                    pos += 1
                if pos >= maximum:
                    return next_line, 1 if marker == "=" else 2
            if count < 0:
                next_line += 1
                continue
            if self.terminates(next_line, end_line, "paragraph"):
                break
            next_line += 1
        return next_line, 0

    def html_block(self, start_line: int, end_line: int, silent: bool) -> bool:
        pos = self.b_marks[start_line] + self.t_shift[start_line]
        maximum = self.e_marks[start_line]
        if self.is_code_block(start_line) or pos >= self.length or self.src[pos] != "<":
            return False
        line_text = self.src[pos:maximum]
        sequence = next((s for s in _HTML_SEQUENCES if s[0].search(line_text)), None)
        if sequence is None:
            return False
        if silent:
            return sequence[2]
        next_line = start_line + 1
        ends_on_blank = bool(sequence[1].search(""))
        if not sequence[1].search(line_text):
            while next_line < end_line:
                if self.s_count[next_line] < self.blk_indent and (
                    ends_on_blank or not self.is_empty(next_line)
                ):
                    break
                pos = self.b_marks[next_line] + self.t_shift[next_line]
                line_text = self.src[pos : self.e_marks[next_line]]
                if sequence[1].search(line_text):
                    if line_text:
                        next_line += 1
                    break
                next_line += 1
        self.line = next_line
        return True

    def table(self, start_line: int, end_line: int, silent: bool) -> bool:
        if start_line + 2 > end_line:
            return False
        next_line = start_line + 1
        if self.s_count[next_line] < self.blk_indent or self.is_code_block(next_line):
            return False
        aligns = self._delimiter_row(next_line)
        if aligns is None:
            return False
        line_text = _trim(self._line_text(start_line))
        if "|" not in line_text or self.is_code_block(start_line):
            return False
        columns = _cells(line_text)
        column_count = len(columns)
        if column_count == 0 or column_count != aligns:
            return False
        if silent:
            return True
        return self._table_rows(start_line, end_line, columns)

    def _line_text(self, line: int) -> str:
        return self.src[self.b_marks[line] + self.t_shift[line] : self.e_marks[line]]

    def _delimiter_row(self, line: int) -> int | None:
        """The number of columns of a table's delimiter row, or None when ``line`` is none."""
        src = self.src
        pos, end = self.b_marks[line] + self.t_shift[line], self.e_marks[line]
        if pos + 1 >= end or src[pos] not in "|-:":
            return None
        first, second = src[pos], src[pos + 1]
        if second not in "|-: \t" or (first == "-" and second in " \t"):
            return None
        if any(ch not in "|-: \t" for ch in src[pos + 2 : end]):
            return None
        columns = src[pos:end].split("|")
        count = 0
        for index, column in enumerate(columns):
            cell = _trim(column)
            if not cell:
                if index == 0 or index == len(columns) - 1:
                    continue
                return None
            if not _HEADER_CELL.search(cell):
                return None
            count += 1
        return count

    def _table_rows(self, start_line: int, end_line: int, columns: list[str]) -> bool:
        old_parent, self.parent_type = self.parent_type, "table"
        column_count = len(columns)
        table = self.push("table", 0, [start_line, 0])
        table.rows = [(start_line, [_trim(cell) for cell in columns])]
        autocompleted, next_line = 0, start_line + 2
        while next_line < end_line:
            if self.s_count[next_line] < self.blk_indent:
                break
            if self.terminates(next_line, end_line, "blockquote"):
                break
            line_text = _trim(self._line_text(next_line))
            if not line_text or self.is_code_block(next_line):
                break
            cells = _cells(line_text)
            autocompleted += column_count - len(cells)
            if autocompleted > 0x10000:
                break
            table.rows.append(
                (
                    next_line,
                    [
                        _trim(cells[i]) if i < len(cells) and cells[i] else ""
                        for i in range(column_count)
                    ],
                )
            )
            next_line += 1
        table.map = [start_line, next_line]
        self.parent_type = old_parent
        self.line = next_line
        return True

    def blockquote(self, start_line: int, end_line: int, silent: bool) -> bool:
        if self.is_code_block(start_line):
            return False
        pos = self.b_marks[start_line] + self.t_shift[start_line]
        if pos >= self.length or self.src[pos] != ">":
            return False
        if silent:
            return True
        saved: list[tuple[int, int, int]] = []  # b_mark, t_shift, s_count per line
        old_line_max = self.line_max
        self._quote_line(start_line, saved)
        old_parent, self.parent_type = self.parent_type, "blockquote"
        next_line = start_line + 1
        last_empty = self._last_empty
        while next_line < end_line:
            outdented = self.s_count[next_line] < self.blk_indent
            pos = self.b_marks[next_line] + self.t_shift[next_line]
            if pos >= self.e_marks[next_line]:
                break
            if self.src[pos] == ">" and not outdented:
                self._quote_line(next_line, saved)
                last_empty = self._last_empty
                next_line += 1
                continue
            if last_empty:
                break
            if self.terminates(next_line, end_line, "blockquote"):
                self.line_max = next_line
                if self.blk_indent != 0:
                    saved.append(self._saved(next_line))
                    self.s_count[next_line] -= self.blk_indent
                break
            saved.append(self._saved(next_line))
            self.s_count[next_line] = -1
            next_line += 1
        old_indent, self.blk_indent = self.blk_indent, 0
        lines = [start_line, 0]
        self.push("blockquote_open", 1, lines)
        self.tokenize(start_line, next_line)
        self.push("blockquote_close", -1, lines)
        self.line_max = old_line_max
        self.parent_type = old_parent
        lines[1] = self.line
        for i, (b_mark, t_shift, s_count) in enumerate(saved):
            self.b_marks[start_line + i] = b_mark
            self.t_shift[start_line + i] = t_shift
            self.s_count[start_line + i] = s_count
        self.blk_indent = old_indent
        return True

    def _saved(self, line: int) -> tuple[int, int, int]:
        return self.b_marks[line], self.t_shift[line], self.s_count[line]

    def _quote_line(self, line: int, saved: list[tuple[int, int, int]]) -> None:
        """Move a `>` line's start past the marker and one optional space (markdown-it's
        blockquote, without tabs: a tab there falls back)."""
        src = self.src
        pos = self.b_marks[line] + self.t_shift[line] + 1
        maximum = self.e_marks[line]
        initial = offset = self.s_count[line] + 1
        if line in self.tabbed:
            raise Fallback("tab in indentation")
        if pos < len(src) and src[pos] == " ":
            pos += 1
            initial += 1
            offset += 1
        saved.append(self._saved(line))
        self.b_marks[line] = pos
        while pos < maximum:
            ch = src[pos]
            if ch == "\t":
                raise Fallback("tab after '>'")
            if ch != " ":
                break
            offset += 1
            pos += 1
        self._last_empty = pos >= maximum
        self.s_count[line] = offset - initial
        self.t_shift[line] = pos - self.b_marks[line]

    _last_empty = False

    def list_block(self, start_line: int, end_line: int, silent: bool) -> bool:
        if self.is_code_block(start_line):
            return False
        if (
            self.list_indent >= 0
            and self.s_count[start_line] - self.list_indent >= 4
            and self.s_count[start_line] < self.blk_indent
        ):
            return False
        terminating_paragraph = (
            silent
            and self.parent_type == "paragraph"
            and self.s_count[start_line] >= self.blk_indent
        )
        after, ordered = self._ordered_marker(start_line), True
        if after >= 0:
            start = self.b_marks[start_line] + self.t_shift[start_line]
            if terminating_paragraph and int(self.src[start : after - 1]) != 1:
                return False
        else:
            after, ordered = self._bullet_marker(start_line), False
            if after < 0:
                return False
        if terminating_paragraph:
            pos = after
            while pos < self.length and self.src[pos] in " \t":
                pos += 1
            if pos >= self.e_marks[start_line]:
                return False
        if silent:
            return True
        self._list_items(start_line, end_line, after, ordered)
        return True

    def _list_items(self, start_line: int, end_line: int, after: int, ordered: bool) -> None:
        src = self.src
        marker = src[after - 1]
        self.nest(1)
        next_line = start_line
        old_parent, self.parent_type = self.parent_type, "list"
        while next_line < end_line:
            content_start, offset, indent = self._item_content(start_line, after)
            lines = [start_line, 0]
            self.push("list_item_open", 1, lines)
            old_t_shift, old_s_count = self.t_shift[start_line], self.s_count[start_line]
            old_list_indent, self.list_indent = self.list_indent, self.blk_indent
            self.blk_indent = indent
            self.t_shift[start_line] = content_start - self.b_marks[start_line]
            self.s_count[start_line] = offset
            if content_start >= self.e_marks[start_line] and self.is_empty(start_line + 1):
                self.line = min(self.line + 2, end_line)
            else:
                self.tokenize(start_line, end_line)
            self.blk_indent = self.list_indent
            self.list_indent = old_list_indent
            self.t_shift[start_line] = old_t_shift
            self.s_count[start_line] = old_s_count
            self.push("list_item_close", -1, lines)
            next_line = start_line = self.line
            lines[1] = next_line
            if next_line >= end_line or self.s_count[next_line] < self.blk_indent:
                break
            if self.is_code_block(start_line) or self.terminates(next_line, end_line, "list"):
                break
            marks = self._ordered_marker if ordered else self._bullet_marker
            after = marks(next_line)
            if after < 0 or marker != src[after - 1]:
                break
        self.nest(-1)
        self.line = next_line
        self.parent_type = old_parent

    def _item_content(self, line: int, after: int) -> tuple[int, int, int]:
        """Where a list item's content starts (after the marker at ``line`` ending at
        ``after``), its column, and the indent the item's content needs."""
        if line in self.tabbed:
            raise Fallback("tab in indentation")
        src, pos, maximum = self.src, after, self.e_marks[line]
        initial = offset = self.s_count[line] + after - (self.b_marks[line] + self.t_shift[line])
        while pos < maximum:
            ch = src[pos]
            if ch == "\t":
                raise Fallback("tab after a list marker")
            if ch != " ":
                break
            offset += 1
            pos += 1
        indent_after = 1 if pos >= maximum else offset - initial
        if indent_after > 4:
            indent_after = 1  # the rest is an indented code block
        return pos, offset, initial + indent_after

    def _bullet_marker(self, line: int) -> int:
        src = self.src
        pos = self.b_marks[line] + self.t_shift[line]
        maximum = self.e_marks[line]
        if pos >= len(src) or src[pos] not in "*-+":
            return -1
        pos += 1
        if pos < maximum and src[pos] not in " \t":
            return -1
        return pos

    def _ordered_marker(self, line: int) -> int:
        src = self.src
        start = pos = self.b_marks[line] + self.t_shift[line]
        maximum = self.e_marks[line]
        if pos + 1 >= maximum or not "0" <= src[pos] <= "9":
            return -1
        pos += 1
        while True:
            if pos >= maximum:
                return -1
            ch = src[pos]
            pos += 1
            if "0" <= ch <= "9":
                if pos - start >= 10:
                    return -1
                continue
            if ch in ").":
                break
            return -1
        if pos < maximum and src[pos] not in " \t":
            return -1
        return pos


def _cells(line_text: str) -> list[str]:
    """A table row split at unescaped pipes, without empty first and last cells."""
    columns = _escaped_split(line_text)
    if columns and columns[0] == "":
        columns.pop(0)
    if columns and columns[-1] == "":
        columns.pop()
    return columns


def _escaped_split(text: str) -> list[str]:
    if "\\" not in text:
        return text.split("|")
    result, current, last, escaped = [], "", 0, False
    for pos, ch in enumerate(text):
        if ch == "|":
            if not escaped:
                result.append(current + text[last:pos])
                current, last = "", pos + 1
            else:
                current += text[last : pos - 1]
                last = pos
        escaped = ch == "\\"
    result.append(current + text[last:])
    return result
