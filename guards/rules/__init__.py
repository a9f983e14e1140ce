"""The guard rules, registered by an explicit list.

Each rule lives in its own module with a stable id, a kebab-case name and a docstring in four
parts - Why / Bad / Finds / Good - that ``guards explain`` prints and the test suite runs
through the rule: the Bad example must print exactly the Finds lines, the Good one nothing.
A check is one rule applied to one target; it passes when it yields no findings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..errors import MAX_PATH, GuardsError, printable
from ..findings import CheckResult, Finding, Severity
from .options import RuleOptions

if TYPE_CHECKING:
    from ..run.estate import Estate

MAX_FINDING = 1000  # characters of a finding's message or hint (they may quote input)
OptionsT = TypeVar("OptionsT", bound=RuleOptions)


@dataclass(frozen=True)
class Rule(Generic[OptionsT]):
    id: str
    name: str
    family: str  # "schema" | "claims" | "knobs" | "drift" | "regen" | "suppressions"
    targets: tuple[str, ...]  # any of "compose", "note", "claim"
    severity: Severity
    summary: str
    check: Callable[[Any, Context], Iterable[Finding] | None]
    doc: str
    options: type[OptionsT] = RuleOptions  # type: ignore[assignment]
    after_others: bool = False  # judges the other rules' results: runs after them

    def at(
        self,
        path: str,
        line: int,
        column: int,
        message: str,
        *,
        hint: str | None = None,
        claim: str | None = None,
        knob: str | None = None,
        end_line: int = 0,
        end_column: int = 0,
    ) -> Finding:
        return Finding(
            rule=self.id,
            severity=self.severity,
            path=path,  # as on disk: a reporter escapes it where it must
            line=line,
            column=column,
            message=printable(message, MAX_FINDING),
            hint=printable(hint, MAX_FINDING) if hint is not None else None,
            claim=printable(claim, MAX_PATH) if claim is not None else None,
            knob=knob,
            end_line=end_line,
            end_column=end_column,
        )


@dataclass(frozen=True)
class Context:
    """What a check may read: the estate, the validated rule options, and a list for remarks.

    Rules never write into the estate; what they could not check goes to ``remarks`` and from
    there into the check's result.
    """

    estate: Estate
    settings: Mapping[str, RuleOptions] = field(default_factory=dict)
    remarks: list[str] = field(default_factory=list)
    today: date = field(default_factory=date.today)  # what `until=` dates are read against
    earlier: tuple[CheckResult, ...] = ()  # the other rules' results, for an after_others rule
    ran: frozenset[str] = frozenset()  # the ids of every rule in the run

    def options(self, rule: Rule[OptionsT]) -> OptionsT:
        found = self.settings.get(rule.id)
        return found if isinstance(found, rule.options) else rule.options()

    def remark(self, rule: Rule, path: str, text: str) -> None:
        """Something a rule could not check, for ``--verbose`` (never a guess)."""
        self.remarks.append(f"{rule.id} {path}: {text}")


def summary(text: str, limit: int = 200) -> str:
    """Whole sentences of ``text`` up to ``limit`` characters (at least one, cut at a clause)."""
    flat = " ".join(text.split())
    sentences = re.split(r"(?<=[.!?])\s+", flat)
    out = sentences[0]
    for sentence in sentences[1:]:
        if len(out) >= limit // 2:
            break
        out += " " + sentence
    if len(out) <= limit:
        return out
    cut = max(out.rfind(mark, 0, limit) for mark in (" — ", "; ", ", "))
    return (out[:cut] if cut > 0 else out[: limit - 1]).rstrip(" ,;—") + "…"


def provenance(knob: Any) -> str:
    """Where an effective value came from, when it is not the compose's own default."""
    if knob.from_env:
        return f" (from {', '.join(knob.from_env)} in the environment)"
    return ""


def all_rules() -> list[Rule]:
    from . import (
        catalog_drift,
        comment_default,
        drafter_depth,
        duplicate_field,
        empty_field,
        evidence_freshness,
        figure_conflict,
        flat_drift,
        gpu_accounting,
        header_drift,
        header_present,
        healthcheck_port,
        max_num_seqs,
        regions,
        registry_drift,
        required_fields,
        retraction_incomplete,
        sibling_drift,
        stale_claim,
        status_enum,
        summary_drift,
        suppressions,
        unknown_claim,
        utilisation_ceiling,
    )

    return [
        header_present.RULE,
        status_enum.RULE,
        required_fields.RULE,
        empty_field.RULE,
        duplicate_field.RULE,
        stale_claim.RULE,
        registry_drift.RULE,
        unknown_claim.RULE,
        retraction_incomplete.RULE,
        evidence_freshness.RULE,
        utilisation_ceiling.RULE,
        max_num_seqs.RULE,
        drafter_depth.RULE,
        gpu_accounting.RULE,
        healthcheck_port.RULE,
        header_drift.RULE,
        comment_default.RULE,
        flat_drift.RULE,
        catalog_drift.RULE,
        summary_drift.RULE,
        sibling_drift.RULE,
        figure_conflict.RULE,
        regions.CURRENT,
        regions.INTACT,
        regions.MARKERS,
        suppressions.UNUSED,
        suppressions.REASON,
        suppressions.INVALID,
        suppressions.EXPIRED,
    ]


def select(rules: list[Rule], chosen: Iterable[str], ignored: Iterable[str]) -> list[Rule]:
    """Rules picked by id, name, id prefix or family (``S00``, ``status-enum``, ``schema``)."""
    chosen, ignored = list(chosen), list(ignored)
    for selector in chosen + ignored:
        if not any(_matches(rule, selector) for rule in rules):
            raise GuardsError(f"unknown rule selector `{selector}` (see `guards rules`)")
    picked = [r for r in rules if not chosen or any(_matches(r, s) for s in chosen)]
    return [r for r in picked if not any(_matches(r, s) for s in ignored)]


def find(rules: list[Rule], selector: str) -> Rule | None:
    return next((r for r in rules if selector in (r.id, r.name)), None)


def _matches(rule: Rule, selector: str) -> bool:
    selector = selector.strip()
    return selector in (rule.name, rule.family) or rule.id.startswith(selector.upper())
