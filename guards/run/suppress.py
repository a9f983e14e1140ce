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

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from ..errors import GuardsError
from ..findings import CheckResult, Finding, Waiver
from ..sources.compose.compose import Compose
from ..sources.notes.notes import Note

if TYPE_CHECKING:
    from ..sources.config import Config
    from .estate import Estate

COMPOSE_MARK = re.compile(r"#[ \t]*guards:")
NOTE_MARK = re.compile(r"<!--[ \t]*guards:")
IGNORE = re.compile(r"ignore\[([^\]\n]*)\]")
UNTIL = re.compile(r"(?<!\S)until=(\S*)")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
LEADING = " \t-—–:;,"  # separators people put between the bracket and the reason
USAGE = "write `guards: ignore[RULE] reason`, optionally with `until=YYYY-MM-DD`"


@dataclass(frozen=True)
class Directive:
    """One ``guards:`` comment: the rules it names, its reason, its end date, and what is
    wrong with it (``problem``), if anything."""

    line: int
    column: int
    rules: tuple[str, ...]  # the ids of the rules it names
    reason: str
    until: date | None
    problem: str | None = None

    def applies(self, today: date) -> bool:
        return self.problem is None and bool(self.reason) and not self.expired(today)

    def expired(self, today: date) -> bool:
        return self.until is not None and self.until < today


@dataclass(frozen=True)
class PathIgnore:
    """One entry of ``per-path-ignores``: a glob, the rules it waives there, why, until when."""

    pattern: str
    rules: tuple[str, ...]
    reason: str
    until: date | None
    line: int | None


def directives(target: Compose | Note) -> list[Directive]:
    """The ``guards:`` directives in a compose's ``#`` comments or in a note's HTML comments
    (not in its code blocks, where a comment is shown, not made)."""
    markdown = isinstance(target, Note)
    examples = {
        line
        for block in (target.blocks if isinstance(target, Note) else ())
        if block.kind == "code"
        for line in range(block.line, block.end_line + 1)
    }
    mark = NOTE_MARK if markdown else COMPOSE_MARK
    found = []
    for number, text in enumerate(target.lines, 1):
        if "guards:" not in text or number in examples:
            continue
        hit = mark.search(text)
        if hit is not None:
            found.append(_directive(text[hit.end() :], number, hit.start() + 1, markdown))
    return found


def _directive(body: str, line: int, column: int, markdown: bool) -> Directive:
    if markdown:
        end = body.find("-->")
        if end < 0:
            return _malformed(
                line, column, "the `<!-- guards: … -->` comment does not close on its line"
            )
        body = body[:end]
    body = body.strip()
    match = IGNORE.match(body)
    if match is None:
        shown = body.split(maxsplit=1)[0] if body else ""
        return _malformed(line, column, f"`guards: {shown}` is not a directive; {USAGE}")
    names = tuple(n for n in re.split(r"[,\s]+", match.group(1)) if n)
    rest = body[match.end() :]
    until, problem = None, None
    dated = UNTIL.search(rest)
    if dated is not None:
        until = _date(dated.group(1))
        if until is None:
            problem = f"`until={dated.group(1)}` is not a date; write until=YYYY-MM-DD"
        rest = rest[: dated.start()] + rest[dated.end() :]
    reason = " ".join(rest.split()).lstrip(LEADING)
    rules, unknown = resolve(names)
    if not names:
        problem = f"`ignore[]` names no rule; {USAGE}"
    elif unknown:
        problem = unknown
    return Directive(line, column, rules, reason, until, problem)


def _malformed(line: int, column: int, problem: str) -> Directive:
    return Directive(line, column, (), "", None, problem)


def _date(text: str) -> date | None:
    if not ISO_DATE.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def resolve(names: Iterable[str], inline: bool = True) -> tuple[tuple[str, ...], str | None]:
    """Rule ids for the names in a directive or per-path ignore, and what is wrong with them:
    an unknown rule, or (inline) a rule that judges the directives themselves."""
    from ..rules import all_rules

    by_name = {key: rule for rule in all_rules() for key in (rule.id, rule.name)}
    ids = []
    for name in names:
        rule = by_name.get(name) or by_name.get(name.upper())
        if rule is None:
            return (), f"unknown rule `{name}` (see `guards rules`)"
        if inline and rule.after_others:
            return (), f"{rule.id} judges the directives and cannot be waived by one"
        ids.append(rule.id)
    return tuple(ids), None


def waive(results: list[CheckResult], estate: Estate, today: date) -> list[CheckResult]:
    """The results with every finding a directive or per-path ignore covers waived. (No
    directive can name a rule that judges directives, so their findings are waived only by a
    per-path ignore.)"""
    files: dict[str, Compose | Note] = {c.path: c for c in estate.composes}
    files.update({n.path: n for n in estate.notes})
    ignores = path_ignores(estate.config)
    cache: dict[str, dict[int, list[Directive]]] = {}

    def decide(finding: Finding) -> Waiver | None:
        if finding.path in files:
            if finding.path not in cache:
                cache[finding.path] = _by_line(files[finding.path])
            waiver = _inline(finding, cache[finding.path], today)
            if waiver is not None:
                return waiver
        return _by_path(finding, ignores, estate.config, today)

    return [result.waive(decide) for result in results]


def _by_line(target: Compose | Note) -> dict[int, list[Directive]]:
    by_line: dict[int, list[Directive]] = {}
    for directive in directives(target):
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


def path_ignores(config: Config) -> list[PathIgnore]:
    """The config's ``per-path-ignores``, validated: every entry names known rules and gives a
    reason; errors name the config file and line."""
    table = config.per_path_ignores
    if not table:
        return []
    return [_path_ignore(config, pattern, entry) for pattern, entry in table.items()]


def _path_ignore(config: Config, pattern: str, entry: Any) -> PathIgnore:
    line = config.line_of_table("per-path-ignores", pattern)

    def fail(message: str) -> GuardsError:
        return GuardsError(f"per-path-ignores {pattern!r}: {message}", config.source, line)

    if not isinstance(entry, dict):
        raise fail("must be a table with `rules` and `reason`")
    extra = set(entry) - {"rules", "reason", "until"}
    if extra:
        raise fail(f"unknown key `{sorted(extra)[0]}` (known: rules, reason, until)")
    names = entry.get("rules")
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise fail("`rules` must be a non-empty list of rule ids or names")
    rules, unknown = resolve(names, inline=False)
    if unknown:
        raise fail(unknown)
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise fail('a reason is required: `reason = "why these findings are accepted here"`')
    until = entry.get("until")
    if isinstance(until, str):
        until = _date(until) or until
    if until is not None and type(until) is not date:
        raise fail("`until` must be a date, YYYY-MM-DD")
    if pattern.startswith("/") or ".." in pattern.split("/"):
        raise fail("the pattern reaches outside the root; patterns are relative to it")
    return PathIgnore(pattern, rules, " ".join(reason.split()), until, line)
