"""A compose file -> :class:`Compose`: header, comment lines, services and their knobs.

The original text and line offsets are kept: later steps splice generated regions into the
text instead of re-dumping YAML (a ruamel round trip is byte-identical on 0 of 123 real files).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import yamlsrc
from .engines import LLAMACPP, UNKNOWN, VLLM, Knob, Token
from .errors import GuardsError
from .header import Header, HeaderLine, parse_header, sections_of
from .interpolate import TemplateError, Value, interpolate
from .markers import Citation, find_claim_refs
from .script import EnvEntry, Script, ScriptLine
from .yamlsrc import MappingNode, Node, ScalarNode, SequenceNode

SHELLS = {"bash", "sh", "/bin/bash", "/bin/sh", "/usr/bin/env"}
REGION_OPEN = re.compile(r"^\s*>>>\s*guards:([\w.-]+)\s*$")
REGION_CLOSE = re.compile(r"^\s*<<<\s*guards:([\w.-]+)\s*$")


@dataclass(frozen=True)
class Comment:
    line: int
    column: int
    text: str  # after the ``#``
    where: str  # "header" | "yaml" | "script"


@dataclass(frozen=True)
class Region:
    """A generated region: the lines between ``# >>> guards:NAME`` and ``# <<< guards:NAME``."""

    name: str
    line: int  # the opening marker
    end_line: int  # the closing marker

    def __contains__(self, line: int) -> bool:
        return self.line <= line <= self.end_line


@dataclass
class Service:
    name: str
    line: int
    engine: str
    knobs: dict[str, Knob]
    environment: dict[str, EnvEntry]
    devices: list[dict[str, Any]] = field(default_factory=list)
    script: Script | None = None

    def knob(self, name: str) -> Knob | None:
        return self.knobs.get(name)

    def value(self, name: str) -> str | None:
        knob = self.knobs.get(name)
        return knob.value if knob else None


@dataclass
class Compose:
    path: str
    text: str
    lines: list[str]
    header: Header
    comments: list[Comment]
    services: list[Service]
    extensions: dict[str, Any]
    env: Mapping[str, str]
    regions: list[Region] = field(default_factory=list)
    retraction_lines: set[int] = field(default_factory=set)  # inside a retraction callout
    citations: list[Citation] = field(default_factory=list)
    retracted_ids: set[str] = field(default_factory=set)  # claims its callouts retract
    shipped: list[Service] = field(default_factory=list)  # the services with no overlay

    def __post_init__(self) -> None:
        if not self.shipped:
            self.shipped = self.services

    def is_correction(self, line: int) -> bool:
        """A retraction callout or a generated region covers ``line``."""
        return line in self.retraction_lines or any(line in r for r in self.regions)

    def retracts(self) -> set[str]:
        return self.retracted_ids


def parse_compose(text: str, shown: str, env: Mapping[str, str] | None = None) -> Compose:
    """Parse compose ``text``; bad input raises :class:`GuardsError` naming ``shown``:line."""
    env = dict(env or {})
    lines = text.split("\n")
    root = yamlsrc.compose(text, shown)
    if root is None:
        raise GuardsError("empty compose file: no YAML content", shown, 1)
    if not isinstance(root, MappingNode):
        raise GuardsError("top level is not a mapping", shown, yamlsrc.line_of(root))
    services_node = yamlsrc.get(root, "services")
    if services_node is None:
        raise GuardsError("no top-level `services:` mapping", shown, yamlsrc.line_of(root))
    if not isinstance(services_node, MappingNode):
        raise GuardsError("`services:` is not a mapping", shown, yamlsrc.line_of(services_node))
    services = [
        _service(name, key, node, lines, env, shown)
        for name, key, node in yamlsrc.items(services_node)
    ]
    # Header and comments describe the compose as shipped; with an operator overlay the same
    # node tree is evaluated a second time, without it, for the drift guards.
    shipped = (
        [
            _service(name, key, node, lines, {}, shown)
            for name, key, node in yamlsrc.items(services_node)
        ]
        if env
        else services
    )
    extensions = {
        name: yamlsrc.construct(node, shown)
        for name, _, node in yamlsrc.items(root)
        if name.startswith("x-")
    }
    header = parse_header(lines)
    comments = _comments(lines, root, header)
    retraction_lines, retracted_ids = _retractions(comments)
    compose = Compose(
        shown,
        text,
        lines,
        header,
        comments,
        services,
        extensions,
        env,
        _regions(comments, shown),
        retraction_lines,
        retracted_ids=retracted_ids,
        shipped=shipped,
    )
    compose.citations = [
        Citation(claim_id, c.line, c.column + 1 + offset, compose.is_correction(c.line))
        for c in comments
        if "claim:" in c.text
        for claim_id, offset in find_claim_refs(c.text)
    ]
    return compose


# -- services ---------------------------------------------------------------------------------


def _service(
    name: str, key: Node, node: Node, lines: list[str], env: Mapping[str, str], shown: str
) -> Service:
    if not isinstance(node, MappingNode):
        raise GuardsError(f"service `{name}` is not a mapping", shown, yamlsrc.line_of(node))
    line = yamlsrc.line_of(key)
    environment = _environment(yamlsrc.get(node, "environment"), env, shown)
    script = _script(yamlsrc.get(node, "entrypoint"), lines, env, environment, shown)
    tokens = _tokens(yamlsrc.get(node, "command"), lines, env, shown)
    image = _image(yamlsrc.get(node, "image"), env, shown)
    engine = _engine(image, script, tokens)
    if engine == LLAMACPP:
        from .engines import llamacpp

        knobs = llamacpp.knobs(tokens, script, line)
    else:
        from .engines import vllm

        knobs = vllm.knobs(tokens, script, environment) if engine == VLLM else {}
    if image is not None:
        knobs["image"] = image
    devices = _devices(node, env, shown)
    if devices:
        knobs["gpus"] = _gpus(devices)
    return Service(name, line, engine, knobs, environment, devices, script)


def _interpolate(text: str, env: Mapping[str, str], shown: str, line: int, column: int) -> Value:
    try:
        return interpolate(text, env)
    except TemplateError as exc:
        raise GuardsError(f"interpolation: {exc}", shown, line, column + exc.offset) from None


def _scalar_value(node: ScalarNode, env: Mapping[str, str], shown: str) -> Value:
    quote = 1 if node.style in ("'", '"') else 0  # offsets count from inside the quotes
    return _interpolate(
        node.value, env, shown, yamlsrc.line_of(node), yamlsrc.column_of(node) + quote
    )


def _image(node: Node | None, env: Mapping[str, str], shown: str) -> Knob | None:
    if not isinstance(node, ScalarNode):
        return None
    value = _scalar_value(node, env, shown)
    return Knob(
        "image",
        value.text if value.resolved else None,
        node.value,
        yamlsrc.line_of(node),
        yamlsrc.column_of(node),
        "image",
        None,
        value.variables,
        value.from_env,
        "; ".join(u.reason for u in value.unresolved) or None,
    )


def _environment(node: Node | None, env: Mapping[str, str], shown: str) -> dict[str, EnvEntry]:
    entries: dict[str, EnvEntry] = {}
    if isinstance(node, SequenceNode):
        for item in node.value:
            if isinstance(item, ScalarNode):
                name, eq, rest = item.value.partition("=")
                entries[name.strip()] = _env_entry(
                    name.strip(), rest if eq else None, item, env, shown
                )
    for name, _, value in yamlsrc.items(node):
        text = (
            value.value
            if isinstance(value, ScalarNode) and value.tag.endswith(("str", "int", "float", "bool"))
            else None
        )
        if isinstance(value, ScalarNode) and value.tag.endswith("null"):
            text = None
        entries[name] = _env_entry(name, text, value, env, shown)
    return entries


def _env_entry(
    name: str, text: str | None, node: Node, env: Mapping[str, str], shown: str
) -> EnvEntry:
    line = yamlsrc.line_of(node)
    if text is None:  # a bare pass-through: present only when the operator sets it
        return EnvEntry(
            name,
            env.get(name),
            line,
            Value(env.get(name, ""), (name,), (name,) if name in env else ()),
        )
    value = _interpolate(text, env, shown, line, yamlsrc.column_of(node))
    return EnvEntry(name, value.text, line, value)


def _script(
    node: Node | None,
    lines: list[str],
    env: Mapping[str, str],
    environment: dict[str, EnvEntry],
    shown: str,
) -> Script | None:
    body = _script_node(node)
    if body is None:
        return None
    script_lines = [
        ScriptLine(number, raw, _interpolate(raw, env, shown, number, column).text, column)
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
        first, last = _block_span(node)
        indent = _block_indent(lines, first, last)
        return [(n, lines[n - 1][indent:], indent + 1) for n in range(first, last + 1)]
    return [
        (yamlsrc.line_of(node) + i, part, yamlsrc.column_of(node) if i == 0 else 1)
        for i, part in enumerate(node.value.split("\n"))
    ]


def _block_span(node: ScalarNode) -> tuple[int, int]:
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


def _tokens(node: Node | None, lines: list[str], env: Mapping[str, str], shown: str) -> list[Token]:
    if isinstance(node, SequenceNode):
        return [
            _token(
                item.value,
                _scalar_value(item, env, shown),
                yamlsrc.line_of(item),
                yamlsrc.column_of(item),
            )
            for item in node.value
            if isinstance(item, ScalarNode)
        ]
    if not isinstance(node, ScalarNode):
        return []
    tokens: list[Token] = []
    for number, text, column in _scalar_lines(node, lines):
        for offset, raw in _split_words(text):
            value = _interpolate(raw, env, shown, number, column + offset)
            for word in _shell_words(value.text, shown, number):
                tokens.append(
                    _token(
                        raw,
                        Value(word, value.variables, value.from_env, value.unresolved),
                        number,
                        column + offset,
                    )
                )
    return tokens


def _token(raw: str, value: Value, line: int, column: int) -> Token:
    return Token(value.text, raw, line, column, value.variables, value.from_env, value.unresolved)


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


def _shell_words(text: str, shown: str, line: int) -> list[str]:
    try:
        return shlex.split(text) or [""] if text else [""]
    except ValueError as exc:
        raise GuardsError(f"command: {exc}", shown, line) from None


def _engine(image: Knob | None, script: Script | None, tokens: list[Token]) -> str:
    name = (image.value or image.raw).lower() if image else ""
    if "vllm" in name:
        return VLLM
    if "llama" in name:
        return LLAMACPP
    if script is not None and script.runs("vllm serve"):
        return VLLM
    if script is not None and script.runs("llama-server"):
        return LLAMACPP
    texts = {t.text for t in tokens}
    if texts & {"--max-model-len", "--gpu-memory-utilization", "--tensor-parallel-size"}:
        return VLLM
    if texts & {"-c", "--ctx-size", "-ngl", "-np"}:
        return LLAMACPP
    return UNKNOWN


def _devices(node: Node, env: Mapping[str, str], shown: str) -> list[dict[str, Any]]:
    devices_node = node
    for key in ("deploy", "resources", "reservations", "devices"):
        devices_node = yamlsrc.get(devices_node, key)
    found: list[dict[str, Any]] = []
    if not isinstance(devices_node, SequenceNode):
        return found
    for item in devices_node.value:
        entry: dict[str, Any] = {"line": yamlsrc.line_of(item)}
        count = yamlsrc.get(item, "count")
        if isinstance(count, ScalarNode):
            entry["count"] = _scalar_value(count, env, shown).text
        ids = yamlsrc.get(item, "device_ids")
        if isinstance(ids, SequenceNode):
            values = [
                _scalar_value(i, env, shown).text for i in ids.value if isinstance(i, ScalarNode)
            ]
            entry["device_ids"] = [d.strip() for v in values for d in v.split(",") if d.strip()]
        found.append(entry)
    return found


def _gpus(devices: list[dict[str, Any]]) -> Knob:
    first = devices[0]
    if "device_ids" in first:
        ids = first["device_ids"]
        return Knob(
            "gpus",
            str(len(ids)),
            ",".join(ids),
            first["line"],
            1,
            "deploy",
            note=f"device_ids {','.join(ids)}",
        )
    return Knob(
        "gpus",
        str(first.get("count", "all")),
        str(first.get("count", "all")),
        first["line"],
        1,
        "deploy",
    )


# -- comments ---------------------------------------------------------------------------------


def _comments(lines: list[str], root: Node, header: Header) -> list[Comment]:
    scripts, literals = _scalar_spans(root)
    found: list[Comment] = []
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip()
        column = len(line) - len(stripped) + 1
        if number in literals:
            if number in scripts and stripped.startswith("#"):
                found.append(Comment(number, column, stripped[1:], "script"))
            continue
        if stripped.startswith("#"):
            where = "header" if header.line <= number <= header.end_line else "yaml"
            found.append(Comment(number, column, stripped[1:], where))
            continue
        trailing = _trailing_comment(line)
        if trailing is not None:
            found.append(Comment(number, trailing + 1, line[trailing + 1 :], "yaml"))
    return found


def _runs(comments: list[Comment]) -> list[list[Comment]]:
    """Comments on consecutive lines of the same kind (a header, a block between keys)."""
    runs: list[list[Comment]] = []
    for comment in comments:
        if runs and comment.line == runs[-1][-1].line + 1 and comment.where == runs[-1][-1].where:
            runs[-1].append(comment)
        else:
            runs.append([comment])
    return runs


def _retractions(comments: list[Comment]) -> tuple[set[int], set[str]]:
    """Lines inside retraction callouts, and the claim ids those callouts name."""
    lines: set[int] = set()
    ids: set[str] = set()
    for run in _runs(comments):
        for section in sections_of([HeaderLine(c.line, c.text, c.column + 1) for c in run]):
            if section.retraction is not None:
                lines.update(range(section.line, section.end_line + 1))
                ids.update(section.retraction.claim_ids)
    return lines, ids


def _regions(comments: list[Comment], shown: str) -> list[Region]:
    regions: list[Region] = []
    opened: tuple[str, int] | None = None
    for comment in comments:
        start, end = REGION_OPEN.match(comment.text), REGION_CLOSE.match(comment.text)
        if start and opened:
            raise GuardsError(
                f"generated region guards:{start.group(1)} opens inside "
                f"guards:{opened[0]} (opened at line {opened[1]})",
                shown,
                comment.line,
            )
        if start:
            opened = (start.group(1), comment.line)
        elif end and (opened is None or opened[0] != end.group(1)):
            raise GuardsError(
                f"`<<< guards:{end.group(1)}` closes a region that is not open", shown, comment.line
            )
        elif end and opened:
            regions.append(Region(opened[0], opened[1], comment.line))
            opened = None
    if opened:
        raise GuardsError(f"generated region guards:{opened[0]} is never closed", shown, opened[1])
    return regions


def _scalar_spans(root: Node) -> tuple[set[int], set[int]]:
    """Lines inside literal block scalars (scripts) and inside any multi-line scalar."""
    scripts: set[int] = set()
    inside: set[int] = set()
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if node.style in ("|", ">"):
                first, last = _block_span(node)
                span = range(first, last + 1)
                inside.update(span)
                if node.style == "|":
                    scripts.update(span)
            elif node.end_mark.line > node.start_mark.line:
                inside.update(range(node.start_mark.line + 2, node.end_mark.line + 2))
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return scripts, inside


def _trailing_comment(line: str) -> int | None:
    """Index of a ``#`` that starts a trailing comment (outside quotes), if any."""
    if " #" not in line and "\t#" not in line:
        return None
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'" and (i == 0 or not line[i - 1].isalnum()):
            quote = char
        elif char == "#" and i > 0 and line[i - 1] in " \t":
            return i
    return None
