"""Findings and the per-check results that make up a guard-suite run."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    """One failing observation: a rule, a place, and what is wrong there."""

    rule: str
    severity: Severity
    path: str
    line: int
    column: int
    message: str
    hint: str | None = None
    claim: str | None = None
    knob: str | None = None

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.rule, self.message)


@dataclass(frozen=True)
class CheckResult:
    """One check: one rule applied to one target. It passes when it has no findings."""

    rule: str
    target: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return not self.findings
