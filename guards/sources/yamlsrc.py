"""Reading source files: text with line numbers, and YAML node trees that keep them.

PyYAML's libyaml composer is the fastest reader that keeps marks (about 0.16 ms per real
compose against about 7 ms for a ruamel round-trip load, ``bench/parse_speed.py``), so every
YAML input is composed once with it. Guards read the node tree; nothing is re-dumped.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import GuardsError, located
from .nesting import MAX_DEPTH, TOO_DEEP
from .patterns import lazy

try:  # libyaml ships in PyYAML's wheels; the pure loader is the same grammar, only slower.
    from yaml import CSafeLoader as _Base
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Base  # type: ignore[assignment]

TIMESTAMP = "tag:yaml.org,2002:timestamp"
MERGE = "tag:yaml.org,2002:merge"
INT = "tag:yaml.org,2002:int"


class Loader(_Base):
    """Safe loader that leaves dates as strings: validators parse them and can say where a
    bad one is (YAML 1.1 would raise a bare ValueError for ``2026-13-01``)."""


Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != TIMESTAMP]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()
}

# Compose's own tags (compose 2.24+): ``!reset`` clears a value an override file or ``extends:``
# would inherit, ``!override`` replaces it instead of merging. What they mean is worked out in
# ``guards.sources.compose.merge``; read as plain data, a tagged value is the value written.
COMPOSE_TAGS = ("!reset", "!override")


def untagged(node: Node) -> Node:
    """A copy of ``node`` with the tag it would have without its explicit one (a plain
    ``!override 8000`` reads as the integer, a quoted one as a string)."""
    if isinstance(node, ScalarNode):
        plain = not node.style  # libyaml gives "" for a plain scalar, PyYAML None
        implicit = (plain, not plain)
        tag = _RESOLVER.resolve(ScalarNode, node.value, implicit)
        return ScalarNode(tag, node.value, node.start_mark, node.end_mark, node.style)
    kind = MappingNode if isinstance(node, MappingNode) else SequenceNode
    tag = _RESOLVER.resolve(kind, None, (True, False))
    return kind(tag, node.value, node.start_mark, node.end_mark)


def _construct_untagged(loader: Loader, node: Node) -> Any:
    return loader.construct_object(untagged(node), deep=True)


_RESOLVER = yaml.resolver.BaseResolver()
_RESOLVER.yaml_implicit_resolvers = Loader.yaml_implicit_resolvers  # dates stay strings
for _tag in COMPOSE_TAGS:
    Loader.add_constructor(_tag, _construct_untagged)

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
    "untagged",
]


def read_text(path: Path, shown: str, limit: int | None = None) -> str:
    """Read a file as UTF-8 (a BOM is tolerated) with ``\n`` line breaks; errors name the
    file and line."""
    from .edit import MAX_BYTES, read

    return read(path, shown, limit or MAX_BYTES).text


def compose(text: str, shown: str | None = None) -> Node | None:
    """Compose one YAML document into a node tree (``None`` for an empty document).

    As Compose reads it: a key given twice in one mapping is an error; merge keys
    (``<<: *base``) are resolved, the mapping's own keys overriding the merged ones; aliases
    that would expand past ``MAX_NODES`` nodes, and collections nested past
    ``nesting.MAX_DEPTH`` (through aliases too), are refused at their line. Errors name
    ``shown`` when given; without it the caller's boundary places them."""
    with located(shown):
        return _compose(text)


def _compose(text: str) -> Node | None:
    try:
        root = yaml.compose(text, Loader=Loader)
        if root is not None:
            _resolve(root)
        return root
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise GuardsError(f"YAML error: {problem}") from None
        # libyaml may place an error at the end of the stream one line past the last.
        line = min(mark.line + 1, text.count("\n") + 1)
        raise GuardsError(f"YAML error: {problem}", None, line, mark.column + 1) from None
    except yaml.reader.ReaderError as exc:  # a character YAML forbids (NUL, ESC, ...)
        # libyaml counts bytes, PyYAML characters: find the character again, as PyYAML does.
        found = yaml.reader.Reader.NON_PRINTABLE.search(text)
        at = found.start() if found else 0
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        problem = f"unacceptable character #x{ord(text[at : at + 1] or chr(0)):04x}: {exc.reason}"
        raise GuardsError(f"YAML error: {problem}", None, line, column) from None
    except yaml.YAMLError as exc:
        raise GuardsError(f"YAML error: {exc}") from None


MAX_NODES = 1_000_000  # a few KB of nested aliases can stand for billions of nodes


def _resolve(root: Node) -> None:
    nodes, shared = _nodes(root)
    if shared:
        _check_height(root)
    mappings = [n for n in nodes if isinstance(n, MappingNode)]
    for node in mappings:
        _no_duplicates(node)
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
            f"YAML aliases expand to more than {MAX_NODES:,} nodes", None, line_of(root)
        )


def _nodes(root: Node) -> tuple[list[Node], bool]:
    """Every node once, however many aliases refer to it; and whether any is referred to
    more than once (an alias). A collection nested past ``MAX_DEPTH`` is an error at its
    line: the constructor and the code reading its data recurse."""
    found, seen, shared = [], set(), False
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            shared = True
            continue
        if depth > MAX_DEPTH and not isinstance(node, ScalarNode):
            raise GuardsError(f"YAML error: {TOO_DEEP}", None, line_of(node), column_of(node))
        seen.add(id(node))
        found.append(node)
        stack.extend((kid, depth + 1) for kid in _children(node))
    return found, shared


def _check_height(root: Node) -> None:
    """Aliases can nest a document deeper than it is written (``&b [*a]``, ``&c [*b]``, ...):
    collection heights summed bottom-up once per node, the first past ``MAX_DEPTH`` an error
    at its line (a cycle counts once)."""
    heights: dict[int, int] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if isinstance(node, ScalarNode) or (id(node) in heights and not children_done):
            continue
        kids = _children(node)
        if not children_done:
            heights[id(node)] = 1  # provisional: a cycle back to it counts once
            stack.append((node, True))
            stack.extend((kid, False) for kid in kids if id(kid) not in heights)
            continue
        heights[id(node)] = 1 + max((heights.get(id(kid), 0) for kid in kids), default=0)
        if heights[id(node)] > MAX_DEPTH:
            problem = f"YAML error: aliases make it {TOO_DEEP}"
            raise GuardsError(problem, None, line_of(node), column_of(node))


def _no_duplicates(node: MappingNode) -> None:
    first: dict[str, int] = {}
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag == MERGE:
            continue
        if key.value in first:
            raise GuardsError(
                f"duplicate key `{key.value}` (first at line {first[key.value]})",
                None,
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


def scalars(root: Node | None, keys: bool = True) -> Iterator[ScalarNode]:
    """Every scalar node under ``root``, each once however many aliases name it; with
    ``keys=False`` the values of mappings only (what Compose interpolates). In no set order."""
    stack, seen = [root] if root is not None else [], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            yield node
        else:
            stack.extend(_children(node, keys))


def _children(node: Node, keys: bool = True) -> list[Node]:
    """A collection's nodes: a mapping's keys and values (its values alone without ``keys``),
    a sequence's items."""
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in (pair if keys else pair[1:])]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def data(text: str, shown: str | None = None) -> Any:
    """The plain data of a YAML text, as :func:`compose` and :func:`construct` read it."""
    with located(shown):
        node = _compose(text)
        return None if node is None else _construct(node)


def construct(node: Node, shown: str | None = None) -> Any:
    """Plain Python data for a node tree (YAML 1.1 safe types; dates stay strings); errors
    name ``shown`` when given, as :func:`compose`'s do."""
    with located(shown):
        return _construct(node)


def _construct(node: Node) -> Any:
    loader = Loader("")
    try:
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark or node.start_mark
        raise GuardsError(
            f"YAML error: {exc.problem or exc.context}", None, mark.line + 1, mark.column + 1
        ) from None
    except (ValueError, TypeError) as exc:
        huge = _huge_integer(node)
        if huge is not None:
            raise GuardsError(
                f"YAML error: an integer of {len(huge.value):,} characters (at most "
                f"{sys.get_int_max_str_digits():,} digits can be read)",
                None,
                line_of(huge),
                column_of(huge),
            ) from None
        raise GuardsError(f"YAML error: {exc}", None, line_of(node)) from None
    finally:
        loader.dispose()


def _huge_integer(root: Node) -> ScalarNode | None:
    """The first integer past Python's digit limit: the constructor's ValueError says only
    how many digits it had, not where."""
    limit = sys.get_int_max_str_digits()
    for node in _nodes(root)[0]:
        if isinstance(node, ScalarNode) and node.tag == INT and len(node.value) > limit:
            return node
    return None


def line_of(node: Node) -> int:
    """1-based line where a node starts."""
    return node.start_mark.line + 1


def column_of(node: Node) -> int:
    return node.start_mark.column + 1


def end_column_of(node: Node) -> int:
    """1-based column just after a node that ends on the line it starts on (its closing
    quote included); 0 for a node that runs onto later lines."""
    if node.end_mark.line != node.start_mark.line:
        return 0
    return node.end_mark.column + 1


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


Value = str | list[str] | dt.date  # what the registry edits write after a key

# The characters every YAML reader takes as they are inside a scalar: YAML's printable set
# without tab, the line breaks libyaml and PyYAML honour besides LF (NEL, U+2028, U+2029) and
# the BOM, which some readers drop. Anything else is written as an escape.
_KEPT = "\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
# compiled when a value is first written (3 ms of every run's imports before)
_ESCAPED = lazy(f'[^{_KEPT}]|["\\\\]')
_TEXT = lazy(f"[{_KEPT}]*")
_SURROGATE = lazy("[\ud800-\udfff]")
_NAMED = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r"}
# Plain words some reader (YAML 1.1 or 1.2, libyaml, PyYAML, ruamel) takes for a bool or null.
_TYPED_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
# A scalar some reader may take for a number or a timestamp: a number-like first character in
# one word (``1e3``, ``0o17``, ``1_000``, ``1:20``, ``.inf``), or a date at the start.
_NUMBER_LIKE = lazy(r"[-+.\d]\S*|\d{4}-\d\d?-\d\d?(?:[Tt\s].*)?", re.DOTALL)


def value_text(value: Value, indent: int) -> str:
    """YAML for ``value`` after a key at ``indent``, that libyaml, pure PyYAML and ruamel (YAML
    1.1 and 1.2) all load back as exactly ``value``: a date plain, a string plain only where no
    reader can take it for anything else, multi-line text a ``|-`` block where the block holds
    it exactly, any other string double-quoted with escapes; a list a block list of those."""
    if isinstance(value, list):
        pad = " " * (indent + 2)
        items = "".join(f"\n{pad}- {value_text(item, indent + 2)}" for item in value)
        return items or "[]"
    if isinstance(value, dt.date):
        return value.isoformat()
    if _block_safe(value):
        body = value.split("\n")
        pad = " " * (indent + 2)
        indicator = "|2-" if body[0][:1] == " " else "|-"
        return indicator + "\n" + "\n".join(pad + line if line else "" for line in body)
    return value if _plain_safe(value) else quoted(value)


def flow_text(value: str) -> str:
    """``value`` as an item of a flow collection (``[...]``, ``{...}``): plain or quoted."""
    return value if _plain_safe(value, flow=True) else quoted(value)


def quoted(value: str) -> str:
    """``value`` double-quoted on one line: a backslash, a quote and every character outside
    the kept set escaped, so the text of the file holds no character a reader treats apart."""
    if _SURROGATE.search(value):
        raise GuardsError(
            "a value holds an encoding error (input that is not UTF-8); nothing written"
        )
    return '"' + _ESCAPED.sub(_escape, value) + '"'


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _block_safe(value: str) -> bool:
    """A ``|-`` block holds ``value`` exactly: several lines, none with a tab, trailing space or
    any character that is escaped, no blank line of spaces, no line break before or after."""
    if "\n" not in value or value[0] == "\n" or value[-1] == "\n":
        return False
    return all(_TEXT.fullmatch(line) and line == line.rstrip(" ") for line in value.split("\n"))


def _plain_safe(value: str, flow: bool = False) -> bool:
    """No reader can take ``value``, written plain, for anything but this string: no indicator
    first, nothing YAML 1.1 or 1.2 may read as a number, date, bool or null, nothing that
    starts a comment or a mapping."""
    if (
        not value
        or value != value.strip()
        or value[0] in "!&*>|%@`\"'{[#-?:,]}~"
        or value.lower() in _TYPED_WORDS
        or _NUMBER_LIKE.fullmatch(value)
        or not _TEXT.fullmatch(value)
        or ": " in value
        or " #" in value
        or value.endswith(":")
        or (flow and any(c in value for c in ",[]{}#:?"))  # pure PyYAML ends one at `?`
    ):
        return False
    try:
        node = yaml.compose(f"k: {value}", Loader=Loader)
        return node is not None and construct(node, "") == {"k": value}
    except (yaml.YAMLError, GuardsError):
        return False


def after_key(rendered: str) -> str:
    """What follows ``key:``: a space and a scalar, or a block list starting on the next line."""
    return rendered if rendered.startswith("\n") else " " + rendered
