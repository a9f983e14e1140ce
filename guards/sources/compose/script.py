"""The bash ``entrypoint:`` script of a compose service, evaluated just far enough.

Estates build the speculative-decoding config in the entrypoint: ``_spec_n="$${SPEC_N:-7}"``,
an ``off`` alias through ``case "$${SPEC:-}" in off|...) _spec_n=0 ;; esac``, then
``--speculative-config "{\\"method\\":\\"dflash\\",...,\\"num_speculative_tokens\\":$$_spec_n}"``.
Compose turns ``$$`` into ``$`` first; bash then expands against the *container* environment,
which holds only the names the service declares under ``environment:``.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .interpolate import TemplateError, Value, interpolate

ASSIGNMENT = r"^\s*(?:export\s+|local\s+|readonly\s+)?{name}=(.*)$"  # then _value()
CASE_ALIAS = re.compile(
    r'case\s++"?\$\{?(\w++)[^"\s]*+"?\s++in\s++([^)]++)\)\s*+(\w++)=([^\s;]++)\s*+;;'
)
VARIABLE = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
SPEC_CONFIG = "--speculative-config"


@dataclass(frozen=True)
class ScriptLine:
    number: int  # 1-based line in the compose file
    raw: str  # as written (``$$`` escapes intact), block indentation removed
    text: str  # after compose interpolation: what bash sees
    column: int = 1  # 1-based file column where ``raw`` starts


@dataclass(frozen=True)
class Evaluated:
    """A bash variable's value at the point it is used, and where it was assigned."""

    name: str
    value: str | None
    line: ScriptLine | None
    raw: str
    variables: tuple[str, ...] = ()
    from_env: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True)
class SpecConfig:
    method: str | None  # "mtp", "dflash", ... or "draft_model" when only a model is named
    depth: str  # the num_speculative_tokens text: a number or ``$var``
    line: ScriptLine


class Script:
    def __init__(self, lines: list[ScriptLine], env: Mapping[str, EnvEntry]) -> None:
        self.lines = lines
        self.env = env

    def container_env(self) -> dict[str, str]:
        return {name: entry.value for name, entry in self.env.items() if entry.value is not None}

    def assignment(self, name: str) -> tuple[ScriptLine, str] | None:
        """The first assignment of ``name`` (the default; later ones are conditional)."""
        pattern = re.compile(ASSIGNMENT.format(name=re.escape(name)))
        for line in self.lines:
            match = pattern.match(line.text)
            if match:
                return line, _unquote(_without_comment(match.group(1)))
        return None

    def evaluate(self, name: str) -> Evaluated:
        found = self.assignment(name)
        if found is None:
            return Evaluated(
                name, None, None, "", note=f"${name} is never assigned in the entrypoint script"
            )
        line, rhs = found
        try:
            value = interpolate(rhs, self.container_env(), unescape=False)
        except TemplateError as exc:  # bash has expansions compose does not (${#x}, ${x/a/b})
            return Evaluated(
                name, None, line, _raw_rhs(line.raw, name), note=f"cannot evaluate `{rhs}`: {exc}"
            )
        result = value.text if value.resolved else None
        from_env = _host_sources(value, self.env)
        alias = self._alias(name)
        if alias is not None:
            result = alias[0]
            entry = self.env.get(alias[1])
            if entry is not None and entry.interpolated is not None:
                from_env += entry.interpolated.from_env
        note = "; ".join(u.reason for u in value.unresolved) or None
        return Evaluated(
            name,
            result,
            line,
            _raw_rhs(line.raw, name),
            value.variables,
            tuple(dict.fromkeys(from_env)),
            note,
        )

    def _alias(self, name: str) -> tuple[str, str] | None:
        """(value, variable) when a ``case`` alias such as SPEC=off overrides ``name``."""
        env = self.container_env()
        for line in self.lines:
            match = CASE_ALIAS.search(line.text)
            if match and match.group(3) == name:
                current = env.get(match.group(1), "")
                patterns = [p.strip().strip("\"'") for p in match.group(2).split("|")]
                if current and any(fnmatch.fnmatchcase(current, p) for p in patterns):
                    return match.group(4).strip("\"'"), match.group(1)
        return None

    def spec_switch(self) -> str | None:
        """The variable the script derives from SPEC_N (the drafter toggle), if any."""
        for line in self.lines:
            match = re.match(r"^\s*(\w+)=\"?\$\{SPEC_N\b", line.text)
            if match:
                return match.group(1)
        return None

    def spec_config(self) -> SpecConfig | None:
        for line in self.lines:
            at = line.text.find(SPEC_CONFIG)
            if at >= 0:
                payload = _quoted_argument(line.text[at + len(SPEC_CONFIG) :])
                if payload is not None:
                    method, depth = parse_spec_payload(payload)
                    return SpecConfig(method, depth, line)
        return None

    def runs(self, program: str) -> bool:
        return any(
            program in line.text and not line.text.lstrip().startswith("#") for line in self.lines
        )


@dataclass(frozen=True)
class EnvEntry:
    """One ``environment:`` entry: what reaches the container, and from where."""

    name: str
    value: str | None  # None: a bare pass-through the operator did not set
    line: int
    interpolated: Value | None


def _host_sources(value: Value, env: Mapping[str, EnvEntry]) -> tuple[str, ...]:
    sources: list[str] = []
    for name in value.from_env:
        entry = env.get(name)
        if entry is not None and entry.interpolated is not None:
            sources.extend(entry.interpolated.from_env)
    return tuple(dict.fromkeys(sources))


def parse_spec_payload(payload: str) -> tuple[str | None, str]:
    """(method, depth text) from a speculative-config JSON payload, parsed or not."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's limit
        data = None
    if isinstance(data, dict):
        method = data.get("method") or ("draft_model" if data.get("model") else None)
        return method, str(data.get("num_speculative_tokens", ""))
    method_match = re.search(r'"method"\s*:\s*"([^"]+)"', payload)
    depth_match = re.search(r'"num_speculative_tokens"\s*:\s*([^,}\s]+)', payload)
    method = (
        method_match.group(1)
        if method_match
        else ("draft_model" if re.search(r'"model"\s*:', payload) else None)
    )
    return method, depth_match.group(1).strip('"') if depth_match else ""


def _quoted_argument(rest: str) -> str | None:
    rest = rest.lstrip()
    if rest[:1] == "'":
        end = rest.find("'", 1)
        return rest[1:end] if end > 0 else None
    if rest[:1] == '"':
        out, i = [], 1
        while i < len(rest):
            if rest[i] == "\\" and i + 1 < len(rest):
                out.append(rest[i + 1])
                i += 2
                continue
            if rest[i] == '"':
                return "".join(out)
            out.append(rest[i])
            i += 1
    return None


def _without_comment(text: str) -> str:
    """A shell word list without its trailing ``# comment`` (a ``#`` after a space, outside
    quotes) and surrounding spaces."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index].strip()
    return text.strip()


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _raw_rhs(raw: str, name: str) -> str:
    match = re.match(ASSIGNMENT.format(name=re.escape(name)), raw)
    return _unquote(_without_comment(match.group(1))) if match else raw.strip()


def variable_name(text: str) -> str | None:
    match = VARIABLE.match(text.strip())
    return match.group(1) if match else None
