"""Findings, the per-check results, and the one run object every reporter renders."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .baseline import BaselineEntry
    from .errors import GuardsError


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Waiver:
    """Why a finding is not reported: an inline suppression, a per-path ignore in the config,
    or an entry of the baseline."""

    kind: str  # "inline" | "config" | "baseline"
    reason: str
    path: str  # the file holding the directive, the config or the baseline
    line: int | None = None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One failing observation: a rule, a place (a span of lines), and what is wrong there."""

    rule: str
    severity: Severity
    path: str
    line: int
    column: int
    message: str
    hint: str | None = None
    claim: str | None = None
    knob: str | None = None
    end_line: int = 0  # 0: the finding's own line
    end_column: int = 0  # 0: the finding's own column (a point)
    fingerprint: str = ""  # set by the runner: survives line shifts (see ``fingerprint``)
    waiver: Waiver | None = None  # why it is not reported, when it is not
    env: str | None = None  # the operator's env file that causes it (``--env-file``)

    def __post_init__(self) -> None:
        if not self.end_line:
            object.__setattr__(self, "end_line", self.line)
        if not self.end_column:
            object.__setattr__(self, "end_column", self.column)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.rule, self.message)


SUBJECT = 2000  # characters of a finding's text that go into its fingerprint


def fingerprint(finding: Finding, subject: str) -> str:
    """A stable id for a finding: rule, path, claim or knob, and the whitespace-folded text it
    is about (``subject``, typically its source lines) - never its line number, so moving a
    block or editing another part of the file does not change it."""
    key = "\0".join((finding.rule, finding.path, finding.claim or finding.knob or "", subject))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def fold(text: str) -> str:
    return " ".join(text[: SUBJECT * 2].lower().split())[:SUBJECT]


def with_fingerprints(findings: list[Finding], lines: list[str] | None) -> list[Finding]:
    """The findings of one check with fingerprints; repeats of one fingerprint are numbered."""
    seen: dict[str, int] = {}
    subjects: dict[tuple[int, int], str] = {}
    out = []
    for finding in findings:
        span = (finding.line, finding.end_line)
        if span not in subjects:
            text = "\n".join(lines[span[0] - 1 : span[1]]) if lines else ""
            subjects[span] = fold(text)
        base = fingerprint(finding, subjects[span] or fold(finding.message))
        seen[base] = seen.get(base, 0) + 1
        tag = base if seen[base] == 1 else f"{base}-{seen[base]}"
        out.append(replace(finding, fingerprint=tag))
    return out


@dataclass(frozen=True)
class CheckResult:
    """One check: one rule applied to one target. It fails when it has an error finding;
    waived findings (suppressed or in the baseline) are kept apart and do not count."""

    rule: str
    target: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    remarks: tuple[str, ...] = ()  # what the rule could not check, for --verbose
    waived: tuple[Finding, ...] = ()

    def waive(self, decide: Callable[[Finding], Waiver | None]) -> CheckResult:
        """This result with the findings ``decide`` gives a waiver moved to ``waived``."""
        kept, waived = [], list(self.waived)
        for finding in self.findings:
            waiver = decide(finding)
            if waiver is None:
                kept.append(finding)
            else:
                waived.append(replace(finding, waiver=waiver))
        if len(kept) == len(self.findings):
            return self
        return replace(self, findings=tuple(kept), waived=tuple(waived))

    @property
    def passed(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)


@dataclass(frozen=True)
class Summary:
    passed: int
    failed: int
    files: int
    findings: int
    warnings: int
    suppressed: int = 0
    baselined: int = 0


@dataclass(frozen=True)
class Run:
    """Everything a run produced: what reporters render and what decides the exit code."""

    results: tuple[CheckResult, ...]
    errors: tuple[GuardsError, ...] = ()  # inputs that could not be read or parsed
    rules: tuple[str, ...] = ()  # ids of the rules that ran
    files: int = 0
    remarks: tuple[str, ...] = ()  # what was loaded and what could not be checked
    checked: frozenset[str] = frozenset()  # the paths of the files that were checked
    rules_url: str | None = None  # where the rules reference is published (`rules-url`)
    baseline: str | None = None  # the baseline file the run was compared with
    stale: tuple[BaselineEntry, ...] = ()  # its entries that no longer match a finding
    strict_baseline: bool = False  # stale entries fail the run

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.results for f in r.findings), key=Finding.sort_key)

    @property
    def waived(self) -> list[Finding]:
        return sorted((f for r in self.results for f in r.waived), key=Finding.sort_key)

    @property
    def summary(self) -> Summary:
        failed = sum(1 for r in self.results if not r.passed)
        found = self.findings
        warnings = sum(1 for f in found if f.severity is not Severity.ERROR)
        kinds = [f.waiver.kind for f in self.waived if f.waiver]
        baselined = kinds.count("baseline")
        return Summary(
            len(self.results) - failed,
            failed,
            self.files,
            len(found),
            warnings,
            suppressed=len(kinds) - baselined,
            baselined=baselined,
        )

    @property
    def exit_code(self) -> int:
        """2 when coverage was partial, 1 when a check failed (or, with a strict baseline, an
        entry of it is stale), else 0."""
        if self.errors:
            return 2
        if self.strict_baseline and self.stale:
            return 1
        return 1 if any(not r.passed for r in self.results) else 0
