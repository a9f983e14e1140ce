"""Reading source files: text with line numbers, and YAML node trees that keep them.

PyYAML's libyaml composer is the fastest reader that keeps marks (about 0.16 ms per real
compose against about 7 ms for a ruamel round-trip load, ``bench/parse_speed.py``), so every
YAML input is composed once with it. Guards read the node tree; nothing is re-dumped.
"""

from __future__ import annotations

import json
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
MERGE = "tag:yaml.org,2002:merge"


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


def read_text(path: Path, shown: str, limit: int | None = None) -> str:
    """Read a file as UTF-8 (a BOM is tolerated) with ``\n`` line breaks; errors name the
    file and line."""
    from .edit import MAX_BYTES, read

    return read(path, shown, limit or MAX_BYTES).text


def compose(text: str, shown: str) -> Node | None:
    """Compose one YAML document into a node tree (``None`` for an empty document).

    As Compose reads it: a key given twice in one mapping is an error; merge keys
    (``<<: *base``) are resolved, the mapping's own keys overriding the merged ones; aliases
    that would expand past ``MAX_NODES`` nodes are refused."""
    try:
        root = yaml.compose(text, Loader=Loader)
        if root is not None:
            _resolve(root, shown)
        return root
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise GuardsError(f"YAML error: {problem}", shown) from None
        # libyaml may place an error at the end of the stream one line past the last.
        line = min(mark.line + 1, text.count("\n") + 1)
        raise GuardsError(f"YAML error: {problem}", shown, line, mark.column + 1) from None
    except yaml.reader.ReaderError as exc:  # a character YAML forbids (NUL, ESC, ...)
        # libyaml counts bytes, PyYAML characters: find the character again, as PyYAML does.
        found = yaml.reader.Reader.NON_PRINTABLE.search(text)
        at = found.start() if found else 0
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        problem = f"unacceptable character #x{ord(text[at : at + 1] or chr(0)):04x}: {exc.reason}"
        raise GuardsError(f"YAML error: {problem}", shown, line, column) from None
    except yaml.YAMLError as exc:
        raise GuardsError(f"YAML error: {exc}", shown) from None


MAX_NODES = 1_000_000  # a few KB of nested aliases can stand for billions of nodes


def _resolve(root: Node, shown: str) -> None:
    nodes, shared = _nodes(root)
    mappings = [n for n in nodes if isinstance(n, MappingNode)]
    for node in mappings:
        _no_duplicates(node, shown)
    loader = Loader("")
    try:
        for node in mappings:
            if any(isinstance(k, ScalarNode) and k.tag == MERGE for k, _ in node.value):
                loader.flatten_mapping(node)
                node.value = _last_wins(node.value)
    finally:
        loader.dispose()
    if shared and _expanded(root, len(nodes)) > len(nodes) + MAX_NODES:
        raise GuardsError(
            f"YAML aliases expand to more than {MAX_NODES:,} nodes", shown, line_of(root)
        )


def _nodes(root: Node) -> tuple[list[Node], bool]:
    """Every node once, however many aliases refer to it; and whether any is referred to
    more than once (an alias)."""
    found, seen, stack, shared = [], set(), [root], False
    while stack:
        node = stack.pop()
        if id(node) in seen:
            shared = True
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(_children(node))
    return found, shared


def _no_duplicates(node: MappingNode, shown: str) -> None:
    first: dict[str, int] = {}
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag == MERGE:
            continue
        if key.value in first:
            raise GuardsError(
                f"duplicate key `{key.value}` (first at line {first[key.value]})",
                shown,
                line_of(key),
                column_of(key),
            )
        first[key.value] = line_of(key)


def _last_wins(pairs: list[tuple[Node, Node]]) -> list[tuple[Node, Node]]:
    """After merging, a key the mapping sets itself overrides the merged one (it comes later)."""
    last = {k.value: i for i, (k, _) in enumerate(pairs) if isinstance(k, ScalarNode)}
    return [
        p for i, p in enumerate(pairs) if not isinstance(p[0], ScalarNode) or last[p[0].value] == i
    ]


def _expanded(root: Node, distinct: int) -> int:
    """How many nodes the tree stands for with every alias expanded: sizes summed bottom-up
    once per node (no recursion: nesting may be deep), a cycle counted once."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes and not children_done:
            continue
        kids = _children(node)
        if not children_done:
            sizes[id(node)] = 1  # provisional: a cycle back to it counts once
            stack.append((node, True))
            stack.extend((kid, False) for kid in kids if id(kid) not in sizes)
            continue
        limit = distinct + MAX_NODES + 1
        sizes[id(node)] = min(limit, 1 + sum(sizes.get(id(kid), 1) for kid in kids))
    return sizes[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def data(text: str, shown: str) -> Any:
    """The plain data of a YAML text, as :func:`compose` and :func:`construct` read it."""
    node = compose(text, shown)
    return None if node is None else construct(node, shown)


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


def value_text(value: str | list[str], indent: int) -> str:
    """YAML for ``value`` after a key at ``indent``: a scalar (multi-line text becomes a ``|-``
    block, no final newline) or a block list of them."""
    if isinstance(value, list):
        pad = " " * (indent + 2)
        return "".join(f"\n{pad}- {value_text(item, indent + 2)}" for item in value)
    if "\n" in value.strip("\n"):
        body = value.strip("\n").split("\n")
        pad = " " * (indent + 2)
        indicator = "|2-" if body[0][:1] == " " else "|-"
        return indicator + "\n" + "\n".join(pad + line if line.strip() else "" for line in body)
    value = value.strip()
    return value if _plain_safe(value) else json.dumps(value, ensure_ascii=False)


def _plain_safe(value: str) -> bool:
    if not value or value != value.strip() or value[0] in "!&*>|%@`\"'{[#-?:,]}":
        return False
    try:  # the registry's reader keeps dates as strings, so a bare date stays plain
        node = yaml.compose(f"k: {value}", Loader=Loader)
        return node is not None and construct(node, "") == {"k": value}
    except (yaml.YAMLError, GuardsError):
        return False


def after_key(rendered: str) -> str:
    """What follows ``key:``: a space and a scalar, or a block list starting on the next line."""
    return rendered if rendered.startswith("\n") else " " + rendered
