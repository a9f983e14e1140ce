"""The guard rules, registered by an explicit list.

Each rule lives in its own module with a stable id, a kebab-case name and a docstring in four
parts - Why / Bad / Finds / Good - that ``guards explain`` prints and the test suite runs
through the rule: the Bad example must print exactly the Finds lines, the Good one nothing.
A check is one rule applied to one target; it passes when it yields no findings.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import GuardsError
from .base import Context, Rule, provenance, summary

__all__ = ["Context", "Rule", "all_rules", "find", "provenance", "select", "summary"]


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
