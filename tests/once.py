"""A folder made once per test run and shared by every pytest-xdist worker of that run: what
costs seconds to make and only needs reading afterwards (a build environment, wheels, a
pre-commit hook environment).

Under xdist each worker is its own process with its own session fixtures, so a session
fixture alone would make the folder once per worker. The folder lives beside the workers'
temporary folders (the parent of ``getbasetemp()``, one per run), and a file lock makes the
first worker that needs it make it while the others wait and then read it."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

DONE = ".made"  # written last: a folder without it was left by a make that failed


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder this run's workers share: the parent of a worker's temporary folder, this
    process's own temporary folder without xdist (never a folder of another run)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]
) -> Path:
    """``run_folder()/name``, filled by ``make(folder)`` in the first process that asks for it.
    A make that fails (or skips) leaves no folder behind, so the next process tries again
    and fails (or skips) the same way."""
    shared = run_folder(tmp_path_factory)
    folder = shared / name
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                make(folder)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            (folder / DONE).touch()
    return folder
