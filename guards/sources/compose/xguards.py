"""A compose's own data for its generated regions: the top-level ``x-guards:`` mapping.

Compose ignores ``x-`` keys, so the wording a template needs and the body cannot decide (the
model's description, its status, caveats, free lines) lives next to the services it describes.
It is validated on load: an unknown key or a wrong type is an error naming the file and line.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import GuardsError
from .. import yamlsrc
from ..yamlsrc import MappingNode

KEY = "x-guards"


class ComposeData(BaseModel):
    """What a ``profile`` region shows beside the facts the compose body decides."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    model: str | None = None  # the Model line: checkpoint, quantisation, size
    status: str | None = None  # the Status line
    caveats: list[str] = Field(default_factory=list)
    fields: dict[str, str] = Field(default_factory=dict)  # further `Key: value` lines, in order
    notes: list[str] = Field(default_factory=list)  # free lines at the end of the block
    # An adopted hand-written block: every row as written, in order, with `{knob}` where the
    # compose body decides the value (`guards fix --adopt-profile` writes it).
    profile: dict[str, str] = Field(default_factory=dict)


def compose_data(root: MappingNode) -> ComposeData:
    """The validated ``x-guards`` mapping of a compose (empty when it has none)."""
    node = yamlsrc.get(root, KEY)
    if node is None:
        return ComposeData()
    if not isinstance(node, MappingNode):
        raise GuardsError(f"`{KEY}` must be a mapping", None, yamlsrc.line_of(node))
    try:
        return ComposeData.model_validate(yamlsrc.construct(node))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise GuardsError(
            f"`{KEY}.{where}`: {error['msg'].lower()}",
            None,
            yamlsrc.path_line(node, error["loc"]),
        ) from None
