"""GitLab Code Quality output: the JSON array GitLab reads from a ``codequality`` report.

Each finding is ``{description, check_name, fingerprint, severity, location: {path, lines:
{begin, end}}}``; the fingerprint is the finding's own (stable across line shifts and runs).
"""

from __future__ import annotations

import json

from ..findings import Finding, Run, Severity
from . import Reporter


class GitlabReporter(Reporter):
    def render(self, run: Run) -> str:
        return json.dumps([_issue(f) for f in run.findings], indent=2, ensure_ascii=False) + "\n"


def _issue(finding: Finding) -> dict:
    return {
        "description": f"{finding.rule} {finding.message}",
        "check_name": finding.rule,
        "fingerprint": finding.fingerprint,
        "severity": "major" if finding.severity is Severity.ERROR else "minor",
        "location": {
            "path": finding.path,
            "lines": {"begin": finding.line, "end": finding.end_line},
        },
    }
