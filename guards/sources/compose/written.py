"""What a compose's own YAML says as written, beside its merged services: each service's
``env_file:`` entries and list-form ``environment:`` items, and every scalar value that
interpolates (holds a ``$``).

Read from the node tree the parser composes (:func:`read_written`), once per compose. The
readers that need it (which env files a compose loads, D009's duplicates and defaults) once
composed the text again each; the tree itself is not kept (it takes many times the text), only
these scalars. The compose's own file only: what its overlays and ``extends`` bases say is
their own."""

from __future__ import annotations

from typing import NamedTuple

from .. import yamlsrc
from ..yamlsrc import MappingNode, Node, ScalarNode, SequenceNode


class Scalar(NamedTuple):
    """A scalar value as written: its text, and where the YAML reader places it (rows 0-based
    as its marks are, columns 1-based as findings are)."""

    value: str
    row: int
    end_row: int
    column: int
    end_column: int  # just after it on its line; 0 for a value that runs onto later lines

    @property
    def line(self) -> int:
        return self.row + 1


class Written(NamedTuple):
    # each `env_file:` entry of the services (a name, a list item, a `{path}` item), as written
    env_files: tuple[str, ...] = ()
    # (service, the items of its list-form `environment:`); a list anchored and shared by
    # several services is the first one's; an alias repeated in one list is one Scalar
    environments: tuple[tuple[str, tuple[Scalar, ...]], ...] = ()
    # every scalar value (never a key) that holds a `$`, each node once, in written order
    interpolating: tuple[Scalar, ...] = ()


def read_written(root: Node | None) -> Written:
    scalars: dict[int, Scalar] = {}  # by node: one Scalar however many aliases name it

    def scalar(node: ScalarNode) -> Scalar:
        found = scalars.get(id(node))
        if found is None:
            found = scalars[id(node)] = Scalar(
                node.value,
                node.start_mark.line,
                node.end_mark.line,
                yamlsrc.column_of(node),
                yamlsrc.end_column_of(node),
            )
        return found

    services = list(yamlsrc.items(yamlsrc.get(root, "services")))
    env_files = tuple(
        path.value for _, _, service in services for _, path in env_file_entries(service)
    )
    environments, seen = [], set()
    for name, _, service in services:
        env = yamlsrc.get(service, "environment")
        if isinstance(env, SequenceNode) and id(env) not in seen:
            seen.add(id(env))
            items = tuple(scalar(i) for i in env.value if isinstance(i, ScalarNode))
            environments.append((name, items))
    dollars = sorted(
        (node for node in yamlsrc.scalars(root, keys=False) if "$" in node.value),
        key=lambda n: (n.start_mark.line, n.start_mark.column),
    )
    interpolating = tuple(scalar(node) for node in dollars)
    return Written(env_files, tuple(environments), interpolating)


def env_file_entries(service: Node | None) -> list[tuple[Node, ScalarNode]]:
    """(item, its path) for each entry of a service's ``env_file:`` that names a file: a name,
    a list of names, ``{path, required}`` items; a null or a non-scalar path names none."""
    node = yamlsrc.get(service, "env_file")
    items: list[Node] = [] if node is None else [node]
    if isinstance(node, SequenceNode):
        items = node.value
    entries = []
    for item in items:
        path = yamlsrc.get(item, "path") if isinstance(item, MappingNode) else item
        if isinstance(path, ScalarNode) and not path.tag.endswith("null"):
            entries.append((item, path))
    return entries
