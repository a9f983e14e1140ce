"""Every case in tests/rules/*.yml: the exact text a user sees for one rule on a small estate."""

import pytest

from guards.rules import all_rules

from ..rule_cases import load_cases, outcome

CASES = load_cases()


def test_every_rule_has_cases_and_names_are_unique():
    assert {case.rule for case in CASES} == {rule.id for rule in all_rules()}
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_rule_case(case, tmp_path):
    text, remarks, errors = outcome(case, tmp_path)
    assert errors == case.errors
    assert remarks == case.remarks
    assert text == case.expect
