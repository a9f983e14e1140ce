"""markdown-it's StateBlock as guards' fast note reader keeps it: line marks and indents, the
token list and the helpers every block rule uses (:mod:`guards.sources.notes.mdfast`)."""

from __future__ import annotations

from itertools import accumulate

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


def trim(text: str) -> str:
    return text.strip(_TRIM)


class BlockState:
    """markdown-it's StateBlock: line marks, indents, tokens and their helpers."""

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

    # --- the rules that containers call back (defined by the block rules) ---

    def tokenize(self, start_line: int, end_line: int) -> None:
        raise NotImplementedError

    def terminates(self, line: int, end_line: int, kind: str) -> bool:
        raise NotImplementedError
