"""Compose services -> :class:`Service`: engine, knobs, environment, devices, entrypoint.

Every value is interpolated as Compose would (with the operator's overlay when given) and
keeps the line and column it was written at; the engine dialects in ``guards.sources.compose.engines`` turn
flags into canonical knobs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ...errors import GuardsError
from .. import yamlsrc
from ..yamlsrc import MappingNode, Node, ScalarNode, SequenceNode
from . import launch as launches
from .engines import LLAMACPP, SGLANG, UNKNOWN, VLLM, Knob, Token
from .interpolate import TemplateError, Value, interpolate
from .launch import Launch
from .merge import Texts, file_of
from .ports import Healthcheck, PortMapping, parse_health_and_ports
from .script import EnvEntry, Script, ScriptLine
from .words import shell_fields, written_words
from .written import env_file_entries


@dataclass
class Service:
    name: str
    line: int
    engine: str
    knobs: dict[str, Knob]
    environment: dict[str, EnvEntry]
    devices: list[dict[str, Any]] = field(default_factory=list)
    script: Script | None = None
    healthcheck: Healthcheck | None = None  # None: the compose sets no test
    ports: list[PortMapping] = field(default_factory=list)
    # Where the service runs (facts/accelerators.py reads them as Compose does):
    profiles: tuple[str, ...] = ()  # empty: the service always starts
    runtime: str | None = None  # `runtime:` (nvidia, habana, ...)
    device_files: tuple[str, ...] = ()  # `devices:`: host paths and CDI names
    gpus: tuple[dict[str, Any], ...] = ()  # `gpus:` (`all` is one request of every card)
    engine_device: str | None = None  # the engine's `--device` (cpu, xpu, hpu, ...)
    # Which engine runs and why; ``launch.idle``: the command replaces the server (engine
    # UNKNOWN: nothing serves, whatever the image).
    launch: Launch = field(default_factory=lambda: Launch(UNKNOWN, "not read"))
    path: str | None = None  # the file that defines it, when not the compose's own
    container_name: str | None = None  # `container_name:`, interpolated (catalogs join by it)

    def file(self, compose_path: str) -> str:
        return self.path or compose_path

    def knob(self, name: str) -> Knob | None:
        return self.knobs.get(name)

    def value(self, name: str) -> str | None:
        knob = self.knobs.get(name)
        return knob.value if knob else None


# Reads a service's ``env_file:`` for the parser, which opens no file: the name as the compose
# gives it (interpolated, relative to the compose's folder), whether it is required, and the
# interpolation env its references may use; its variables, or None when it is not read.
# (name, required, env, the file that declares it when not the compose itself) -> variables
EnvFileReader = Callable[[str, bool, Mapping[str, str], str | None], Mapping[str, str] | None]


def parse_service(
    name: str,
    key: Node,
    node: Node,
    texts: Texts,
    env: Mapping[str, str],
    env_files: EnvFileReader | None = None,
) -> Service:
    """A service, its values read from the files ``texts`` holds (a merged one's come from
    several); each value keeps the file it is written in when that is not the compose."""
    if not isinstance(node, MappingNode):
        raise GuardsError(f"service `{name}` is not a mapping", None, yamlsrc.line_of(node))
    line = yamlsrc.line_of(key)
    from_files = _env_files(node, env, env_files)
    environment = _environment(yamlsrc.get(node, "environment"), env, from_files)
    image = _image(yamlsrc.get(node, "image"), env)
    launch = _launch(node, texts, env, environment)
    engine, script, tokens = launch.engine, launch.script, launch.tokens
    if engine == LLAMACPP:
        from .engines import llamacpp

        knobs = llamacpp.knobs(tokens, script, line)
    else:
        from .engines import sglang, vllm

        dialect = {VLLM: vllm.knobs, SGLANG: sglang.knobs}.get(engine)
        knobs = dialect(tokens, script, environment) if dialect else {}
    if image is not None:
        knobs["image"] = image
    devices = _devices(node, env)
    if devices:
        knobs["gpus"] = _gpus(devices)
    health, mappings = parse_health_and_ports(name, node, texts, env, environment)
    knobs = {name: _written_in(knob, node) for name, knob in knobs.items()}
    service = Service(name, line, engine, knobs, environment, devices, script, health, mappings)
    service.launch, service.path = launch, file_of(key)
    _place(service, node, env, tokens)
    return service


def _written_in(knob: Knob, node: MappingNode) -> Knob:
    """``knob`` with the file its value is written in, found by the key it comes from (a
    merged service's ``command`` may be the override's and its ``image`` the base's)."""
    if knob.source == "environment":
        written = yamlsrc.get(node, "environment")
        entries = list(written.value) if isinstance(written, SequenceNode) else []
        entries += [value for _, _, value in yamlsrc.items(written)]
        found = next((n for n in entries if yamlsrc.line_of(n) == knob.line), None)
    elif knob.source == "deploy":
        found = next(iter(_device_nodes(node)), None)
    else:
        found = yamlsrc.get(node, knob.source)
    path = file_of(found)
    return replace(knob, path=path) if path else knob


def _interpolate(text: str, env: Mapping[str, str], line: int, column: int) -> Value:
    try:
        return interpolate(text, env)
    except TemplateError as exc:
        raise GuardsError(f"interpolation: {exc}", None, line, column + exc.offset) from None


def _scalar_value(node: ScalarNode, env: Mapping[str, str]) -> Value:
    quote = 1 if node.style in ("'", '"') else 0  # offsets count from inside the quotes
    return _interpolate(node.value, env, yamlsrc.line_of(node), yamlsrc.column_of(node) + quote)


def _image(node: Node | None, env: Mapping[str, str]) -> Knob | None:
    if not isinstance(node, ScalarNode):
        return None
    value = _scalar_value(node, env)
    return Knob(
        name="image",
        value=value.text if value.resolved else None,
        raw=node.value,
        line=yamlsrc.line_of(node),
        column=yamlsrc.column_of(node),
        end_column=yamlsrc.end_column_of(node),
        source="image",
        flag=None,
        variables=value.variables,
        from_env=value.from_env,
        note="; ".join(u.reason for u in value.unresolved) or None,
    )


def _env_files(
    service: Node, env: Mapping[str, str], read: EnvFileReader | None
) -> dict[str, EnvEntry]:
    """What ``env_file:`` (a name, a list, or ``{path, required}`` items) puts in the container
    environment, later files winning; placed at the entry that names the file. Such files feed
    the container only, never interpolation."""
    entries: dict[str, EnvEntry] = {}
    if read is None:
        return entries
    for item, path in env_file_entries(service):
        flag = yamlsrc.get(item, "required") if isinstance(item, MappingNode) else None
        required = not (isinstance(flag, ScalarNode) and flag.value.lower() == "false")
        file = _scalar_value(path, env).text.strip()
        if not file:
            continue
        line = yamlsrc.line_of(item)
        # a service extended from another file keeps that file's relative paths (Compose)
        for name, value in (read(file, required, env, file_of(item)) or {}).items():
            entries[name] = EnvEntry(name, value, line, Value(value))
    return entries


def _environment(
    node: Node | None, env: Mapping[str, str], from_files: dict[str, EnvEntry] | None = None
) -> dict[str, EnvEntry]:
    """The container environment: ``environment:`` over what ``env_file:`` gave."""
    entries: dict[str, EnvEntry] = dict(from_files or {})
    if isinstance(node, SequenceNode):
        for item in node.value:
            if isinstance(item, ScalarNode):
                name, eq, rest = item.value.partition("=")
                entries[name.strip()] = _env_entry(name.strip(), rest if eq else None, item, env)
    for name, _, value in yamlsrc.items(node):
        text = (
            value.value
            if isinstance(value, ScalarNode) and value.tag.endswith(("str", "int", "float", "bool"))
            else None
        )
        if isinstance(value, ScalarNode) and value.tag.endswith("null"):
            text = None
        entries[name] = _env_entry(name, text, value, env)
    return entries


def _env_entry(name: str, text: str | None, node: Node, env: Mapping[str, str]) -> EnvEntry:
    line = yamlsrc.line_of(node)
    if text is None:  # a bare pass-through: present only when the operator sets it
        return EnvEntry(
            name,
            env.get(name),
            line,
            Value(env.get(name, ""), (name,), (name,) if name in env else ()),
        )
    value = _interpolate(text, env, line, yamlsrc.column_of(node))
    return EnvEntry(name, value.text, line, value)


def _launch(
    node: Node, texts: Texts, env: Mapping[str, str], environment: dict[str, EnvEntry]
) -> Launch:
    """Which engine the service runs, with the words it is started with (``launch.py``)."""
    entry_node, command_node = yamlsrc.get(node, "entrypoint"), yamlsrc.get(node, "command")
    entry = (
        _tokens(entry_node, texts.of(entry_node), env, "entrypoint")
        if entry_node is not None
        else None
    )
    command = _tokens(command_node, texts.of(command_node), env)
    items = {  # the two may come from two files: told apart by where the word is written
        (source, yamlsrc.line_of(item), yamlsrc.column_of(item)): item
        for source, parent in (("entrypoint", entry_node), ("command", command_node))
        if isinstance(parent, SequenceNode)
        for item in parent.value
    }

    def script(word: Token) -> Script:
        body = items.get((word.source, word.line, word.column))
        if isinstance(body, ScalarNode):
            return _script(body, texts.of(body), env, environment, word.source)
        return _word_script(word, environment)

    image = yamlsrc.get(node, "image")
    text = _scalar_value(image, env).text if isinstance(image, ScalarNode) else None
    return launches.find(entry, command, script, text)


def _script(
    body: ScalarNode,
    lines: list[str],
    env: Mapping[str, str],
    environment: dict[str, EnvEntry],
    source: str,
) -> Script:
    """The script a list item gives ``sh -c``, line for line with the file."""
    numbered = _scalar_lines(body, lines)
    script_lines = [
        ScriptLine(number, raw, _interpolate(raw, env, number, column).text, column)
        for number, raw, column in numbered
    ]
    words = [
        [
            _script_word(word, env, number, column + offset, source)
            for offset, word in written_words(raw)
        ]
        for number, raw, column in numbered
    ]
    return Script(script_lines, environment, words)


def _script_word(raw: str, env: Mapping[str, str], line: int, column: int, source: str) -> Token:
    value = _interpolate(raw, env, line, column)
    return _token(raw, value, line, column, source=source, end=column + len(raw))


def _word_script(word: Token, environment: dict[str, EnvEntry]) -> Script:
    """The script one word of a string-form ``command:`` gives ``sh -c``: placed at the
    word (its lines are not the file's)."""
    parts = word.text.split("\n")
    script_lines = [ScriptLine(word.line, part, part, word.column, False) for part in parts]
    words = [
        [_word_in(word, text, offset) for offset, text in written_words(part)] for part in parts
    ]
    return Script(script_lines, environment, words)


def _word_in(word: Token, text: str, offset: int) -> Token:
    """A word of the script ``word`` holds, at ``offset`` in it (its own raw text, unquoted,
    its end not known)."""
    return Token(
        text=text,
        raw=text,
        line=word.line,
        column=word.column + offset,
        variables=word.variables,
        from_env=word.from_env,
        unresolved=word.unresolved,
        quoted=False,
        source=word.source,
        end_column=0,
    )


def _scalar_lines(node: ScalarNode, lines: list[str]) -> list[tuple[int, str, int]]:
    """(file line, content, file column of content) for a scalar; block scalars map line for
    line, other scalars are placed at the scalar's own position."""
    if node.style in ("|", ">"):
        first, last = block_span(node)
        indent = _block_indent(lines, first, last)
        return [(n, lines[n - 1][indent:], indent + 1) for n in range(first, last + 1)]
    return [
        (yamlsrc.line_of(node) + i, part, yamlsrc.column_of(node) if i == 0 else 1)
        for i, part in enumerate(node.value.split("\n"))
    ]


def block_span(node: ScalarNode) -> tuple[int, int]:
    first = node.start_mark.line + 2
    end = node.end_mark
    last = end.line + 1 if end.column > 0 else end.line
    return first, max(first - 1, last)


def _block_indent(lines: list[str], first: int, last: int) -> int:
    widths = [
        len(lines[n - 1]) - len(lines[n - 1].lstrip())
        for n in range(first, last + 1)
        if n <= len(lines) and lines[n - 1].strip()
    ]
    return min(widths) if widths else 0


def _tokens(
    node: Node | None, lines: list[str], env: Mapping[str, str], source: str = "command"
) -> list[Token]:
    """The argv words of ``command:`` or ``entrypoint:``: a list's items, or a string split
    as a shell splits it."""
    if isinstance(node, SequenceNode):
        return [
            _token(
                item.value,
                _scalar_value(item, env),
                yamlsrc.line_of(item),
                yamlsrc.column_of(item),
                quoted=item.style in ("'", '"'),
                source=source,
                end=yamlsrc.end_column_of(item),
            )
            for item in node.value
            if isinstance(item, ScalarNode)
        ]
    if not isinstance(node, ScalarNode):
        return []
    tokens: list[Token] = []
    for number, text, column in _scalar_lines(node, lines):
        for offset, raw in written_words(text):
            value = _interpolate(raw, env, number, column + offset)
            for word in _shell_words(value.text, number):
                tokens.append(
                    _token(
                        raw,
                        Value(word, value.variables, value.from_env, value.unresolved),
                        number,
                        column + offset,
                        source=source,
                        end=column + offset + len(raw),
                    )
                )
    return tokens


def _token(
    raw: str,
    value: Value,
    line: int,
    column: int,
    quoted: bool = False,
    source: str = "command",
    end: int = 0,
) -> Token:
    return Token(
        value.text,
        raw,
        line,
        column,
        value.variables,
        value.from_env,
        value.unresolved,
        quoted,
        source,
        end,
    )


def _shell_words(text: str, line: int) -> list[str]:
    try:
        return list(shell_fields(text)) or [""] if text else [""]
    except ValueError as exc:
        raise GuardsError(f"command: {exc}", None, line) from None


def _devices(node: Node, env: Mapping[str, str]) -> list[dict[str, Any]]:
    return [_device_request(item, env) for item in _device_nodes(node)]


def _device_nodes(node: Node) -> list[Node]:
    devices_node: Node | None = node
    for key in ("deploy", "resources", "reservations", "devices"):
        devices_node = yamlsrc.get(devices_node, key)
    return list(devices_node.value) if isinstance(devices_node, SequenceNode) else []


def _device_request(item: Node, env: Mapping[str, str]) -> dict[str, Any]:
    """One device request (a reservation or a ``gpus:`` entry): line, count, device_ids,
    driver, capabilities, each as written after interpolation."""
    entry: dict[str, Any] = {"line": yamlsrc.line_of(item)}
    count = yamlsrc.get(item, "count")
    if isinstance(count, ScalarNode):
        entry["count"] = _scalar_value(count, env).text
    ids = yamlsrc.get(item, "device_ids")
    if isinstance(ids, SequenceNode):
        values = [_scalar_value(i, env).text for i in ids.value if isinstance(i, ScalarNode)]
        entry["device_ids"] = [d.strip() for v in values for d in v.split(",") if d.strip()]
    driver = yamlsrc.get(item, "driver")
    if isinstance(driver, ScalarNode):
        entry["driver"] = _scalar_value(driver, env).text.strip().lower()
    capabilities = _strings(yamlsrc.get(item, "capabilities"), env)
    if capabilities:
        entry["capabilities"] = [c.lower() for c in capabilities]
    return entry


def _place(service: Service, node: Node, env: Mapping[str, str], tokens: list[Token]) -> None:
    """The keys that decide when and on what the service runs: ``profiles``, ``runtime``,
    ``devices``, ``gpus`` and the engine's ``--device``."""
    service.profiles = _strings(yamlsrc.get(node, "profiles"), env)
    container = yamlsrc.get(node, "container_name")
    if isinstance(container, ScalarNode):
        service.container_name = _scalar_value(container, env).text.strip() or None
    runtime = yamlsrc.get(node, "runtime")
    if isinstance(runtime, ScalarNode):
        service.runtime = _scalar_value(runtime, env).text.strip().lower() or None
    service.device_files = tuple(_device_file(d, env) for d in _items(yamlsrc.get(node, "devices")))
    gpus = yamlsrc.get(node, "gpus")
    if isinstance(gpus, ScalarNode) and _scalar_value(gpus, env).text.strip().lower() == "all":
        service.gpus = ({"line": yamlsrc.line_of(gpus), "count": "all"},)
    elif isinstance(gpus, SequenceNode):
        service.gpus = tuple(_device_request(item, env) for item in gpus.value)
    service.engine_device = _device_flag(tokens, service.script)


def _items(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def _strings(node: Node | None, env: Mapping[str, str]) -> tuple[str, ...]:
    """A list of scalars, interpolated (``profiles``, ``capabilities``)."""
    return tuple(
        _scalar_value(item, env).text.strip()
        for item in _items(node)
        if isinstance(item, ScalarNode)
    )


def _device_file(item: Node, env: Mapping[str, str]) -> str:
    """The host side of a ``devices:`` entry: ``/dev/kfd``, ``/dev/dri`` of
    ``/dev/dri:/dev/dri:rwm``, a CDI name (``nvidia.com/gpu=0``) or a long form's source."""
    if not isinstance(item, ScalarNode):
        item = yamlsrc.get(item, "source") or item
    if not isinstance(item, ScalarNode):
        return ""
    text = _scalar_value(item, env).text.strip()
    return text.partition(":")[0] if text.startswith("/") else text


def _device_flag(tokens: list[Token], script: Script | None) -> str | None:
    """The engine's ``--device`` value (``cpu``, ``xpu``, ``hpu``): from the command, else
    from the entrypoint script."""
    words = [t.text for t in tokens]
    if script is not None:
        words += [w for line in script.lines for w in line.text.split()]
    for index, word in enumerate(words):
        name, eq, inline = word.partition("=")
        if name == "--device":
            value = inline if eq else (words[index + 1] if index + 1 < len(words) else "")
            return value.strip("\"'").lower() or None
    return None


def _gpus(devices: list[dict[str, Any]]) -> Knob:
    first = devices[0]
    if "device_ids" in first:
        ids = first["device_ids"]
        return Knob(
            name="gpus",
            value=str(len(ids)),
            raw=",".join(ids),
            line=first["line"],
            column=1,
            source="deploy",
            note=f"device_ids {','.join(ids)}",
        )
    return Knob(
        name="gpus",
        value=str(first.get("count", "all")),
        raw=str(first.get("count", "all")),
        line=first["line"],
        column=1,
        source="deploy",
    )
