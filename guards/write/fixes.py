"""What ``guards check`` can repair, computed without writing: the fix of each finding (for
the reports, which mark it fixable), and the plan ``check --fix`` and ``check --diff`` carry
out (every fix of a file applied in memory, in the order ``guards fix`` and then ``guards
regen`` apply them).

Three rules have fixes, each made by the write layer's own function with its checks; a
finding of theirs that a fix repairs says so itself (``Finding.fixable``, set by the rule), so
a run learns which findings may have one without importing this module:

- C002, a citation of a withdrawn claim written as current: marked as withdrawn
  (:func:`guards.write.marks.mark_citations`);
- C001, a stale copy of a withdrawn claim: replaced by a claim region
  (:func:`guards.write.fix.fix_stale_copies`; a copy with hand-written text in it is left);
- G001, a region out of date: rendered again (:func:`guards.facts.regions.regenerate`, which
  refuses a file whose regions were edited by hand, G002).

The plan is made the way ``guards fix`` makes its edits: the citations are marked first, and
the stale copies are then found again in the text as marked (read through
:mod:`guards.sources.files`, nothing written); the regions are rendered last. Writing goes
through the one loop :func:`guards.write.rewrite.rewrite`: under the write lock, and only to a
file that still holds the text the plan was made from.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import GuardsError
from ..findings import Finding, Fix, Replacement
from ..sources.edit import Edit, Source, apply, line_edits, line_starts, read
from .rewrite import Mode, Rewritten, rewrite

# The fixes themselves are imported where they are made: a run whose findings have none (or
# a kept run with none) loads no template engine, YAML reader or claim matcher for them.
if TYPE_CHECKING:
    from ..rules.options import RuleOptions
    from ..run.estate import Estate
    from ..sources.compose.compose import Compose
    from ..sources.notes.notes import Note

# -- the fix of one finding ------------------------------------------------------------------


def with_fixes(estate: Estate, findings: Iterable[Finding]) -> dict[Finding, Fix]:
    """The fix of each of ``findings`` that has one, on the text of the estate's files (each
    file's line ending read once)."""
    found: dict[Finding, Fix] = {}
    endings: dict[str, str] = {}
    for finding in findings:
        fix = fix_for(estate, finding, endings)
        if fix is not None:
            found[finding] = fix
    return found


def fix_for(estate: Estate, finding: Finding, endings: dict[str, str] | None = None) -> Fix | None:
    """The fix of ``finding`` alone, in the text it was found in; None when there is none: a
    rule without fixes, a copy or citation ``guards fix`` would leave, a file ``guards regen``
    refuses. Only a finding its rule marked ``fixable`` has one. Its inserted lines end as the
    file's lines do (``endings``: each file's line ending, by path, as far as known)."""
    target = _target(estate, finding.path)
    if target is None or not finding.fixable:
        return None
    known = {} if endings is None else endings
    try:
        if finding.rule == "C001":
            fix = _copy_fix(estate, target, finding)
        elif finding.rule == "C002":
            fix = _citation_fix(estate, target, finding)
        else:
            fix = _region_fix(estate, finding)
        if fix is not None and target.path not in known:
            known[target.path] = _source(estate, target).newline
    except GuardsError:  # refused (it would change the YAML data; the file is gone): none
        return None
    return None if fix is None else _ending(fix, known[target.path])


def _ending(fix: Fix, newline: str) -> Fix:
    """``fix`` with its inserted lines ending in ``newline`` (a file of CRLF lines gets CRLF
    lines, as ``check --fix`` writes them)."""
    if newline == "\n":
        return fix
    parts = tuple(r._replace(text=r.text.replace("\n", newline)) for r in fix.replacements)
    return fix._replace(replacements=parts)


def _copy_fix(estate: Estate, target: Compose | Note, finding: Finding) -> Fix | None:
    from .fix import fix_stale_copies

    note = _is_note(target)
    fixed = fix_stale_copies(
        target.text,
        target.path,
        [finding],
        estate.registry,
        estate.config.templates_path,
        estate.root,
        note,
    )
    if finding not in fixed.replaced:
        return None
    # The copy's own edit: the other regions of the file are rendered too, and left to G001.
    starts = [*line_starts(target.text), len(target.text)]
    start = starts[finding.line - 1]
    end = starts[min(max(finding.end_line, finding.line), len(starts) - 1)]
    mine = [e for e in fixed.edits if e.start < end and e.end >= start]
    message = f"replace the stale copy of {finding.claim} with a guards:claim region"
    return _fix(message, target.text, mine)


def _citation_fix(estate: Estate, target: Compose | Note, finding: Finding) -> Fix | None:
    from .marks import mark_citations

    where = (finding.line, finding.column)
    citations = [c for c in target.citations if (c.line, c.column) == where]
    marked = mark_citations(target, target.text, citations, estate.registry)
    if not marked.marked:
        return None
    message = f"cite claim:{citations[0].claim_id} as withdrawn"
    return _fix(message, target.text, marked.edits)


def _region_fix(estate: Estate, finding: Finding) -> Fix | None:
    from ..facts.regions import regenerate

    target = next((c for c in estate.composes if c.path == finding.path), None)
    if target is None:  # a note has no regions
        return None
    region = next((r for r in target.regions if r.line == finding.line), None)
    if region is None:
        return None
    edits = regenerate(
        target.text,
        target.path,
        estate.registry,
        estate.config.templates_path,
        estate.root,
        force=False,
    )
    mine = [e for e in edits if e.start == region.body_start]
    if not mine:
        return None
    return _fix(f"render region guards:{region.name} from its template", target.text, mine)


def _fix(message: str, text: str, edits: list[Edit]) -> Fix:
    return Fix(message, tuple(replacement(text, e) for e in sorted(edits)))


def replacement(text: str, edit: Edit) -> Replacement:
    """``edit`` (offsets in ``text``) as lines and 1-based columns."""

    starts = line_starts(text)

    def place(offset: int) -> tuple[int, int]:
        line = text.count("\n", 0, offset)  # 0-based
        return line + 1, offset - starts[line] + 1

    line, column = place(edit.start)
    end_line, end_column = place(edit.end)
    return Replacement(line, column, end_line, end_column, edit.new)


def _source(estate: Estate, target: Compose | Note) -> Source:
    """The file ``target`` was read from, as it is now (what a fix would be applied to)."""
    return read(estate.root / target.path, target.path, estate.config.max_bytes)


def _is_note(target: Compose | Note) -> bool:
    from ..sources.notes.notes import Note

    return isinstance(target, Note)


def _target(estate: Estate, path: str) -> Compose | Note | None:
    for compose in estate.composes:
        if compose.path == path:
            return compose
    return next((note for note in estate.notes if note.path == path), None)


# -- the plan: every fix of every file, in memory ----------------------------------------------


@dataclass
class Plan:
    """Each file's text as checked and with its fixes (by shown path), and the findings
    those fixes repair, each with what its fix does."""

    texts: dict[str, tuple[str, str]] = field(default_factory=dict)
    fixed: dict[Finding, str] = field(default_factory=dict)
    refused: list[GuardsError] = field(default_factory=list)  # why a file's fix was not made

    @property
    def changed(self) -> dict[str, tuple[str, str]]:
        return {path: pair for path, pair in self.texts.items() if pair[0] != pair[1]}

    def now(self, target: Compose | Note) -> str:
        return self.texts.get(target.path, (target.text, target.text))[1]

    def put(self, target: Compose | Note, text: str) -> None:
        self.texts[target.path] = (self.texts.get(target.path, (target.text, ""))[0], text)


def plan(
    estate: Estate,
    reported: list[Finding],
    options: Mapping[str, RuleOptions] | None = None,
    today: dt.date | None = None,
) -> Plan:
    """Every fix of ``reported`` (the findings a run of ``estate`` reports, with the rule
    ``options`` it ran with) applied in memory: citations marked, then stale copies replaced
    (found again where the marks changed a file), then regions rendered. A fix that is
    refused leaves its file as the earlier steps left it, and says why in ``refused``."""
    done = Plan()
    by_rule: dict[str, list[Finding]] = {}
    for finding in reported:
        if finding.fixable:
            by_rule.setdefault(finding.rule, []).append(finding)
    moved = _mark(estate, by_rule.get("C002", []), done)
    again = _found_again(estate, by_rule.get("C001", []), moved, done, options, today)
    _replace_copies(estate, again, done)
    _render_regions(estate, by_rule.get("G001", []), done)
    return done


def _by_target(estate: Estate, findings: list[Finding]) -> list[tuple[Any, list[Finding]]]:
    """``findings`` by the file they are in (each real file once: a link and its target, or a
    path named twice, would be edited twice)."""
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.path, []).append(finding)
    seen: set[str] = set()
    found = []
    for path, group in grouped.items():
        target = _target(estate, path)
        real = os.path.realpath(estate.root / path)
        if target is not None and real not in seen:
            seen.add(real)
            found.append((target, group))
    return found


def _mark(estate: Estate, cited: list[Finding], done: Plan) -> dict[str, list[Edit]]:
    """Step 1 (C002): the citations marked; the edits of each file marked, by path."""
    from .marks import mark_citations

    moved: dict[str, list[Edit]] = {}
    for target, findings in _by_target(estate, cited):
        where = {(f.line, f.column): f for f in findings}
        citations = [c for c in target.citations if (c.line, c.column) in where]
        try:
            marked = mark_citations(target, target.text, citations, estate.registry)
        except GuardsError as exc:
            done.refused.append(exc)
            continue
        if not marked.edits:
            continue
        done.put(target, apply(target.text, marked.edits))
        moved[target.path] = marked.edits
        for citation in marked.marked:
            finding = where[(citation.line, citation.column)]
            done.fixed[finding] = f"cite claim:{citation.claim_id} as withdrawn"
    return moved


def _found_again(
    estate: Estate,
    copies: list[Finding],
    moved: dict[str, list[Edit]],
    done: Plan,
    options: Mapping[str, RuleOptions] | None,
    today: dt.date | None,
) -> list[tuple[Finding, Finding]]:
    """The stale copies, those in the files step 1 changed found again in the text as marked
    (their lines may have moved): each as found now, beside the finding reported."""
    kept = [(c, c) for c in copies if c.path not in moved]
    again = [c for c in copies if c.path in moved]
    if not again:
        return kept
    texts = {path: done.texts[path][1] for path in {c.path for c in again}}
    now = {(f.path, f.claim, f.line): f for f in _stale_copies(estate, texts, options, today)}
    for copy in again:
        before = done.texts[copy.path][0]
        line = _line_after(before, moved[copy.path], copy.line)
        found = now.get((copy.path, copy.claim, line))
        if found is not None:
            kept.append((found, copy))
    return kept


def _stale_copies(
    estate: Estate,
    texts: Mapping[str, str],
    options: Mapping[str, RuleOptions] | None,
    today: dt.date | None,
) -> list[Finding]:
    """C001 on the files of ``texts`` (shown path -> text), each read as its text there."""
    from ..rules import stale_claim
    from ..run.estate import load_estate
    from ..run.suite import run
    from ..sources import files

    given = {estate.root / path: text.encode("utf-8") for path, text in texts.items()}
    with files.overridden(given):
        again = load_estate(estate.config, list(given))
        return run(again, [stale_claim.RULE], options, today).findings


def _line_after(text: str, edits: list[Edit], line: int) -> int:
    """Where line ``line`` of ``text`` is once ``edits`` are applied."""
    start = line_starts(text)[line - 1]
    return line + sum(
        e.new.count("\n") - text.count("\n", e.start, e.end) for e in edits if e.end <= start
    )


def _replace_copies(estate: Estate, copies: list[tuple[Finding, Finding]], done: Plan) -> None:
    """Step 2 (C001): each file's stale copies replaced by claim regions (its regions
    rendered with them, as ``guards fix`` does)."""
    from .fix import fix_stale_copies

    reported = {now: was for now, was in copies}
    for target, found in _by_target(estate, [now for now, _ in copies]):
        try:
            fixed = fix_stale_copies(
                done.now(target),
                target.path,
                found,
                estate.registry,
                estate.config.templates_path,
                estate.root,
                _is_note(target),
            )
        except GuardsError as exc:
            done.refused.append(exc)
            continue
        done.put(target, fixed.text)
        for copy in fixed.replaced:
            message = f"replace the stale copy of {copy.claim} with a guards:claim region"
            done.fixed[reported[copy]] = message


def _render_regions(estate: Estate, stale: list[Finding], done: Plan) -> None:
    """Step 3 (G001): each file's regions rendered again, as ``guards regen`` renders them."""
    from ..facts.regions import regenerate

    for target, found in _by_target(estate, stale):
        if _is_note(target):
            continue
        text = done.now(target)
        try:
            edits = regenerate(
                text,
                target.path,
                estate.registry,
                estate.config.templates_path,
                estate.root,
                force=False,
            )
        except GuardsError as exc:
            done.refused.append(exc)
            continue
        done.put(target, apply(text, edits))
        names = {r.line: r.name for r in target.regions}
        for finding in found:
            done.fixed[finding] = (
                f"render region guards:{names.get(finding.line)} from its template"
            )


def carry_out(
    estate: Estate, planned: Plan, mode: Mode
) -> tuple[list[Rewritten], list[GuardsError]]:
    """Each changed file of ``planned`` rewritten (``mode`` ``write``) or only rendered
    (``diff``), through the one rewrite loop: refused when the file no longer holds the text
    the plan was made from."""
    done: list[Rewritten] = []
    errors: list[GuardsError] = []
    for shown, (before, after) in sorted(planned.changed.items()):
        try:
            done.append(
                rewrite(
                    estate.root / shown,
                    shown,
                    before,
                    _edits_to(after),
                    mode,
                    estate.config.max_bytes,
                )
            )
        except GuardsError as exc:
            errors.append(exc)
    return done, errors


def _edits_to(after: str) -> Callable[[Source], list[Edit]]:
    """The edits that turn a file's text into ``after``, whole lines at a time (so every line
    left as it was keeps its own line ending)."""

    def edits(source: Source) -> list[Edit]:
        return line_edits(source.text, after)

    return edits
