"""Run the selected rules over every target of an estate -> one :class:`Run`.

Each check is one rule applied to one target, with its own :class:`Context`: a rule reads the
read-only estate and its validated options and returns findings, so checks are independent of
each other and of their order. The runner applies the configured severity, gives every
finding its fingerprint, and waives what the suppressions cover (``guards.suppress``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date

from .compose import Compose
from .estate import Estate
from .findings import CheckResult, Finding, Run, Severity, with_fingerprints
from .header import status_of
from .options import RuleOptions
from .rules import Context, Rule
from .suppress import waive


def run(
    estate: Estate,
    rules: list[Rule],
    settings: Mapping[str, RuleOptions] | None = None,
    today: date | None = None,
) -> Run:
    """Every check of ``rules``; then the suppressions waive what they cover, and the rules
    that judge the suppressions run last, on what the others found."""
    settings = settings or {}
    today = today or date.today()
    remarks = list(estate.remarks)
    ran = frozenset(rule.id for rule in rules)
    first = [rule for rule in rules if not rule.after_others]
    results = waive(_checks(estate, first, settings, today, (), remarks, ran), estate, today)
    last = [rule for rule in rules if rule.after_others]
    judged = _checks(estate, last, settings, today, tuple(results), remarks, ran)
    results += waive(judged, estate, today)
    return Run(
        tuple(results),
        tuple(estate.errors),
        tuple(r.id for r in rules),
        estate.files,
        tuple(remarks),
        frozenset(_checked(estate)),
        rules_url=estate.config.rules_url,
    )


def _checked(estate: Estate) -> list[str]:
    paths = [c.path for c in estate.composes] + [n.path for n in estate.notes]
    return paths + ([estate.registry.path] if estate.registry.claims else [])


def _checks(
    estate: Estate,
    rules: list[Rule],
    settings: Mapping[str, RuleOptions],
    today: date,
    earlier: tuple[CheckResult, ...],
    remarks: list[str],
    ran: frozenset[str],
) -> list[CheckResult]:
    results: list[CheckResult] = []
    for rule in rules:
        severity = settings[rule.id].severity if rule.id in settings else None
        for target, name, lines in _targets(estate, rule.targets):
            treatment = _treatment(estate, target)
            if treatment == "skip":
                continue
            context = Context(estate, settings, today=today, earlier=earlier, ran=ran)
            findings = rule.check(target, context)
            remarks += context.remarks
            if findings is None:
                continue  # the rule does not apply to this target
            ordered = sorted(findings, key=Finding.sort_key)
            if treatment == "warning":
                ordered = [replace(f, severity=Severity.WARNING) for f in ordered]
            elif severity is not None:
                ordered = [replace(f, severity=severity) for f in ordered]
            checked = tuple(with_fingerprints(ordered, lines))
            results.append(CheckResult(rule.id, name, checked, tuple(context.remarks)))
    return results


def _treatment(estate: Estate, target: object) -> str:
    """``by-status``: what the settings say to do with a compose of its Status."""
    if not estate.config.by_status or not isinstance(target, Compose):
        return "check"
    field = target.header.field("Status")
    status = status_of(field.first_value) if field else None
    return estate.config.by_status.get(status or "", "check")


def _targets(estate: Estate, kinds: tuple[str, ...]) -> list[tuple[object, str, list[str] | None]]:
    found: list[tuple[object, str, list[str] | None]] = []
    if "compose" in kinds:
        found += [(c, c.path, c.lines) for c in estate.composes]
    if "note" in kinds:
        found += [(n, n.path, n.lines) for n in estate.notes]
    if "claim" in kinds:
        found += [(c, f"{estate.registry.path}#{c.id}", None) for c in estate.registry.claims]
    config = estate.config
    if "config" in kinds and config.source is not None:
        found.append((config, config.source, config.source_text.split("\n")))
    return found
