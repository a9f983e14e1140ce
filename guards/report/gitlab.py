"""GitLab Code Quality output: the JSON array GitLab reads from a ``codequality`` report.

Each finding is ``{description, check_name, fingerprint, severity, location: {path, lines:
{begin, end}}}``; the fingerprint is the finding's own (stable across line shifts and runs).
A check a rule could not decide is an ``info`` issue on line 1 of its file, saying why.
"""

from __future__ import annotations

import hashlib
import json

from ..findings import CheckResult, Finding, Run, Severity
from . import Reporter


class GitlabReporter(Reporter):
    def render(self, run: Run) -> str:
        issues = [_issue(f) for f in run.findings]
        issues += [_not_judged(r) for r in run.results if not r.judged]
        return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def _issue(finding: Finding) -> dict:
    return {
        "description": f"{finding.rule} {'[*] ' if finding.fix else ''}{finding.message}",
        "check_name": finding.rule,
        "fingerprint": finding.fingerprint,
        "severity": "major" if finding.severity is Severity.ERROR else "minor",
        "location": {
            "path": finding.path,
            "lines": {"begin": finding.line, "end": finding.end_line},
        },
    }


def _not_judged(result: CheckResult) -> dict:
    """A check the rule could not decide, as an ``info`` issue on its file: the report has no
    summary to count it in, and a widget that shows only failures would hide it."""
    path = result.target.partition("#")[0]  # a claim's target is REGISTRY#ID
    key = "\0".join((result.rule, result.target, "not judged"))
    return {
        "description": f"{result.rule} not judged: {'; '.join(result.not_judged)}",
        "check_name": result.rule,
        "fingerprint": hashlib.sha1(key.encode("utf-8")).hexdigest()[:16],
        "severity": "info",
        "location": {"path": path, "lines": {"begin": 1, "end": 1}},
    }
