"""A claim's figures: the quantities it states (``1.5-6 tok/s``, ``~21k``, ``96.00 MiB``), so a
restatement that keeps its numbers and its advice but none of its sentences is still found.
Kept apart from the wording matcher (``guards.claims.textmatch``), which asks of a passage's
units which of a claim's figures they state."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tokens import Tokens

NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# A quantity as a claim states it (normalised text): a number or a range, approximate or
# bounded (``~21000``, ``>~20000``) or with a unit (``1.5-6 tok/s``, ``96.00 mib``, ``12 kib``).
# Bare numbers are left out: a card's name (``5090``) is vocabulary, not a figure.
QUANTITY = re.compile(
    r"(?<![\w.])(?P<bound>[~<>]=?\s*~?)?(?P<low>[0-9]+(?:\.[0-9]+)?)"
    r"(?:\s*-\s*(?P<high>[0-9]+(?:\.[0-9]+)?))?"
    r"(?P<unit>\s*(?:tok/s|t/s|tps|tok|gib|gb|mib|kib|ms|%|x)(?![a-z0-9]))?"
)


def figures(text: str) -> set[str]:
    """The quantities a wording (normalised: ``textmatch.normalise``) states, as ``low`` or ``low-high``: however a copy re-types
    the dash, the tilde or the unit (``1.5-6 t/s`` for ``1.5–6 tok/s``), its figures are these."""
    found = set()
    for m in QUANTITY.finditer(text):
        low, high = m.group("low"), m.group("high")
        if high:
            found.add(f"{low}-{high}")
        elif (m.group("bound") or m.group("unit")) and _figure(low):
            found.add(low)
    return found


def _figure(number: str) -> bool:
    """A single number distinctive enough to be a figure: a decimal, or 10 and more."""
    return "." in number or int(number) >= 10


def is_round(figure: str) -> bool:
    return "-" not in figure and "." not in figure


def unit_figures(tokens: Tokens, wanted: set[str]) -> dict[int, list[tuple[str, int]]]:
    """Per unit, the figures of ``wanted`` its numbers state, with their positions: two
    numbers in a row form a range (``1.5 6`` for ``1.5-6``), else a number stands alone."""
    sequence = tokens.sequence
    found: dict[int, list[tuple[str, int]]] = {}
    index = 0
    while index < len(sequence):
        word = sequence[index]
        if NUMBER.fullmatch(word):
            pair = f"{word}-{sequence[index + 1]}" if index + 1 < len(sequence) else ""
            if pair in wanted and tokens.units[index] == tokens.units[index + 1]:
                found.setdefault(tokens.units[index], []).extend(((pair, index), (pair, index + 1)))
                index += 2
                continue
            if word in wanted:
                found.setdefault(tokens.units[index], []).append((word, index))
        index += 1
    return found
