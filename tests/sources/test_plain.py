"""Plain data back into typed values (guards/sources/plain.py): the readers of kept data."""

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import pytest

from guards.findings import Severity
from guards.sources import plain


class Limit(NamedTuple):
    method: str
    depth: int
    topology: str | None = None


@dataclass(frozen=True)
class Record:
    name: str
    when: dt.date | None = None
    share: float = 1.0
    kind: Literal["a", "b"] = "a"
    limits: list[Limit] = field(default_factory=list)
    files: tuple[str, ...] | dict[str, tuple[str, ...]] = ()
    extra: Any = None


def test_a_record_is_built_with_each_field_of_its_type():
    data = {
        "name": "x",
        "when": "2026-09-08",
        "share": 1,  # JSON writes 1.0 as 1
        "kind": "b",
        "limits": [{"method": "mtp", "depth": 3}],
        "files": {"c.yml": ["a.env"]},
        "extra": {"anything": [1]},
    }
    assert plain.build(Record, data) == Record(
        "x",
        dt.date(2026, 9, 8),
        1.0,
        "b",
        [Limit("mtp", 3)],
        {"c.yml": ("a.env",)},
        {"anything": [1]},
    )
    assert plain.build(Record, {"name": "y", "files": ["a", "b"]}).files == ("a", "b")
    assert plain.build(Severity | None, "warning") is Severity.WARNING


@pytest.mark.parametrize(
    "data",
    [
        {"name": 1},
        {"name": "x", "unknown": 1},
        {},  # a required field missing
        {"name": "x", "when": "last week"},
        {"name": "x", "share": "1"},
        {"name": "x", "share": True},  # a bool is not a number here
        {"name": "x", "kind": "c"},
        {"name": "x", "limits": [{"method": "mtp", "depth": 1.5}]},
        {"name": "x", "files": {"c.yml": "a.env"}},
        ["x"],
    ],
)
def test_data_not_of_the_declared_types_is_refused(data):
    with pytest.raises((ValueError, TypeError)):
        plain.build(Record, data)


def test_an_enum_value_it_lacks_is_refused():
    with pytest.raises(ValueError):
        plain.build(Severity, "loud")
