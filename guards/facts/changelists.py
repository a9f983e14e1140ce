"""Sibling change lists: "same as X, plus --a, without --b, except --c 8".

A compose's comment often describes it as a sibling with changes: ``as dual/max.yml, plus
--enforce-eager``, ``like fast, without --enable-prefix-caching``, ``same as base.yml except
--max-num-seqs 8``. The reader finds the sibling named (a path, an elided path or a stem, as
written) and the flags listed after it, each with the kind of change the list gives it:
``plus`` (also ``with``), ``without`` (also ``minus``) or ``except`` (also ``but``), and the
value written after the flag, when one is. Only a list that names at least one flag is read:
"as fast as the base" is not a change list.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..sources.patterns import lazy

LEAD = lazy(r"\b(?:same\s+as|as\s+in|as|like)\s+`?(?P<ref>[\w.…/-]*\w)`?", re.IGNORECASE)
KINDS = {
    "plus": "plus",
    "with": "plus",
    "without": "without",
    "minus": "without",
    "except": "except",
    "but": "except",
}
GAP = lazy(r"(?:[\s,;:(—–]|\band\b|\bbut\b(?=\s+(?:with|without)\b))*", re.IGNORECASE)
KEYWORD = lazy(r"(plus|without|with|minus|except|but)\b", re.IGNORECASE)
FLAG = lazy(r"`?(-{1,2}[A-Za-z](?:[\w.-]*\w)?)(?:=([^\s,;()`]+))?`?")  # no sentence stop
VALUE = lazy(
    r"\s*`?(?!-{1,2}[A-Za-z])([\w.:/+-]+)`?"
    r"(?=\s*(?:$|[,;()]|and\b|-{1,2}[A-Za-z]|(?:plus|without|with|minus|except|but)\b))",
    re.IGNORECASE,
)


class Change(NamedTuple):
    """One flag of a change list: how it changes the sibling's, and where it is written."""

    kind: str  # plus | without | except
    flag: str
    value: str | None
    start: int  # where the flag is written in the text


class ChangeList(NamedTuple):
    ref: str  # the sibling as written
    start: int  # where the reference starts in the text
    changes: tuple[Change, ...]


def change_lists(text: str) -> list[ChangeList]:
    """The change lists of one comment or sentence, in order."""
    found = []
    for lead in LEAD.finditer(text):
        changes = _changes(text, lead.end())
        if changes:
            found.append(ChangeList(lead.group("ref").rstrip("."), lead.start("ref"), changes))
    return found


def _changes(text: str, at: int) -> tuple[Change, ...]:
    """The flags listed from ``at`` on: a keyword first, then flags, values and keywords,
    until anything else."""
    kind: str | None = None
    changes: list[Change] = []
    while True:
        at = GAP.match(text, at).end()  # type: ignore[union-attr]
        keyword = KEYWORD.match(text, at)
        if keyword is not None:
            kind, at = KINDS[keyword.group(1).lower()], keyword.end()
            continue
        flag = FLAG.match(text, at) if kind is not None else None
        if flag is None or kind is None:
            return tuple(changes)
        value, at = flag.group(2), flag.end()
        if value is None:
            written = VALUE.match(text, at)
            if written is not None and not KEYWORD.fullmatch(written.group(1)):
                value, at = written.group(1), written.end()
        value = value.rstrip(".") if value else None
        changes.append(Change(kind, flag.group(1), value or None, flag.start(1)))
