"""A compose's own data for its generated regions: the top-level ``x-guards:`` mapping.

Compose ignores ``x-`` keys, so the wording a template needs and the body cannot decide (the
model's description, its status, caveats, free lines) lives next to the services it describes.
It is validated on load: an unknown key or a wrong type is an error naming the file and line.
The schema is six fields of strings, lists of strings and string tables, checked here
directly: every compose that has the mapping is read this way, and a pre-commit run of one
such compose would otherwise import a validation library for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import GuardsError
from .. import yamlsrc
from ..yamlsrc import MappingNode

KEY = "x-guards"


@dataclass(frozen=True)
class ComposeData:
    """What a ``profile`` region shows beside the facts the compose body decides."""

    model: str | None = None  # the Model line: checkpoint, quantisation, size
    status: str | None = None  # the Status line
    caveats: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)  # further `Key: value` lines, in order
    notes: list[str] = field(default_factory=list)  # free lines at the end of the block
    # An adopted hand-written block: every row as written, in order, with `{knob}` where the
    # compose body decides the value (`guards fix --adopt-profile` writes it).
    profile: dict[str, str] = field(default_factory=dict)


# each field: what it must be (a string or null, a list of strings, a table of strings)
SCHEMA = {
    "model": "text",
    "status": "text",
    "caveats": "list",
    "fields": "table",
    "notes": "list",
    "profile": "table",
}


def compose_data(root: MappingNode) -> ComposeData:
    """The validated ``x-guards`` mapping of a compose (empty when it has none)."""
    node = yamlsrc.get(root, KEY)
    if node is None:
        return ComposeData()
    if not isinstance(node, MappingNode):
        raise GuardsError(f"`{KEY}` must be a mapping", None, yamlsrc.line_of(node))
    data = yamlsrc.construct(node)
    problem = _problem(data)
    if problem is None:
        return ComposeData(**data)
    where, message = problem
    raise GuardsError(
        f"`{KEY}.{'.'.join(map(str, where))}`: {message}", None, yamlsrc.path_line(node, where)
    )


def _problem(data: dict[Any, Any]) -> tuple[tuple[Any, ...], str] | None:
    """Where the mapping breaks the schema first and how (the fields in their order, then a
    key that is none of them), in the words of a strict validator; None when it does not."""
    for name, kind in SCHEMA.items():
        if name in data:
            found = _wrong(data[name], kind)
            if found is not None:
                return (name, *found[0]), found[1]
    extra = next((key for key in data if key not in SCHEMA), None)
    return None if extra is None else ((extra,), "extra inputs are not permitted")


def _wrong(value: Any, kind: str) -> tuple[tuple[Any, ...], str] | None:
    text = "input should be a valid string"
    if kind == "text":
        return None if value is None or type(value) is str else ((), text)
    if kind == "list":
        if type(value) is not list:
            return (), "input should be a valid list"
        bad = next((i for i, item in enumerate(value) if type(item) is not str), None)
        return None if bad is None else ((bad,), text)
    if type(value) is not dict:
        return (), "input should be a valid dictionary"
    for key, item in value.items():
        if type(key) is not str:
            return (key, "[key]"), text
        if type(item) is not str:
            return (key,), text
    return None
