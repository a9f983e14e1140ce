"""The container block rules of guards' fast note reader (markdown-it's table, blockquote and
list), on :class:`guards.sources.notes.mdstate.BlockState`; the leaf rules and the block loop
are in :mod:`guards.sources.notes.mdfast`."""

from __future__ import annotations

from ..patterns import lazy
from .mdstate import BlockState, Fallback, trim

_HEADER_CELL = lazy(r"^:?-+:?$")


class Containers(BlockState):
    """Tables, blockquotes and lists: rules that hold other blocks or rows."""

    def table(self, start_line: int, end_line: int, silent: bool) -> bool:
        if start_line + 2 > end_line:
            return False
        next_line = start_line + 1
        if self.s_count[next_line] < self.blk_indent or self.is_code_block(next_line):
            return False
        aligns = self._delimiter_row(next_line)
        if aligns is None:
            return False
        line_text = trim(self._line_text(start_line))
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
            cell = trim(column)
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
        table.rows = [(start_line, [trim(cell) for cell in columns])]
        autocompleted, next_line = 0, start_line + 2
        while next_line < end_line:
            if self.s_count[next_line] < self.blk_indent:
                break
            if self.terminates(next_line, end_line, "blockquote"):
                break
            line_text = trim(self._line_text(next_line))
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
                        trim(cells[i]) if i < len(cells) and cells[i] else ""
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
