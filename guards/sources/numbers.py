"""Numbers as estates write them, read tolerantly and within limits.

Every number taken from a compose, a header, a comment, an ``.env`` or a command line goes
through here: plain ASCII decimals only (``²`` passes ``str.isdigit`` and ``٣`` passes
``float``; neither is a setting), finite (``inf``, ``nan`` and ``1e400`` are not), short (a
400-digit figure is not a context length) and within ``LIMIT``. Anything else is not a number:
the caller reports it or leaves the check out; it never raises.
"""

from __future__ import annotations

import math
import re

LIMIT = 1e15  # larger than any count of tokens, bytes or GPUs an estate states
MAX_LENGTH = 40
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
