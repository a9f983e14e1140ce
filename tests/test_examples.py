"""The example counts of the property tests (tests/examples.py)."""

import re
from pathlib import Path

import hypothesis
import pytest

from .examples import examples, thorough


@pytest.mark.parametrize(("full", "drawn"), [(300, 100), (100, 33), (60, 25), (25, 25), (5, 5)])
def test_a_run_on_each_commit_draws_a_third_never_below_the_floor(monkeypatch, full, drawn):
    monkeypatch.delenv("GUARDS_THOROUGH", raising=False)
    assert examples(full) == drawn


@pytest.mark.parametrize("full", [300, 60, 5])
def test_a_thorough_run_draws_every_example(monkeypatch, full):
    monkeypatch.setenv("GUARDS_THOROUGH", "1")
    assert examples(full) == full


def test_a_property_that_names_no_count_draws_a_share_of_the_default():
    """The profile is loaded when the suite starts, under the environment it started in."""
    assert hypothesis.settings().max_examples == (100 if thorough() else 33)


def test_every_property_names_its_count_through_examples():
    """A count written as a number would draw it on every commit, outside the share."""
    tests = Path(__file__).parent
    written = [
        f"{path.relative_to(tests)}:{number}"
        for path in sorted(tests.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"max_examples=\d", line)
    ]
    assert written == []
