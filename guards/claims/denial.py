"""Denials: a claim that something does not work, restated with another verb.

A ``match`` phrase such as "nvfp4 KV does not work at all" is a subject ("nvfp4 KV") and a
predicate that denies it. Maintainers restate such a claim with whichever denial comes to hand
-- "is not available", "isn't supported", "is unavailable", "can't run", "never works" -- so a
sentence that names the phrase's whole subject, denies it in any of these words and keeps the
phrase's other distinctive words repeats the phrase. The grammar is a small closed class of
English (an auxiliary, a negation, a verb or adjective of working), the same for every claim;
what ties a sentence to one claim is the subject and the words it keeps, taken from the
claim's own phrase.

What is not a denial of the subject: another clause's predicate (a clause opener such as
"where", "which", "but" or "if" between the subject and the denial: "nvfp4 KV works where FA3
is not available"), a condition on it ("if nvfp4 KV is not available, ..."), and a denial of
use, not of working ("do not use nvfp4 KV", "nvfp4 KV is not used here"): advice and choices
are not the claim.

Works on normalised words (``textmatch.words``): no punctuation, ``doesn't`` is ``doesn t``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tokens import Tokens

Denial = tuple[tuple[str, ...], frozenset[str]]  # a phrase's subject, the words it keeps

AUXILIARIES = frozenset({"is", "are", "does", "do", "will", "can"})
CONTRACTED = frozenset({"isn", "aren", "doesn", "don", "won", "can"})  # followed by ``t``
NEGATIONS = frozenset({"not", "never"})
NEGATING = NEGATIONS | {"t", "cannot"}  # a word every denial without a denied word holds
WORKING = frozenset(
    {"work", "works", "run", "runs", "function", "functions", "available", "supported", "usable"}
)
DENIED = frozenset({"unavailable", "unsupported", "unusable", "nonfunctional"})
# Adverbs that may stand inside a denial ("is not yet supported", "is likewise unavailable").
# "only" is left out: "is not only available on ..." affirms.
FILLERS = frozenset({"yet", "even", "still", "also", "likewise", "just", "ever", "currently"})
# A word that opens another clause: a denial after it may be that clause's, not the subject's.
OPENERS = frozenset(
    {
        "where", "which", "that", "who", "when", "whenever", "if", "unless", "but", "because",
        "while", "although", "though", "whereas", "since", "until", "so", "or", "than", "whether",
    }
)  # fmt: skip
CONDITIONS = frozenset({"if", "unless", "whether", "when", "whenever", "once", "until"})
GAP = 6  # words between the subject and its denial ("nvfp4 KV is a different story and is not")
BEFORE = 2  # words before the subject where a condition word makes it a condition


def predicate_end(words: Sequence[str], at: int, stop: int | None = None) -> int | None:
    """The position of the last word of a denial starting at ``at`` and ending before ``stop``
    (``is not available``, ``doesn t work``, ``cannot run``, ``is likewise unavailable``,
    ``never works``), or None."""
    stop = len(words) if stop is None else stop

    def word(i: int) -> str:
        return words[i] if i < stop else ""

    i = at
    if word(i) in CONTRACTED and word(i + 1) == "t":
        i += 2
    elif word(i) == "cannot":
        i += 1
    else:
        i += word(i) in AUXILIARIES
        i += _filler(word(i))
        if word(i) in DENIED:
            return i
        if word(i) not in NEGATIONS:
            return None
        i += 1
    i += _filler(word(i))
    i += word(i) == "be"
    return i if word(i) in WORKING else None


def _filler(word: str) -> bool:
    return word in FILLERS or (word.endswith("ly") and word != "only")


def denied(phrase: Sequence[str], distinctive: set[str]) -> Denial | None:
    """What a phrase denies: its subject (its words before the first denial, from the first of
    ``distinctive`` on: a leading "so the" is not the subject) and the distinctive words after
    the denial, which a restatement keeps too ("with sliding-window attention" of "prefix
    caching does not work with sliding-window attention"; "at all" is not distinctive). None
    when the phrase denies nothing or its subject holds no distinctive word."""
    for at in range(1, len(phrase)):
        end = predicate_end(phrase, at)
        if end is not None:
            words = phrase[:at]
            first = next((i for i, w in enumerate(words) if w in distinctive), None)
            if first is None:
                return None
            return tuple(words[first:]), frozenset(distinctive.intersection(phrase[end + 1 :]))
    return None


def denial_after(
    words: Sequence[str], start: int, end: int, sentence: tuple[int, int]
) -> int | None:
    """Where the subject at ``start``..``end`` of ``words`` is denied within its ``sentence``
    (first and last position): the last word of the denial, or None. The denial follows
    within ``GAP`` words with no clause opener between, and no condition word stands in the
    ``BEFORE`` words before the subject."""
    first, last = sentence
    if CONDITIONS.intersection(words[max(first, start - BEFORE) : start]):
        return None
    for at in range(end + 1, min(last + 1, end + 2 + GAP)):
        if at > end + 1 and words[at - 1] in OPENERS:
            return None
        found = predicate_end(words, at, last + 1)
        if found is not None:
            return found
    return None


def spans(tokens: Tokens, denials: Sequence[Denial]) -> list[tuple[int, int]]:
    """Sentences of a passage that name the whole subject of one of ``denials``, as one run of
    words (a noun phrase: "nvfp4 weights and KV" names no "nvfp4 KV"), keep the words it
    keeps and deny it: from the subject to the end of the denial."""
    if not possible(tokens.vocabulary, denials):
        return []
    sequence, found = tokens.sequence, []
    for subject, kept in denials:
        size = len(subject)
        for start in tokens.positions({subject[0]}):
            end = start + size - 1
            if tuple(sequence[start : end + 1]) != subject:
                continue
            sentence = tokens.sentence_span(tokens.sentence_ids[start])
            if end > sentence[1] or not kept.issubset(sequence[sentence[0] : sentence[1] + 1]):
                continue
            last = denial_after(sequence, start, end, sentence)
            if last is not None:
                found.append((start, last))
    return found


def possible(vocabulary: set[str], denials: Sequence[Denial]) -> bool:
    """Whether a text using ``vocabulary`` can deny one of ``denials``: it holds the words of
    a subject and those it keeps, and a denied word or a word of working beside a negation."""
    if not any(vocabulary.issuperset(s) and vocabulary >= kept for s, kept in denials):
        return False
    if not vocabulary.isdisjoint(DENIED):
        return True
    return not vocabulary.isdisjoint(WORKING) and not vocabulary.isdisjoint(NEGATING)
