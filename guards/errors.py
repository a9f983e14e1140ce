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
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def location(self) -> str:
        if self.path is None:
            return ""
        parts = [self.path]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.message}" if where else self.message
