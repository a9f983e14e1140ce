"""JSON output, version 1 (the contract in docs/formats.md). Keys are only ever added."""

from __future__ import annotations

import json

from ..findings import Finding, Fix, Run, finding_fields
from . import Reporter


class JsonReporter(Reporter):
    def render(self, run: Run) -> str:
        document: dict[str, object]
        summary = run.summary
        totals = {
            "pass": summary.passed,
            "fail": summary.failed,
            "files": summary.files,
            "findings": summary.findings,
            "warnings": summary.warnings,
            "suppressed": summary.suppressed,
            "baselined": summary.baselined,
        }
        undecided = [r for r in run.results if not r.judged]
        if undecided:  # only then, so a run without one gives the document it always gave
            totals["not_judged"] = len(undecided)
        if summary.fixable:  # likewise
            totals["fixable"] = summary.fixable
        document = {
            "version": 1,
            "summary": totals,
            "findings": [_finding(f) for f in run.findings],
            "errors": [
                {"path": e.path, "line": e.line, "column": e.column, "message": e.message}
                for e in run.errors
            ],
        }
        if undecided:
            document["not_judged"] = [
                {"rule": r.rule, "target": r.target, "why": list(r.not_judged)} for r in undecided
            ]
        if self.show_waived:
            document["waived"] = [_finding(f) for f in run.waived]
        if run.baseline is not None:
            document["baseline"] = {
                "path": run.baseline,
                "stale": [
                    {
                        "fingerprint": e.fingerprint,
                        "rule": e.rule,
                        "path": e.path,
                        "line": e.line,
                        "message": e.message,
                    }
                    for e in run.stale
                ],
            }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _finding(f: Finding) -> dict:
    waiver = {"waiver": f.waiver._asdict()} if f.waiver else {}
    return {**finding_fields(f), "fix": None if f.waiver else _fix(f.fix), **waiver}


def _fix(fix: Fix | None) -> dict | None:
    """What ``guards check --fix`` does about the finding (as ruff's JSON says it), or null."""
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [
            {
                "line": r.line,
                "column": r.column,
                "end_line": r.end_line,
                "end_column": r.end_column,
                "content": r.text,
            }
            for r in fix.replacements
        ],
    }
