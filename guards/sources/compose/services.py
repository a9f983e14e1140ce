"""Compose services -> :class:`Service`: engine, knobs, environment, devices, entrypoint.

Every value is interpolated as Compose would (with the operator's overlay when given) and
keeps the line and column it was written at; the engine dialects in ``guards.sources.compose.engines`` turn
flags into canonical knobs.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ...errors import GuardsError
from .. import yamlsrc
from ..yamlsrc import MappingNode, Node, ScalarNode, SequenceNode
from .engines import LLAMACPP, SGLANG, UNKNOWN, VLLM, Knob, Token
from .interpolate import TemplateError, Value, interpolate
from .ports import Healthcheck, PortMapping, parse_health_and_ports
from .script import EnvEntry, Script, ScriptLine

SHELLS = {"bash", "sh", "/bin/bash", "/bin/sh", "/usr/bin/env"}


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

    def knob(self, name: str) -> Knob | None:
        return self.knobs.get(name)

    def value(self, name: str) -> str | None:
        knob = self.knobs.get(name)
        return knob.value if knob else None


def parse_service(
    name: str, key: Node, node: Node, lines: list[str], env: Mapping[str, str]
) -> Service:
    if not isinstance(node, MappingNode):
        raise GuardsError(f"service `{name}` is not a mapping", None, yamlsrc.line_of(node))
    line = yamlsrc.line_of(key)
    environment = _environment(yamlsrc.get(node, "environment"), env)
    script = _script(yamlsrc.get(node, "entrypoint"), lines, env, environment)
    tokens = _tokens(yamlsrc.get(node, "command"), lines, env)
    image = _image(yamlsrc.get(node, "image"), env)
    engine = _engine(image, script, tokens)
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
    health, mappings = parse_health_and_ports(name, node, lines, env, environment)
    return Service(name, line, engine, knobs, environment, devices, script, health, mappings)


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
        source="image",
        flag=None,
        variables=value.variables,
        from_env=value.from_env,
        note="; ".join(u.reason for u in value.unresolved) or None,
    )


def _environment(node: Node | None, env: Mapping[str, str]) -> dict[str, EnvEntry]:
    entries: dict[str, EnvEntry] = {}
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


def _script(
    node: Node | None,
    lines: list[str],
    env: Mapping[str, str],
    environment: dict[str, EnvEntry],
) -> Script | None:
    body = _script_node(node)
    if body is None:
        return None
    script_lines = [
        ScriptLine(number, raw, _interpolate(raw, env, number, column).text, column)
        for number, raw, column in _scalar_lines(body, lines)
    ]
    return Script(script_lines, environment)


def _script_node(node: Node | None) -> ScalarNode | None:
    """The ``-c`` payload of a ``[bash, -c, SCRIPT, ...]`` entrypoint, if it is one."""
    if not isinstance(node, SequenceNode):
        return None
    values = node.value
    for index, item in enumerate(values[:-1]):
        if isinstance(item, ScalarNode) and item.value == "-c":
            shell = values[index - 1] if index else None
            nxt = values[index + 1]
            if (
                isinstance(shell, ScalarNode)
                and shell.value in SHELLS
                and isinstance(nxt, ScalarNode)
            ):
                return nxt
    return None


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


def _tokens(node: Node | None, lines: list[str], env: Mapping[str, str]) -> list[Token]:
    if isinstance(node, SequenceNode):
        return [
            _token(
                item.value,
                _scalar_value(item, env),
                yamlsrc.line_of(item),
                yamlsrc.column_of(item),
                quoted=item.style in ("'", '"'),
            )
            for item in node.value
            if isinstance(item, ScalarNode)
        ]
    if not isinstance(node, ScalarNode):
        return []
    tokens: list[Token] = []
    for number, text, column in _scalar_lines(node, lines):
        for offset, raw in _split_words(text):
            value = _interpolate(raw, env, number, column + offset)
            for word in _shell_words(value.text, number):
                tokens.append(
                    _token(
                        raw,
                        Value(word, value.variables, value.from_env, value.unresolved),
                        number,
                        column + offset,
                    )
                )
    return tokens


def _token(raw: str, value: Value, line: int, column: int, quoted: bool = False) -> Token:
    return Token(
        value.text, raw, line, column, value.variables, value.from_env, value.unresolved, quoted
    )


def _split_words(text: str) -> list[tuple[int, str]]:
    """Whitespace-separated words, keeping ``${...}`` and quoted runs whole."""
    words: list[tuple[int, str]] = []
    start, depth, quote = None, 0, ""
    for i, char in enumerate(text + " "):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif text.startswith("${", i):
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char.isspace() and not quote and not depth:
            if start is not None:
                words.append((start, text[start:i]))
                start = None
        elif start is None:
            start = i
    return words


def _shell_words(text: str, line: int) -> list[str]:
    try:
        return shlex.split(text) or [""] if text else [""]
    except ValueError as exc:
        raise GuardsError(f"command: {exc}", None, line) from None


def _engine(image: Knob | None, script: Script | None, tokens: list[Token]) -> str:
    name = (image.value or image.raw).lower() if image else ""
    if "sglang" in name:  # lmsysorg/sglang:...; checked first: "llama" is in many names
        return SGLANG
    if "vllm" in name:
        return VLLM
    if "llama" in name:
        return LLAMACPP
    if script is not None and (script.runs("sglang.launch_server") or script.runs("sglang serve")):
        return SGLANG
    if script is not None and script.runs("vllm serve"):
        return VLLM
    if script is not None and script.runs("llama-server"):
        return LLAMACPP
    texts = {t.text.partition("=")[0] for t in tokens}  # --flag=value counts as --flag
    launches = {f"{a.text.rsplit('/', 1)[-1]} {b.text}" for a, b in pairwise(tokens)}
    sglang = {"--mem-fraction-static", "--context-length", "--tp-size", "--max-running-requests"}
    if texts & (sglang | {"--pp-size", "sglang.launch_server"}) or "sglang serve" in launches:
        return SGLANG  # before vLLM: SGLang takes --tensor-parallel-size too
    if texts & {"--max-model-len", "--gpu-memory-utilization", "--tensor-parallel-size"}:
        return VLLM
    if texts & {"-c", "--ctx-size", "-ngl", "-np"}:
        return LLAMACPP
    return UNKNOWN


def _devices(node: Node, env: Mapping[str, str]) -> list[dict[str, Any]]:
    devices_node: Node | None = node
    for key in ("deploy", "resources", "reservations", "devices"):
        devices_node = yamlsrc.get(devices_node, key)
    found: list[dict[str, Any]] = []
    if not isinstance(devices_node, SequenceNode):
        return found
    for item in devices_node.value:
        entry: dict[str, Any] = {"line": yamlsrc.line_of(item)}
        count = yamlsrc.get(item, "count")
        if isinstance(count, ScalarNode):
            entry["count"] = _scalar_value(count, env).text
        ids = yamlsrc.get(item, "device_ids")
        if isinstance(ids, SequenceNode):
            values = [_scalar_value(i, env).text for i in ids.value if isinstance(i, ScalarNode)]
            entry["device_ids"] = [d.strip() for v in values for d in v.split(",") if d.strip()]
        found.append(entry)
    return found


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
