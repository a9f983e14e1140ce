"""Numbers as estates write them, read tolerantly and within limits.

Every number taken from a compose, a header, a comment, an ``.env`` or a command line goes
through here: plain ASCII decimals only (``²`` passes ``str.isdigit`` and ``٣`` passes
``float``; neither is a setting), finite (``inf``, ``nan`` and ``1e400`` are not), short (a
400-digit figure is not a context length) and within ``LIMIT``. Anything else is not a number:
the caller reports it or leaves the check out; it never raises.

Counts (``262K``, ``1.5M``, ``447,000``, ``32k``) are read here too, by :func:`read_count`, and
compared by :func:`same_count` within the one ``TOLERANCE``. Estates write a K for 1000 and for
1024 alike, so a K has two meanings, both kept here: ``SCALES`` (decimal, what figures and
notes mean, with :func:`readings` adding the 1024 reading) and ``BINARY`` (what a header value
is read as, with :func:`same_count` adding the 1000 reading back).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

LIMIT = 1e15  # larger than any count of tokens, bytes or GPUs an estate states
MAX_LENGTH = 40
SCALES = {"k": 1000, "m": 1_000_000}  # a suffix read as decimal: 310K is 310,000
BINARY = {"k": 1024, "m": 1024**2}  # a suffix read as binary: a header's 262K is 268,288
TOLERANCE = 0.025  # one count, read both ways or rounded: 128K is 128,000 or 131,072
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


def to_number(text: str | None) -> float | None:
    """A finite decimal number no larger than ``LIMIT``, or ``None``."""
    if text is None:
        return None
    text = text.strip()
    if not text or len(text) > MAX_LENGTH or NUMBER.fullmatch(text) is None:
        return None
    value = float(text)
    return value if math.isfinite(value) and abs(value) <= LIMIT else None


def to_count(text: str | None, limit: int = int(LIMIT)) -> int | None:
    """A whole number from 0 to ``limit`` (``"4"``, ``"4.0"``), or ``None``."""
    value = to_number(text)
    if value is None or value != int(value) or not 0 <= value <= limit:
        return None
    return int(value)


class Count(NamedTuple):
    """A count as written: its value, the precision it was written with (1 for ``212,977``,
    1000 for ``310K``, 100,000 for ``0.8M``, 0.01 for ``2.03``) and whether a suffix scaled it
    (then a K may mean 1000 or 1024)."""

    value: float
    unit: float
    scaled: bool


def read_count(digits: str, suffix: str | None = None, binary: bool = False) -> Count | None:
    """The count ``digits`` (``447,000``, ``1.5``) times ``suffix`` (``K``, ``m`` or none), or
    ``None`` when the digits are not a number (:func:`to_number`). Figures and notes mean a K
    of 1000 (``SCALES``); header values are read with ``binary`` (``BINARY``: K 1024, M
    1024**2), as the context lengths they usually state are."""
    plain = digits.replace(",", "")
    number = to_number(plain)
    if number is None:
        return None
    scale = (BINARY if binary else SCALES).get((suffix or "").lower(), 1)
    decimals = len(plain.partition(".")[2])
    return Count(number * scale, scale / 10**decimals, scale > 1)


def readings(value: float, scaled: bool) -> tuple[float, ...]:
    """What a decimal count (``SCALES``) may mean: written with a suffix, its K may be 1024
    as well (944K: 944,000 or 966,656; an M is then 1024 K: 1.5M is also 1,536,000)."""
    return (value, value * (BINARY["k"] / SCALES["k"])) if scaled else (value,)


def same_count(count: float, reference: float, binary: bool = False) -> bool:
    """Whether ``count`` is within ``TOLERANCE`` of ``reference``. ``binary``: ``count`` was
    read with ``BINARY`` and its decimal reading counts as well (a header's 262K is 268,288
    or 262,000)."""
    counts = (count, count * SCALES["k"] // BINARY["k"]) if binary else (count,)
    return any(abs(c - reference) <= TOLERANCE * reference for c in counts)


def written_out(digits: str, suffix: str) -> str:
    """``21k`` spelled as the plain number it is (``21000``), for texts compared word by word:
    the digits as written (any length, leading zeros kept), then the zeros of the suffix's
    decimal scale."""
    return digits + "0" * (len(str(SCALES[suffix.lower()])) - 1)
