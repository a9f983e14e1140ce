"""Run the selected rules over every target of an estate -> one :class:`Run`.

Each check is one rule applied to one target, with its own :class:`Context`: a rule reads the
read-only estate and its validated options and returns findings, so checks are independent of
each other and of their order. The runner applies the configured severity and gives every
finding its fingerprint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from .estate import Estate
from .findings import CheckResult, Finding, Run, with_fingerprints
from .options import RuleOptions
from .rules import Context, Rule


def run(
    estate: Estate, rules: list[Rule], settings: Mapping[str, RuleOptions] | None = None
) -> Run:
    settings = settings or {}
    results: list[CheckResult] = []
    remarks = list(estate.remarks)
    for rule in rules:
        severity = settings[rule.id].severity if rule.id in settings else None
        for target, name, lines in _targets(estate, rule.targets):
            context = Context(estate, settings)
            findings = rule.check(target, context)
            remarks += context.remarks
            if findings is None:
                continue  # the rule does not apply to this target
            ordered = sorted(findings, key=Finding.sort_key)
            if severity is not None:
                ordered = [replace(f, severity=severity) for f in ordered]
            checked = tuple(with_fingerprints(ordered, lines))
            results.append(CheckResult(rule.id, name, checked, tuple(context.remarks)))
    return Run(
        tuple(results),
        tuple(estate.errors),
        tuple(r.id for r in rules),
        estate.files,
        tuple(remarks),
    )


def _targets(estate: Estate, kinds: tuple[str, ...]) -> list[tuple[object, str, list[str] | None]]:
    found: list[tuple[object, str, list[str] | None]] = []
    if "compose" in kinds:
        found += [(c, c.path, c.lines) for c in estate.composes]
    if "note" in kinds:
        found += [(n, n.path, n.lines) for n in estate.notes]
    if "claim" in kinds:
        found += [(c, f"{estate.registry.path}#{c.id}", None) for c in estate.registry.claims]
    return found
