"""Both cores: work over many files, split among forked worker processes.

Workers are forked when the work is ready (the parsed estate in memory), so they inherit it and
only results travel, pickled, and they come back in input order: a parallel run's output is the
serial run's. What a worker read is added to the parent's record of the run's inputs
(``guards.run.cache``). Where fork is not available, or for estates too small to pay for the
processes (fewer than ``MIN_FILES`` files; measured with bench/estates.py), the work runs in
this process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ..sources import reads

MIN_FILES = 200  # from here two processes gain (bench/estates.py: 0.92x at 200 files)
CHUNKS_PER_WORKER = 4  # smaller chunks even out unequal files

_work: tuple[Callable[[Any], Any], Sequence[Any]] | None = None  # what forked workers inherit


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every system
        return os.cpu_count() or 1


def workers_for(files: int, asked: int) -> int:
    """How many processes to check ``files`` files with: ``asked`` (0: one per usable core)
    when there are enough files to pay for them and this system can fork, else one."""
    if files < MIN_FILES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return asked or usable_cores()


def ordered_map(function: Callable[[Any], Any], items: Sequence[Any], workers: int) -> list[Any]:
    """``[function(item) for item in items]``, split among ``workers`` forked processes."""
    if workers <= 1 or len(items) < 2:
        return [function(item) for item in items]
    global _work
    _work = (function, items)
    context = multiprocessing.get_context("fork")
    try:  # a worker that dies (killed, out of memory) is an error here, not a wait forever
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            parts = list(pool.map(_run_chunk, _chunks(len(items), workers * CHUNKS_PER_WORKER)))
    finally:
        _work = None
    results: list[Any] = []
    for found, states, complete in parts:
        reads.merge(states, complete)
        results += found
    return results


def _chunks(count: int, pieces: int) -> list[tuple[int, int]]:
    size = -(-count // pieces)
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def _run_chunk(bounds: tuple[int, int]) -> tuple[list[Any], dict[str, str], bool]:
    assert _work is not None, "a worker runs only work it inherited"
    function, items = _work
    with reads.recording() as read:
        found = [function(item) for item in items[bounds[0] : bounds[1]]]
    return found, read.states, read.complete
