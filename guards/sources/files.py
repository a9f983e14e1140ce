"""Texts read in place of files: ``guards check -`` (a compose or note given on standard input
under ``--stdin-filename``) and ``check --diff`` (the estate with the fixes applied in memory)
read every other file from disk.

The one reader (:func:`guards.sources.edit.read`) asks :func:`override` first: while
:func:`overridden` holds, a path it names reads as the bytes given, and every other path as
before. A source read this way carries no file stamp, so :func:`guards.sources.edit.write`
refuses to write it; and its read is recorded as incomplete, so no run that saw it is kept
by the run cache.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

_overrides: dict[str, bytes] = {}  # absolute path (as os.path.abspath spells it) -> bytes


@contextmanager
def overridden(contents: Mapping[Path, bytes]) -> Iterator[None]:
    """Until the block ends, reading a path of ``contents`` gives its bytes there (an inner
    block's bytes win over an outer one's for the same path)."""
    given = {os.path.abspath(path): data for path, data in contents.items()}
    outer = dict(_overrides)
    _overrides.update(given)
    try:
        yield
    finally:
        _overrides.clear()
        _overrides.update(outer)


def override(path: Path) -> bytes | None:
    """The bytes read in place of ``path``, or None: read the file."""
    if not _overrides:
        return None
    return _overrides.get(os.path.abspath(path))
