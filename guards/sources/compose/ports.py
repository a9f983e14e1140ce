"""A service's ``healthcheck:`` probes and ``ports:`` mappings, each with where it is written.

A probe is a local address the healthcheck's ``test:`` connects to: a URL (curl, wget or any
other client; ``localhost:8080`` without a scheme too) or bash's ``/dev/tcp/HOST/PORT``, on
localhost, 127.x.x.x, 0.0.0.0, [::1] or one of the service's own names. Its port is read where
it is written: a Compose variable (``${PORT:-8020}``) is interpolated like every other value;
a variable left to the container's shell (``$${PORT}``) is expanded in the shell forms
against what the service's ``environment:`` sets, and is not known when the compose does not
set it (the image may) or when the ``CMD`` form runs no shell. Mappings are read in the short
syntax (``[IP:]HOST:CONTAINER[/PROTOCOL]``, ranges, a bare ``CONTAINER``) and the long one
(``target``/``published``); an entry Compose would refuse is left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from ...errors import GuardsError
from .. import yamlsrc
from ..patterns import lazy
from ..yamlsrc import MappingNode, Node, ScalarNode, SequenceNode
from .engines import Token
from .interpolate import NAME, TemplateError, Unresolved, Value, closing_brace, interpolate
from .merge import Texts, file_of
from .script import EnvEntry

LOCAL = {"localhost", "0.0.0.0", "::1", "[::1]", "::", "[::]", "ip6-localhost"}
LOOPBACK = lazy(r"127(?:\.[0-9]{1,3}){3}")
PORT = lazy(r"[0-9]{1,5}")
SCHEMES = {"http": 80, "https": 443}
URL = lazy(r"\b(https?)://(\[[0-9A-Fa-f:.]*\]|[A-Za-z0-9_.-]+)")
BARE = lazy(r"(?<![\w.:/@\[-])(\[[0-9A-Fa-f:.]*\]|[A-Za-z0-9_.-]+):(?=[0-9$])")
DEV_TCP = lazy(r"/dev/tcp/(\[[^\]/\s]*\]|[^/\s\"'$]+)/")
TRUE = {"true", "yes", "on"}
MAX_TEMPLATE = 256  # characters of a port as written; a longer one is not read


class Probe(NamedTuple):
    """One local port the healthcheck connects to."""

    port: int | None  # None: not known (see ``note``)
    raw: str  # as written ("8080", "${PORT:-8020}"); "" when the scheme implies it
    line: int
    column: int
    from_env: tuple[str, ...] = ()  # the operator's variables that chose it
    note: str | None = None
    set_by: str = ""  # the environment entries the container's shell read it from
    path: str | None = None  # the file it is written in, when not the compose's own

    @property
    def end_column(self) -> int:
        """Just after the port as written (its column, a point, when the scheme implies it)."""
        return self.column + len(self.raw)


class Healthcheck(NamedTuple):
    line: int  # the `test:` value
    probes: tuple[Probe, ...]
    path: str | None = None  # the file it is written in, when not the compose's own
    shell: bool = True  # CMD-SHELL or a string: /bin/sh -c runs the first word; CMD: none
    words: tuple[Token, ...] = ()  # the test's words after interpolation, the form left out


class PortMapping(NamedTuple):
    """One ``ports:`` entry: host ports (``published``) to container ports (``target``)."""

    shown: str  # how a message quotes it
    line: int
    published: tuple[int, int] | None  # first and last host port; None: the engine picks
    target: tuple[int, int]
    protocol: str = "tcp"
    path: str | None = None  # the file it is written in, when not the compose's own

    def target_of(self, port: int) -> int | None:
        """The container port that host port ``port`` reaches through this mapping."""
        if self.published is None or not self.published[0] <= port <= self.published[1]:
            return None
        if self.target[0] == self.target[1]:
            return self.target[0]
        if self.target[1] - self.target[0] == self.published[1] - self.published[0]:
            return self.target[0] + port - self.published[0]
        return None


def parse_health_and_ports(
    name: str,
    node: MappingNode,
    texts: Texts,
    env: Mapping[str, str],
    environment: Mapping[str, EnvEntry],
) -> tuple[Healthcheck | None, list[PortMapping]]:
    """The healthcheck and the port mappings of the service ``name`` (``node``), its values
    read from the files ``texts`` holds."""
    names = {n.lower() for n in {name} | _own_names(node, env)}
    context = _Context(texts, env, environment, names)
    health = _healthcheck(yamlsrc.get(node, "healthcheck"), context)
    return health, _mappings(yamlsrc.get(node, "ports"), env)


class _Context(NamedTuple):
    texts: Texts
    env: Mapping[str, str]
    environment: Mapping[str, EnvEntry]
    names: set[str]  # the service's own host names besides the local ones
    shell: bool = True  # the test runs in a shell (CMD-SHELL, a string)


def _own_names(node: MappingNode, env: Mapping[str, str]) -> set[str]:
    names = set()
    for key in ("hostname", "container_name"):
        value = yamlsrc.get(node, key)
        if isinstance(value, ScalarNode):
            try:
                found = interpolate(value.value, env)
            except TemplateError:
                continue
            if found.resolved and found.text:
                names.add(found.text)
    return names


def _healthcheck(node: Node | None, context: _Context) -> Healthcheck | None:
    disable = yamlsrc.get(node, "disable")
    if isinstance(disable, ScalarNode) and disable.value.lower() in TRUE:
        return None
    test = yamlsrc.get(node, "test")
    if isinstance(test, ScalarNode) and test.tag.endswith("str"):
        parts, shell = [test], True
    elif isinstance(test, SequenceNode) and test.value:
        kind = yamlsrc.scalar(test.value[0])
        if kind == "NONE":
            return None
        written = test.value[1:] if kind in ("CMD", "CMD-SHELL") else test.value
        parts = [part for part in written if isinstance(part, ScalarNode)]
        shell = kind == "CMD-SHELL"
    else:
        return None
    probes = [probe for part in parts for probe in _probes(part, context._replace(shell=shell))]
    path = file_of(test)
    words = tuple(_word(part, context.env) for part in parts)
    probes_at = tuple(p._replace(path=path) for p in probes)
    return Healthcheck(yamlsrc.line_of(test), probes_at, path, shell, words)


def _word(node: ScalarNode, env: Mapping[str, str]) -> Token:
    """One word of the test as Compose passes it; a template Compose would refuse is kept
    unresolved (its port, if any, is what raises)."""
    line, column = yamlsrc.line_of(node), yamlsrc.column_of(node)
    quoted = node.style in ("'", '"')
    end = yamlsrc.end_column_of(node)
    word = Token(node.value, node.value, line, column, quoted=quoted, end_column=end)
    try:
        value = interpolate(node.value, env)
    except TemplateError as exc:
        return word._replace(unresolved=(Unresolved(node.value, str(exc)),))
    return word._replace(
        text=value.text,
        variables=value.variables,
        from_env=value.from_env,
        unresolved=value.unresolved,
    )


def _probes(node: ScalarNode, context: _Context) -> list[Probe]:
    """The probes written in one scalar, found in its text as written in the file."""
    found = []
    for line, column, text in _segments(node, context.texts.of(node)):
        for match in URL.finditer(text):
            found.append(_probe(text, match, line, column, context, SCHEMES[match.group(1)]))
        for pattern in (BARE, DEV_TCP):
            found += [_probe(text, m, line, column, context) for m in pattern.finditer(text)]
    return [probe for probe in found if probe is not None]


def _segments(node: ScalarNode, lines: list[str]) -> list[tuple[int, int, str]]:
    """(line, column, text) for each file line the scalar spans, as written."""
    start, end = node.start_mark, node.end_mark
    segments = []
    for index in range(start.line, min(end.line, len(lines) - 1) + 1):
        first = start.column if index == start.line else 0
        last = end.column if index == end.line else len(lines[index])
        segments.append((index + 1, first + 1, lines[index][first:last]))
    return segments


def _probe(
    text: str,
    match: re.Match[str],
    line: int,
    column: int,
    context: _Context,
    implied: int | None = None,
) -> Probe | None:
    host = match.group(match.lastindex or 1)  # a URL's host is its second group
    if not _local(host, context.names):
        return None
    start = match.end()
    if implied is not None and text.startswith(":", start):
        start, implied = start + 1, None
    if implied is not None:
        return Probe(implied, "", line, column + match.end(2))
    raw = _template(text[start : start + MAX_TEMPLATE])
    if not raw:
        return None
    return _resolved(raw, line, column + start, context)


def _local(host: str, names: set[str]) -> bool:
    host = host.lower()
    return host in LOCAL or host in names or LOOPBACK.fullmatch(host) is not None


def _template(text: str) -> str:
    """The port as written at the start of ``text``: digits, ``${...}``, ``$NAME``, ``$$``."""
    i = 0
    while i < len(text):
        dollars = 2 if text.startswith("$$", i) else 1 if text[i] == "$" else 0
        if text[i] in "0123456789":
            i += 1
        elif dollars and text.startswith("{", i + dollars):
            close = closing_brace(text, i + dollars - 1)
            if close < 0:
                break
            i = close + 1
        elif dollars and (name := NAME.match(text, i + dollars)) is not None:
            i = name.end()
        else:
            break
    return text[:i]


def _resolved(raw: str, line: int, column: int, context: _Context) -> Probe:
    try:
        value = interpolate(raw, context.env)
    except TemplateError as exc:
        raise GuardsError(f"interpolation: {exc}", None, line, column + exc.offset) from None
    probe = Probe(None, raw, line, column, value.from_env)
    if not value.resolved:
        return probe._replace(note="; ".join(u.reason for u in value.unresolved))
    if "$" in value.text:
        return _in_container(value.text, probe, context)
    return _checked(value.text, probe)


def _in_container(text: str, probe: Probe, context: _Context) -> Probe:
    """A port the container's shell expands, from what ``environment:`` sets."""
    if not context.shell:
        return probe._replace(note=f"`{text}` is not expanded: the CMD form runs no shell")
    container = {n: e.value for n, e in context.environment.items() if e.value is not None}
    try:
        value = interpolate(text, container, unescape=False)
    except TemplateError as exc:
        return probe._replace(note=f"cannot evaluate `{text}`: {exc}")
    unset = [name for name in value.variables if name not in container]
    if unset:
        return probe._replace(note=f"{', '.join(unset)} is not set under environment:")
    entries = [context.environment[name] for name in value.variables]
    sources = [s for e in entries if e.interpolated is not None for s in e.interpolated.from_env]
    set_by = ", ".join(f"${e.name} set at line {e.line}" for e in entries)
    from_env = tuple(dict.fromkeys(probe.from_env + tuple(sources)))
    return _checked(value.text, probe._replace(from_env=from_env, set_by=set_by))


def _checked(text: str, probe: Probe) -> Probe:
    port = port_number(text)
    return probe._replace(port=port, note=None if port else f"`{text}` is not a port")


def port_number(text: str | None) -> int | None:
    """A TCP/UDP port (1-65535) written as plain decimal digits, or None."""
    return int(text) if text and PORT.fullmatch(text) and 0 < int(text) < 65536 else None


def _mappings(node: Node | None, env: Mapping[str, str]) -> list[PortMapping]:
    if not isinstance(node, SequenceNode):
        return []
    found = []
    for item in node.value:
        mapping = _long(item, env) if isinstance(item, MappingNode) else None
        if isinstance(item, ScalarNode):
            mapping = _short(item, env)
        if mapping is not None:
            found.append(mapping._replace(path=file_of(item)))
    return found


def _short(node: ScalarNode, env: Mapping[str, str]) -> PortMapping | None:
    """``[IP:][HOST:]CONTAINER[/PROTOCOL]``; IP may be ``[v6]`` or a bare v6 address."""
    value = _value(node, env)
    if not value.resolved:
        return None
    spec, _, protocol = value.text.strip().partition("/")
    if spec.startswith("["):
        spec = spec[spec.find("]:") + 2 :] if "]:" in spec else ""
    parts = spec.rsplit(":", 2)
    published = _range(parts[-2]) if len(parts) > 1 and parts[-2] else None
    target = _range(parts[-1])
    if target is None or (published is None and len(parts) > 1 and parts[-2]):
        return None
    return PortMapping(
        f'"{node.value}"', yamlsrc.line_of(node), published, target, protocol.lower() or "tcp"
    )


def _long(node: MappingNode, env: Mapping[str, str]) -> PortMapping | None:
    """``target:`` / ``published:`` / ``protocol:``."""
    parts = {}
    for key in ("target", "published", "protocol"):
        value = yamlsrc.get(node, key)
        if isinstance(value, ScalarNode):
            interpolated = _value(value, env)
            if not interpolated.resolved:
                return None
            parts[key] = (value.value, interpolated.text.strip())
    target = _range(parts["target"][1]) if "target" in parts else None
    published = _range(parts["published"][1]) if "published" in parts else None
    if target is None or ("published" in parts and published is None):
        return None
    shown_as = f"target: {parts['target'][0]}"
    if "published" in parts:
        shown_as = f'published: "{parts["published"][0]}", {shown_as}'
    shown_as = "{" + shown_as + "}"
    protocol = parts.get("protocol", ("", "tcp"))[1].lower() or "tcp"
    return PortMapping(shown_as, yamlsrc.line_of(node), published, target, protocol)


def _range(text: str) -> tuple[int, int] | None:
    first, dash, last = text.partition("-")
    low, high = port_number(first), port_number(last) if dash else port_number(first)
    return (low, high) if low is not None and high is not None and low <= high else None


def _value(node: ScalarNode, env: Mapping[str, str]) -> Value:
    quote = 1 if node.style in ("'", '"') else 0
    try:
        return interpolate(node.value, env)
    except TemplateError as exc:
        line, column = yamlsrc.line_of(node), yamlsrc.column_of(node) + quote
        raise GuardsError(f"interpolation: {exc}", None, line, column + exc.offset) from None
