"""Compose interpolation: ``${VAR:-default}`` and friends, evaluated against an environment.

Semantics follow the Compose specification (and compose-go): ``$$`` is a literal ``$``;
``${VAR}`` / ``$VAR``; ``${VAR:-d}`` (unset or empty) and ``${VAR-d}`` (unset);
``${VAR:+alt}`` / ``${VAR+alt}``; ``${VAR:?msg}`` / ``${VAR?msg}``; defaults nest
(``${A:-${B:-x}}``) and are only evaluated when taken. A ``$`` followed by anything else is
left as written (``"$@"`` in an entrypoint). The closing brace is found the way compose-go
finds it: every ``${`` opens a level and every ``}`` closes one.

Nothing is guessed: a bare ``${VAR}`` with VAR unset resolves to "" as Compose does, but is
reported in :attr:`Value.unresolved` so callers can say the value is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_NESTING = 32  # `${A:-${B:-...}}` deeper than this is an error, not a recursion limit
OPERATORS = (":-", ":+", ":?", "-", "+", "?")


class TemplateError(ValueError):
    """An interpolation Compose itself would refuse; ``offset`` is 0-based in the template."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class Unresolved(NamedTuple):
    variable: str
    reason: str


class Value(NamedTuple):
    """The result of interpolating one template."""

    text: str
    variables: tuple[str, ...] = ()  # every variable the template consulted
    from_env: tuple[str, ...] = ()  # the ones whose value came from the environment
    unresolved: tuple[Unresolved, ...] = ()

    @property
    def resolved(self) -> bool:
        return not self.unresolved


@dataclass
class _State:
    env: Mapping[str, str]
    unescape: bool
    depth: int = 0  # how many defaults deep the expansion is
    variables: list[str] = field(default_factory=list)
    from_env: list[str] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)

    def note(self, name: str) -> None:
        if name not in self.variables:
            self.variables.append(name)

    def lookup(self, name: str) -> str | None:
        self.note(name)
        return self.env.get(name)

    def used(self, name: str) -> None:
        if name not in self.from_env:
            self.from_env.append(name)


def interpolate(
    template: str, env: Mapping[str, str] | None = None, *, unescape: bool = True
) -> Value:
    """Interpolate ``template``; ``unescape=False`` keeps ``$$`` (for text already unescaped)."""
    if "$" not in template:  # most values: nothing to expand
        return Value(template)
    state = _State(env or {}, unescape)
    text = _expand(template, 0, state)
    return Value(text, tuple(state.variables), tuple(state.from_env), tuple(state.unresolved))


def _expand(template: str, base: int, state: _State) -> str:
    if state.depth > MAX_NESTING:
        raise TemplateError(f"defaults nested more than {MAX_NESTING} deep", base)
    state.depth += 1
    try:
        return _expand_level(template, base, state)
    finally:
        state.depth -= 1


def _expand_level(template: str, base: int, state: _State) -> str:
    out: list[str] = []
    i = 0
    while i < len(template):
        dollar = template.find("$", i)
        if dollar < 0:
            out.append(template[i:])
            break
        out.append(template[i:dollar])
        nxt = template[dollar + 1 : dollar + 2]
        if nxt == "$":
            out.append("$" if state.unescape else "$$")
            i = dollar + 2
        elif nxt == "{":
            end = closing_brace(template, dollar)
            if end < 0:
                raise TemplateError("unclosed `${`", base + dollar)
            out.append(_braced(template[dollar + 2 : end], base + dollar + 2, state))
            i = end + 1
        else:
            name = NAME.match(template, dollar + 1)
            if name is None:
                out.append("$")
                i = dollar + 1
                continue
            out.append(_plain(name.group(), state))
            i = name.end()
    return "".join(out)


BRACES = re.compile(r"\$\{|\}")


def closing_brace(template: str, start: int) -> int:
    """Index of the ``}`` closing the ``${`` at ``start`` (compose-go's counting), or -1."""
    depth = 0
    for brace in BRACES.finditer(template, start):
        depth += 1 if brace.group() == "${" else -1
        if depth == 0:
            return brace.start()
    return -1


def _plain(name: str, state: _State) -> str:
    value = state.lookup(name)
    if value is None:
        state.unresolved.append(Unresolved(name, f"{name} is unset and has no default"))
        return ""
    state.used(name)
    return value


def _braced(body: str, base: int, state: _State) -> str:
    name = NAME.match(body)
    if name is None:
        raise TemplateError(f"invalid interpolation `${{{body}}}`", base - 2)
    rest = body[name.end() :]
    if not rest:
        return _plain(name.group(), state)
    operator = next((op for op in OPERATORS if rest.startswith(op)), None)
    if operator is None:
        raise TemplateError(f"invalid interpolation `${{{body}}}`", base - 2)
    arg, arg_base = rest[len(operator) :], base + name.end() + len(operator)
    value = state.lookup(name.group())
    present = value is not None if len(operator) == 1 else bool(value)
    if present:
        state.used(name.group())
    if operator.endswith("-"):
        return value if present else _expand(arg, arg_base, state)  # type: ignore[return-value]
    if operator.endswith("+"):
        return _expand(arg, arg_base, state) if present else ""
    if not present:
        message = _expand(arg, arg_base, state) or f"{name.group()} is required"
        state.unresolved.append(Unresolved(name.group(), f"required: {message}"))
        return ""
    return value  # type: ignore[return-value]
