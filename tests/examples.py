"""How many examples a property test draws.

Each property names the count it is worth in a thorough run, the one that found its bugs;
the run on each commit (and CI) draws a third of it, never fewer than ``FLOOR`` (a property
written with fewer keeps its own count). ``GUARDS_THOROUGH=1 .venv/bin/pytest`` draws every
property's full count: after changing a reader, a writer or a strategy, and before a release
(CONTRIBUTING.md). Properties with ``derandomize=True`` draw the same examples every run, so
a per-commit run tests the first third of what a thorough one does."""

from __future__ import annotations

import os

SHARE = 3  # a per-commit run draws 1/SHARE of a property's thorough count
FLOOR = 25


def thorough() -> bool:
    return os.environ.get("GUARDS_THOROUGH", "") not in ("", "0")


def examples(full: int) -> int:
    """``max_examples`` for a property worth ``full`` examples in a thorough run."""
    if thorough() or full <= FLOOR:
        return full
    return max(FLOOR, full // SHARE)
