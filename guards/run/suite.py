"""Run the selected rules over every target of an estate -> one :class:`Run`.

Each check is one rule applied to one target, with its own :class:`Context`: a rule reads the
read-only estate and its validated options and returns findings, so checks are independent of
each other and of their order. The runner applies the configured severity, gives every
finding its fingerprint, and waives what the suppressions cover (``guards.run.suppress``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import NamedTuple

from ..errors import GuardsError
from ..findings import CheckResult, Finding, Run, Severity, with_fingerprints
from ..rules import Context, Rule, select
from ..rules.options import RuleOptions
from ..sources.compose.compose import Compose
from ..sources.directives import RuleNames
from . import parallel, stacks
from .estate import Estate
from .suppress import rule_names, waive


def run(
    estate: Estate,
    rules: list[Rule],
    settings: Mapping[str, RuleOptions] | None = None,
    today: date | None = None,
    workers: int = 1,
    selected: Sequence[str] = (),
) -> Run:
    """Every check of ``rules``; then the suppressions waive what they cover, and the rules
    that judge the suppressions run last, on what the others found, in this process (0.07 s at
    1,000 composes and 1,000 notes: less than forking for them). The other checks are split
    among ``workers`` processes (``guards.run.parallel``).
    ``selected`` is what the user asked for by ``--select`` or ``select`` (for a warning when
    it asks for the header rules of an estate that declares no header convention)."""
    settings = settings or {}
    today = today or date.today()
    remarks = list(estate.remarks)
    rules = _header_rules(estate, rules, selected, remarks)
    ran = frozenset(rule.id for rule in rules)
    common = Common(estate, settings, today, ran, rule_names())
    first = [rule for rule in rules if not rule.after_others]
    with parallel.collector_settled():
        if workers > 1:
            estate.prepare()  # once, before the workers inherit the estate
            parallel.settle()  # what it built too
        checked = _checks(common, first, (), remarks, workers)
        results = waive(checked, estate, today, common.rule_names)
        last = [rule for rule in rules if rule.after_others]
        judged = _checks(common, last, tuple(results), remarks, 1)  # they read results: quick
        results += waive(judged, estate, today, common.rule_names)
    return Run(
        tuple(results),
        tuple(estate.errors),
        tuple(r.id for r in rules),
        estate.files,
        tuple(remarks),
        frozenset(_checked(estate)),
        rules_url=estate.config.rules_url,
        warnings=tuple(estate.warnings),
    )


class Common(NamedTuple):
    """What every check of a run shares."""

    estate: Estate
    settings: Mapping[str, RuleOptions]
    today: date
    ran: frozenset[str]
    rule_names: RuleNames  # what directives may name


def _checked(estate: Estate) -> list[str]:
    paths = [c.path for c in estate.composes] + [n.path for n in estate.notes]
    paths += [m.path for m in estate.modelfiles]
    return paths + ([estate.registry.path] if estate.registry.claims else [])


def _checks(
    common: Common,
    rules: list[Rule],
    earlier: tuple[CheckResult, ...],
    remarks: list[str],
    workers: int,
) -> list[CheckResult]:
    jobs = [(rule, *target) for rule in rules for target in _targets(common.estate, rule.targets)]
    check = functools.partial(_check, common, earlier)
    results: list[CheckResult] = []
    for result, said in parallel.ordered_map(check, jobs, workers):
        remarks += said
        if result is not None:
            results.append(result)
    return stacks.once(results, common.estate.alternatives)  # the base's findings once


def _check(
    common: Common,
    earlier: tuple[CheckResult, ...],
    job: tuple[Rule, object, str, list[str] | None],
) -> tuple[CheckResult | None, tuple[str, ...]]:
    """One rule on one target, and its remarks; no result when the settings skip the target
    or the rule does not apply to it (None, and nothing marked not judged)."""
    rule, target, name, lines = job
    estate = common.estate
    treatment = _treatment(estate, target)
    if treatment == "skip":
        return None, ()
    context = Context(
        estate,
        common.settings,
        today=common.today,
        earlier=earlier,
        ran=common.ran,
        rule_names=common.rule_names,
    )
    findings = rule.check(target, context)
    remarks, undecided = tuple(context.remarks), tuple(context.undecided)
    if findings is None and not undecided:
        return None, remarks
    ordered = sorted(findings or (), key=Finding.sort_key)
    severity = common.settings[rule.id].severity if rule.id in common.settings else None
    if treatment == "warning":
        ordered = [replace(f, severity=Severity.WARNING) for f in ordered]
    elif severity is not None:
        ordered = [replace(f, severity=severity) for f in ordered]
    fingerprinted = tuple(_fingerprinted(ordered, target, lines))
    return CheckResult(rule.id, name, fingerprinted, remarks, not_judged=undecided), remarks


def _fingerprinted(
    findings: list[Finding], target: object, lines: list[str] | None
) -> list[Finding]:
    """``findings`` with fingerprints, each from the lines of the file it is in: a compose's
    finding may be in another file of its stack (a value an overlay wrote)."""
    if not isinstance(target, Compose) or all(f.path == target.path for f in findings):
        return with_fingerprints(findings, lines)
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    done = {
        id(old): new
        for path, group in by_path.items()
        for old, new in zip(group, with_fingerprints(group, target.lines_of(path)), strict=True)
    }
    return [done[id(f)] for f in findings]


def _treatment(estate: Estate, target: object) -> str:
    """``by-status``: what the settings say to do with a compose of its Status."""
    if not estate.config.by_status or not isinstance(target, Compose):
        return "check"
    return estate.config.by_status.get(target.header.status() or "", "check")


def _header_rules(
    estate: Estate, rules: list[Rule], selected: Sequence[str], remarks: list[str]
) -> list[Rule]:
    """``rules`` without the header rules (the schema family) when the estate declares no
    header convention: there is no block to check, so they neither run nor pass. Said once
    under ``--verbose``, and always when the selection asks for them."""
    header = [rule for rule in rules if rule.family == "schema"]
    if estate.config.header is not None or not header:
        return rules
    ids = f"{header[0].id}-{header[-1].id}" if len(header) > 1 else header[0].id
    turn_on = 'set header.marker (or header.preset = "profile") to turn them on'
    remarks.append(
        f"no header convention in the settings: header rules ({ids}) are off -- {turn_on}"
    )
    for selector in selected:
        if any(rule in header for rule in _picked(rules, selector)):
            estate.warnings.append(
                f"`{selector}` selects header rules, but the settings declare no header "
                f"convention; they are off -- {turn_on}"
            )
    return [rule for rule in rules if rule not in header]


def _picked(rules: list[Rule], selector: str) -> list[Rule]:
    try:
        return select(rules, [selector], [])
    except GuardsError:  # it picks none of these (an --ignore took them)
        return []


def _targets(estate: Estate, kinds: tuple[str, ...]) -> list[tuple[object, str, list[str] | None]]:
    found: list[tuple[object, str, list[str] | None]] = []
    if "compose" in kinds:
        found += [(c, c.path, c.lines) for c in estate.composes]
        found += [(c, name, c.lines) for name, c in estate.alternatives.items()]
    if "note" in kinds:
        found += [(n, n.path, n.lines) for n in estate.notes]
    if "modelfile" in kinds:
        found += [(m, m.path, m.lines) for m in estate.modelfiles]
    if "claim" in kinds:
        found += [(c, f"{estate.registry.path}#{c.id}", None) for c in estate.registry.claims]
    config = estate.config
    if "config" in kinds and config.source is not None:
        found.append((config, config.source, config.source_text.split("\n")))
    return found
