"""A passage's words, each with its source line, unit and sentence (``Tokens``): what every
claim matcher reads of a passage (``guards.claims.textmatch``), built once per passage, its
words read once per distinct text.
"""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from functools import cached_property
from itertools import accumulate, compress, repeat
from operator import eq, not_, or_
from sys import intern
from typing import NamedTuple

from .textmatch import (
    BREAKS,
    SENTENCE_ENDS,
    SEPARATORS,
    SHINGLE,
    TOKEN,
    UNIT_BREAK,
    WORD,
    normalise,
)

TEXTS_KEPT = 1024  # the distinct passage texts whose words are kept for another passage


class Token(NamedTuple):
    word: str
    line: int
    unit: int  # index of the passage unit (sentence group, table row, list item) it sits in
    sentence: int = 0  # index of the sentence within the passage


class Tokens:
    """A passage's words with their lines, units and sentences, and what every matcher asks of
    them, computed once: the word sequence, its 3-shingles, the sentences. Kept as parallel
    lists built by whole-unit scans (a large note's section has tens of thousands of words, and
    a Python step per word is what makes a scan slow)."""

    def __init__(self, units: list[list[tuple[int, str]]]) -> None:
        # One normalisation for the whole passage and one word scan per unit give the words
        # and their units. Lines and sentences need a finer scan, in which line breaks and
        # sentence ends come out as tokens of their own; running counts of them (C-level
        # map/accumulate, no Python step per word) place every word - done only for passages
        # a claim may match.
        self._numbers = [line for unit in units for line, _ in unit]
        self.normalised, self.unit_words, self.sequence = read(joined(units))

    @property
    def vocabulary(self) -> set[str]:
        """The distinct words, built when asked (kept for every passage, the sets would take
        more memory than the words)."""
        return set(self.sequence)

    @cached_property
    def _scan(self) -> tuple[list[str], list[bool]]:
        tokens = TOKEN.findall(self.normalised)
        return tokens, list(map(not_, map(SEPARATORS.__contains__, tokens)))

    def _running(self, counted: Iterable[bool]) -> list[int]:
        return list(compress(accumulate(counted), self._scan[1]))

    @cached_property
    def lines(self) -> list[int]:
        counts = self._running(map(BREAKS.__contains__, self._scan[0]))
        return list(map(self._numbers.__getitem__, counts))

    @cached_property
    def units(self) -> list[int]:
        return [index for index, words in enumerate(self.unit_words) for _ in words]

    @cached_property
    def sentence_ids(self) -> list[int]:
        tokens = self._scan[0]
        ends = map(SENTENCE_ENDS.__contains__, tokens)
        return self._running(map(or_, ends, map(eq, tokens, repeat(UNIT_BREAK))))

    def __len__(self) -> int:
        return len(self.sequence)

    def __getitem__(self, index: int) -> Token:
        return Token(
            self.sequence[index], self.lines[index], self.units[index], self.sentence_ids[index]
        )

    def shingle_hits(self, wanted: set[tuple[str, ...]]) -> set[int]:
        """Positions where a shingle of ``wanted`` starts. Shingles whose words the passage
        does not all use are dropped first: most passages never build their own shingles."""
        vocabulary = self.vocabulary
        possible = {
            s for s in wanted if s[0] in vocabulary and s[1] in vocabulary and s[2] in vocabulary
        }
        if not possible:
            return set()
        seq = self.sequence
        firsts = {s[0] for s in possible}
        return {
            i
            for i in range(len(seq) - SHINGLE + 1)
            if seq[i] in firsts and (seq[i], seq[i + 1], seq[i + 2]) in possible
        }

    def positions(self, words: set[str]) -> list[int]:
        """Where any of ``words`` occurs, in order."""
        return [i for i, word in enumerate(self.sequence) if word in words]

    @cached_property
    def sentences(self) -> list[tuple[int, int]]:
        """Token spans (inclusive) of the sentences."""
        ids = self.sentence_ids
        starts = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
        return [(a, b - 1) for a, b in zip(starts, [*starts[1:], len(ids)], strict=True)]

    def sentence_span(self, sentence: int) -> tuple[int, int]:
        """Token span (inclusive) of one sentence, by id."""
        start = bisect_left(self.sentence_ids, sentence)
        return start, bisect_right(self.sentence_ids, sentence) - 1

    @cached_property
    def unit_sentences(self) -> dict[int, list[tuple[str, ...]]]:
        """The sentences of each unit, as words."""
        found: dict[int, list[tuple[str, ...]]] = {}
        for a, b in self.sentences:
            found.setdefault(self.units[a], []).append(tuple(self.sequence[a : b + 1]))
        return found


@functools.lru_cache(maxsize=TEXTS_KEPT)
def read(text: str) -> tuple[str, tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """A passage's text normalised, the words of each of its units, and all its words in
    order: what its tokens take from the text alone (its lines are the caller's). Kept for the
    last ``TEXTS_KEPT`` texts, so a block pasted into many files is read once; the passages
    with that text share them, as tuples no reader can change."""
    normalised = normalise(text)
    # each distinct word once in memory, however many passages use it (10,000 notes)
    unit_words = tuple(
        tuple(map(intern, WORD.findall(part))) for part in normalised.split(UNIT_BREAK)
    )
    return normalised, unit_words, tuple(w for unit in unit_words for w in unit)


def tokenize(units: list[list[tuple[int, str]]]) -> Tokens:
    """The words of a passage's units, each with its source line, unit and sentence."""
    return Tokens(units)


def joined(units: list[list[tuple[int, str]]]) -> str:
    """A passage's text: lines joined by line breaks, units by ``UNIT_BREAK`` (a record
    separator written in the text itself becomes a space, so only units are split by it)."""
    text = UNIT_BREAK.join("\n".join(text for _, text in unit) for unit in units)
    if text.count(UNIT_BREAK) >= len(units):
        text = UNIT_BREAK.join(
            "\n".join(line.replace(UNIT_BREAK, " ") for _, line in unit) for unit in units
        )
    return text
