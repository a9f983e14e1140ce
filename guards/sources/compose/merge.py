"""Compose's merge rules, in one place: what an override makes of the base it overrides.

Compose merges in two places, by the same rules: a service onto the service it ``extends:``,
and an override file onto the compose before it (``compose.override.yml``, ``-f a -f b``). Both
are here, on node trees, so every merged value keeps the line and column it was written at.

The rules (the Compose Specification's merge section, as compose-go applies them):

- a mapping merges key by key, recursively; a key only one side sets is kept as it is; an
  ``x-`` key of the override replaces the base's whole (a merged service keeps the base's
  name, where it is defined; other merged keys the override's);
- a sequence appends the override's items to the base's;
- a scalar, or a value of another kind than the base's, replaces it; a null override leaves a
  base mapping or sequence as it is;
- ``command``, ``entrypoint`` and ``healthcheck.test`` of a service are replaced, never merged;
- ``environment`` merges by variable name, list and mapping syntax alike (the override's value
  wins, in the place the name first had);
- ``ports`` and ``profiles`` append, an entry the base already has (the same text; for a long
  port the same ``host_ip``, ``published``, ``target`` and ``protocol``) taking its place;
- ``logging`` merges when both sides name the same driver or one names none, else is replaced;
- ``!reset`` on an override's value removes the key, the base's value with it; ``!override``
  replaces the base's value instead of merging with it. A value read alone has its tags worked
  out by :func:`settle`.

Keys guards does not read (``volumes``, ``labels``, ``networks``...) follow the general rules.

A merged tree holds nodes of several files: the nodes of every file but the first are marked
with the file's name (:func:`mark_file`), so a value read from the merged tree is reported in
the file and at the line it was written (:func:`file_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import yaml

from ...errors import GuardsError, located
from .. import yamlsrc
from ..yamlsrc import MappingNode, Node, ScalarNode, SequenceNode

RESET, OVERRIDE = yamlsrc.COMPOSE_TAGS
NULL = "tag:yaml.org,2002:null"
STR = "tag:yaml.org,2002:str"
MAP = "tag:yaml.org,2002:map"
SEQ = "tag:yaml.org,2002:seq"

Path = tuple[str, ...]  # keys below a service; None outside services
REPLACED: set[Path] = {("command",), ("entrypoint",), ("healthcheck", "test")}

__all__ = [
    "BaseElsewhere",
    "Texts",
    "extend_services",
    "file_of",
    "mark_file",
    "merge_roots",
    "merge_service",
    "settle",
]


def mark_file(root: Node, name: str) -> Node:
    """``root``'s nodes marked as written in the file ``name`` (aliases are marked once)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        node.start_mark = _mark(node.start_mark, name)
        node.end_mark = _mark(node.end_mark, name)
        if isinstance(node, MappingNode):
            todo += [part for pair in node.value for part in pair]
        elif isinstance(node, SequenceNode):
            todo += node.value
    return root


class _FileMark(yaml.Mark):
    """A place in a file other than the compose's own."""


def _mark(mark: yaml.Mark, name: str) -> yaml.Mark:
    return _FileMark(name, mark.index, mark.line, mark.column, None, 0)


def file_of(node: Node | None) -> str | None:
    """The file :func:`mark_file` marked ``node`` with; None: the compose's own."""
    mark = node.start_mark if node is not None else None
    return mark.name if isinstance(mark, _FileMark) else None


@dataclass(frozen=True)
class Texts:
    """The lines of each file the nodes of a merged tree come from: the compose's own, and
    the others' by the name their nodes are marked with."""

    own: list[str]
    others: Mapping[str, list[str]] = field(default_factory=dict)

    def of(self, node: Node | None) -> list[str]:
        return self.others.get(file_of(node) or "", self.own)


def merge_service(base: Node, override: Node) -> Node:
    """``override`` (a service) merged onto ``base`` (the service it overrides or extends, its
    own tags already worked out)."""
    return _merge(base, override, ()) or _empty(override)


def merge_roots(base: MappingNode, override: MappingNode) -> MappingNode:
    """A whole compose ``override`` merged onto ``base``: services by name, as
    :func:`merge_service` merges one; every other top-level key as a mapping or value."""
    merged = _merge(settle(base), override, None)
    return merged if isinstance(merged, MappingNode) else _empty(override)


def settle(node: Node) -> Node:
    """``node`` with Compose's tags worked out, as a file read alone means them: an entry
    whose value is ``!reset`` is gone, an ``!override`` value reads as untagged. Nodes with no
    tag below them are returned as they are (aliases stay shared)."""
    return _settle(node, {})


def _settle(node: Node, done: dict[int, Node]) -> Node:
    if id(node) in done:
        return done[id(node)]
    done[id(node)] = node  # an alias back to a node being settled stays the node
    settled = yamlsrc.untagged(node) if node.tag == OVERRIDE else node
    if isinstance(settled, MappingNode):
        pairs = [(k, _settle(v, done)) for k, v in settled.value if v.tag != RESET]
        if settled is not node or _changed(pairs, settled.value):
            settled = MappingNode(settled.tag, pairs, node.start_mark, node.end_mark)
    elif isinstance(settled, SequenceNode):
        items = [_settle(item, done) for item in settled.value]
        if settled is not node or any(
            a is not b for a, b in zip(items, settled.value, strict=True)
        ):
            settled = SequenceNode(settled.tag, items, node.start_mark, node.end_mark)
    done[id(node)] = settled
    return settled


def _changed(pairs: list[tuple[Node, Node]], before: list[tuple[Node, Node]]) -> bool:
    return len(pairs) != len(before) or any(
        a[1] is not b[1] for a, b in zip(pairs, before, strict=True)
    )


def _merge(base: Node | None, over: Node, path: Path | None) -> Node | None:
    """``over`` onto ``base`` at ``path``; None when ``over`` resets the key."""
    if over.tag == RESET:
        return None
    if base is None or over.tag == OVERRIDE or path in REPLACED:
        return settle(over)
    if _is_null(over) and isinstance(base, (MappingNode, SequenceNode)):
        return base
    if path == ("environment",) and _is_collection(base) and _is_collection(over):
        return _environment(base, over)
    if path == ("logging",) and _drivers_differ(base, over):
        return settle(over)
    if isinstance(base, MappingNode) and isinstance(over, MappingNode):
        return _mappings(base, over, path)
    if isinstance(base, SequenceNode) and isinstance(over, SequenceNode):
        items = base.value + settle(over).value
        unique = UNIQUE.get(path) if path is not None else None
        kept = _unique(items, unique) if unique else items
        return SequenceNode(SEQ, kept, over.start_mark, over.end_mark)
    return settle(over)


def _mappings(base: MappingNode, over: MappingNode, path: Path | None) -> MappingNode:
    """Key by key: the base's keys in their order, then the keys only the override sets; a
    merged key keeps the override's key node (its line)."""
    theirs = {k.value: (k, v) for k, v in over.value if isinstance(k, ScalarNode)}
    pairs: list[tuple[Node, Node]] = []
    for key, value in base.value:
        name = key.value if isinstance(key, ScalarNode) else None
        if name is None or name not in theirs:
            pairs.append((key, value))
            continue
        their_key, their_value = theirs.pop(name)
        merged = _merge(None if name.startswith("x-") else value, their_value, _below(path, name))
        if merged is not None:  # a service stays where its base defines it
            pairs.append((key if path == ("services",) else their_key, merged))
    for key, value in over.value:
        if not isinstance(key, ScalarNode) or key.value in theirs:
            merged = _merge(None, value, None)
            if merged is not None:
                pairs.append((key, merged))
    return MappingNode(MAP, pairs, over.start_mark, over.end_mark)


def _below(path: Path | None, name: str) -> Path | None:
    """The path of key ``name`` under ``path``: the top level's ``services.NAME`` starts a
    service's paths."""
    if path is None:
        return ("services",) if name == "services" else None
    if path == ("services",):
        return ()
    return (*path, name)


def _environment(base: Node, over: Node) -> MappingNode:
    """Variables by name, list items read as mapping entries (``K=V`` a string, a bare ``K`` a
    null), the override's value in the place the name first had; ``!reset`` drops one."""
    entries: dict[str, tuple[Node, Node]] = {}
    for side in (base, over):
        for name, key, value in _variables(side):
            if value.tag == RESET:
                entries.pop(name, None)
            else:
                entries[name] = (key, settle(value))
    return MappingNode(MAP, list(entries.values()), over.start_mark, over.end_mark)


def _variables(node: Node) -> list[tuple[str, Node, Node]]:
    if isinstance(node, MappingNode):
        return list(yamlsrc.items(node))
    found: list[tuple[str, Node, Node]] = []
    for item in node.value if isinstance(node, SequenceNode) else []:
        if isinstance(item, ScalarNode):
            name, eq, rest = item.value.partition("=")
            start, end = item.start_mark, item.end_mark
            key = ScalarNode(STR, name.strip(), start, end)
            value = ScalarNode(STR, rest, start, end) if eq else ScalarNode(NULL, "", start, end)
            found.append((name.strip(), key, value))
    return found


def _drivers_differ(base: Node, over: Node) -> bool:
    ours, theirs = yamlsrc.get(base, "driver"), yamlsrc.get(over, "driver")
    if ours is None or theirs is None:
        return False
    return yamlsrc.scalar(ours) != yamlsrc.scalar(theirs)


def _port_key(node: Node) -> Hashable:
    if isinstance(node, ScalarNode):
        return ("short", node.value)
    if not isinstance(node, MappingNode):
        return id(node)
    field = {name: yamlsrc.scalar(value) for name, _, value in yamlsrc.items(node)}
    return (
        field.get("host_ip") or "0.0.0.0",
        field.get("published") or "",
        field.get("target"),
        field.get("protocol") or "tcp",
    )


def _scalar_key(node: Node) -> Hashable:
    return yamlsrc.scalar(node) if isinstance(node, ScalarNode) else id(node)


UNIQUE: dict[Path, Callable[[Node], Hashable]] = {("ports",): _port_key, ("profiles",): _scalar_key}


def _unique(items: list[Node], key: Callable[[Node], Hashable]) -> list[Node]:
    """Items in order, a later one with the key of an earlier taking its place."""
    kept: list[Node] = []
    where: dict[Hashable, int] = {}
    for item in items:
        found = where.setdefault(key(item), len(kept))
        if found == len(kept):
            kept.append(item)
        else:
            kept[found] = item
    return kept


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == NULL


def _is_collection(node: Node) -> bool:
    return isinstance(node, (MappingNode, SequenceNode))


def _empty(node: Node) -> MappingNode:
    return MappingNode(MAP, [], node.start_mark, node.end_mark)


class BaseElsewhere(NamedTuple):
    """An ``extends:`` naming a service of another file, or a name only interpolation gives:
    the service is read as written."""

    service: str
    base: str
    file: str | None  # None: the name is interpolated (``extends: ${BASE}``)
    line: int
    why: str = "which is not read here"

    def __str__(self) -> str:
        where = f"of {self.file}" if self.file else "(a name set by interpolation)"
        return (
            f"line {self.line}: service `{self.service}` extends `{self.base}` {where}, "
            f"{self.why}: `{self.service}` is checked as written"
        )


class _Extends(NamedTuple):
    base: str
    file: str | None
    line: int  # of the `extends:` key


Services = list[tuple[str, Node, Node]]
# Reads the file an ``extends.file`` names (as written, relative to the compose's folder) for
# the parser, which opens no file: its root, marked with its name; errors are placed at
# ``line``, the ``extends:`` key.
FileReader = Callable[[str, int], MappingNode | None]  # None: a file not to be read


def extend_services(
    services: Services, read: FileReader | None = None
) -> tuple[Services, list[BaseElsewhere]]:
    """Each service (name, key node, mapping node) with its ``extends:`` worked out as Compose
    does (chains too), and its tags settled; a service extending one of another file is merged
    with it when ``read`` reads that file (the base's own ``extends:`` of the same file worked
    out; one of a third file is not followed), else kept as written and listed. A missing base
    or a cycle is an error at the line of the ``extends:`` key."""
    nodes = {name: node for name, _, node in services}
    refs = {name: ref for name, node in nodes.items() if (ref := _extends(node)) is not None}
    local = {name: ref for name, ref in refs.items() if ref.file is None and "$" not in ref.base}
    done: dict[str, Node] = {}
    elsewhere: list[BaseElsewhere] = []
    for name, ref in refs.items():
        if name in local:
            continue
        if read is None or ref.file is None or "$" in ref.base + ref.file:
            elsewhere.append(BaseElsewhere(name, ref.base, ref.file, ref.line))
            continue
        other = read(ref.file, ref.line)
        if other is None:
            why = "which lies outside the root and is not read"
            elsewhere.append(BaseElsewhere(name, ref.base, ref.file, ref.line, why))
            continue
        base, further = _from_file(ref, other)
        done[name] = _without(merge_service(base, nodes[name]), "extends")
        elsewhere += [BaseElsewhere(name, b.base, b.file, ref.line) for b in further]
    for name in nodes:
        _resolve(name, nodes, local, done)
    return [(name, key, done[name]) for name, key, _ in services], elsewhere


def _from_file(ref: _Extends, root: MappingNode) -> tuple[Node, list[BaseElsewhere]]:
    """The service ``ref`` names in the other file ``root``, its own extends worked out."""
    entries = [
        (name, key, value)
        for name, key, value in yamlsrc.items(yamlsrc.get(root, "services"))
        if value.tag != RESET
    ]
    if not any(name == ref.base for name, _, _ in entries):
        problem = f"`extends:` names `{ref.base}`, which is not a service of {ref.file}"
        raise GuardsError(problem, None, ref.line)
    with located(file_of(root)):  # a problem of that file is placed in it
        resolved, further = extend_services(entries)
    base = next(node for name, _, node in resolved if name == ref.base)
    if not isinstance(base, MappingNode):
        raise GuardsError(f"service `{ref.base}` of {ref.file} is not a mapping", None, ref.line)
    return base, further


def _resolve(
    name: str, nodes: dict[str, Node], refs: dict[str, _Extends], done: dict[str, Node]
) -> None:
    """Walk the chain from ``name`` to a service that extends nothing (or one already
    resolved), then merge back up it: no recursion, however long the chain."""
    chain = [name]
    while (ref := refs.get(chain[-1])) is not None and ref.base not in done:
        if ref.base in chain:
            cycle = " -> ".join([*chain[chain.index(ref.base) :], ref.base])
            raise GuardsError(f"`extends:` cycle: {cycle}", None, ref.line)
        base = nodes.get(ref.base)
        if base is None:
            problem = f"service `{chain[-1]}` extends `{ref.base}`, which is not a service here"
            raise GuardsError(problem, None, ref.line)
        if not isinstance(base, MappingNode):
            raise GuardsError(f"service `{ref.base}` is not a mapping", None, yamlsrc.line_of(base))
        chain.append(ref.base)
    for link in reversed(chain):
        if link in done:
            continue
        node, ref = nodes[link], refs.get(link)
        merged = merge_service(done[ref.base], node) if ref else settle(node)
        done[link] = _without(merged, "extends") if ref else merged


def _extends(node: Node) -> _Extends | None:
    """What a service's ``extends:`` names: a service (``extends: base``), or a mapping with
    ``service`` and an optional ``file``."""
    found = next(((k, v) for name, k, v in yamlsrc.items(node) if name == "extends"), None)
    if found is None or found[1].tag == RESET:
        return None
    key, value = found
    line = yamlsrc.line_of(key)
    if isinstance(value, ScalarNode) and value.tag == STR and value.value:
        return _Extends(value.value, None, line)
    service, file = yamlsrc.get(value, "service"), yamlsrc.get(value, "file")
    if not isinstance(service, ScalarNode) or not service.value or _is_null(service):
        raise GuardsError("`extends:` names no service (`service:` is required)", None, line)
    name = yamlsrc.scalar(file) if file is not None and not _is_null(file) else None
    return _Extends(service.value, name or None, line)


def _without(node: Node, key: str) -> Node:
    if not isinstance(node, MappingNode):
        return node
    pairs = [(k, v) for k, v in node.value if not (isinstance(k, ScalarNode) and k.value == key)]
    return MappingNode(node.tag, pairs, node.start_mark, node.end_mark)
