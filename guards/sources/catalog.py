"""Catalogs of profiles: YAML, TOML or JSON files with an entry per compose or service (what
it ships), read with the line of every value, for rule D004.

``Layout`` says where the entries are (a dotted key; a mapping of id to entry or a list; a file
of one entry when a glob names one file per compose), which fields join an entry to a compose
(its path) or a service (its name, ``container_name`` or served model name), which fields state
what (a knob name or ``status``, by dotted path, or named by the rule's vocabulary when the
estate maps none), and which fields hold engine flags (``args: {"--max-model-len": 32768}`` or
``["--ctx-size 32768"]``). Values are checked by kind (number, KV type, text, status) as they
are read, and a malformed catalog is a GuardsError at its line.
"""

from __future__ import annotations

import bisect
import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import GuardsError
from . import yamlsrc
from .compose.header import STATUSES, status_of
from .numbers import read_count, readings, to_number
from .paths import is_inside
from .patterns import lazy
from .yamlsrc import MappingNode, Node, ScalarNode, SequenceNode

STATUS = "status"  # a `fields` target: the header's Status, not a knob
NUMBERS = frozenset(
    {"max_model_len", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "port"}
    | {"tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "gpus"}
    | {"drafter_depth", "speculative_num_draft_tokens", "speculative_eagle_topk", "n_gpu_layers"}
)
KV_TYPES = frozenset({"kv_cache_dtype", "cache_type_k", "cache_type_v"})
STATUS_NAMES = sorted(set(STATUSES.values()))
SUFFIXED = lazy(r"\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*([kKmM])\s*")  # 32K, 1.5M
GLOB = lazy(r"[*?\[]")


class Layout(NamedTuple):
    entries: str  # dotted key of the entries ("" for the whole file)
    compose_key: str  # the entry field holding the compose path
    fields: dict[str, str]  # catalog field (a dotted path in the entry) -> knob name or "status"
    service_key: str = "service"  # the entry field naming a service (name, container, served)
    args: tuple[str, ...] = ()  # dotted fields holding engine flags and their values
    named: Callable[[str], str | None] | None = None  # a field name -> its target, when the
    # estate maps no fields (then ``fields`` is unused)
    flag: Callable[[str], str | None] = lambda flag: None  # an engine flag -> its knob

    @property
    def depth(self) -> int:
        """How many levels of containers an entry's fields reach."""
        paths = [*self.fields, *self.args] if self.named is None else [*self.args]
        return max((p.count(".") for p in paths), default=0) + 3


def status_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    name = status_of(value) or value.strip().lower()
    return name if name in STATUS_NAMES else None


def number_readings(value: Any) -> tuple[float, ...] | None:
    """What a catalog's number means: ``32768`` itself, ``32K`` 32,000 or 32,768."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    plain = to_number(str(value))
    if plain is not None:
        return (plain,)
    suffixed = SUFFIXED.fullmatch(value) if isinstance(value, str) else None
    count = read_count(suffixed.group(1), suffixed.group(2)) if suffixed else None
    return readings(count.value, True) if count is not None else None


def matching(root: Path, pattern: str) -> list[str]:
    """The files under ``root`` a catalog glob names (relative, sorted): one per compose."""
    if not GLOB.search(pattern):
        return [pattern]
    found = (p for p in root.glob(pattern) if p.is_file() and is_inside(root, p))
    return sorted(p.relative_to(root).as_posix() for p in found)


class Spot(NamedTuple):
    """A value of a catalog and its line (a mapping member's: the line of its key)."""

    line: int
    value: Any  # dict[str, Spot] or list[Spot] down to the entries; plain data in the fields
    text: str | None = None  # a scalar as written

    @property
    def shown(self) -> str:
        if isinstance(self.value, str) or self.text is None:
            return str(self.value)
        return self.text


@dataclass(frozen=True)
class Entry:
    source: str  # the catalog file
    name: str  # its id in a mapping of entries, #N in a list, the file's stem for a file
    line: int
    compose: str | None  # the compose path, normalised; None: joined by service or stem
    fields: dict[str, Spot]  # the fields it states (not null), by name as written
    targets: dict[str, str] = field(default_factory=dict)  # field -> knob name or "status"
    service: str | None = None  # the service it names: name, container_name or served name
    stem: str | None = None  # the stem of a catalog file of one compose
    unread: tuple[tuple[str, int], ...] = ()  # flags no engine dialect reads as a knob


KINDS = {"number": "a number", "kv": "a KV cache type", "text": "a string"}


def read_catalog(text: str, source: str, layout: Layout, one_file: bool = False) -> list[Entry]:
    """The entries of one catalog; a malformed catalog raises GuardsError at its line.
    ``one_file``: a file of a catalog glob, whose document is its one entry when it has no
    ``entries`` key, joined by its stem when it names no compose or service."""
    keys = tuple(layout.entries.split(".")) if layout.entries else ()
    spot = _document(text, source, len(keys) + layout.depth)
    stem = posixpath.basename(source).rsplit(".", 1)[0] if one_file else None
    for key in keys:
        inner = spot.value.get(key) if isinstance(spot.value, dict) else None
        if inner is None and one_file:
            return [_entry(stem or source, spot, source, layout, stem)]
        if inner is None:
            raise GuardsError(f"no `{layout.entries}` (option entries)", source, spot.line)
        spot = inner
    if one_file and not keys:
        return [_entry(stem or source, spot, source, layout, stem)]
    if isinstance(spot.value, dict):
        members = list(spot.value.items())
    elif isinstance(spot.value, list):
        members = [(f"#{n}", item) for n, item in enumerate(spot.value, 1)]
    else:
        what = f"`{layout.entries}`" if layout.entries else "the catalog"
        problem = f"{what} must be a mapping of id to entry or a list of entries"
        raise GuardsError(problem, source, spot.line)
    return [_entry(name, item, source, layout, stem) for name, item in members]


def _entry(name: str, spot: Spot, source: str, layout: Layout, stem: str | None) -> Entry:
    if not isinstance(spot.value, dict):
        raise GuardsError(f"entry {name} must be a mapping of fields", source, spot.line)
    compose = _join(name, spot, layout.compose_key, source)
    service = _join(name, spot, layout.service_key, source)
    if compose is None and service is None and stem is None:
        raise GuardsError(
            f"entry {name} has no `{layout.compose_key}` (option compose-key) or "
            f"`{layout.service_key}` (option service-key)",
            source,
            spot.line,
        )
    targets, fields = _targets(spot, layout), {}
    for key in targets:
        given = _at(spot, key)
        if given is not None:
            fields[key] = _plain(given)
    flags, unread = _flags(spot, layout)
    for key, (target, given) in flags.items():
        targets[key], fields[key] = target, given
    for key, given in fields.items():
        kind = _kind(targets[key])
        if given.value is not None and not _valid(kind, given.value):
            wanted = KINDS.get(kind) or f"a status ({', '.join(STATUS_NAMES)})"
            raise GuardsError(
                f"entry {name}: `{key}` must be {wanted}, not {given.shown!r}", source, given.line
            )
    given_fields = {f: g for f, g in fields.items() if g.value is not None}
    path = posixpath.normpath(compose) if compose is not None else None
    mapped = {f: targets[f] for f in given_fields}
    return Entry(source, name, spot.line, path, given_fields, mapped, service, stem, unread)


def _join(name: str, spot: Spot, key: str, source: str) -> str | None:
    """The compose path or service name the entry's ``key`` field gives, if it has one."""
    given = spot.value.get(key)
    if given is None or given.value is None:
        return None
    given = _plain(given)
    if not isinstance(given.value, str) or not given.value.strip():
        raise GuardsError(
            f"entry {name}: `{key}` must be a compose path or a service name, not {given.shown!r}",
            source,
            given.line,
        )
    return str(given.value).strip()


def _targets(spot: Spot, layout: Layout) -> dict[str, str]:
    """The entry's fields that state a knob or the status: the mapped ones, else those the
    vocabulary names."""
    if layout.named is None:
        return dict(layout.fields)
    found = {}
    for key in spot.value:
        target = layout.named(key) if key not in (layout.compose_key, layout.service_key) else None
        if target is not None:
            found[key] = target
    return found


def _at(spot: Spot, path: str) -> Spot | None:
    """The member at a dotted path (a key holding dots itself is found first)."""
    if not isinstance(spot.value, dict):
        return None
    if path in spot.value:
        found = spot.value[path]
        return found if isinstance(found, Spot) else None
    head, dot, rest = path.partition(".")
    inner = spot.value.get(head) if dot else None
    return _at(inner, rest) if inner is not None else None


def _plain(spot: Spot) -> Spot:
    """A spot whose containers are plain data again (a field read deeper than it goes)."""
    if isinstance(spot.value, dict) and any(isinstance(v, Spot) for v in spot.value.values()):
        return Spot(spot.line, {k: _plain(v).value for k, v in spot.value.items()})
    if isinstance(spot.value, list) and any(isinstance(v, Spot) for v in spot.value):
        return Spot(spot.line, [_plain(v).value for v in spot.value])
    return spot


def _flags(
    spot: Spot, layout: Layout
) -> tuple[dict[str, tuple[str, Spot]], tuple[tuple[str, int], ...]]:
    """The flags the entry's argument fields pass: ``args.--flag`` -> (knob, value); and the
    flags no dialect reads as a knob, with their lines."""
    found: dict[str, tuple[str, Spot]] = {}
    unread: list[tuple[str, int]] = []
    for path in layout.args:
        held = _at(spot, path)
        for flag, given in _flag_values(held) if held is not None else []:
            knob = layout.flag(flag)
            if knob is None:
                unread.append((flag, given.line))
            elif not isinstance(given.value, bool):
                found.setdefault(f"{path}.{flag}", (knob, given))
    return found, tuple(unread)


def _flag_values(held: Spot) -> list[tuple[str, Spot]]:
    """(flag, value) pairs of a flag-keyed mapping, a list of ``--flag value`` words or one
    string of them; a flag without a value gets True."""
    if isinstance(held.value, dict):
        return [(k, _plain(v)) for k, v in held.value.items() if k.startswith("-")]
    items = held.value if isinstance(held.value, list) else [held]
    pairs: list[tuple[str, Spot]] = []
    for item in (i if isinstance(i, Spot) else Spot(held.line, i) for i in items):
        if not isinstance(item.value, str):
            continue
        try:
            words = shlex.split(item.value)
        except ValueError:
            continue
        for word in words:
            flag, eq, value = word.partition("=")
            if word.startswith("-") and to_number(word) is None:
                pairs.append((flag, Spot(item.line, value if eq else True)))
            elif pairs and pairs[-1][1].value is True:
                pairs[-1] = (pairs[-1][0], Spot(item.line, word))
    return pairs


def _kind(target: str) -> str:
    if target == STATUS:
        return STATUS
    return "number" if target in NUMBERS else "kv" if target in KV_TYPES else "text"


def _valid(kind: str, value: Any) -> bool:
    if kind == STATUS:
        return status_name(value) is not None
    if kind == "number":
        return number_readings(value) is not None
    return isinstance(value, str) and bool(value.strip())


def _document(text: str, source: str, depth: int) -> Spot:
    """The catalog as spots, ``depth`` levels of containers deep, by the file's suffix. Each
    format's one reader refuses what cannot be read (nesting past ``nesting.MAX_DEPTH``, an
    integer past Python's digit limit) at its line, so the scans below never recurse far."""
    suffix = source.lower().rsplit(".", 1)[-1]
    if suffix == "json":
        from .jsonsrc import parse

        parse(text, source)
        return _JsonScan(text).spot(depth)
    if suffix == "toml":
        from .config import parse_toml

        data = parse_toml(text, source)
        return _toml_spot(data, (), _TomlScan(text).run(), depth, 1)
    node = yamlsrc.compose(text, source)
    return Spot(1, None) if node is None else _yaml_spot(node, depth, source, yamlsrc.line_of(node))


def _yaml_spot(node: Node, depth: int, source: str, line: int) -> Spot:
    if depth > 0 and isinstance(node, MappingNode):
        members = {
            key: _yaml_spot(value, depth - 1, source, yamlsrc.line_of(key_node))
            for key, key_node, value in yamlsrc.items(node)
        }
        return Spot(line, members)
    if depth > 0 and isinstance(node, SequenceNode):
        items = [_yaml_spot(item, depth - 1, source, yamlsrc.line_of(item)) for item in node.value]
        return Spot(line, items)
    text = node.value if isinstance(node, ScalarNode) else None
    return Spot(line, yamlsrc.construct(node, source), text)


class _Lines:
    """Line numbers of offsets in a text."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0
        self.starts = [m.end() for m in re.finditer("\n", text)]

    def line(self, at: int) -> int:
        return bisect.bisect_right(self.starts, at) + 1

    def _skip(self, pattern: re.Pattern[str]) -> int:
        """Past what ``pattern`` matches here (it may match nothing)."""
        found = pattern.match(self.text, self.at)
        self.at = found.end() if found else self.at
        return self.at


JSON_SPACE = lazy(r"[ \t\n\r]*")
DECODER = json.JSONDecoder()


class _JsonScan(_Lines):
    """Spots of a valid JSON text: containers followed ``depth`` levels deep, the rest decoded."""

    def spot(self, depth: int, line: int | None = None) -> Spot:
        start = self._skip(JSON_SPACE)
        line = line or self.line(start)
        if depth > 0 and self.text.startswith("{", start):
            return Spot(line, self._object(depth - 1))
        if depth > 0 and self.text.startswith("[", start):
            return Spot(line, self._array(depth - 1))
        value, self.at = DECODER.raw_decode(self.text, start)
        return Spot(line, value, self.text[start : self.at])

    def _object(self, depth: int) -> dict[str, Spot]:
        members: dict[str, Spot] = {}
        self.at += 1
        while self._more("}"):
            line = self.line(self.at)
            key, self.at = DECODER.raw_decode(self.text, self.at)
            self.at = self._skip(JSON_SPACE) + 1  # past the colon
            members[key] = self.spot(depth, line)  # a repeated key: the last wins, as in json
        return members

    def _array(self, depth: int) -> list[Spot]:
        items = []
        self.at += 1
        while self._more("]"):
            items.append(self.spot(depth))
        return items

    def _more(self, closing: str) -> bool:
        """Past blanks and a comma: False (and past it) at the closing bracket."""
        if self.text.startswith(",", self._skip(JSON_SPACE)):
            self.at += 1
            self._skip(JSON_SPACE)
        if self.text.startswith(closing, self.at):
            self.at += 1
            return False
        return True


TOML_SPACE = lazy(r"[ \t]*")
TOML_BLANK = lazy(r"(?:[ \t\n]|#[^\n]*)*")  # blanks, comments and line breaks
TOML_KEY = lazy(r"""[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'""")
TOML_SCALAR = lazy(
    r'"""(?:\\.|[^\\])*?"{3,5}|' + r"'''.*?'{3,5}|"
    r""""(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^,\]}\n#]+""",
    re.DOTALL,
)


class _Lost(Exception):
    """The scan met something it does not follow (never for TOML that tomllib read)."""


class _TomlScan(_Lines):
    """Where each key, table and array item of a valid TOML text is given: its path (keys and
    array indexes, as tomllib's data has them) -> (line, the scalar as written)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.found: dict[tuple[str | int, ...], tuple[int, str | None]] = {}
        self.inside: dict[tuple[str | int, ...], int] = {}  # a table's first line, if undefined
        self.arrays: dict[tuple[str | int, ...], int] = {}  # [[table]] path -> last index

    def run(self) -> _TomlScan:
        table: tuple[str | int, ...] = ()
        try:
            while self._skip(TOML_BLANK) < len(self.text):
                if self.text.startswith("[", self.at):
                    table = self._header()
                else:
                    self._pair(table)
        except _Lost:
            pass  # what was found so far; the spots fall back to their parents' lines
        return self

    def _take(self, pattern: re.Pattern[str] | str) -> str:
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
        found = compiled.match(self.text, self.at)
        if found is None or not found.group():
            raise _Lost
        self.at = found.end()
        return found.group()

    def _note(self, path: tuple[str | int, ...], at: int, raw: str | None = None) -> None:
        self.found.setdefault(path, (self.line(at), raw))

    def _key(self) -> tuple[str, ...]:
        parts = []
        while True:
            self._skip(TOML_SPACE)
            part = self._take(TOML_KEY)
            parts.append(tomllib.loads(f"k = {part}")["k"] if part[0] == '"' else part.strip("'"))
            if self._skip(TOML_SPACE) >= len(self.text) or self.text[self.at] != ".":
                return tuple(parts)
            self.at += 1

    def _header(self) -> tuple[str | int, ...]:
        start, array = self.at, self.text.startswith("[[", self.at)
        self.at += 1 + array
        keys = self._key()
        self._take(r"\]\]" if array else r"\]")
        path: tuple[str | int, ...] = ()
        for n, key in enumerate(keys, 1):
            path += (key,)
            if array and n == len(keys):
                self.arrays[path] = self.arrays.get(path, -1) + 1
                self._note(path, start)
            if path in self.arrays:
                path += (self.arrays[path],)
            self.inside.setdefault(path, self.line(start))
        self._note(path, start)
        return path

    def _pair(self, table: tuple[str | int, ...]) -> None:
        start = self.at
        keys = self._key()
        self._take("=")
        for n in range(1, len(keys)):
            self._note(table + keys[:n], start)  # a dotted key defines its tables here
        self._value(table + keys, start)

    def _value(self, path: tuple[str | int, ...], start: int) -> None:
        self._skip(TOML_SPACE)
        opening = self.text[self.at : self.at + 1]
        if opening not in ("{", "["):
            self._note(path, start, self._take(TOML_SCALAR).strip())
            return
        self._note(path, start)
        self.at += 1
        index = 0
        while self._skip(TOML_BLANK) < len(self.text):
            if self.text[self.at] in "}]":
                self.at += 1
                return
            if self.text[self.at] == ",":
                self.at += 1
            elif opening == "{":
                self._pair(path)
            else:
                self._value((*path, index), self.at)
                index += 1
        raise _Lost


def _toml_spot(
    value: Any, path: tuple[str | int, ...], scan: _TomlScan, depth: int, parent: int
) -> Spot:
    """A spot of tomllib's data, at the line the scan found for it: where it is defined, else
    (a table only its sub-tables name, or the root) the first line inside it."""
    line, raw = scan.found.get(path) or (scan.inside.get(path, parent), None)
    if depth > 0 and isinstance(value, dict):
        members = {k: _toml_spot(v, (*path, k), scan, depth - 1, line) for k, v in value.items()}
        return Spot(line, members)
    if depth > 0 and isinstance(value, list):
        items = [_toml_spot(v, (*path, n), scan, depth - 1, line) for n, v in enumerate(value)]
        return Spot(line, items)
    return Spot(line, value, raw)
