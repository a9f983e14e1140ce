"""The guard rules, registered by an explicit list.

Each rule lives in its own module with a stable id, a kebab-case name and a docstring in four
parts - Why / Bad / Finds / Good - that ``guards explain`` prints and the test suite runs
through the rule: the Bad example must print exactly the Finds lines, the Good one nothing.
A check is one rule applied to one target; it passes when it yields no findings.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module

from ..errors import GuardsError
from .base import Context, Rule, provenance, summary

__all__ = ["Context", "Rule", "all_rules", "find", "provenance", "select", "summary"]


# The rule modules, in the order `guards rules` and the reference list their rules
# (tests/rules/test_rules.py holds it to the modules in this folder).
ORDER = (
    "header_present",
    "status_enum",
    "required_fields",
    "empty_field",
    "duplicate_field",
    "stale_claim",
    "registry_drift",
    "unknown_claim",
    "retraction_incomplete",
    "evidence_freshness",
    "utilisation_ceiling",
    "max_num_seqs",
    "drafter_depth",
    "gpu_accounting",
    "healthcheck_port",
    "unknown_flag",
    "engine_env",
    "healthcheck_ineffective",
    "header_drift",
    "comment_default",
    "flat_drift",
    "catalog_drift",
    "summary_drift",
    "sibling_drift",
    "figure_conflict",
    "statement_drift",
    "env_duplicate",
    "unread_override",
    "dead_path",
    "regions",
    "suppressions",
)


def all_rules() -> list[Rule]:
    """Every rule, in ORDER; a module holds one rule (RULE) or several (RULES)."""
    modules = [import_module(f"{__name__}.{name}") for name in ORDER]
    return [rule for m in modules for rule in getattr(m, "RULES", None) or (m.RULE,)]


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
