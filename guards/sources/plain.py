"""Plain data back into typed values: what the cache keeps of validated input (the settings,
the claims, rule options) is JSON, and what it gives back is built here, each value checked
against its declared type. Anything else raises ValueError or TypeError, which the readers
take as a miss (the input is validated again).

The types this knows are the ones the records use: ``str``, ``int``, ``bool``, ``float`` (a
whole number in JSON is an int), ``None``, ``Any``, ``datetime.date`` (``YYYY-MM-DD``), enums,
``Literal``, unions, ``list[X]``, ``tuple[X, ...]``, ``dict[str, X]``, and records (dataclasses
and named tuples) by their fields' annotations.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import types
import typing
from typing import Any, Literal, Union

_HINTS: dict[type, dict[str, Any]] = {}


def build(kind: Any, value: Any) -> Any:
    """``value`` (JSON data) as a value of the type ``kind``."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any:
        return value
    if origin in (Union, types.UnionType):
        return _first(args, value)
    if origin is Literal:
        if value not in args:
            raise ValueError(f"{value!r} is not one of {args}")
        return value
    if origin is list:
        return [build(args[0], item) for item in _sequence(value)]
    if origin is tuple:
        return tuple(build(args[0], item) for item in _sequence(value))
    if origin is dict:
        return {typed(str, k): build(args[1], v) for k, v in typed(dict, value).items()}
    if kind is float and type(value) is int:
        return float(value)
    if kind is dt.date:
        return dt.date.fromisoformat(typed(str, value))
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind(value)
    if isinstance(kind, type) and (dataclasses.is_dataclass(kind) or hasattr(kind, "_fields")):
        return record(kind, value)
    return typed(kind, value)


def record(kind: type, value: Any) -> Any:
    """A record (dataclass or named tuple) of its fields in ``value``, a JSON object."""
    hints = fields_of(kind)
    if type(value) is not dict or not value.keys() <= hints.keys():
        raise ValueError(f"not the fields of {kind.__name__}")
    return kind(**{name: build(hints[name], item) for name, item in value.items()})


def fields_of(kind: type) -> dict[str, Any]:
    """A record's fields and their types, its annotations evaluated once."""
    if kind not in _HINTS:
        hints = typing.get_type_hints(kind)
        names = (
            [f.name for f in dataclasses.fields(kind)]
            if dataclasses.is_dataclass(kind)
            else list(kind._fields)  # type: ignore[attr-defined]
        )
        _HINTS[kind] = {name: hints[name] for name in names}
    return _HINTS[kind]


def typed(kind: type, value: Any) -> Any:
    """``value`` when it is exactly a ``kind`` (a bool is not an int here)."""
    if type(value) is not kind:
        raise ValueError(f"not a {kind.__name__}")
    return value


def _sequence(value: Any) -> list[Any] | tuple[Any, ...]:
    """A JSON array (a list), or the tuple a store that is not JSON gives back."""
    if type(value) not in (list, tuple):
        raise ValueError("not a list")
    return value


def _first(kinds: tuple[Any, ...], value: Any) -> Any:
    if value is None and type(None) in kinds:
        return None
    for kind in kinds:
        if kind is type(None):
            continue
        try:
            return build(kind, value)
        except (ValueError, TypeError):
            continue
    raise ValueError(f"{value!r} is none of {kinds}")
