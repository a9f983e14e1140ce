"""The one error type users see.

Every problem with user input is raised as :class:`GuardsError` carrying the file and line it
concerns; the CLI formats it once as ``FILE:LINE[:COL]: what is wrong``.
"""

from __future__ import annotations


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


MAX_MESSAGE = 400  # characters of an error message: the input it quotes may be huge
MAX_PATH = 300


def printable(text: str, limit: int) -> str:
    """``text`` as one line of at most ``limit`` characters: control characters (a newline or
    a terminal escape in a file name or a quoted value) are shown escaped, a long text is cut
    with an ellipsis."""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[: limit * 2])
    return text if len(text) <= limit else text[: limit - 1] + "…"
