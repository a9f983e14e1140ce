"""Findings, the per-check results, and the one run object every reporter renders."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .errors import GuardsError
    from .run.baseline import BaselineEntry


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Waiver(NamedTuple):
    """Why a finding is not reported: an inline suppression, a per-path ignore in the config,
    or an entry of the baseline."""

    kind: str  # "inline" | "config" | "baseline"
    reason: str
    path: str  # the file holding the directive, the config or the baseline
    line: int | None = None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


class Replacement(NamedTuple):
    """Part of a fix: the text from ``line``:``column`` up to ``end_line``:``end_column``
    (1-based, in characters, the end not included) replaced with ``text``."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


class Fix(NamedTuple):
    """What ``guards check --fix`` does about a finding: said in ``message``, made of
    ``replacements`` in the text the finding was found in. Every fix guards offers is safe
    (it keeps what a person wrote and the YAML data); the others are left, with the edit."""

    message: str
    replacements: tuple[Replacement, ...]
    applicability: str = "safe"


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
    # a write command (guards fix, guards regen, check --fix) repairs findings of this kind:
    # set by the rule that makes it (whether this one gets a fix is the fix's own to say)
    fixable: bool = False
    # the fix `check` found for it (not part of what the finding is; kept by the cache)
    fix: Fix | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.end_line:
            object.__setattr__(self, "end_line", self.line)
        if not self.end_column:
            object.__setattr__(self, "end_column", self.column)

    def as_fixable(self) -> Finding:
        """This finding, marked as one a write command repairs (``fixable``)."""
        return replace(self, fixable=True)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.rule, self.message)

    @property
    def end_known(self) -> bool:
        """Whether the rule said where the text the finding is about ends: an end column
        that is not the start column (one left unset is the start column, standing for none)."""
        return self.end_column != self.column


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


class CheckResult(NamedTuple):
    """One check: one rule applied to one target. It fails when it has an error finding;
    waived findings (suppressed or in the baseline) are kept apart and do not count. Without
    one, it passes unless the rule said it could not decide (``not_judged``): a check that
    cannot judge neither passes nor fails, and says why."""

    rule: str
    target: str
    findings: tuple[Finding, ...] = ()
    remarks: tuple[str, ...] = ()  # what the rule could not check, for --verbose
    waived: tuple[Finding, ...] = ()
    not_judged: tuple[str, ...] = ()  # why the rule could not decide, when it could not

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
        return self._replace(findings=tuple(kept), waived=tuple(waived))

    @property
    def failed(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def judged(self) -> bool:
        """Whether the check decided: a failure is certain even where a part was undecided."""
        return self.failed or not self.not_judged

    @property
    def passed(self) -> bool:
        return self.judged and not self.failed


class Summary(NamedTuple):
    passed: int
    failed: int
    files: int
    findings: int
    warnings: int
    suppressed: int = 0
    baselined: int = 0
    not_judged: int = 0  # checks that could neither pass nor fail
    fixable: int = 0  # findings a fix exists for (``guards check --fix``)


class Run(NamedTuple):
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
    warnings: tuple[str, ...] = ()  # settings that select nothing where others do: shown always

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.results for f in r.findings), key=Finding.sort_key)

    @property
    def waived(self) -> list[Finding]:
        return sorted((f for r in self.results for f in r.waived), key=Finding.sort_key)

    @property
    def summary(self) -> Summary:
        failed = sum(1 for r in self.results if r.failed)
        undecided = sum(1 for r in self.results if not r.judged)
        found = self.findings
        warnings = sum(1 for f in found if f.severity is not Severity.ERROR)
        kinds = [f.waiver.kind for f in self.waived if f.waiver]
        baselined = kinds.count("baseline")
        return Summary(
            len(self.results) - failed - undecided,
            failed,
            self.files,
            len(found),
            warnings,
            suppressed=len(kinds) - baselined,
            baselined=baselined,
            not_judged=undecided,
            fixable=sum(1 for f in found if f.fix is not None),
        )

    def with_fixes(self, fixes: Mapping[Finding, Fix]) -> Run:
        """This run with each finding that ``fixes`` holds carrying its fix."""
        if not fixes:
            return self

        def fixed(result: CheckResult) -> CheckResult:
            if not any(f in fixes for f in result.findings):
                return result
            found = tuple(replace(f, fix=fixes[f]) if f in fixes else f for f in result.findings)
            return result._replace(findings=found)

        return self._replace(results=tuple(fixed(r) for r in self.results))

    @property
    def exit_code(self) -> int:
        """2 when coverage was partial, 1 when a check failed (or, with a strict baseline, an
        entry of it is stale), else 0."""
        if self.errors:
            return 2
        if self.strict_baseline and self.stale:
            return 1
        return 1 if any(r.failed for r in self.results) else 0


# -- a run as JSON values (how the run cache keeps one) -------------------------------------


def to_json(run: Run) -> dict[str, object]:
    """``run`` as JSON values (dicts, lists, strings, numbers, None) that :func:`from_json`
    turns back into an equal run. Only a run as the suite makes it: one with input errors or
    compared with a baseline is never kept, so those have no JSON form."""
    if run.errors or run.baseline is not None or run.stale or run.strict_baseline:
        raise ValueError("a run with input errors or a baseline is not kept")
    return {
        "results": _results_json(run.results),
        "rules": list(run.rules),
        "files": run.files,
        "remarks": list(run.remarks),
        "checked": sorted(run.checked),
        "rules_url": run.rules_url,
        "warnings": list(run.warnings),
    }


def _results_json(results: tuple[CheckResult, ...]) -> dict[str, object]:
    """The check results as columns: each result's rule and target an index into the names
    (every rule checks every target), and what the few with findings, remarks or reasons
    they could not decide hold, by position. A kept run of 1,000 composes is 0.3 MB this way (2.6 MB with an object per
    result), and parses seven times as fast."""
    rules = list(dict.fromkeys(r.rule for r in results))
    targets = list(dict.fromkeys(r.target for r in results))
    rule_index = {name: number for number, name in enumerate(rules)}
    target_index = {name: number for number, name in enumerate(targets)}
    return {
        "rule_names": rules,
        "target_names": targets,
        "rule": [rule_index[r.rule] for r in results],
        "target": [target_index[r.target] for r in results],
        "details": [
            [
                position,
                [_finding_json(f) for f in r.findings],
                list(r.remarks),
                [_finding_json(f) for f in r.waived],
                list(r.not_judged),
            ]
            for position, r in enumerate(results)
            if r.findings or r.remarks or r.waived or r.not_judged
        ],
    }


def finding_fields(f: Finding) -> dict[str, object]:
    """A finding's fields as plain data, in the order every JSON document gives them (the
    JSON report and the run cache; each adds its waiver in its own form)."""
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "end_line": f.end_line,
        "end_column": f.end_column,
        "message": f.message,
        "hint": f.hint,
        "claim": f.claim,
        "knob": f.knob,
        "fingerprint": f.fingerprint,
        "env": f.env,
    }


def _finding_json(f: Finding) -> dict[str, object]:
    waiver = f.waiver and [f.waiver.kind, f.waiver.reason, f.waiver.path, f.waiver.line]
    return {**finding_fields(f), "waiver": waiver, "fixable": f.fixable, "fix": _fix_json(f.fix)}


def _fix_json(fix: Fix | None) -> list[object] | None:
    """A fix as ``[message, applicability, [[line, column, end_line, end_column, text], ...]]``."""
    if fix is None:
        return None
    parts = [[r.line, r.column, r.end_line, r.end_column, r.text] for r in fix.replacements]
    return [fix.message, fix.applicability, parts]


RUN_KEYS = frozenset(("results", "rules", "files", "remarks", "checked", "rules_url", "warnings"))
RESULTS_KEYS = frozenset(("rule_names", "target_names", "rule", "target", "details"))
FINDING_KEYS = frozenset(
    (
        "rule",
        "severity",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "message",
        "hint",
        "claim",
        "knob",
        "fingerprint",
        "env",
        "waiver",
        "fixable",
        "fix",
    )
)
WAIVER_KINDS = ("inline", "config", "baseline")


def from_json(data: object) -> Run:
    """The run :func:`to_json` gave ``data`` for. Every field's type is checked and every
    object built explicitly, since the data comes from a file: anything else is ValueError."""
    run = _fields(data, RUN_KEYS)
    return Run(
        _results(run["results"]),
        (),
        _texts(run["rules"]),
        _number(run["files"]),
        _texts(run["remarks"]),
        frozenset(_texts(run["checked"])),
        rules_url=_optional(run["rules_url"]),
        warnings=_texts(run["warnings"]),
    )


def _results(data: object) -> tuple[CheckResult, ...]:
    columns = _fields(data, RESULTS_KEYS)
    rules, targets = _texts(columns["rule_names"]), _texts(columns["target_names"])
    rule, target = _indexes(columns["rule"], rules), _indexes(columns["target"], targets)
    if len(rule) != len(target):
        raise ValueError("columns of different lengths")
    details = _details(columns["details"], len(rule))
    return tuple(
        CheckResult(rules[r], targets[t], *details[n])
        if n in details
        else CheckResult(rules[r], targets[t])
        for n, (r, t) in enumerate(zip(rule, target, strict=True))
    )


def _indexes(data: object, names: tuple[str, ...]) -> list[int]:
    """A list of indexes into ``names`` (checked at once: there is one per check)."""
    found = _list(data)
    if found and (set(map(type, found)) != {int} or min(found) < 0 or max(found) >= len(names)):
        raise ValueError("not indexes of names")
    return found


Details = tuple[tuple[Finding, ...], tuple[str, ...], tuple[Finding, ...], tuple[str, ...]]


def _details(data: object, size: int) -> dict[int, Details]:
    """The findings, remarks, waived findings and reasons not judged of the results that have
    any, by position (in order, each below ``size``)."""
    details: dict[int, Details] = {}
    last = -1
    for item in _list(data):
        if type(item) is not list or len(item) != 5:
            raise ValueError("not the details of a check result")
        position, findings, remarks, waived, undecided = item
        if type(position) is not int or not last < position < size:
            raise ValueError("not the position of a check result")
        last = position
        details[position] = (
            tuple(_finding(f) for f in _list(findings)),
            _texts(remarks),
            tuple(_finding(f) for f in _list(waived)),
            _texts(undecided),
        )
    return details


def _finding(data: object) -> Finding:
    f = _fields(data, FINDING_KEYS)
    waiver = f["waiver"]
    return Finding(
        rule=_text(f["rule"]),
        severity=Severity(_text(f["severity"])),
        path=_text(f["path"]),
        line=_number(f["line"]),
        column=_number(f["column"]),
        end_line=_number(f["end_line"]),
        end_column=_number(f["end_column"]),
        message=_text(f["message"]),
        hint=_optional(f["hint"]),
        claim=_optional(f["claim"]),
        knob=_optional(f["knob"]),
        fingerprint=_text(f["fingerprint"]),
        env=_optional(f["env"]),
        waiver=None if waiver is None else _waiver(waiver),
        fixable=_flag(f["fixable"]),
        fix=None if f["fix"] is None else _fix(f["fix"]),
    )


def _fix(data: object) -> Fix:
    parts = _list(data)
    if len(parts) != 3 or parts[1] != "safe":
        raise ValueError("not a fix")
    message, applicability, replacements = parts
    return Fix(_text(message), tuple(_replacement(r) for r in _list(replacements)), applicability)


def _replacement(data: object) -> Replacement:
    parts = _list(data)
    if len(parts) != 5:
        raise ValueError("not a replacement")
    line, column, end_line, end_column, text = parts
    return Replacement(
        _number(line), _number(column), _number(end_line), _number(end_column), _text(text)
    )


def _waiver(data: object) -> Waiver:
    parts = _list(data)
    if len(parts) != 4 or parts[0] not in WAIVER_KINDS:
        raise ValueError("not a waiver")
    kind, reason, path, line = parts
    return Waiver(kind, _text(reason), _text(path), None if line is None else _number(line))


def _fields(data: object, keys: frozenset[str]) -> dict:
    if type(data) is not dict or data.keys() != keys:
        raise ValueError(f"not an object of the fields {sorted(keys)}")
    return data


def _list(data: object) -> list:
    if type(data) is not list:
        raise ValueError("not a list")
    return data


def _text(data: object) -> str:
    if type(data) is not str:
        raise ValueError("not a string")
    return data


def _optional(data: object) -> str | None:
    return None if data is None else _text(data)


def _texts(data: object) -> tuple[str, ...]:
    return tuple(_text(item) for item in _list(data))


def _flag(data: object) -> bool:
    if type(data) is not bool:
        raise ValueError("not a boolean")
    return data


def _number(data: object) -> int:
    if type(data) is not int:  # not a bool, not a float
        raise ValueError("not an integer")
    return data
