"""Both cores: work over many files, split between this process and forked workers.

Workers are forked when the work is ready (the parsed estate in memory), so they inherit it and
only results travel, pickled. This process works too: it takes the chunks from the start while
the workers take them from the end, so what it does itself is never pickled, and no process
waits while another has work left. Results come back in input order: a parallel run's output is
the serial run's. What each chunk read is added to the run's record of its inputs
(``guards.run.cache``) in input order too.

How many processes (``workers_for``): one unless the work pays for more — at least
``MIN_FILES`` files (measured with bench/estates.py), a system that can fork, and cores that
are actually free (the usable cores less the load average), so a busy machine, where a second
process only competes with the first for the same core, runs the work in one.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..sources import reads

MIN_FILES = 200  # from here two processes gain on an idle machine (bench/estates.py: 0.92x)
CHUNKS_PER_WORKER = 8  # smaller chunks even out unequal files and the last chunk's wait

_work: tuple[Callable[[Any], Any], Sequence[Any]] | None = None  # what forked workers inherit
Part = tuple[list[Any], dict[str, str], bool]  # a chunk's results, what it read, read complete


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every system
        return os.cpu_count() or 1


def free_cores() -> int:
    """The usable cores not already busy (``busy``)."""
    usable = usable_cores()
    return max(1, min(usable, int(usable - busy() + 0.5)))


def busy() -> float:
    """How many cores other processes keep busy: the lesser of the last minute's load average
    and the processes running now besides this one (``/proc/loadavg``, where there is one).
    The average alone still counts a run that has just ended (two runs in a row, the second
    would stay in one process on an idle machine); the count alone misses a load that pauses."""
    try:
        average = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average here: assume the cores are free
        return 0.0
    running = running_now()
    return average if running is None else min(average, running)


def running_now(source: str = "/proc/loadavg") -> int | None:
    """Processes running or ready to run now, this one left out; None where unknown."""
    try:
        with open(source, encoding="ascii") as stat:
            runnable = stat.read().split()[3].partition("/")[0]
        return max(0, int(runnable) - 1)
    except (OSError, IndexError, ValueError):
        return None


def workers_for(files: int, asked: int) -> int:
    """How many processes to check ``files`` files with: ``asked``, or (0) one per free core,
    when there are enough files to pay for them and this system can fork; else one."""
    if files < MIN_FILES:
        return 1
    import multiprocessing  # not imported by a run too small to split

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return asked or free_cores()


def ordered_map(function: Callable[[Any], Any], items: Sequence[Any], workers: int) -> list[Any]:
    """``[function(item) for item in items]``, split between this process and ``workers - 1``
    forked ones."""
    if workers <= 1 or len(items) < 2:
        return [function(item) for item in items]
    import multiprocessing  # not imported by a run taken from the cache (guards.run.cache)
    from concurrent.futures import ProcessPoolExecutor

    global _work
    _work = (function, items)
    bounds = _chunks(len(items), workers * CHUNKS_PER_WORKER)
    parts: list[Part | None] = [None] * len(bounds)
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(workers - 1, mp_context=context)
    try:  # a worker that dies (killed, out of memory) is an error here, not a wait forever
        # submitted last chunk first: the workers take chunks from the end
        futures = {i: pool.submit(_run_chunk, bounds[i]) for i in reversed(range(len(bounds)))}
        for index in range(len(bounds)):
            if not futures[index].cancel():  # a worker has it: the rest is theirs
                break
            parts[index] = _run_chunk(bounds[index])
        for index, future in futures.items():
            if parts[index] is None:
                parts[index] = future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _work = None
    results: list[Any] = []
    for found, states, complete in filter(None, parts):
        reads.merge(states, complete)
        results += found
    return results


def _chunks(count: int, pieces: int) -> list[tuple[int, int]]:
    size = -(-count // pieces)
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def _run_chunk(bounds: tuple[int, int]) -> Part:
    assert _work is not None, "a worker runs only work it inherited"
    function, items = _work
    with reads.recording() as read:
        found = [function(item) for item in items[bounds[0] : bounds[1]]]
    return found, read.states, read.complete


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off while a block builds many objects that outlive it and no
    cyclic garbage to speak of: it would walk the growing heap again and again. Parsing 1,000
    composes and 1,000 notes builds 676,000 objects and 286 of cyclic garbage; a kept run of
    10,000 composes decodes to 220,000 check results (the collector took three times as long
    as the decoding)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():  # what it built to the oldest generation, unwalked:
            gc.freeze()  # else the first collection after would walk all of it (0.3 s at
            gc.unfreeze()  # 1,000 + 1,000) as the youngest
        if was_enabled:
            gc.enable()


@contextmanager
def collector_settled() -> Iterator[None]:
    """The objects alive now (the loaded estate) left out of the cycle collector's walks until
    the block ends: the checks' collections then walk only what the checks make, and a forked
    worker does not copy every page of the estate by marking it (``gc.freeze``)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def settle() -> None:
    """Inside ``collector_settled``: what was built since left out of the walks too."""
    gc.freeze()
