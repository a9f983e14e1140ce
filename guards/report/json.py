"""JSON output, version 1 (the contract in the README)."""

from __future__ import annotations

import json

from ..findings import CheckResult
from . import all_findings, summarize


def render(results: list[CheckResult], files: int) -> str:
    summary = summarize(results, files)
    document = {
        "version": 1,
        "summary": {
            "pass": summary.passed,
            "fail": summary.failed,
            "files": summary.files,
            "findings": summary.findings,
        },
        "findings": [
            {
                "rule": f.rule,
                "severity": f.severity.value,
                "path": f.path,
                "line": f.line,
                "column": f.column,
                "message": f.message,
                "hint": f.hint,
                "claim": f.claim,
                "knob": f.knob,
            }
            for f in all_findings(results)
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
