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
MIN_SHINGLES = 5  # a shared run shorter than ~7 words is coincidence, not a copy
MIN_DENSITY = 0.5  # at least half of the run's shingles come from the claim
GAP = 6  # shingle positions between hits that still count as one run
MERGE_GAP = 30  # words between two accepted runs that still make one copy
KEY_WINDOW = 30  # words
MIN_KEYS = 5  # distinct key words of the claim inside one window
MIN_KEY_SHINGLES = 2  # ... backed by at least this many claim shingles in the same window

# Words too common to tell one claim from another: everyday English of four letters or more,
# and the vocabulary every note about serving LLMs uses.
COMMON = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "against",
        "also",
        "back",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "could",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "even",
        "ever",
        "every",
        "from",
        "further",
        "have",
        "having",
        "here",
        "into",
        "just",
        "least",
        "less",
        "like",
        "many",
        "more",
        "most",
        "much",
        "must",
        "never",
        "once",
        "only",
        "other",
        "over",
        "past",
        "same",
        "says",
        "should",
        "since",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "until",
        "upon",
        "very",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "within",
        "without",
        "would",
        "your",
        "passes",
        "stays",
        "keep",
        "keeps",
        "note",
        "still",
        "well",
        "much",
        "make",
        "made",
        "used",
        "uses",
        "using",
        "work",
        "works",
        "decode",
        "decoding",
        "prefill",
        "context",
        "model",
        "models",
        "tier",
        "tiers",
        "spec",
        "drafter",
        "draft",
        "compose",
        "token",
        "tokens",
        "card",
        "cards",
        "engine",
        "vllm",
        "llama",
        "server",
        "header",
        "headers",
        "sequence",
    ]
)

FOLD = str.maketrans(
    {
        "—": "-",
        "–": "-",
        "‒": "-",
        "−": "-",
        "‐": "-",
        "‑": "-",
        "≈": "~",
        "∼": "~",
        "×": "x",
        "≥": ">=",
        "≤": "<=",
        "→": "->",
        "⇒": "=>",
        "‘": "'",
        "’": "'",
        "“": '"',
        "”": '"',
    }
)
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
    shingles: int  # claim shingles found in the copy
    phrase: bool  # a distinctive phrase matched word for word


class ClaimMatcher:
    """Finds copies of one claim's wording in passages of ``(line, text)`` pairs."""

    def __init__(self, text: str | None, phrases: list[str]) -> None:
        self.shingles = _shingles(words(text or ""))
        self.phrases = [p for p in (tuple(words(phrase)) for phrase in phrases) if p]
        for phrase in self.phrases:
            self.shingles |= _shingles(list(phrase))
        vocabulary = words(text or "") + [w for phrase in self.phrases for w in phrase]
        self.keys = {w for w in vocabulary if len(w) >= 4 and w not in COMMON}

    def find(self, passage: list[tuple[int, str]]) -> list[Copy]:
        tokens = [(word, line) for line, text in passage for word in words(text)]
        hits = {
            i
            for i in range(len(tokens) - SHINGLE + 1)
            if tuple(w for w, _ in tokens[i : i + SHINGLE]) in self.shingles
        }
        phrase_spans = self._phrase_spans([w for w, _ in tokens])
        runs = [run for run in map(_trimmed, _runs(sorted(hits))) if _dense(run)]
        strong = _merge(
            sorted(
                [(run[0], run[-1] + SHINGLE - 1, False) for run in runs]
                + [(start, end, True) for start, end in phrase_spans]
            )
        )
        # Key-word windows only catch paraphrases that nothing stronger found: next to a
        # real copy they would only stretch it onto unrelated neighbouring lines.
        weak = _merge(
            [
                (start, end, False)
                for start, end in self._key_spans(tokens, hits)
                if all(start - e > MERGE_GAP or s - end > MERGE_GAP for s, e, _ in strong)
            ]
        )
        return [
            Copy(
                tokens[start][1], tokens[end][1], sum(1 for h in hits if start <= h <= end), phrase
            )
            for start, end, phrase in sorted(strong + weak)
        ]

    def _key_spans(self, tokens: list[tuple[str, int]], hits: set[int]) -> list[tuple[int, int]]:
        """Windows dense with the claim's key words: a condensed or reworded copy."""
        keyed = [i for i, (word, _) in enumerate(tokens) if word in self.keys]
        spans = []
        for start in keyed:
            inside = [i for i in keyed if start <= i < start + KEY_WINDOW]
            distinct = {tokens[i][0] for i in inside}
            backed = sum(1 for h in hits if start <= h < start + KEY_WINDOW)
            if len(distinct) >= MIN_KEYS and backed >= MIN_KEY_SHINGLES:
                spans.append((start, inside[-1]))
        return spans

    def _phrase_spans(self, tokens: list[str]) -> list[tuple[int, int]]:
        spans = []
        for phrase in self.phrases:
            size = len(phrase)
            spans += [
                (i, i + size - 1)
                for i in range(len(tokens) - size + 1)
                if tuple(tokens[i : i + size]) == phrase
            ]
        return spans


def _shingles(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1)}


def _runs(hits: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for position in hits:
        if runs and position - runs[-1][-1] <= GAP:
            runs[-1].append(position)
        else:
            runs.append([position])
    return runs


def _trimmed(run: list[int]) -> list[int]:
    """Drop stray hits at a run's edges: a copy starts and ends with consecutive shingles,
    while a common word triple just before it ("SPEC_N=0 mitigates") stands alone."""
    while len(run) > 2 and run[1] - run[0] > 1:
        run = run[1:]
    while len(run) > 2 and run[-1] - run[-2] > 1:
        run = run[:-1]
    return run


def _dense(run: list[int]) -> bool:
    return len(run) >= MIN_SHINGLES and len(run) / (run[-1] - run[0] + 1) >= MIN_DENSITY


def _merge(spans: list[tuple[int, int, bool]]) -> list[tuple[int, int, bool]]:
    merged: list[tuple[int, int, bool]] = []
    for start, end, phrase in spans:
        if merged and start - merged[-1][1] <= MERGE_GAP:
            first, last, had_phrase = merged[-1]
            merged[-1] = (first, max(last, end), had_phrase or phrase)
        else:
            merged.append((start, end, phrase))
    return merged
