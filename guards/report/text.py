"""Text output: one line per finding (``path:line:col: RULE message``) and the suite total."""

from __future__ import annotations

from ..findings import CheckResult
from . import all_findings, summarize


def render(results: list[CheckResult], files: int, verbose: bool = False) -> str:
    lines = []
    for finding in all_findings(results):
        lines.append(
            f"{finding.path}:{finding.line}:{finding.column}: {finding.rule} {finding.message}"
        )
        if verbose and finding.hint:
            lines.append(f"    hint: {finding.hint}")
    summary = summarize(results, files)
    lines.append(f"guard suite: {summary.passed} pass / {summary.failed} fail")
    return "\n".join(lines) + "\n"
