"""Where findings end: on every rule-case estate, the bundled estate and the incident fixture,
each finding ends at or after its start and inside its last line (the end column is just after
the text, so at most the line's length + 1); and every report format gives that one end."""

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from guards.findings import CheckResult, Finding, Run, Severity
from guards.report.github import GithubReporter
from guards.report.json import JsonReporter
from guards.report.sarif import SarifReporter
from guards.server.convert import diagnostic
from guards.sources.edit import unify_breaks

from ..cli_helpers import run_guards
from ..rule_cases import load_cases, run_case

REPO = Path(__file__).resolve().parents[2]
CASES = load_cases()


def lines_of(root: Path, path: str) -> list[str]:
    text = (root / path).read_text(encoding="utf-8").removeprefix("\ufeff")
    return unify_breaks(text).split("\n")


def held(found: list[Finding], root: Path) -> list[str]:
    """What is wrong with where each finding ends (nothing, when every end is sound)."""
    wrong = []
    for f in found:
        lines = lines_of(root, f.path)
        where = f"{f.path}:{f.line}:{f.column}-{f.end_line}:{f.end_column} {f.rule}"
        if (f.end_line, f.end_column) < (f.line, f.column):
            wrong.append(f"{where}: ends before it starts")
        elif not 1 <= f.end_line <= len(lines):
            wrong.append(f"{where}: ends past the file's last line")
        elif f.end_column > len(lines[f.end_line - 1]) + 1:
            wrong.append(f"{where}: ends past its line ({len(lines[f.end_line - 1])} characters)")
    return wrong


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_finding_of_a_rule_case_ends_inside_its_line(case, tmp_path):
    result, _ = run_case(case, tmp_path)
    assert held(result.findings + result.waived, tmp_path) == []


@pytest.mark.parametrize("name", ["bundled", "incident"])
def test_every_finding_of_the_estates_ends_inside_its_line(name, capsys, incident):
    root = REPO if name == "bundled" else incident
    result = run_guards(capsys, "check", "--root", str(root), "--format", "json", "--no-cache")
    found = [Finding(**f | {"severity": Severity(f["severity"])}) for f in _findings(result.out)]
    assert held(found, root) == []
    if name == "incident":
        assert found and all(f.end_known for f in found)


def _findings(out: str) -> list[dict]:
    keep = {"rule", "severity", "path", "line", "column", "end_line", "end_column", "message"}
    return [{k: v for k, v in f.items() if k in keep} for f in json.loads(out)["findings"]]


LINE = "    command: [--gpu-memory-utilization, 0.97]"
TOKEN = Finding(
    rule="K001",
    severity=Severity.ERROR,
    path="composes/c.yml",
    line=1,
    column=LINE.index("0.97") + 1,
    message="above the ceiling",
    end_column=LINE.index("0.97") + 1 + len("0.97"),
)


def test_every_format_gives_the_same_end_just_after_the_token():
    start, end = TOKEN.column, TOKEN.end_column
    assert LINE[start - 1 : end - 1] == "0.97"  # 1-based, the end not included
    run = Run(results=(), rules=("K001",), files=1)
    [result] = json.loads(SarifReporter().render(_with(run)))["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startColumn"], region["endColumn"]) == (start, end)  # SARIF: exclusive
    [data] = json.loads(JsonReporter().render(_with(run)))["findings"]
    assert (data["column"], data["end_column"]) == (start, end)
    annotation = GithubReporter().render(_with(run)).splitlines()[0]
    assert f"col={start},endLine=1,endColumn={end}," in annotation
    codec = PositionCodec(types.PositionEncodingKind.Utf32)
    shown = diagnostic(TOKEN, [LINE], codec, None).range  # LSP: 0-based, end exclusive
    assert (shown.start.character, shown.end.character) == (start - 1, end - 1)


def test_a_point_has_no_end_column_in_sarif():
    point = Finding(**{**_fields(TOKEN), "end_column": 0})
    run = _with(Run(results=(), rules=("K001",), files=1), point)
    [result] = json.loads(SarifReporter().render(run))["runs"][0]["results"]
    assert "endColumn" not in result["locations"][0]["physicalLocation"]["region"]
    assert not point.end_known and point.end_column == point.column


def _fields(finding: Finding) -> dict:
    keep = ("rule", "severity", "path", "line", "column", "message", "end_line", "end_column")
    return {k: getattr(finding, k) for k in keep}


def _with(run: Run, finding: Finding = TOKEN) -> Run:
    return Run(results=(CheckResult("K001", finding.path, (finding,)),), rules=run.rules, files=1)
