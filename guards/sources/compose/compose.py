"""A compose file -> :class:`Compose`: header, comment lines, services and their knobs.

The original text and line offsets are kept: later steps splice generated regions into the
text instead of re-dumping YAML (a ruamel round trip is byte-identical on 0 of 123 real files).

A compose may be the base of a stack: the files merged onto it as Compose merges ``-f a -f b``
(``overlays``), and the files its services ``extends.file`` name. Header and comments are its
own; its services are the merged ones, each value keeping the file it was written in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ...errors import GuardsError, located
from .. import yamlsrc
from ..edit import unify_breaks
from ..markers import Citation, find_claim_refs, withdrawn_citation
from ..yamlsrc import MappingNode, Node, ScalarNode
from . import merge
from .comments import (
    Callout,
    Comment,
    MarkerProblem,
    Region,
    find_comments,
    find_regions,
    retraction_callouts,
)
from .header import PROFILE, Convention, Header, parse_header
from .services import EnvFileReader, Service, parse_service
from .written import Written, read_written
from .xguards import ComposeData, compose_data

FRAGMENT_LACKS = ("image", "build", "extends")
__all__ = ["Comment", "Compose", "OtherFile", "Region", "Service", "parse_compose"]

# Reads a file another file names (an ``extends.file``, as written, relative to the compose's
# folder; errors at ``line``) for the parser, which opens no file: (shown name, text).
OtherFile = Callable[[str, int], tuple[str, str] | None]  # None: not to be read


@dataclass
class Compose:
    path: str
    lines: list[str]  # the text is kept once, as lines (``text`` joins them when asked)
    header: Header
    comments: list[Comment]
    services: list[Service]
    extensions: dict[str, Any]
    env: Mapping[str, str]
    regions: list[Region] = field(default_factory=list)
    marker_problems: list[MarkerProblem] = field(default_factory=list)  # unpaired markers
    data: ComposeData = field(default_factory=ComposeData)  # its `x-guards:` mapping
    callouts: list[Callout] = field(default_factory=list)  # retraction callouts
    citations: list[Citation] = field(default_factory=list)
    shipped: list[Service] = field(default_factory=list)  # the services with no overlay
    # `extends:` of a service in another file: those services are read as written
    bases_elsewhere: list[merge.BaseElsewhere] = field(default_factory=list)
    stack: tuple[str, ...] = ()  # the files merged onto it, in order (`-f base -f ...`)
    others: dict[str, list[str]] = field(default_factory=dict)  # their lines, and extends'
    merged_into: str | None = None  # a fragment: the base whose stack checks its services
    fragment: bool = False  # no service of its own sets `image`, `build` or `extends`
    written: Written = field(default_factory=Written)  # its own YAML's env files and `$` values

    @property
    def text(self) -> str:
        """The whole text, line breaks unified (not kept: a string of a file with one emoji
        takes four bytes a character, its lines mostly one)."""
        return "\n".join(self.lines)

    def __post_init__(self) -> None:
        if not self.shipped:
            self.shipped = self.services

    def callout(self, line: int) -> Callout | None:
        return next((c for c in self.callouts if line in c), None)

    def is_correction(self, line: int) -> bool:
        """A retraction callout or a generated region covers ``line``."""
        return self.callout(line) is not None or any(line in r for r in self.regions)

    def file(self, path: str | None) -> str:
        """Where a value is written: its ``path``, or this compose (None)."""
        return path or self.path

    def lines_of(self, path: str) -> list[str] | None:
        """The lines of this compose, or of a file of its stack."""
        return self.lines if path == self.path else self.others.get(path)

    @cached_property
    def retracted_ids(self) -> set[str]:
        """Claim ids its retraction callouts cite."""
        return {claim_id for c in self.callouts for claim_id in c.marker.claim_ids}


def parse_compose(
    text: str,
    shown: str,
    env: Mapping[str, str] | None = None,
    convention: Convention | None = PROFILE,
    *,
    shipped_env: Mapping[str, str] | None = None,
    env_files: EnvFileReader | None = None,
    overlays: Sequence[tuple[str, str]] = (),
    other_file: OtherFile | None = None,
) -> Compose:
    """Parse compose ``text``, known as ``shown``; bad input raises :class:`GuardsError` naming
    ``shown``:line. The parsers below raise without a file: this entry point places them.
    ``convention`` is how the estate writes its header block (None: it declares none).
    ``env`` interpolates the services, ``shipped_env`` the compose as shipped (the estate's
    own env files, without the operator's ``--env-file``; default none); ``env_files`` reads
    a service's ``env_file:`` (the parser opens no file). ``overlays`` (shown name, text) are
    merged onto it in order; ``other_file`` reads what an ``extends.file`` names (None: such a
    service is read as written)."""
    env = {} if env is None else env  # not copied: the run layer notes what is looked up
    text = unify_breaks(text)
    stack = _Stack(dict((name, unify_breaks(body)) for name, body in overlays), other_file)
    with located(shown):
        compose = _parse(text, shown, env, convention, (shipped_env, env_files), stack)
    compose.citations = [
        Citation(
            claim_id,
            c.line,
            c.column + 1 + offset,
            compose.is_correction(c.line) or withdrawn_citation(c.text, offset),
            end_column=c.column + 1 + offset + len(f"claim:{claim_id}"),
        )
        for c in compose.comments
        if "claim:" in c.text
        for claim_id, offset in find_claim_refs(c.text)
    ]
    return compose


def _parse(
    text: str,
    path: str,
    env: Mapping[str, str],
    convention: Convention | None = PROFILE,
    shipping: tuple[Mapping[str, str] | None, EnvFileReader | None] = (None, None),
    stack: _Stack | None = None,
) -> Compose:
    lines = text.split("\n")
    root = _root(text)
    written = read_written(root)  # before anything merges onto it: the file as written
    stack = stack or _Stack({})
    merged = stack.merged(root)
    reader = stack.read if stack.other_file is not None else None
    entries, elsewhere = merge.extend_services(_service_entries(merged), reader)
    texts = merge.Texts(lines, stack.others)
    base, read = shipping
    services = [parse_service(n, key, node, texts, env, read) for n, key, node in entries]
    # Header and comments describe the compose as shipped; with an operator overlay the same
    # node tree is evaluated a second time, with the estate's own env, for the drift guards.
    base = {} if base is None else base
    shipped = (
        services
        if base is env or not (base or env)
        else [parse_service(n, key, node, texts, base, read) for n, key, node in entries]
    )
    extensions = {
        name: yamlsrc.construct(node)
        for name, _, node in yamlsrc.items(merged)
        if name.startswith("x-") and node.tag != merge.RESET
    }
    header = parse_header(lines, convention)
    comments = find_comments(lines, root, header)
    regions, marker_problems = find_regions(comments, text)
    return Compose(
        path,
        lines,
        header,
        comments,
        services,
        extensions,
        env,
        regions=regions,
        marker_problems=marker_problems,
        callouts=retraction_callouts(comments),
        data=compose_data(root),
        shipped=shipped,
        bases_elsewhere=elsewhere,
        stack=tuple(stack.overlays),
        others=stack.others,
        fragment=_fragment(root),
        written=written,
    )


def _fragment(root: MappingNode) -> bool:
    """Plainly a fragment of another compose: it has services, and none of them says what it
    runs (``image``, ``build``) or what it extends."""
    services = [node for _, _, node in yamlsrc.items(yamlsrc.get(root, "services"))]
    return bool(services) and not any(
        yamlsrc.get(node, key) is not None for node in services for key in FRAGMENT_LACKS
    )


@dataclass
class _Stack:
    """The files merged onto a compose, and those its services extend, as they are read: each
    root marked with its file (``merge.mark_file``), each file's lines kept."""

    overlays: dict[str, str]  # shown name -> text, in order
    other_file: OtherFile | None = None
    others: dict[str, list[str]] = field(default_factory=dict)

    def merged(self, root: MappingNode) -> MappingNode:
        for file, text in self.overlays.items():
            root = merge.merge_roots(root, self._root(file, text))
        return root

    def read(self, name: str, line: int) -> MappingNode | None:
        if self.other_file is None:
            raise GuardsError(f"`extends.file` {name!r} is not read here", None, line)
        found = self.other_file(name, line)
        return None if found is None else self._root(found[0], unify_breaks(found[1]))

    def _root(self, file: str, text: str) -> MappingNode:
        """The file's root: its errors are its own (``located``), its nodes marked with it."""
        with located(file):
            root = _root(text)
        self.others[file] = text.split("\n")
        return merge.mark_file(root, file)  # type: ignore[return-value]


def _service_entries(root: MappingNode) -> list[tuple[str, Node, Node]]:
    """The services as Compose reads them: a service written with no body (``app:``, ``app:
    null``) is an empty one, one tagged ``!reset`` is gone; ``services:`` may be absent when
    the file ``include:``s others (it then has none of its own)."""
    services_node = yamlsrc.get(root, "services")
    if services_node is None and yamlsrc.get(root, "include") is not None:
        return []
    if services_node is None:
        raise GuardsError("no top-level `services:` mapping", None, yamlsrc.line_of(root))
    if not isinstance(services_node, MappingNode):
        raise GuardsError("`services:` is not a mapping", None, yamlsrc.line_of(services_node))
    return [
        (name, key, _empty_if_null(node))
        for name, key, node in yamlsrc.items(services_node)
        if node.tag != merge.RESET
    ]


def _empty_if_null(node: Node) -> Node:
    if isinstance(node, ScalarNode) and node.tag == merge.NULL:
        return MappingNode(merge.MAP, [], node.start_mark, node.end_mark)
    return node


def _root(text: str) -> MappingNode:
    root = yamlsrc.compose(text)
    if root is None:
        raise GuardsError("empty compose file: no YAML content", None, 1)
    if not isinstance(root, MappingNode):
        raise GuardsError("top level is not a mapping", None, yamlsrc.line_of(root))
    return root
