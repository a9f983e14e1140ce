"""Facts derived from one parsed file, computed once while the file lives.

Several rules read the same fact of a compose or a note (the engine invocations a note
documents, the sentences of its prose); a fact is a function of the parsed object alone, so
the first rule to ask computes it and the others read the kept value. :func:`per_object` keeps
each value beside the identity of its object and drops it when the object is collected (a
weak reference's callback), so an id reused by a later object never finds a stale value and a
long-lived process does not hold the facts of estates it no longer checks. Kept values are
shared: callers read them and never change them (they are tuples of frozen values).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class PerObject(Generic[T, R]):
    """``compute(target)`` for each target object, computed on the first call."""

    def __init__(self, compute: Callable[[T], R]) -> None:
        self.compute = compute
        self._kept: dict[int, R] = {}
        self.__doc__ = compute.__doc__
        self.__wrapped__ = compute  # the function itself, for a test to call without the memo

    def __call__(self, target: T) -> R:
        key = id(target)
        if key in self._kept:
            return self._kept[key]
        value = self._kept[key] = self.compute(target)
        weakref.finalize(target, self._kept.pop, key, None)
        return value

    def clear(self) -> None:
        self._kept.clear()


def per_object(compute: Callable[[T], R]) -> PerObject[T, R]:
    """``compute`` as a fact of its one argument, a parsed file: computed once per object."""
    return PerObject(compute)
