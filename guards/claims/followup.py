"""Follow-ups: passages that do not restate a claim but act on it once something changes ("un-park
the spec tiers when #1096 recovers", "re-enable prefix caching once the fix lands").

They are not stale copies -- nothing in them asserts the claim -- but when the claim is
withdrawn they are the work left: a parked tier that nobody un-parks. ``guards claims find``
ranks them right below the restatements, for triage; ``guards check`` never reports them.

A unit is a follow-up when one of its sentences names the claim's subject -- one of its rare
words, identifiers (an issue number, a model size) or figures, and ``SUBJECT_SHARE`` of one of
its statements' weight -- and says what to do on a condition: an action to redo (un-park,
re-enable, revisit, re-test, ...) beside a condition (when, once, until, after, as soon as), or
a condition on a recovery ("when it recovers", "once the fix lands", "until it is fixed"). One
sentence: a long row that shares the claim's words and, elsewhere, re-tests something else
is not a follow-up of it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..sources.patterns import lazy
from .vocabulary import general_rarity

FOLLOW_UP = "follow-up"  # the status ``claims find`` labels them with
RESTATEMENTS = ("stale", "copy")  # the statuses follow-ups are ranked below
RARE = 0.7  # the English rarity of a word that names the claim's subject on its own
SUBJECT_SHARE = 0.3  # of a statement's weight a follow-up holds (below MIN_CANDIDATE)

CONDITION = r"\b(?:when|once|until|till|after|as soon as)\b"
# on the words of one sentence (``textmatch.words``): no punctuation, hyphens are spaces
ACTION = lazy(
    r"\b(?:un ?park|re ?enable|revisit|re ?test|re ?measure|re ?run|re ?evaluate|re ?check"
    r"|re ?try|re ?instate|restore|switch (?:it |them )?back|bring (?:it |them )?back"
    r"|turn (?:it |them )?back on|try (?:it |them )?again)\w*"
)
RECOVERY = lazy(
    CONDITION + r"(?: \S+){0,8}? (?:recover(?:s|ed)?|lands?|landed|(?:is|are|gets?|been)"
    r" (?:fixed|merged|released|resolved|back|out)|ships?)\b"
)
CONDITIONAL = lazy(CONDITION)


def condition(sentence: str) -> str | None:
    """The words that make a sentence (its words, space-separated) act on a condition: an
    action to redo beside a condition, or a condition on a recovery; None when it has none."""
    found = RECOVERY.search(sentence)
    if found:
        return found.group()
    action, when = ACTION.search(sentence), CONDITIONAL.search(sentence)
    if action and when:
        return sentence[min(action.start(), when.start()) :]
    return None


def names_subject(held: set[str], figures: set[str], share: float) -> bool:
    """``held``: the claim's words the sentence holds, ``figures``: its figures the sentence
    states, ``share``: the most of one of the claim's statements' weight the sentence holds.
    The subject is named by a rare word, an identifier (an issue number, a model size: a word
    with a digit, three characters and more) or a figure, with enough of a statement around
    it; rarity is English's alone (``general_rarity``), since an issue every note cites is
    still the claim's."""
    rare = bool(figures) or any(_identifier(w) or general_rarity(w) >= RARE for w in held)
    return rare and share >= SUBJECT_SHARE


def _identifier(word: str) -> bool:
    return len(word) >= 3 and any(ch.isdigit() for ch in word)


def may_follow_up(texts: Iterable[str]) -> bool:
    """Whether any of these texts carries a condition word at all (a cheap test first)."""
    return any(CONDITIONAL.search(text.lower()) for text in texts)


def below_restatements(found: list) -> list:
    """``found`` (ranked) with the follow-ups moved right below the last restatement."""
    follow = [c for c in found if c.status == FOLLOW_UP]
    rest = [c for c in found if c.status != FOLLOW_UP]
    last = max((i for i, c in enumerate(rest) if c.status in RESTATEMENTS), default=-1)
    return rest[: last + 1] + follow + rest[last + 1 :]
