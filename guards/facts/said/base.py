"""The statement every layout reads, and what the readers share: a value as written, and the
sentences of a block."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ...sources.notes.notes import Block
from ...sources.patterns import lazy

VAR = r"[A-Z][A-Z0-9]*_[A-Z0-9_]+"
VARIABLE = lazy(rf"^{VAR}$")
VALUE = r"[^\s`'\"*|,;()]+"
Q = r"[`'\"*]*"
PLACEHOLDER = lazy(r"^(?:[-—–]+|n/?a|none|unset|empty|\(.*\)|<.*>|\.\.\.|…)$", re.I)
SENTENCE_END = lazy(r"(?<=[.!?])\s+(?=[A-Z(`*])")


@dataclass(frozen=True)
class Statement:
    subject: str | None  # the text naming what it is about; None: the knob or file says
    knob: str  # a canonical knob name, or an environment variable as written
    value: str  # as written, quotes and backticks removed
    path: str
    line: int
    column: int  # 1-based, at the value
    # table, parameter, block, sentence, shell, export, host, universal (notes); comment,
    # name, profile, tier (composes and file names)
    layout: str
    mention: bool = False  # ``subject`` is a passage to find one name in, not a name
    names: tuple[str, ...] = ()  # other names of the subject (a table's container column)
    section: int = -1  # in a note, the index of its section (-1: before the first heading)
    key: str = ""  # what it is read under, as messages name it: a field's key, "summary line"
    said: str = ""  # the words that state it, as messages quote them (``TP=2``, ``160K ctx``)
    # just after the value as written on ``line`` (0: not known); not part of what it says
    end_column: int = field(default=0, compare=False)


def value_of(cell: str) -> str | None:
    """The value a cell or a listing gives: one word, not a placeholder."""
    value = cell.strip().strip("`*'\"").strip()
    if not value or " " in value or PLACEHOLDER.match(value):
        return None
    return value


class Sentences:
    """A block's text cut into sentences once: the sentence a word written on a line is in, found
    by bisection (a paragraph of many figures is read in linear time, not once per figure)."""

    def __init__(self, block: Block) -> None:
        self.flat = " ".join(t for _, t in block.line_texts)
        self.texts = dict(block.line_texts)
        self.offsets: dict[int, int] = {}
        at = 0
        for number, text in block.line_texts:
            self.offsets.setdefault(number, at)
            at += len(text) + 1
        cuts = list(SENTENCE_END.finditer(self.flat))
        self.starts = [m.end() for m in cuts]  # where each next sentence starts
        self.stops = [m.start() for m in cuts]  # where each sentence ends

    def at(self, line: int, text: str) -> str:
        """The sentence holding ``text`` written on ``line`` (it may run over several lines)."""
        here = self.texts.get(line, "")
        at = self.offsets.get(line, len(self.flat)) + max(here.find(text), 0)
        before = bisect.bisect_left(self.starts, at)  # the cuts that end before ``at``
        start = self.starts[before - 1] if before else 0
        after = bisect.bisect_left(self.stops, at)
        end = self.stops[after] if after < len(self.stops) else len(self.flat)
        return self.flat[start:end]
