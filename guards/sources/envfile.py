"""Env files read the way Compose reads them and the way the shell sources them.

One reader for every env file: a compose's ``.env``, the files the ``env-files`` setting names,
a service's ``env_file:`` and the operator's ``--env-file``. Estates keep them as shell scripts
that people also ``source``: ``export K=V``, ``K="v"``, ``K='v'``, `` # comments``, and
``${VAR:-x}`` / ``$VAR`` referring to a variable set on an earlier line (or to nothing: it is
then empty, or its default). A line that is no assignment (a function, ``pushd x``,
``source y``, an ``if``) does nothing Compose would read: it is skipped and said
(:class:`Skipped`, shown with ``-v``), as is an assignment inside a block such a line opens
(it runs only when the block does) and one whose value runs a command or uses an expansion
Compose does not have. Only what cannot be read at all is an error: invalid UTF-8, a file too
large, a quote that never closes.
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple, cast

from ..errors import GuardsError, located, printable
from . import yamlsrc
from .compose.interpolate import TemplateError, interpolate
from .patterns import lazy

LINE = lazy(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*+)\s*=\s*(.*)$")
OPENS = {"if", "for", "while", "until", "case", "select", "{"}
CLOSES = {"fi", "done", "esac", "}"}
COMMAND = lazy(r"\$\(|`")  # command substitution: the value is what a program prints
ESCAPED = lazy(r"\\(.)", re.DOTALL)


class Skipped(NamedTuple):
    """A line the reader did not take, and why."""

    line: int
    text: str
    why: str


class EnvFile(dict[str, str]):
    """The variables an env file sets (it is their dict), the line that set each last, and
    the lines skipped. ``source`` names the file as shown (empty for text read from none)."""

    def __init__(
        self,
        values: Mapping[str, str] | None = None,
        source: str = "",
        lines: Mapping[str, int] | None = None,
        skipped: tuple[Skipped, ...] = (),
    ) -> None:
        super().__init__(values or {})
        self.source = source
        self.lines = dict(lines or {})
        self.skipped = skipped

    def remarks(self) -> list[str]:
        """One line per skipped line, ``FILE:LINE: ...``, for ``-v``."""
        return [
            f"{self.source}:{s.line}: line skipped, {s.why}: {printable(s.text.strip(), 80)}"
            for s in self.skipped
        ]


def load_env_file(path: Path, shown: str, outer: Mapping[str, str] | None = None) -> EnvFile:
    """The values an env file at ``path`` (known as ``shown``) sets; errors name it. A
    reference no line of the file sets is looked up in ``outer`` (earlier files)."""
    text = yamlsrc.read_text(path, shown)
    with located(shown):
        parsed = parse_env(text, outer)
    parsed.source = shown
    return parsed


def parse_env(text: str, outer: Mapping[str, str] | None = None) -> EnvFile:
    """The assignments of ``text``, in order; an error names its line, not the file."""
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    skipped: list[Skipped] = []
    rows = text.split("\n")
    depth, index = 0, 0
    while index < len(rows):
        number, line = index + 1, rows[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = LINE.match(line)
        if match is None:
            skipped.append(Skipped(number, line, "not an assignment"))
            depth = max(0, depth + _block_change(line))
            continue
        raw, index = _value_text(match.group(2), rows, index, number)
        if depth:
            skipped.append(Skipped(number, line, "inside a block the file opens"))
            continue
        value = _value(raw, ChainMap(values, cast(dict[str, str], outer or {})))
        if isinstance(value, Skipped):
            skipped.append(Skipped(number, line, value.why))
            continue
        values[match.group(1)] = value
        lines[match.group(1)] = number
    return EnvFile(values, "", lines, tuple(skipped))


def _block_change(line: str) -> int:
    """How many blocks a line that is no assignment opens (``if``, ``f() {``) or closes."""
    words = line.replace(";", " ").split()
    return sum(w in OPENS or w.endswith("{") for w in words) - sum(w in CLOSES for w in words)


def _value_text(text: str, rows: list[str], index: int, number: int) -> tuple[str, int]:
    """The value as written (a quoted one may run over later lines) and the next row."""
    if not text or text[0] not in "\"'":
        return text, index
    while _closing(text) < 0:
        if index >= len(rows):
            raise GuardsError(f"unterminated {text[0]} quote", None, number)
        text, index = text + "\n" + rows[index], index + 1
    return text, index


def _closing(text: str) -> int:
    """Where the quote that opens ``text`` closes (a ``"`` escaped with ``\\`` does not)."""
    if text[0] == "'":
        return text.find("'", 1)
    i = 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return -1


def _value(text: str, known: Mapping[str, str]) -> str | Skipped:
    """A value as Compose takes it: single quotes literal; double quotes and bare values
    expanded against the variables ``known`` so far (a double-quoted ``\\$`` stays a ``$``)."""
    if text and text[0] == "'":
        return text[1 : _closing(text)]
    if text and text[0] == '"':
        inner = text[1 : _closing(text)]
    else:
        comment = re.search(r"\s#", text)
        inner = (text[: comment.start()] if comment else text).strip()
    if COMMAND.search(inner):
        return Skipped(0, text, "the value runs a command")
    quoted = text[:1] == '"'
    template = inner.replace("\\$", "$$") if quoted else inner
    try:
        expanded = interpolate(template, known).text
    except TemplateError:
        return Skipped(0, text, "an expansion Compose does not have")
    return ESCAPED.sub(_unescape, expanded) if quoted else expanded


def _unescape(match: re.Match[str]) -> str:
    char = match.group(1)
    return {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(char, match.group(0))
