"""The claims registry: ``claims.yaml`` -> validated :class:`Registry` of plain records.

The file is validated against its schema (:mod:`guards.sources.registry_schema`, a pydantic
model) and the result built here from plain data. A run with a cache hands in what it kept for
the same text (``kept``, as the settings are: :class:`guards.sources.config.Kept`), so reading
an unchanged registry needs no validation library; kept data is checked field by field as it
is built, and anything else is a miss. Errors read ``claims.yaml:LINE: field: problem``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from ..errors import located
from . import plain, yamlsrc

if TYPE_CHECKING:
    from .config import Kept

Status = Literal["active", "retracted", "superseded", "disputed"]
STATUSES: tuple[str, ...] = get_args(Status)


@dataclass(frozen=True)
class Evidence:
    source: str
    measured: str | None = None
    date: dt.date | None = None
    engine: str | None = None  # the image tag or version it was measured on (C005)
    model: str | None = None  # the served model the figures are for
    figures: dict[str, float] = field(default_factory=dict)  # `guards evidence read`'s numbers
    note: str | None = None


@dataclass(frozen=True)
class AppliesTo:
    """Where a claim applies. Every given field must match; an empty one matches anything."""

    model: list[str] = field(default_factory=list)
    engine: list[str] = field(default_factory=list)
    topology: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


class DepthLimit(NamedTuple):
    method: str
    depth: int
    topology: str | None = None


@dataclass(frozen=True)
class Facts:
    """Structured values guards use; each traces to the claim (and evidence) that holds it."""

    kv_bytes_per_token: dict[str, int] = field(default_factory=dict)
    kv_heads: int | None = None
    gpu_memory_utilization_max: float | None = None
    drafter_depth_max: list[DepthLimit] = field(default_factory=list)
    gpu_memory_gib: float | None = None
    weights_gib: float | None = None
    reserved_gib: float | None = None


@dataclass(frozen=True)
class Claim:
    id: str
    title: str
    status: Status
    asserted: dt.date | None = None
    retracted: dt.date | None = None
    rationale: str | None = None  # why it was asserted
    reason: str | None = None  # why it was withdrawn (for an active claim: why it holds)
    text: str | None = None  # the wording as first published
    variants: list[str] = field(default_factory=list)  # other published wordings
    match: list[str] = field(default_factory=list)  # distinctive phrases of the wrong assertion
    not_match: list[str] = field(default_factory=list)  # phrases that never count as the claim
    replacement: str | None = None
    superseded_by: str | None = None
    refs: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    applies_to: AppliesTo = field(default_factory=AppliesTo)
    facts: Facts = field(default_factory=Facts)
    line: int = 0  # set by the loader: where the claim starts in claims.yaml

    @property
    def wordings(self) -> list[str]:
        """Every published wording: ``text`` and ``variants``."""
        return ([self.text] if self.text else []) + list(self.variants)

    @property
    def why(self) -> str | None:
        """Why the claim holds (or held): its rationale, else an active claim's reason."""
        return self.rationale or (self.reason if not self.is_withdrawn else None)

    @property
    def is_withdrawn(self) -> bool:
        """Retracted or superseded: its wording must no longer be asserted."""
        return self.status in ("retracted", "superseded")


class Registry(NamedTuple):
    path: str = "claims.yaml"
    claims: tuple[Claim, ...] = ()

    def get(self, claim_id: str) -> Claim | None:
        return next((c for c in self.claims if c.id == claim_id), None)

    @property
    def ids(self) -> set[str]:
        return {c.id for c in self.claims}


def empty(path: str = "claims.yaml") -> Registry:
    return Registry(path=path)


def load(path: Path, shown: str, limit: int | None = None, kept: Kept | None = None) -> Registry:
    """Load and validate a registry file; any problem raises :class:`GuardsError`."""
    text = yamlsrc.read_text(path, shown, limit)
    return parse(text, shown, kept)


def parse(text: str, shown: str, kept: Kept | None = None) -> Registry:
    """The registry in ``text``, known as ``shown``; errors name it with their line."""
    claims = from_kept(kept.get(text)) if kept is not None else None
    if claims is None:
        from .registry_schema import validated

        with located(shown):
            values = validated(text)
        if kept is not None:
            kept.put(text, values)
        claims = plain.build(tuple[Claim, ...], values)
    return Registry(path=shown, claims=claims)


def from_kept(values: Any) -> tuple[Claim, ...] | None:
    """The claims of kept data (validated plain data: dates as ``YYYY-MM-DD``), each field
    checked as it is built; None when it is not of this shape (kept by another version, or
    damaged): a miss."""
    if values is None:
        return None
    try:
        claims: tuple[Claim, ...] = plain.build(tuple[Claim, ...], values)
    except (ValueError, TypeError):
        return None
    return claims
