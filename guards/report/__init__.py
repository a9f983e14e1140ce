"""Reporters: turn check results into text or JSON. Each returns the whole output as a string."""

from __future__ import annotations

from dataclasses import dataclass

from ..findings import CheckResult, Finding


@dataclass(frozen=True)
class Summary:
    passed: int
    failed: int
    files: int
    findings: int


def summarize(results: list[CheckResult], files: int) -> Summary:
    failed = sum(1 for r in results if not r.passed)
    return Summary(len(results) - failed, failed, files, len(all_findings(results)))


def all_findings(results: list[CheckResult]) -> list[Finding]:
    return sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key())
