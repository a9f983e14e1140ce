"""Engine dialects: how each engine's command line maps to canonical knobs.

A :class:`Token` is one argv element after interpolation, with the source line it came from.
Each dialect module exposes ``knobs(tokens, script, ...) -> dict[str, Knob]``; the tokens are
the words the engine is started with, wherever the compose writes them (``identity.py`` says
which engine a service runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from ...numbers import to_number
from ..interpolate import Unresolved

VLLM = "vllm"
LLAMACPP = "llama.cpp"
SGLANG = "sglang"
UNKNOWN = "unknown"


class Token(NamedTuple):
    text: str  # value after interpolation
    raw: str  # as written in the file
    line: int
    column: int
    variables: tuple[str, ...] = ()
    from_env: tuple[str, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()
    quoted: bool = False  # a quoted YAML list item: ``column`` is its opening quote
    source: str = "command"  # where the word is written: "command" or "entrypoint"
    end_column: int = 0  # just after the word as written on ``line`` (0: not known)

    @property
    def is_flag(self) -> bool:
        return self.text.startswith("-") and not _is_number(self.text)

    def with_text(self, text: str) -> Token:
        """This word with another text: ``self._replace(text=text)``, built directly (the
        reader makes one per shell word)."""
        return Token(
            text,
            self.raw,
            self.line,
            self.column,
            self.variables,
            self.from_env,
            self.unresolved,
            self.quoted,
            self.source,
            self.end_column,
        )


@dataclass(frozen=True, kw_only=True)
class Knob:
    """One effective setting: its value, where it is set, and what controls it."""

    name: str
    value: str | None  # None: could not be resolved (see ``note``)
    raw: str
    line: int
    column: int
    source: str  # "command" | "entrypoint" | "image" | "environment"
    flag: str | None = None
    variables: tuple[str, ...] = ()
    from_env: tuple[str, ...] = ()
    note: str | None = None
    path: str | None = None  # the file it is written in, when not the compose's own
    end_column: int = 0  # just after the value as written on ``line`` (0: not known)

    @property
    def number(self) -> float | None:
        """The value as a sane number (``guards.sources.numbers``), or None."""
        return to_number(self.value)


@dataclass
class Flag:
    name: str
    token: Token
    values: list[Token] = field(default_factory=list)

    @property
    def value(self) -> Token | None:
        return self.values[0] if self.values else None


def _is_number(text: str) -> bool:
    return to_number(text) is not None


def split_flags(tokens: list[Token], takes_value: set[str]) -> list[Flag]:
    """Group argv into flags with their values (``--flag=value`` included)."""
    flags: list[Flag] = []
    current: Flag | None = None
    for token in tokens:
        if token.is_flag:
            name, eq, inline = token.text.partition("=")
            current = Flag(name, token)
            flags.append(current)
            if eq:
                current.values.append(_value_part(token, name, inline))
                current = None
        elif current is not None:
            current.values.append(token)
            if current.name in takes_value:
                current = None
    return flags


def first_knobs(
    flags: list[Flag], table: dict[str, str], make: Callable[[str, Flag], Knob] | None = None
) -> dict[str, Knob]:
    """The knob each flag of ``table`` (flag -> canonical knob) sets, the first flag of a knob
    winning; ``make`` builds a knob (default :func:`knob_from`). Every dialect reads its flags
    so."""
    found: dict[str, Knob] = {}
    for flag in flags:
        name = table.get(flag.name)
        if name and name not in found:
            found[name] = (make or knob_from)(name, flag)
    return found


def _value_part(token: Token, name: str, text: str) -> Token:
    """The ``value`` of a ``--flag=value`` token, placed at the value when it is written so."""
    shift = len(name) + 1 + token.quoted if token.raw.startswith(name + "=") else 0
    return token._replace(text=text, column=token.column + shift, quoted=False)


def knob_from(name: str, flag: Flag, source: str | None = None) -> Knob:
    """A knob set by ``flag``'s first value (or the flag itself for a bare switch); its
    source is where that word is written unless ``source`` says otherwise."""
    token = flag.value or flag.token
    value: str | None = token.text if flag.value else "true"
    note = None
    if token.unresolved:
        value, note = None, "; ".join(u.reason for u in token.unresolved)
    elif value is not None and not value.strip():
        value, note = None, f"{flag.name} is given an empty value"
    return Knob(
        name=name,
        value=value,
        raw=token.raw,
        line=token.line,
        column=token.column,
        source=source or token.source,
        flag=flag.name,
        variables=token.variables,
        from_env=token.from_env,
        note=note,
        end_column=token.end_column,
    )
