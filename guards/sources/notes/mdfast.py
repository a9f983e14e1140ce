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

from ..patterns import lazy
from .mdcontainers import Containers
from .mdstate import MAX_NESTING, WHITESPACE_CODES, Fallback, Tok, trim

__all__ = ["CLOSE_TAG", "OPEN_TAG", "WHITESPACE_CODES", "Fallback", "Tok", "block_tokens"]
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
_STARTERS = frozenset("`~>*-_+0123456789<#")  # where a rule other than table can start


def block_tokens(src: str) -> list[Tok]:
    """The block tokens markdown-it gives for ``src`` (a note's body), as far as the walk reads
    them; raises :class:`Fallback` when ``src`` needs a rule this port does not carry."""
    if "\0" in src:
        raise Fallback("NUL")
    state = _BlockState(src)
    state.tokenize(0, state.line_max)
    return state.tokens


class _BlockState(Containers):
    """markdown-it's block rules and loop, without rendering data."""

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
            content = trim(self.get_lines(line, following, self.blk_indent, False))
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
        heading.content = trim(src[pos:maximum])
        return True

    def text_block(self, start_line: int, end_line: int) -> None:
        """lheading, else paragraph. Both scan the following lines alike (lheading also looks
        for an underline), so one scan serves both; the paragraph rescans only where its own
        end (the last line of all) can change the outcome."""
        old_parent, self.parent_type = self.parent_type, "paragraph"
        next_line, level = self.scan_text(start_line + 1, end_line, True)
        if level:
            content = trim(self.get_lines(start_line, next_line, self.blk_indent, False))
            self.line = next_line + 1
            self.push("heading", 0, [start_line, self.line], "h" + str(level)).content = content
            self.parent_type = old_parent
            return
        # lheading failed and left the parent type "paragraph"; the paragraph restores that.
        if next_line >= end_line and end_line < self.line_max:
            next_line, _ = self.scan_text(start_line + 1, self.line_max, False)
        content = trim(self.get_lines(start_line, next_line, self.blk_indent, False))
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
