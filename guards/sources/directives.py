"""Directives: what ``guards:`` comments in composes and notes, and the settings'
``per-path-ignores``, say to waive.

    - --max-num-seqs=64  # guards: ignore[RULE] a cap, not a reservation (#412)
    <!-- guards: ignore[C001] quoted as history until=2027-03-31 -->

Read here, applied by :mod:`guards.run.suppress` and judged by the suppression rules
(X001-X004). Rule names are resolved against ``known`` (id or name -> (id, whether the rule
judges the directives themselves)), which the caller takes from the rule registry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import GuardsError
from .notes.notes import Note
from .patterns import lazy

if TYPE_CHECKING:
    from .compose.compose import Compose
    from .config import Config

RuleNames = Mapping[str, tuple[str, bool]]

COMPOSE_MARK = lazy(r"#[ \t]*guards:")
NOTE_MARK = lazy(r"<!--[ \t]*guards:")
IGNORE = lazy(r"ignore\[([^\]\n]*)\]")
UNTIL = lazy(r"(?<!\S)until=(\S*)")
ISO_DATE = lazy(r"\d{4}-\d{2}-\d{2}")
LEADING = " \t-—–:;,"  # separators people put between the bracket and the reason
USAGE = "write `guards: ignore[RULE] reason`, optionally with `until=YYYY-MM-DD`"


class Directive(NamedTuple):
    """One ``guards:`` comment: the rules it names, its reason, its end date, and what is
    wrong with it (``problem``), if anything."""

    line: int
    column: int
    rules: tuple[str, ...]  # the ids of the rules it names
    reason: str
    until: date | None
    problem: str | None = None
    end_column: int = 0  # just after the directive (its ``-->`` in a note; 0: not known)

    def applies(self, today: date) -> bool:
        return self.problem is None and bool(self.reason) and not self.expired(today)

    def expired(self, today: date) -> bool:
        return self.until is not None and self.until < today


class PathIgnore(NamedTuple):
    """One entry of ``per-path-ignores``: a glob, the rules it waives there, why, until when."""

    pattern: str
    rules: tuple[str, ...]
    reason: str
    until: date | None
    line: int | None


def directives(target: Compose | Note, known: RuleNames) -> list[Directive]:
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
            directive = _directive(text[hit.end() :], (number, hit.start() + 1), markdown, known)
            found.append(directive._replace(end_column=_end(text, hit.end(), markdown)))
    return found


def _end(text: str, start: int, markdown: bool) -> int:
    """Just after a directive that starts on ``text``: its ``-->`` (a note's, on its line),
    else the line's text."""
    close = text.find("-->", start) if markdown else -1
    return close + 4 if close >= 0 else len(text.rstrip()) + 1


def _directive(body: str, where: tuple[int, int], markdown: bool, known: RuleNames) -> Directive:
    line, column = where
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
    rules, unknown = resolve(names, known)
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


def resolve(
    names: Iterable[str], known: RuleNames, inline: bool = True
) -> tuple[tuple[str, ...], str | None]:
    """Rule ids for the names in a directive or per-path ignore, and what is wrong with them:
    an unknown rule, or (inline) a rule that judges the directives themselves."""
    ids = []
    for name in names:
        rule = known.get(name) or known.get(name.upper())
        if rule is None:
            return (), f"unknown rule `{name}` (see `guards rules`)"
        rule_id, judges_directives = rule
        if inline and judges_directives:
            return (), f"{rule_id} judges the directives and cannot be waived by one"
        ids.append(rule_id)
    return tuple(ids), None


def path_ignores(config: Config, known: RuleNames) -> list[PathIgnore]:
    """The config's ``per-path-ignores``, validated: every entry names known rules and gives a
    reason; errors name the config file and line."""
    table = config.per_path_ignores
    if not table:
        return []
    return [_path_ignore(config, pattern, entry, known) for pattern, entry in table.items()]


def _path_ignore(config: Config, pattern: str, entry: Any, known: RuleNames) -> PathIgnore:
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
    rules, unknown = resolve(names, known, inline=False)
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
