"""Finding a claim's wording in prose, however it was re-wrapped or lightly edited.

Text is normalised (Unicode and case folded, dashes/tildes/multiplication signs/comparison
signs unified, markdown emphasis and code ticks dropped, ``21,443`` -> ``21443``, ``21k`` ->
``21000``) and cut into words that keep their source line. A passage asserts a claim where
either one of the claim's distinctive ``match`` phrases appears word for word, or a run of the
passage is dense with word 3-shingles of the claim's full text: at least ``MIN_SHINGLES`` of
them, making up at least ``MIN_DENSITY`` of the run. Dense runs separated by a few unrelated
words (a comment line dropped into the middle of a copy) are one copy. Thresholds were set on
the hand-labelled snippets in ``tests/fixtures/claims/snippets.yaml``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

SHINGLE = 3
MIN_SHINGLES = 5        # a shared run shorter than ~7 words is coincidence, not a copy
MIN_DENSITY = 0.5       # at least half of the run's shingles come from the claim
GAP = 6                 # shingle positions between hits that still count as one run
MERGE_GAP = 30          # words between two accepted runs that still make one copy

FOLD = str.maketrans({
    "—": "-", "–": "-", "‒": "-", "−": "-", "‐": "-", "‑": "-",
    "≈": "~", "∼": "~", "×": "x", "≥": ">=", "≤": "<=", "→": "->", "⇒": "=>",
    "‘": "'", "’": "'", "“": '"', "”": '"',
})
THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d])")
KILO = re.compile(r"\b(\d+)k\b")
MARKUP = re.compile(r"[*`]+|(?<![a-z0-9])_+|_+(?![a-z0-9])|~~")
WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(FOLD).casefold()
    text = THOUSANDS.sub(lambda m: m.group().replace(",", ""), text)
    text = KILO.sub(lambda m: m.group(1) + "000", text)
    return MARKUP.sub(" ", text)


def words(text: str) -> list[str]:
    return WORD.findall(normalise(text))


@dataclass(frozen=True)
class Copy:
    """Where a passage repeats a claim: first and last source line, and how it matched."""

    line: int
    end_line: int
    shingles: int        # claim shingles found in the copy
    phrase: bool         # a distinctive phrase matched word for word


class ClaimMatcher:
    """Finds copies of one claim's wording in passages of ``(line, text)`` pairs."""

    def __init__(self, text: str | None, phrases: list[str]) -> None:
        self.shingles = _shingles(words(text or ""))
        self.phrases = [p for p in (tuple(words(phrase)) for phrase in phrases) if p]
        for phrase in self.phrases:
            self.shingles |= _shingles(list(phrase))

    def find(self, passage: list[tuple[int, str]]) -> list[Copy]:
        tokens = [(word, line) for line, text in passage for word in words(text)]
        hits = {i for i in range(len(tokens) - SHINGLE + 1)
                if tuple(w for w, _ in tokens[i:i + SHINGLE]) in self.shingles}
        phrase_spans = self._phrase_spans([w for w, _ in tokens])
        runs = [run for run in _runs(sorted(hits)) if _dense(run)]
        spans = sorted([(run[0], run[-1] + SHINGLE - 1, len(run), False) for run in runs] +
                       [(start, end, 0, True) for start, end in phrase_spans])
        return [Copy(tokens[start][1], tokens[end][1], count, phrase)
                for start, end, count, phrase in _merge(spans, hits)]

    def _phrase_spans(self, tokens: list[str]) -> list[tuple[int, int]]:
        spans = []
        for phrase in self.phrases:
            size = len(phrase)
            spans += [(i, i + size - 1) for i in range(len(tokens) - size + 1)
                      if tuple(tokens[i:i + size]) == phrase]
        return spans


def _shingles(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1)}


def _runs(hits: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for position in hits:
        if runs and position - runs[-1][-1] <= GAP:
            runs[-1].append(position)
        else:
            runs.append([position])
    return runs


def _dense(run: list[int]) -> bool:
    return len(run) >= MIN_SHINGLES and len(run) / (run[-1] - run[0] + 1) >= MIN_DENSITY


def _merge(spans: list[tuple[int, int, int, bool]],
           hits: set[int]) -> list[tuple[int, int, int, bool]]:
    merged: list[tuple[int, int, int, bool]] = []
    for start, end, _, phrase in spans:
        if merged and start - merged[-1][1] <= MERGE_GAP:
            first, last, _, had_phrase = merged[-1]
            merged[-1] = (first, max(last, end), 0, had_phrase or phrase)
        else:
            merged.append((start, end, 0, phrase))
    return [(start, end, sum(1 for h in hits if start <= h <= end), phrase)
            for start, end, _, phrase in merged]
