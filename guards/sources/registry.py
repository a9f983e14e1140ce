"""The claims registry: ``claims.yaml`` -> validated :class:`Registry` of plain records.

The file is validated against its schema (:mod:`guards.sources.registry_schema`, a pydantic
model) and the result built here from plain data. A run with a cache hands in what it kept for
the same text (``kept``, as the settings are: :class:`guards.sources.config.Kept`), so reading
an unchanged registry needs no validation library; kept data is checked field by field as it
is built, and anything else is a miss. Errors read ``claims.yaml:LINE: field: problem``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import located
from . import yamlsrc

if TYPE_CHECKING:
    from .config import Kept

STATUSES = ("active", "retracted", "superseded", "disputed")


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
    status: str  # one of STATUSES
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
    values = from_kept(kept.get(text)) if kept is not None else None
    if values is None:
        from .registry_schema import validated

        with located(shown):
            values = validated(text)
        if kept is not None:
            kept.put(text, values)
    return Registry(path=shown, claims=claims_of(values))


def claims_of(values: list[dict[str, Any]]) -> tuple[Claim, ...]:
    """The claims of validated (or kept) plain data: each claim's fields, dates as
    ``YYYY-MM-DD``. ValueError or TypeError when the data is not of this shape (kept by
    another version, or damaged)."""
    if type(values) is not list:
        raise ValueError("not a list of claims")
    return tuple(map(CLAIM_OF, values))


def from_kept(values: Any) -> list[dict[str, Any]] | None:
    """Kept data when it builds the claims (checked by building them), else None (a miss)."""
    if values is None:
        return None
    try:
        claims_of(values)
    except (ValueError, TypeError):
        return None
    return values


# -- building records from plain data, each field checked ---------------------------------------


Check = Callable[[Any], Any]


def _builder(record: Any, kinds: dict[str, Check]) -> Check:
    def build(data: Any) -> Any:
        if type(data) is not dict or not data.keys() <= kinds.keys():
            raise ValueError(f"not the fields of {record.__name__}")
        return record(**{name: kinds[name](value) for name, value in data.items()})

    return build


def _of(kind: type) -> Check:
    def check(value: Any) -> Any:
        if type(value) is not kind:
            raise ValueError(f"not a {kind.__name__}")
        return value

    return check


def _optional(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


def _number(value: Any) -> float:
    if type(value) not in (int, float):
        raise ValueError("not a number")
    return float(value)


def _date(value: Any) -> dt.date:
    return dt.date.fromisoformat(_of(str)(value))


def _status(value: Any) -> str:
    if value not in STATUSES:
        raise ValueError("not a claim status")
    return value


def _list(check: Check) -> Check:
    return lambda value: [check(item) for item in _of(list)(value)]


def _table(check: Check) -> Check:
    return lambda value: {_of(str)(k): check(v) for k, v in _of(dict)(value).items()}


TEXT, INT = _of(str), _of(int)
OPTIONAL = _optional(TEXT)
DATE = _optional(_date)
WORDS = _list(TEXT)
EVIDENCE = {
    "source": TEXT,
    "measured": OPTIONAL,
    "date": DATE,
    "engine": OPTIONAL,
    "model": OPTIONAL,
    "figures": _table(_number),
    "note": OPTIONAL,
}
EVIDENCE_OF = _builder(Evidence, EVIDENCE)
FACTS = {
    "kv_bytes_per_token": _table(INT),
    "kv_heads": _optional(INT),
    "gpu_memory_utilization_max": _optional(_number),
    "drafter_depth_max": _list(
        _builder(DepthLimit, {"method": TEXT, "depth": INT, "topology": OPTIONAL})
    ),
    "gpu_memory_gib": _optional(_number),
    "weights_gib": _optional(_number),
    "reserved_gib": _optional(_number),
}
CLAIM = {
    "id": TEXT,
    "title": TEXT,
    "status": _status,
    "asserted": DATE,
    "retracted": DATE,
    "rationale": OPTIONAL,
    "reason": OPTIONAL,
    "text": OPTIONAL,
    "variants": WORDS,
    "match": WORDS,
    "not_match": WORDS,
    "replacement": OPTIONAL,
    "superseded_by": OPTIONAL,
    "refs": WORDS,
    "evidence": _list(EVIDENCE_OF),
    "applies_to": _builder(
        AppliesTo, dict.fromkeys(("model", "engine", "topology", "paths"), WORDS)
    ),
    "facts": _builder(Facts, FACTS),
    "line": INT,
}
CLAIM_OF = _builder(Claim, CLAIM)
