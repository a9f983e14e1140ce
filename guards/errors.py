"""The one error type users see.

Every problem with user input is raised as :class:`GuardsError` carrying the file and line it
concerns; the CLI formats it once as ``FILE:LINE[:COL]: what is wrong``. A parser knows the
line but not the file it was handed text from, so it raises without a path and the one place
that read the file attaches it (:func:`located`); the path is not threaded through every
function only to be quoted in a message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class GuardsError(Exception):
    """A user-facing error: bad input, bad config, bad usage."""

    def __init__(
        self,
        message: str,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        message = printable(message, MAX_MESSAGE)
        super().__init__(message)
        self.message = message
        self.path = path  # as on disk; shown escaped and cut by location()
        self.line = line
        self.column = column

    def __reduce__(
        self,
    ) -> tuple[type[GuardsError], tuple[str, str | None, int | None, int | None]]:
        """Pickled whole (a worker process raises it to the parent)."""
        return (type(self), (self.message, self.path, self.line, self.column))

    def at(self, path: str | None) -> GuardsError:
        """This error, placed in ``path`` unless it already names a file (an inner boundary,
        such as an included file, was nearer to the problem)."""
        if self.path is not None or path is None:
            return self
        # A copy, not a new call: a subclass's own constructor and attributes are kept.
        placed = type(self).__new__(type(self), *self.args)
        placed.__dict__.update(vars(self))
        placed.path = path
        return placed

    def location(self) -> str:
        if self.path is None:
            return ""
        parts = [printable(self.path, MAX_PATH)]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.message}" if where else self.message


@contextmanager
def located(path: str | None) -> Iterator[None]:
    """Errors raised inside without a file are re-raised naming ``path``: the file boundary
    (what read the text) wraps the parse in this."""
    try:
        yield
    except GuardsError as exc:
        placed = exc.at(path)
        if placed is exc:
            raise
        raise placed.with_traceback(exc.__traceback__) from exc.__cause__


MAX_MESSAGE = 400  # characters of an error message: the input it quotes may be huge
MAX_PATH = 300


def printable(text: str, limit: int) -> str:
    """``text`` as one line of at most ``limit`` characters: control characters (a newline or
    a terminal escape in a file name or a quoted value) are shown escaped, a long text is cut
    with an ellipsis. CI log commands are defused too: GitHub's runner reads ``::name::`` at
    the start of a line (after blanks) and ``##[name]`` anywhere in it, so a leading ``:`` and
    the ``[`` of ``##[`` are shown as ``\x3a`` and ``\x5b``."""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[: limit * 2])
    if "##[" in text:
        text = text.replace("##[", "##\\x5b")
    if text.lstrip().startswith("::"):
        blanks = len(text) - len(text.lstrip())
        text = text[:blanks] + "\\x3a" + text[blanks + 1 :]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable_lines(text: str) -> str:
    """Text of several lines that comes from files (a diff, a listing), each line shown as
    :func:`printable` shows one, whole: tabs and a CRLF's CR stay as they are, nothing else
    that a terminal or a CI runner would act on reaches them."""
    return "\n".join(_printable_line(line) for line in text.split("\n"))


def _printable_line(line: str) -> str:
    end = "\r" if line.endswith("\r") else ""
    body = line[: len(line) - len(end)]
    if body.isprintable() and "##[" not in body and not body.lstrip().startswith("::"):
        return line
    return "\t".join(printable(part, len(part) * 10 + 1) for part in body.split("\t")) + end
