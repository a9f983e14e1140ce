"""What a run read: every input file as it was read, and every input looked for and not
found, so a kept run (guards.run.cache) is reused only while each still has that state.

The reader (:func:`guards.sources.edit.read`) and the template loader record here; the cache
starts a recording around a run and keeps what it holds. Nothing here knows of the cache.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ABSENT = "absent"
STATE = re.compile(r"absent|[0-9]+:[0-9a-f]{32}")  # what ``record`` records


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass
class Reads:
    """The state of every input a run read or looked for, by absolute path."""

    states: dict[str, str] = field(default_factory=dict)
    complete: bool = True  # False once a read failed: such a run is not stored

    def unchanged(self) -> bool:
        return all(state_of(path, state) == state for path, state in self.states.items())


_reads: Reads | None = None


@contextmanager
def recording() -> Iterator[Reads]:
    """Record what is read until the block ends."""
    global _reads
    outer, _reads = _reads, Reads()
    try:
        yield _reads
    finally:
        _reads = outer


def checked_states(data: object) -> dict[str, str]:
    """``data`` when it is the ``states`` of a :class:`Reads` (kept as JSON); else ValueError."""
    if type(data) is not dict or not all(
        type(path) is str and os.path.isabs(path) and type(state) is str and STATE.fullmatch(state)
        for path, state in data.items()
    ):
        raise ValueError("not the reads of a run")
    return data


def record(path: Path, data: bytes | None) -> None:
    """``path`` was read and held ``data``; None: it does not exist."""
    if _reads is not None:
        _reads.states[os.path.abspath(path)] = ABSENT if data is None else _state(data)


def merge(states: dict[str, str], complete: bool) -> None:
    """What another process read for this run (``guards.run.parallel``)."""
    if _reads is not None:
        _reads.states.update(states)
        _reads.complete = _reads.complete and complete


def record_failure() -> None:
    """A read failed: the run's result depends on more than file contents."""
    if _reads is not None:
        _reads.complete = False


def _state(data: bytes) -> str:
    return f"{len(data)}:{digest(data)}"


def state_of(path: str, expected: str = "") -> str:
    """What ``record`` would record for ``path`` now. Only a regular file is read (opened
    without blocking: a file swapped for a FIFO since must not stop the run), and only when
    its size is the ``expected`` state's."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return ABSENT
    except OSError:
        return "unreadable"
    with os.fdopen(handle, "rb") as opened:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if expected and not expected.startswith(f"{info.st_size}:"):
            return "another size"
        return _state(opened.read())
