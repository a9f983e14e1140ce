"""Run the selected rules over every target of an estate: one CheckResult per check."""

from __future__ import annotations

from .estate import Estate
from .findings import CheckResult
from .rules import Context, Rule


def run(estate: Estate, rules: list[Rule]) -> list[CheckResult]:
    context = Context(estate)
    results: list[CheckResult] = []
    for rule in rules:
        for target, name in _targets(estate, rule.targets):
            findings = rule.check(target, context)
            if findings is None:
                continue  # the rule does not apply to this target
            ordered = tuple(sorted(findings, key=lambda f: f.sort_key()))
            results.append(CheckResult(rule.id, name, ordered))
    return results


def _targets(estate: Estate, kinds: tuple[str, ...]) -> list[tuple[object, str]]:
    found: list[tuple[object, str]] = []
    if "compose" in kinds:
        found += [(c, c.path) for c in estate.composes]
    if "note" in kinds:
        found += [(n, n.path) for n in estate.notes]
    if "claim" in kinds:
        found += [(c, f"{estate.registry.path}#{c.id}") for c in estate.registry.claims]
    return found
