"""How deep estate data may nest, and where a text passes that depth.

The YAML, TOML and JSON readers all refuse data nested deeper than ``MAX_DEPTH`` (real
settings, registries and catalogs nest fewer than ten levels). The parsers, and the code and
libraries that walk their data (``str``, pydantic), recurse: a few kilobytes of brackets, dotted
keys or chained YAML aliases would otherwise end a run with a RecursionError instead of an
error at the line where the nesting passes the limit. Checks here never recurse.
"""

from __future__ import annotations

import re
from typing import Any

from .patterns import lazy

MAX_DEPTH = 100
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"


def deeper_than(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether parsed data (dicts and lists) nests more than ``limit`` containers deep."""
    stack = [(data, 1)] if isinstance(data, (dict, list)) else []
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


JSON_TOKEN = lazy(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


def json_line(text: str, limit: int = MAX_DEPTH) -> int:
    """The line where a JSON text's brackets first open more than ``limit`` deep (else 1)."""
    depth = 0
    for found in JSON_TOKEN.finditer(text):
        char = found.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, found.start()) + 1
        elif char in "]}":
            depth -= 1
    return 1


TOML_TOKEN = lazy(
    r'"""(?:\\.|[^\\])*?"{3,5}|' + r"'''.*?'{3,5}|"
    r""""(?:[^"\\\n]|\\.)*"|'[^'\n]*'|#[^\n]*|[\[\]{}.=,\n]""",
    re.DOTALL,
)
TOML_STRING = lazy(r""""(?:[^"\\\n]|\\.)*"|'[^'\n]*'""")


class _TomlDepth:
    """Walks a TOML text's tokens with the depth of the container being filled: a table
    header's keys, a dotted key's parts, and every array and inline table count a level."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.table = 1  # the depth of the current [table] (the document itself is 1)
        self.level = 1  # the depth of the innermost open container
        self.target = 1  # the container the next value goes into
        self.open: list[tuple[str, int]] = []  # open brackets, each with the level around it
        self.dots = 0  # dots of the key being read
        self.in_key = True  # reading a key: a statement's start, or inside an inline table

    def first_past(self, limit: int) -> int | None:
        """The offset of the token where the depth first passes ``limit``."""
        at = 0
        while (found := TOML_TOKEN.search(self.text, at)) is not None:
            token, at = found.group(), found.end()
            if token == "[" and not self.open and self.in_key and self.dots == 0:
                at = self._header(found.start())
                depth = self.table
            else:
                depth = self._step(token)
            if depth > limit:
                return found.start()
        return None

    def _step(self, token: str) -> int:
        if token == "\n" and not self.open:
            self.in_key, self.dots, self.level = True, 0, self.table
        elif token == "." and self.in_key:
            self.dots += 1
            return self.level + self.dots
        elif token == "=" and self.in_key:
            self.in_key, self.target = False, self.level + self.dots
            return self.target
        elif token in ("[", "{"):
            self.open.append((token, self.level))
            self.level = self.target = self.target + 1
            self.in_key, self.dots = token == "{", 0
        elif token == "," and self.open:
            self.in_key, self.dots, self.target = self.open[-1][0] == "{", 0, self.level
        elif token in ("]", "}") and self.open:
            self.level = self.target = self.open.pop()[1]
            self.in_key = False
        return self.level

    def _header(self, start: int) -> int:
        """Past a ``[table]`` or ``[[array]]`` header: its keys set the table's depth."""
        end = self.text.find("\n", start)
        end = len(self.text) if end < 0 else end
        array = self.text.startswith("[[", start)
        keys = TOML_STRING.sub("", self.text[start:end]).split("]", 1)[0]
        self.table = self.level = self.target = 1 + keys.count(".") + 1 + array
        return end


def toml_line(text: str, limit: int = MAX_DEPTH) -> int:
    """The line where a TOML text first nests more than ``limit`` deep (else 1)."""
    at = _TomlDepth(text).first_past(limit)
    return 1 if at is None else text.count("\n", 0, at) + 1
