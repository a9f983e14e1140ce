"""Suppressions: inline directives in composes and notes, and per-path ignores in the config.

    - --max-num-seqs=64  # guards: ignore[K002] a cap, not a reservation (#412)
    <!-- guards: ignore[C001] quoted as history until=2027-03-31 -->

A directive on a finding's line or on the line above waives that finding when it names the
finding's rule (by id or name), gives a reason, and its ``until=YYYY-MM-DD`` (if any) has not
passed. A directive that does not is not applied, and the suppression rules (X001-X004) report
it. Composes take directives in ``#`` comments, notes in ``<!-- -->`` comments.

A ``per-path-ignores`` table in the config waives a rule's findings in every file its glob
matches, also only with a reason and until its date.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from ..findings import CheckResult, Finding, Waiver
from ..sources.compose.compose import Compose
from ..sources.directives import Directive, PathIgnore, RuleNames, directives, path_ignores
from ..sources.notes.notes import Note

if TYPE_CHECKING:
    from ..sources.config import Config
    from .estate import Estate


def rule_names() -> RuleNames:
    """Every rule by id and by name: its id, and whether it judges the directives."""
    from ..rules import all_rules

    return {
        key: (rule.id, rule.after_others) for rule in all_rules() for key in (rule.id, rule.name)
    }


def waive(
    results: list[CheckResult], estate: Estate, today: date, known: RuleNames
) -> list[CheckResult]:
    """The results with every finding a directive or per-path ignore covers waived; ``known``
    is :func:`rule_names`, built once per run. (No directive can name a rule that judges
    directives, so their findings are waived only by a per-path ignore.)"""
    files: dict[str, Compose | Note] = {c.path: c for c in estate.composes}
    files.update({n.path: n for n in estate.notes})
    ignores = path_ignores(estate.config, known)
    cache: dict[str, dict[int, list[Directive]]] = {}

    def decide(finding: Finding) -> Waiver | None:
        if finding.path in files:
            if finding.path not in cache:
                cache[finding.path] = _by_line(files[finding.path], known)
            waiver = _inline(finding, cache[finding.path], today)
            if waiver is not None:
                return waiver
        return _by_path(finding, ignores, estate.config, today)

    return [result.waive(decide) for result in results]


def _by_line(target: Compose | Note, known: RuleNames) -> dict[int, list[Directive]]:
    by_line: dict[int, list[Directive]] = {}
    for directive in directives(target, known):
        by_line.setdefault(directive.line, []).append(directive)
    return by_line


def _inline(finding: Finding, by_line: dict[int, list[Directive]], today: date) -> Waiver | None:
    for line in (finding.line, finding.line - 1):
        for directive in by_line.get(line, ()):
            if finding.rule in directive.rules and directive.applies(today):
                return Waiver("inline", directive.reason, finding.path, directive.line)
    return None


def _by_path(
    finding: Finding, ignores: list[PathIgnore], config: Config, today: date
) -> Waiver | None:
    from ..sources.patterns import glob_match

    for entry in ignores:
        expired = entry.until is not None and entry.until < today
        if finding.rule in entry.rules and not expired and glob_match(finding.path, entry.pattern):
            return Waiver("config", entry.reason, str(config.source), entry.line)
    return None
