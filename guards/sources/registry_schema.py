"""The schema of ``claims.yaml`` (pydantic models): a registry text -> its claims as plain
data, which :mod:`guards.sources.registry` builds its records from. Imported only when a
registry text is validated (not when a run uses what it kept of the same text).

Errors read ``claims.yaml:LINE: field: problem`` - never a pydantic dump.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import GuardsError
from . import yamlsrc
from .markers import CLAIM_ID


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Evidence(Strict):
    source: str
    measured: str | None = None
    date: dt.date | None = None
    engine: str | None = None  # the image tag or version it was measured on (C005)
    model: str | None = None  # the served model the figures are for
    figures: dict[str, float] = Field(default_factory=dict)  # `guards evidence read`'s numbers
    note: str | None = None


class AppliesTo(Strict):
    """Where a claim applies. Every given field must match; an empty one matches anything."""

    model: list[str] = Field(default_factory=list)
    engine: list[str] = Field(default_factory=list)
    topology: list[str] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list)

    _lists = field_validator("model", "engine", "topology", "paths", mode="before")(_as_list)


class DepthLimit(Strict):
    method: str
    depth: int = Field(ge=0)
    topology: str | None = None


class Facts(Strict):
    """Structured values guards use; each traces to the claim (and evidence) that holds it."""

    kv_bytes_per_token: dict[str, int] = Field(default_factory=dict)
    kv_heads: int | None = Field(default=None, ge=1)
    gpu_memory_utilization_max: float | None = Field(default=None, gt=0, le=1)
    drafter_depth_max: list[DepthLimit] = Field(default_factory=list)
    gpu_memory_gib: float | None = Field(default=None, gt=0)
    weights_gib: float | None = Field(default=None, gt=0)
    reserved_gib: float | None = Field(default=None, ge=0)


class Claim(Strict):
    id: str
    title: str
    status: Literal[
        "active", "retracted", "superseded", "disputed"
    ]  # registry.Status; a test keeps them equal
    asserted: dt.date | None = None
    retracted: dt.date | None = None
    rationale: str | None = None  # why it was asserted
    reason: str | None = None  # why it was withdrawn (for an active claim: why it holds)
    text: str | None = None  # the wording as first published
    variants: list[str] = Field(default_factory=list)  # other published wordings
    match: list[str] = Field(default_factory=list)  # distinctive phrases of the wrong assertion
    not_match: list[str] = Field(default_factory=list)  # phrases that never count as the claim
    replacement: str | None = None
    superseded_by: str | None = None
    refs: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    applies_to: AppliesTo = Field(default_factory=AppliesTo)
    facts: Facts = Field(default_factory=Facts)
    line: int = 0  # set by the loader: where the claim starts in claims.yaml

    _lists = field_validator("variants", "match", "not_match", "refs", mode="before")(_as_list)

    @field_validator("id")
    @classmethod
    def _kebab(cls, value: str) -> str:
        if not CLAIM_ID.fullmatch(value):
            raise ValueError("must be kebab-case (lowercase letters, digits, single hyphens)")
        return value


class _File(Strict):
    version: Literal[1] = 1
    claims: list[dict[str, Any]] = Field(default_factory=list)


def validated(text: str) -> list[dict[str, Any]]:
    """The claims of a registry text as plain data (``model_dump`` in JSON mode: dates as
    ``YYYY-MM-DD``), each with its line; none for an empty document. GuardsError (with the
    line, no file) for anything the schema refuses."""
    return [claim.model_dump(mode="json") for claim in _claims(text) or ()]


def evidence(data: dict[str, Any]) -> dict[str, Any]:
    """An evidence entry validated (pydantic's ValidationError when it is not one), as plain
    data (``plain.build`` makes a ``registry.Evidence`` of it)."""
    return Evidence.model_validate(data).model_dump(mode="json")


def _claims(text: str) -> list[Claim] | None:
    """The validated claims of a registry text (``None`` for an empty document)."""
    root = yamlsrc.compose(text)
    if root is None:
        return None
    data = yamlsrc.construct(root)
    if not isinstance(data, dict):
        raise GuardsError(
            "registry must be a mapping with a `claims:` list", None, yamlsrc.line_of(root)
        )
    _validate(_File, data, root, ())
    claims = []
    for index, raw in enumerate(data.get("claims") or []):
        where = ("claims", index)
        line = yamlsrc.path_line(root, where) or 1
        claim = _validate(Claim, {**raw, "line": line}, root, where)
        claims.append(claim)
    _check_references(claims, root)
    return claims


def _validate(model: type[BaseModel], data: Any, root: Any, where: tuple) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        line = yamlsrc.path_line(root, where + loc)
        raise GuardsError(f"{_dotted(where + loc)}: {_plain(error)}", None, line) from None


def _dotted(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _plain(error: Any) -> str:
    kind, message = error["type"], error["msg"]
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error":
        return f"got {error['input']!r}, expected {message.split('Input should be ', 1)[-1]}"
    if kind.startswith("date"):
        return f"got {error['input']!r}, expected a date as YYYY-MM-DD"
    if message.startswith("Value error, "):
        return message[len("Value error, ") :]
    return f"{message[:1].lower()}{message[1:]} (got {error['input']!r})"


def _check_references(claims: list[Claim], root: Any) -> None:
    seen: dict[str, int] = {}
    for index, claim in enumerate(claims):
        if claim.id in seen:
            raise GuardsError(
                f"claims[{index}].id: duplicate id {claim.id!r} "
                f"(first defined at line {seen[claim.id]})",
                None,
                claim.line,
            )
        seen[claim.id] = claim.line
    for index, claim in enumerate(claims):
        if claim.superseded_by and claim.superseded_by not in seen:
            line = yamlsrc.path_line(root, ("claims", index, "superseded_by"))
            raise GuardsError(
                f"claims[{index}].superseded_by: unknown claim id {claim.superseded_by!r}",
                None,
                line,
            )
