"""Reading source files: text with line numbers, and YAML node trees that keep them.

PyYAML's libyaml composer is the fastest reader that keeps marks (about 0.16 ms per real
compose against about 7 ms for a ruamel round-trip load, ``bench/parse_speed.py``), so every
YAML input is composed once with it. Guards read the node tree; nothing is re-dumped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import GuardsError

try:  # libyaml ships in PyYAML's wheels; the pure loader is the same grammar, only slower.
    from yaml import CSafeLoader as _Base
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Base  # type: ignore[assignment]

TIMESTAMP = "tag:yaml.org,2002:timestamp"


class Loader(_Base):
    """Safe loader that leaves dates as strings: validators parse them and can say where a
    bad one is (YAML 1.1 would raise a bare ValueError for ``2026-13-01``)."""


Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != TIMESTAMP]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()
}

__all__ = [
    "MappingNode",
    "Node",
    "ScalarNode",
    "SequenceNode",
    "compose",
    "construct",
    "get",
    "items",
    "line_of",
    "path_line",
    "read_text",
    "scalar",
]


def read_text(path: Path, shown: str) -> str:
    """Read a file as UTF-8 (a BOM is tolerated) with ``\n`` line breaks; errors name the
    file and line."""
    from .edit import read

    return read(path, shown).text


def compose(text: str, shown: str) -> Node | None:
    """Compose one YAML document into a node tree (``None`` for an empty document)."""
    try:
        return yaml.compose(text, Loader=Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise GuardsError(f"YAML error: {problem}", shown) from None
        raise GuardsError(f"YAML error: {problem}", shown, mark.line + 1, mark.column + 1) from None
    except yaml.YAMLError as exc:
        raise GuardsError(f"YAML error: {exc}", shown) from None


def construct(node: Node, shown: str) -> Any:
    """Plain Python data for a node tree (YAML 1.1 safe types; dates stay strings)."""
    loader = Loader("")
    try:
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark or node.start_mark
        raise GuardsError(
            f"YAML error: {exc.problem or exc.context}", shown, mark.line + 1, mark.column + 1
        ) from None
    except (ValueError, TypeError) as exc:
        raise GuardsError(f"YAML error: {exc}", shown, line_of(node)) from None
    finally:
        loader.dispose()


def line_of(node: Node) -> int:
    """1-based line where a node starts."""
    return node.start_mark.line + 1


def column_of(node: Node) -> int:
    return node.start_mark.column + 1


def items(node: Node | None) -> Iterator[tuple[str, Node, Node]]:
    """(key text, key node, value node) for a mapping; nothing for other nodes."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                yield key.value, key, value


def get(node: Node | None, key: str) -> Node | None:
    for name, _, value in items(node):
        if name == key:
            return value
    return None


def scalar(node: Node | None) -> str | None:
    return node.value if isinstance(node, ScalarNode) else None


def path_line(root: Node | None, path: tuple[Any, ...]) -> int | None:
    """The line of the deepest node reachable along ``path`` (keys and list indexes)."""
    node, found = root, None
    for part in path:
        if isinstance(node, MappingNode):
            match = next(
                (
                    (k, v)
                    for k, v in node.value
                    if isinstance(k, ScalarNode) and k.value == str(part)
                ),
                None,
            )
            if match is None:
                break
            found, node = line_of(match[0]), match[1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            found = line_of(node)
        else:
            break
    if found is None and root is not None:
        found = line_of(root)
    return found
