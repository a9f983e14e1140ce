"""Every case in tests/rules/*.yml: the exact text a user sees for one rule on a small estate."""

import pytest

from guards.rules import all_rules

from ..rule_cases import load_cases, outcome, run_case, spans

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
    if case.spans is not None:
        result, _ = run_case(case, tmp_path / "again")
        assert spans(result, case.rule) == case.spans


def test_every_rule_has_a_case_that_states_where_its_findings_end():
    stated = {case.rule for case in CASES if case.spans}
    assert stated == {rule.id for rule in all_rules()}
