"""How distinctive a word is in this estate: its weight for comparing prose with a claim.

Two measures, multiplied:

- **general rarity**, from ``wordfreq``'s English frequency list (a Zipf scale, 0 for words it
  has never seen: identifiers, issue numbers, model names): everyday words such as "only" or
  "work" weigh little, ``nvfp4`` or ``43562`` weigh fully;
- **rarity in this estate**: the share of the estate's *distinct* units (table rows, list
  items, paragraphs, comment sections) that use the word. A block pasted into twenty composes
  is one unit, not twenty, so the copies of a claim do not make the claim's own words look
  common; vocabulary every note shares (``5090``, ``sm_120`` in a Blackwell estate) does. A
  word in ``COMMON_SHARE`` of the units or more keeps ``1 - ESTATE_SHARE`` of its weight; an
  estate of fewer than ``MIN_UNITS`` distinct units is too small to say and changes nothing.

Weights lie in (0, 1]. Computed once per run from the passages the claim scan reads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

FLOOR = 0.05  # the weight of the most common words: present, but close to nothing
ESTATE_SHARE = 0.5  # how much of a weight commonness in the estate may take away
COMMON_SHARE = 0.05  # share of distinct units from which a word counts as common here
MIN_UNITS = 50


_known: dict[str, float] = {}  # rarities computed in this process or kept by guards.run.cache
_learned: dict[str, float] = {}  # those computed in this process


def general_rarity(word: str) -> float:
    """1 for words everyday English does not use, near 0 for "the"."""
    found = _known.get(word)
    if found is None:
        found = _known[word] = _learned[word] = _rarity(word)
    return found


def _rarity(word: str) -> float:
    from wordfreq import zipf_frequency  # loads the frequency list: only for new words

    zipf = zipf_frequency(word.replace("_", " "), "en") if word.isascii() else 0.0
    return max(FLOOR, min(1.0, (7.0 - zipf) / 7.0))


def remember(rarities: dict[str, float]) -> None:
    """Rarities computed by earlier runs (of the same word-frequency data)."""
    _known.update(rarities)


def learned() -> dict[str, float]:
    """The rarities this process computed, for the cache to keep."""
    return dict(_learned)


class Vocabulary:
    def __init__(self, units: Iterable[tuple[str, ...]]) -> None:
        """``units``: the words of every unit of the estate."""
        distinct = set(units)
        self.size = len(distinct)  # however a copy was wrapped, its words are one unit
        self.frequency: Counter[str] = Counter()
        for words in distinct:
            self.frequency.update(set(words))
        self._weights: dict[str, float] = {}  # asked for again and again by every matcher

    def estate_factor(self, word: str) -> float:
        """1 for a word few distinct units of the estate use, down to 1 - ESTATE_SHARE."""
        if self.size < MIN_UNITS:
            return 1.0
        share = self.frequency[word] / self.size
        return 1.0 - ESTATE_SHARE * min(1.0, share / COMMON_SHARE)

    def weight(self, word: str) -> float:
        found = self._weights.get(word)
        if found is None:
            found = self._weights[word] = general_rarity(word) * self.estate_factor(word)
        return found

    def total(self, terms: Iterable[str]) -> float:
        return sum(self.weight(t) for t in set(terms))


EMPTY = Vocabulary(())
