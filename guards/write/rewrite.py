"""The one loop that rewrites a compose in place: ``guards regen``, ``guards fix`` and
``guards fix --adopt-profile``.

Each of them reads the file (under the write lock when it will write), checks that it is still
the text the estate was checked in (the findings' lines are lines of that text), computes the
edits, and then either writes them or leaves the file for a diff. One function does this, so
the lock, the staleness check and the write cannot drift apart between the commands.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Literal, NamedTuple

from ..errors import GuardsError
from ..sources import edit
from ..sources.edit import Edit, Source

Mode = Literal["check", "diff", "write"]  # check and diff write nothing; only the exit differs
STALE = "changed since it was checked; rerun guards fix"


class Rewritten(NamedTuple):
    """One file after :func:`rewrite`: as read, and as the edits render it."""

    source: Source
    edits: list[Edit] | None  # None: the edits were refused, the file left as it is
    after: str  # ``source.raw`` with the edits rendered (line endings as the file has them)
    written: bool

    @property
    def changed(self) -> bool:
        return self.after != self.source.raw


def rewrite(
    path: Path,
    shown: str,
    expected_text: str | None,
    make_edits: Callable[[Source], list[Edit] | None],
    mode: Mode,
    limit: int = edit.MAX_BYTES,
) -> Rewritten:
    """Read ``path``, refuse it unless its text is ``expected_text`` (None: any text will do,
    the edits being computed from the file itself), compute ``make_edits(source)`` and, in
    ``write`` mode, write them, all under the write lock. ``make_edits`` returns None to leave
    the file unwritten whatever the mode. Raises GuardsError (nothing written)."""
    with edit.locked(path, shown) if mode == "write" else nullcontext():
        source = edit.read(path, shown, limit)
        if expected_text is not None and source.text != expected_text:
            raise GuardsError(STALE, shown)
        edits = make_edits(source)
        after = source.render(edits or [])
        written = mode == "write" and edits is not None and edit.write(source, after)
    return Rewritten(source, edits, after, written)
