"""Finding a claim's wording in prose, however it was re-wrapped or lightly edited.

Text is normalised (Unicode and case folded, dashes/tildes/multiplication signs/comparison
signs unified, markdown emphasis and code ticks dropped, ``21,443`` -> ``21443``, ``21k`` ->
``21000``) and cut into words that keep their source line; identifiers such as ``sm_120`` or
``fp8_e4m3`` stay one word. A passage repeats a claim where

- one of the claim's distinctive ``match`` phrases appears, at least 80% of its words in order
  within a window two words longer than the phrase (``nvfp4 KV does NOT work (...)`` for
  ``nvfp4 KV does NOT work here``), or
- a run of the passage is dense with word 3-shingles of one of the claim's published wordings
  (``text`` and ``variants``): runs of at least ``MIN_RUN`` of them, making up at least
  ``MIN_DENSITY`` of the run, a few words apart from each other, together holding at least
  ``MIN_SHINGLES`` (about a dozen words' worth: a copy split by an unrelated line or into
  bullets is one copy),

- a sentence restates one of the claim's statements (a sentence of a wording, or a match
  phrase) in other words: it holds at least ``RESTATED_SHARE`` of the statement's weight (words
  weighted by how distinctive they are, ``guards.claims.vocabulary``), at least ``RESTATED_TERMS``
  distinctive words of it, and at least ``RESTATED_SHINGLES`` of the claim's shingles
  ("interim, use the MTP tier (its cliff is higher) or set SPEC_N=0"), or
- a sentence denies the subject a match phrase denies, in other words, keeping the phrase's
  other distinctive words ("nvfp4 KV ... is not available" for "nvfp4 KV does not work at
  all"; ``guards.claims.denial``),

and no ``not_match`` phrase covers the match. Whether a match is a stale assertion or a
correction that reuses the old words is decided by the caller (``guards.claims.scan``), which
knows the passage's structure. Which passages a matcher is given at all is decided for many
claims at once by a ``CandidateIndex``: from each passage's words and shingles, computed once,
never by comparing every passage with every claim.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..sources.numbers import written_out
from . import denial
from .figures import NUMBER, figures, is_round, unit_figures

if TYPE_CHECKING:
    from .tokens import Tokens

SHINGLE = 3
# A verbatim run shorter than about a dozen words is shared vocabulary (real estates repeat
# hardware lists such as "RTX PRO 6000 Blackwell, sm_120, and the DGX Spark"), not a copy;
# shorter distinctive fragments are what `match` phrases and restatements are for.
MIN_SHINGLES = 10  # claim shingles a copy holds, its runs together
MIN_RUN = 5  # claim shingles in one dense run of it
MIN_DENSITY = 0.5  # at least half of the run's shingles come from the claim
GAP = 6  # shingle positions between hits that still count as one run
MERGE_GAP = 30  # words between two matches that still make one copy
PHRASE_SHARE = 0.8  # of a match phrase's words, in order
PHRASE_SLACK = 2  # extra words a phrase may be spread over
RESTATED_SHARE = 0.7  # share of a statement's weight a restatement holds
RESTATED_TERMS = 3  # distinctive words of the statement it holds ...
DISTINCTIVE = 0.35  # ... each weighing at least this much
RESTATED_SHINGLES = 2  # and claim shingles it shares
MIN_STATEMENT = 2.0  # total weight below which a statement is too plain to restate
ROUNDING = 1e-9  # relative margin on sums of weights, against float rounding
MIN_FIGURES = 3  # the claim's figures a unit restates (one of them a range or a decimal) ...
FIGURE_TERMS = 1  # ... beside this many of its distinctive words (its advice, its rare terms)
COPY, FIGURES, RESTATED, DENIAL, PHRASE = range(5)  # kinds of evidence, weakest first
KINDS = dict(enumerate(("copy", "figures", "restatement", "denial", "phrase")))
TOKEN = re.compile(r"[a-z0-9]+(?:[._][a-z0-9]+)*|[\n\x1e]|[.!?;:](?=\s|$)")
SENTENCE_ENDS = frozenset(".!?;:")
UNIT_BREAK = "\x1e"  # the ASCII record separator, kept by normalise: one in text is a space
BREAKS = frozenset({"\n", UNIT_BREAK})
SEPARATORS = SENTENCE_ENDS | BREAKS
SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n\s*\n")

FOLD = {
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
# Each starts with the digit and looks behind it from there (not ``(?<![0-9])[0-9]``): a
# pattern that opens with a character class is searched for by it, six times faster.
THOUSANDS = re.compile(r"[0-9](?<![0-9,][0-9])[0-9]{0,2}(?:,[0-9]{3})++(?![0-9])")
KILO = re.compile(r"([0-9](?<![0-9][0-9])[0-9]*+)k\b")
UNDERSCORES = re.compile(r"_+")
WORD = re.compile(r"[a-z0-9]+(?:[._][a-z0-9]+)*")


def normalise(text: str) -> str:
    # Each step runs only when its characters are present, and every pattern starts with a
    # literal or a digit: a few MB of notes pass through here on every run.
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        for old, new in FOLD.items():  # a few replaces beat str.translate on long texts
            if old in text:
                text = text.replace(old, new)
    text = text.casefold()
    if "," in text:
        text = THOUSANDS.sub(lambda m: m.group().replace(",", ""), text)
    if "k" in text:
        text = KILO.sub(_kilo, text)
    for mark in ("*", "`", "~~"):
        if mark in text:
            text = text.replace(mark, " ")
    return UNDERSCORES.sub(_underscores, text) if "_" in text else text


def _kilo(match: re.Match[str]) -> str:
    """``21k`` -> ``21000``, unless the digits are the tail of a longer word (``sm_12k``)."""
    start = match.start()
    if start and (match.string[start - 1].isalnum() or match.string[start - 1] in "._"):
        return match.group()
    return written_out(match.group(1), "k")


def _underscores(match: re.Match[str]) -> str:
    """Underscores are markup, except inside an identifier (``fp8_e4m3``)."""
    text, start, end = match.string, match.start(), match.end()
    inside = start > 0 and end < len(text) and text[start - 1].isalnum() and text[end].isalnum()
    return match.group() if inside else " "


def words(text: str) -> list[str]:
    return WORD.findall(normalise(text))


def statements(texts: list[str]) -> list[tuple[str, ...]]:
    """The sentences of some wordings, as words."""
    return [s for text in texts for part in SENTENCE.split(text) if (s := tuple(words(part)))]


class Match(NamedTuple):
    """Where a passage repeats a claim: token span (inclusive) and how it matched."""

    start: int
    end: int
    shingles: int  # claim shingles inside the span
    how: str  # the strongest evidence inside it: "phrase" | "restatement" | "copy"

    @property
    def phrase(self) -> bool:
        return self.how == "phrase"


class ClaimMatcher:
    """Finds one claim's wordings and phrases in a passage's tokens."""

    def __init__(
        self,
        wordings: list[str],
        phrases: list[str],
        not_match: list[str],
        weight: Callable[[str], float] = lambda word: 1.0,
    ) -> None:
        self.shingles: set[tuple[str, ...]] = set()
        for wording in wordings:
            self.shingles |= shingles(words(wording))
        self.phrases = [p for p in (tuple(words(phrase)) for phrase in phrases) if p]
        self.not_match = [p for p in (tuple(words(phrase)) for phrase in not_match) if p]
        self.weight = weight
        self.statements = [
            (set(s), sum(weight(w) for w in set(s))) for s in statements(wordings) + self.phrases
        ]
        self.statements = [(s, total) for s, total in self.statements if total >= MIN_STATEMENT]
        self.figures = (
            set().union(*(figures(normalise(t)) for t in wordings + phrases))
            if wordings or phrases
            else set()
        )
        self.terms = {
            w
            for statement, _ in self.statements
            for w in statement
            if not NUMBER.fullmatch(w) and weight(w) >= DISTINCTIVE
        }
        # the subjects the match phrases deny ("nvfp4 KV" of "nvfp4 KV does not work")
        distinctive = {w for p in self.phrases for w in p if weight(w) >= DISTINCTIVE}
        self.denials = list(
            dict.fromkeys(d for p in self.phrases if (d := denial.denied(p, distinctive)))
        )

    def find(self, tokens: Tokens) -> list[Match]:
        sequence = tokens.sequence
        hits = tokens.shingle_hits(self.shingles)
        figured = self._figure_spans(tokens)
        if (
            not hits
            and not figured
            and not any(tokens.vocabulary.intersection(p) for p in self.phrases)
        ):
            return []

        def held(start: int, end: int) -> int:
            return sum(1 for h in hits if start <= h <= end)

        runs = [run for run in map(_trimmed, _runs(sorted(hits))) if _dense(run)]
        copies = _merge([(run[0], run[-1] + SHINGLE - 1, COPY) for run in runs])
        spans = [s for s in copies if held(s[0], s[1]) >= MIN_SHINGLES]
        spans += [(start, end, PHRASE) for start, end in self._phrase_spans(tokens)]
        # Denials, restatements and figures are for rewordings nothing stronger found: next to
        # a copy or a phrase they would only stretch it onto neighbouring lines.
        weaker = (denial.spans(tokens, self.denials), self._restatements(tokens, hits), figured)
        for kind, found in zip((DENIAL, RESTATED, FIGURES), weaker, strict=True):
            spans += [(a, b, kind) for a, b in found if all(b < x or a > y for x, y, _ in spans)]
        excluded = [span for phrase in self.not_match for span in _exact(sequence, phrase)]
        kept = [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in excluded)]
        return [
            Match(start, end, held(start, end), KINDS[kind])
            for start, end, kind in _merge(sorted(kept))
        ]

    def _restatements(self, tokens: Tokens, hits: set[int]) -> list[tuple[int, int]]:
        """Sentences that hold most of the weight of one of the claim's statements, from the
        first to the last word they share with it."""
        if not self._restated(tokens.vocabulary):
            return []  # if the whole passage restates nothing, none of its sentences does
        ids = tokens.sentence_ids
        inside_sentence = Counter(
            ids[h] for h in hits if h + SHINGLE - 1 < len(ids) and ids[h + SHINGLE - 1] == ids[h]
        )
        spans = []
        for sentence, count in inside_sentence.items():
            if count < RESTATED_SHINGLES:
                continue
            start, end = tokens.sentence_span(sentence)
            shared = self._restated(set(tokens.sequence[start : end + 1]))
            inside = [i for i in range(start, end + 1) if tokens.sequence[i] in shared]
            if inside:
                spans.append((inside[0], inside[-1]))
        return sorted(spans)

    def _figure_spans(self, tokens: Tokens) -> list[tuple[int, int]]:
        """Units that restate the claim by its figures: at least ``MIN_FIGURES`` of its
        quantities (one a range or a decimal, not only round numbers) and ``FIGURE_TERMS`` of
        its distinctive words - the claim reduced to its numbers and its advice, in any words
        and order. From the first to the last figure."""
        if len(self.figures) < MIN_FIGURES or not self._may_figure(tokens.vocabulary):
            return []
        spans = []
        for unit, positions in unit_figures(tokens, self.figures).items():
            held = {figure for figure, _ in positions}
            if len(held) < MIN_FIGURES or all(map(is_round, held)):
                continue
            if len(self.terms.intersection(tokens.unit_words[unit])) < FIGURE_TERMS:
                continue
            spans.append((min(p for _, p in positions), max(p for _, p in positions)))
        return spans

    def _may_figure(self, vocabulary: set[str]) -> bool:
        numbers = {part for figure in self.figures for part in figure.split("-")}
        return len(numbers & vocabulary) >= MIN_FIGURES and bool(self.terms & vocabulary)

    def _restated(self, terms: set[str]) -> set[str]:
        """The words ``terms`` share with the first statement they restate, if any."""
        for statement, total in self.statements:
            shared = statement & terms
            distinctive = [w for w in shared if self.weight(w) >= DISTINCTIVE]
            held = sum(self.weight(w) for w in shared)
            if len(distinctive) >= RESTATED_TERMS and held >= RESTATED_SHARE * total:
                return shared
        return set()

    def _phrase_spans(self, tokens: Tokens) -> list[tuple[int, int]]:
        spans = []
        for phrase in self.phrases:
            need = _need(phrase)
            heads = set(phrase[: len(phrase) - need + 1])  # a match may skip leading words
            if not _may_hold(tokens.vocabulary, phrase):
                continue
            starts = tokens.positions(heads)
            for start in starts:
                end = _in_order(tokens.sequence, start, phrase, need)
                if end is not None:
                    spans.append((start, end))
        return spans

    # -- what the candidate index asks of a claim, without looking at any passage --------------

    def possible(self, vocabulary: set[str], hits: int) -> bool:
        """Whether a passage using ``vocabulary``, where ``hits`` positions start a shingle of
        the claim, can match it at all: the conditions ``find`` checks before anything else. A
        copy holds ``MIN_SHINGLES`` hits, a phrase ``PHRASE_SHARE`` of its words, a denial its
        subject's (``denial.possible``), a restatement a statement's words (``_restated``) and
        ``RESTATED_SHINGLES`` hits."""
        if hits >= MIN_SHINGLES or any(_may_hold(vocabulary, p) for p in self.phrases):
            return True
        if denial.possible(vocabulary, self.denials):
            return True
        if len(self.figures) >= MIN_FIGURES and self._may_figure(vocabulary):
            return True
        return hits >= RESTATED_SHINGLES and bool(self._restated(vocabulary))

    def anchors(self, frequency: Callable[[str], int]) -> set[str]:
        """Words one of which every passage holds where a phrase or a restatement of the claim
        can be found, the rarest (by ``frequency``) that suffice: a phrase may miss
        ``1 - PHRASE_SHARE`` of its words, so any that many plus one of them will do; a
        statement is restated by ``RESTATED_TERMS`` of its distinctive words holding
        ``RESTATED_SHARE`` of its weight, so a passage without words weighing the rest, or
        without all but ``RESTATED_TERMS - 1`` of its distinctive words, restates nothing."""
        found: set[str] = set()
        for phrase in self.phrases:
            rarest = sorted(set(phrase), key=lambda w: (frequency(w), w))
            found.update(rarest[: max(0, len(rarest) - _need(phrase) + 1)])
        for statement, total in self.statements:
            found |= self._statement_anchors(statement, total, frequency)
        # a denial holds its whole subject: any one word of it will do, the rarest
        found.update(min(s, key=lambda w: (frequency(w), w)) for s, _ in self.denials)
        return found | self._figure_anchors(frequency)

    def _figure_anchors(self, frequency: Callable[[str], int]) -> set[str]:
        """A figure restatement holds ``MIN_FIGURES`` of the figures' numbers and one of the
        distinctive words: all but ``MIN_FIGURES - 1`` of the numbers, or all the words."""
        if len(self.figures) < MIN_FIGURES:
            return set()
        numbers = sorted(
            {part for figure in self.figures for part in figure.split("-")},
            key=lambda w: (frequency(w), w),
        )
        rarest = set(numbers[: max(0, len(numbers) - MIN_FIGURES + 1)])
        return rarest if len(rarest) <= len(self.terms) else set(self.terms)

    def _statement_anchors(
        self, statement: set[str], total: float, frequency: Callable[[str], int]
    ) -> set[str]:
        distinctive = sum(1 for w in statement if self.weight(w) >= DISTINCTIVE)
        if distinctive < RESTATED_TERMS:
            return set()  # too few distinctive words to ever be restated
        spare_terms = distinctive - RESTATED_TERMS  # distinctive words a restatement may lack
        spare_weight = (1 - RESTATED_SHARE) * total * (1 + ROUNDING)  # weight it may lack
        chosen: set[str] = set()
        terms, held = 0, 0.0
        for word in sorted(statement, key=lambda w: (frequency(w), w)):
            chosen.add(word)
            terms += self.weight(word) >= DISTINCTIVE
            held += self.weight(word)
            if terms > spare_terms or held > spare_weight:
                break
        return chosen


class CandidateIndex:
    """Which of many claims a passage can match at all, from the passage's own words and
    shingles (each computed once) and an inverted index of the claims' terms: a claim shingle
    names the claims that use it, an anchor word (``ClaimMatcher.anchors``) the claims whose
    phrases or statements it anchors. A passage is a candidate for a claim when it holds
    ``MIN_SHINGLES`` positions of the claim's shingles, or an anchor word of the claim and
    ``ClaimMatcher.possible`` agrees. Every pair ``ClaimMatcher.find`` matches is a candidate;
    the work per passage grows with what it shares with the claims, not with their number."""

    def __init__(self, matchers: dict[str, ClaimMatcher], frequency: Callable[[str], int]) -> None:
        """``frequency``: how many units of the estate use a word (rare anchors come first)."""
        self.matchers = matchers
        self.shingle_owners: dict[tuple[str, ...], list[str]] = {}
        self.word_owners: dict[str, list[str]] = {}
        for key, matcher in matchers.items():
            for shingle in matcher.shingles:
                self.shingle_owners.setdefault(shingle, []).append(key)
            for word in matcher.anchors(frequency):
                self.word_owners.setdefault(word, []).append(key)

    def hits(self, tokens: Tokens) -> Counter[str]:
        """For each claim, the positions of the passage that start one of its shingles."""
        sequence = tokens.sequence
        owners = self.shingle_owners
        shingles = zip(sequence, sequence[1:], sequence[2:], strict=False)
        found: Counter[str] = Counter()
        for shingle, count in Counter(filter(owners.__contains__, shingles)).items():
            for key in owners[shingle]:
                found[key] += count
        return found

    def candidates(self, tokens: Tokens) -> set[str]:
        """The claims the passage can match."""
        hits = self.hits(tokens)
        found = {key for key, count in hits.items() if count >= MIN_SHINGLES}
        checked = set(found)
        vocabulary = tokens.vocabulary
        for word in self.word_owners.keys() & vocabulary:
            for key in self.word_owners[word]:
                if key not in checked:
                    checked.add(key)
                    if self.matchers[key].possible(vocabulary, hits[key]):
                        found.add(key)
        return found


def _need(phrase: tuple[str, ...]) -> int:
    """Words of a phrase a match holds."""
    return math.ceil(PHRASE_SHARE * len(phrase))


def _may_hold(vocabulary: set[str], phrase: tuple[str, ...]) -> bool:
    """A passage using ``vocabulary`` holds enough distinct words of ``phrase`` to match it."""
    return len(vocabulary.intersection(phrase)) >= _need(phrase)


def _in_order(
    sequence: Sequence[str], start: int, phrase: tuple[str, ...], need: int
) -> int | None:
    """Last position of a greedy in-order match of ``phrase`` starting at ``start`` within
    the window, when at least ``need`` of its words are found."""
    limit = min(len(sequence), start + len(phrase) + PHRASE_SLACK)
    at, found, last = start, 0, None
    for word in phrase:
        for position in range(at, limit):
            if sequence[position] == word:
                found, last, at = found + 1, position, position + 1
                break
    return last if found >= need and last is not None else None


def _exact(sequence: Sequence[str], phrase: tuple[str, ...]) -> list[tuple[int, int]]:
    size = len(phrase)
    return [
        (i, i + size - 1)
        for i in range(len(sequence) - size + 1)
        if tuple(sequence[i : i + size]) == phrase
    ]


def shingles(tokens: list[str] | tuple[str, ...]) -> set[tuple[str, ...]]:
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
    return len(run) >= MIN_RUN and len(run) / (run[-1] - run[0] + 1) >= MIN_DENSITY


def _merge(spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Spans a few words apart are one match, of the strongest kind among them."""
    merged: list[tuple[int, int, int]] = []
    for start, end, kind in spans:
        if merged and start - merged[-1][1] <= MERGE_GAP:
            first, last, strongest = merged[-1]
            merged[-1] = (first, max(last, end), max(strongest, kind))
        else:
            merged.append((start, end, kind))
    return merged
