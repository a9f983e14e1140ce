"""Comment lines of a compose file: where each sits (header, YAML, script), the retraction
callouts they form, and the generated regions between ``# >>> guards:NAME`` markers.

A region's end marker has room for a checksum of its body, cog-style:
``# <<< guards:NAME (checksum: 1a2b3c4d)``; its body offsets let an edit replace it exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from .. import yamlsrc
from ..edit import line_starts
from ..markers import Marker
from ..yamlsrc import Node
from .header import Header, HeaderLine, sections_of
from .services import block_span

REGION_OPEN = re.compile(r"^\s*>>>\s*guards:([\w.-]+)(?:\s+(\S(?:.*\S)?))?\s*$")
REGION_CLOSE = re.compile(r"^\s*<<<\s*guards:([\w.-]+)(?:\s+\(checksum:\s*([0-9a-f]+)\))?\s*$")


class Comment(NamedTuple):
    line: int
    column: int
    text: str  # after the ``#``
    where: str  # "header" | "yaml" | "script"

    @property
    def end_column(self) -> int:
        """Just after the comment's text (its ``#`` is at ``column``)."""
        return self.column + 1 + len(self.text.rstrip())


@dataclass(frozen=True)
class Region:
    """A generated region: the lines between ``# >>> guards:NAME [ARGS]`` and
    ``# <<< guards:NAME [(checksum: HEX)]``."""

    name: str
    line: int  # the opening marker
    end_line: int  # the closing marker
    args: str = ""  # what follows the name on the opening marker
    body_start: int = 0  # offset in the compose text of the first line after the opening marker
    body_end: int = 0  # offset of the closing marker line (the body ends just before it)
    checksum: str | None = None  # as recorded on the closing marker

    def __contains__(self, line: int) -> bool:
        return self.line <= line <= self.end_line


def find_comments(lines: list[str], root: Node, header: Header) -> list[Comment]:
    scripts, literals = _scalar_spans(root)
    found: list[Comment] = []
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip()
        column = len(line) - len(stripped) + 1
        if number in literals:
            if number in scripts and stripped.startswith("#"):
                found.append(Comment(number, column, stripped[1:], "script"))
            continue
        if stripped.startswith("#"):
            where = "header" if header.line <= number <= header.end_line else "yaml"
            found.append(Comment(number, column, stripped[1:], where))
            continue
        trailing = _trailing_comment(line)
        if trailing is not None:
            found.append(Comment(number, trailing + 1, line[trailing + 1 :], "yaml"))
    return found


def _runs(comments: list[Comment]) -> list[list[Comment]]:
    """Comments on consecutive lines of the same kind (a header, a block between keys)."""
    runs: list[list[Comment]] = []
    for comment in comments:
        if runs and comment.line == runs[-1][-1].line + 1 and comment.where == runs[-1][-1].where:
            runs[-1].append(comment)
        else:
            runs.append([comment])
    return runs


@dataclass(frozen=True)
class Callout:
    """A comment section opening with a dated (or claim-citing) retraction marker."""

    line: int
    end_line: int
    marker: Marker

    def __contains__(self, line: int) -> bool:
        return self.line <= line <= self.end_line


def retraction_callouts(comments: list[Comment]) -> list[Callout]:
    """The retraction callouts among a compose's comments."""
    return [
        Callout(section.line, section.end_line, section.retraction)
        for run in _runs(comments)
        for section in sections_of([HeaderLine(c.line, c.text, c.column + 1) for c in run])
        if section.retraction is not None
    ]


class MarkerProblem(NamedTuple):
    """A region marker that does not pair up: ``check`` reports it, ``regen`` stops at it."""

    line: int
    message: str


def find_regions(comments: list[Comment], text: str) -> tuple[list[Region], list[MarkerProblem]]:
    """The well-formed regions, and every marker that opens inside another region (a marker
    given twice), closes a region that is not open, or is never closed."""
    regions: list[Region] = []
    problems: list[MarkerProblem] = []
    opened: tuple[str, int, str] | None = None
    starts = line_starts(text)
    for comment in comments:
        start, end = REGION_OPEN.match(comment.text), REGION_CLOSE.match(comment.text)
        if start and opened:
            problems.append(
                MarkerProblem(
                    comment.line,
                    f"generated region guards:{start.group(1)} opens inside "
                    f"guards:{opened[0]} (opened at line {opened[1]})",
                )
            )
        elif start:
            opened = (start.group(1), comment.line, start.group(2) or "")
        elif end and (opened is None or opened[0] != end.group(1)):
            problems.append(
                MarkerProblem(
                    comment.line, f"`<<< guards:{end.group(1)}` closes a region that is not open"
                )
            )
        elif end and opened:
            name, line, args = opened
            body = (starts[line], starts[comment.line - 1])
            regions.append(Region(name, line, comment.line, args, *body, end.group(2)))
            opened = None
    if opened:
        problems.append(
            MarkerProblem(opened[1], f"generated region guards:{opened[0]} is never closed")
        )
    return regions, problems


def _scalar_spans(root: Node) -> tuple[set[int], set[int]]:
    """Lines inside literal block scalars (scripts) and inside any multi-line scalar."""
    scripts: set[int] = set()
    inside: set[int] = set()
    for node in yamlsrc.scalars(root):
        if node.style in ("|", ">"):
            first, last = block_span(node)
            span = range(first, last + 1)
            inside.update(span)
            if node.style == "|":
                scripts.update(span)
        elif node.end_mark.line > node.start_mark.line:
            inside.update(range(node.start_mark.line + 2, node.end_mark.line + 2))
    return scripts, inside


def _trailing_comment(line: str) -> int | None:
    """Index of a ``#`` that starts a trailing comment (outside quotes), if any."""
    if " #" not in line and "\t#" not in line:
        return None
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'" and (i == 0 or not line[i - 1].isalnum()):
            quote = char
        elif char == "#" and i > 0 and line[i - 1] in " \t":
            return i
    return None
