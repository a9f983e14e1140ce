"""Text output: one line per finding (``path:line:col: RULE message``), then the suite total."""

from __future__ import annotations

from ..errors import MAX_PATH, printable
from ..findings import Finding, Run, Severity
from . import Reporter


class TextReporter(Reporter):
    def finding(self, finding: Finding) -> str:
        level = "" if finding.severity is Severity.ERROR else f"[{finding.severity}] "
        line = (
            f"{printable(finding.path, MAX_PATH)}:{finding.line}:{finding.column}: {finding.rule} {level}"
            f"{finding.message}\n"
        )
        if self.verbose and finding.hint:
            line += f"    hint: {finding.hint}\n"
        return line

    def finish(self, run: Run) -> str:
        summary = run.summary
        plural = "s" if summary.warnings != 1 else ""
        tail = f", {summary.warnings} warning{plural}" if summary.warnings else ""
        return f"guard suite: {summary.passed} pass / {summary.failed} fail{tail}\n"


class StatisticsReporter(TextReporter):
    """``--statistics``: how many findings each rule has, most first, then the suite total."""

    def render(self, run: Run) -> str:
        from collections import Counter

        from ..rules import all_rules

        names = {rule.id: rule.name for rule in all_rules()}
        counts = Counter(f.rule for f in run.findings)
        rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        width = len(str(rows[0][1])) if rows else 1
        table = "".join(f"{n:>{width}}  {rule}  {names.get(rule, '')}\n" for rule, n in rows)
        return table + self.finish(run)
