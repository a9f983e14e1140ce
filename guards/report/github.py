"""GitHub Actions output: one workflow-command annotation per finding, then the suite total.

``::error file=PATH,line=L,col=C,endLine=…,endColumn=…,title=RULE name::message`` (``::warning``
for a warning), escaped as the runner expects: ``%``, CR and LF in the message; also ``:`` and
``,`` in properties. GitHub shows a limited number of annotations per job, so
:func:`step_summary` gives the whole picture as markdown for ``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

from collections import Counter

from ..findings import Finding, Run, Severity
from ..rules import all_rules
from . import Reporter
from .text import WAIVED, TextReporter


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _names() -> dict[str, str]:
    return {rule.id: rule.name for rule in all_rules()}


class GithubReporter(Reporter):
    def start(self, run: Run) -> str:
        self.names = _names()
        return ""

    def finding(self, finding: Finding) -> str:
        level = "error" if finding.severity is Severity.ERROR else "warning"
        message = finding.message
        if finding.waiver is not None:  # listed with --show-suppressed: a notice, not a failure
            kind, reason = WAIVED[finding.waiver.kind], finding.waiver.reason
            level, message = "notice", f"[{kind}: {reason}] {message}"
        fixable = " [*]" if finding.fix is not None and finding.waiver is None else ""
        title = f"{finding.rule}{fixable} {self.names.get(finding.rule, '')}".strip()
        where = ",".join(
            f"{key}={_property(str(value))}"
            for key, value in (
                ("file", finding.path),
                ("line", finding.line),
                ("col", finding.column),
                ("endLine", finding.end_line),
                ("endColumn", finding.end_column),
                ("title", title),
            )
        )
        return f"::{level} {where}::{_data(message)}\n"

    def finish(self, run: Run) -> str:
        return TextReporter().finish(run)


def step_summary(run: Run) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: the totals and the findings per rule."""
    names = _names()
    counts = Counter(f.rule for f in run.findings)
    lines = ["## guards", "", f"**{TextReporter().finish(run).strip()}**", ""]
    if counts:
        lines += ["| Rule | Findings |", "| --- | ---: |"]
        lines += [f"| {rule} {names.get(rule, '')} | {counts[rule]} |" for rule in sorted(counts)]
    return "\n".join(lines).rstrip("\n") + "\n"
