"""Ollama Modelfiles -> :class:`Modelfile`: the instructions, each with its line.

A Modelfile is a list of instructions, one a line (``FROM base``, ``PARAMETER num_ctx 32000``,
``TEMPLATE "..."``, ``SYSTEM`` with a value in triple quotes); ``#`` starts a comment line; a
value in ``"`` or triple ``"`` quotes may run over several lines. Only what a statement can be compared with is kept
(``FROM`` and the ``PARAMETER`` lines); the other instructions are skipped whole, their quoted
values included, so a ``PARAMETER`` written inside a template is not read as one. Reading never
fails: a line that is no instruction is not one (Ollama's own reader is the judge of that).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import NamedTuple

from .patterns import lazy

INSTRUCTION = lazy(r"^\s*(?P<name>[A-Za-z]+)\b[ \t]*(?P<rest>.*)$")
PARAMETER = lazy(r"^(?P<key>[A-Za-z_][\w]*)[ \t]+(?P<value>\S.*?)\s*$")
NAMES = ("Modelfile",)  # a file of exactly this name; or a name ending in ``.Modelfile``


class Parameter(NamedTuple):
    key: str  # as written (``num_ctx``)
    value: str  # as written, surrounding quotes removed
    line: int
    column: int  # 1-based, at the value


@dataclass
class Modelfile:
    path: str
    lines: list[str]
    base: str | None = None  # what ``FROM`` names
    parameters: list[Parameter] = field(default_factory=list)

    def parameter(self, key: str) -> list[Parameter]:
        """The ``PARAMETER`` lines that set ``key`` (Ollama keys are lower case)."""
        return [p for p in self.parameters if p.key.lower() == key.lower()]


def is_modelfile(path: str) -> bool:
    """Whether a file is a Modelfile by its name (``Modelfile``, ``llama3_32k.Modelfile``)."""
    name = posixpath.basename(path)
    return name in NAMES or (name.endswith(".Modelfile") and len(name) > len(".Modelfile"))


def parse_modelfile(text: str, path: str) -> Modelfile:
    """The instructions of a Modelfile's text (``\\n`` line breaks)."""
    lines = text.split("\n")
    found = Modelfile(path, lines)
    number = 0
    while number < len(lines):
        raw = lines[number]
        number += 1
        match = INSTRUCTION.match(raw)
        if raw.lstrip().startswith("#") or match is None:
            continue
        name, rest, line = match.group("name").upper(), match.group("rest"), number
        number = _past_quotes(lines, number, rest)
        if name == "FROM" and found.base is None and rest.strip():
            found.base = rest.strip()
        elif name == "PARAMETER":
            parameter = PARAMETER.match(rest)
            if parameter is not None:
                value = parameter.group("value")
                column = match.start("rest") + parameter.start("value") + 1
                found.parameters.append(
                    Parameter(parameter.group("key"), value.strip('"'), line, column)
                )
    return found


def _past_quotes(lines: list[str], number: int, rest: str) -> int:
    """The index of the line after an instruction whose value, opened on its line with one
    ``"`` or three, may close on a later one."""
    value = rest.strip()
    if value.startswith('"""'):
        closing, opened = '"""', value[3:]
    elif value.startswith('"'):
        closing, opened = '"', value[1:]
    else:
        return number
    if _closes(opened, closing):
        return number
    while number < len(lines):
        number += 1
        if _closes(lines[number - 1], closing):
            break
    return number


def _closes(text: str, closing: str) -> bool:
    """Whether ``text`` holds the unescaped quote that ends a value."""
    at = text.find(closing)
    while at >= 0:
        if closing == '"""' or at == 0 or text[at - 1] != "\\":
            return True
        at = text.find(closing, at + 1)
    return False
