"""``guards regen`` and ``guards fix`` (with ``--adopt-profile``): the commands that rewrite
composes, each file through the one loop of :func:`guards.write.rewrite.rewrite`."""

from pathlib import Path

import typer

from ..errors import GuardsError
from .common import (
    echo,
    echo_error,
    estate_root,
    load,
    load_settings,
)
from .options import CONFIG_OPTION, ROOT_OPTION, paths_argument

CHECK_ONLY = typer.Option(
    False, "--check", help="Write nothing; print a diff and exit 1 if anything would change."
)
DIFF = typer.Option(False, "--diff", help="Print the changes as a diff; write nothing.")
REGEN_FORCE = typer.Option(False, "--force", help="Overwrite regions edited by hand.")
ADOPT = typer.Option(
    False,
    "--adopt-profile",
    help="Instead: turn each hand-written profile block into a profile region.",
)
ADOPT_FORCE = typer.Option(
    False, "--force", help="With --adopt-profile: adopt blocks the template re-lays out."
)


def regen(
    paths: list[Path] | None = paths_argument("regenerate"),
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
    check_only: bool = CHECK_ONLY,
    diff: bool = DIFF,
    force: bool = REGEN_FORCE,
) -> None:
    """Rewrite every generated region (# >>> guards:NAME ... # <<< guards:NAME) from its
    template."""
    root = estate_root(root, config, paths)
    from ..facts.regions import regenerate, unified_diff
    from ..write.rewrite import Mode, rewrite

    settings = load_settings(root, config)
    estate = load(settings, paths)
    mode: Mode = "check" if check_only else "diff" if diff else "write"
    failed = bool(estate.errors)
    changed = 0

    def edits(source):
        nonlocal changed
        templates = estate.config.templates_path  # may refuse the folder: an error per file
        found = regenerate(
            source.text, source.shown, estate.registry, templates, estate.root, force
        )
        changed += source.render(found) != source.raw  # counted before the write is tried
        return found

    for compose in estate.composes:
        if not compose.regions and not compose.marker_problems:
            continue
        path = estate.root / compose.path
        try:
            done = rewrite(path, compose.path, None, edits, mode, settings.max_bytes)
        except GuardsError as exc:
            echo_error(exc)
            failed = True
            continue
        if done.changed and mode == "write":
            echo(f"regenerated {compose.path}")
        elif done.changed:
            echo(unified_diff(compose.path, done.source.raw, done.after), nl=False)
    verb = "would change" if check_only or diff else "regenerated"
    echo(f"guards regen: {changed} file{'s' if changed != 1 else ''} {verb}")
    raise typer.Exit(2 if failed else 1 if check_only and changed else 0)


def fix(
    paths: list[Path] | None = paths_argument("fix"),
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
    diff: bool = DIFF,
    adopt: bool = ADOPT,
    force: bool = ADOPT_FORCE,
) -> None:
    """Mark each citation of a withdrawn claim written as current (C002) as withdrawn, then
    replace each stale copy of one (C001) with a claim region; or, with --adopt-profile, each
    hand-written profile block with a profile region."""
    root = estate_root(root, config, paths)
    if adopt:
        _adopt_profiles(root, config, paths, diff, force)
    from ..rules import stale_claim
    from ..run.suite import run
    from ..write.fix import targets

    settings = load_settings(root, config)
    estate = load(settings, paths)
    marks = _mark_citations(estate, diff)
    if marks.marked and not diff:
        estate = load(settings, paths)  # the copies are found in the text as marked
    failed = bool(estate.errors) or marks.failed
    replaced = left = 0
    for target in targets(estate, run(estate, [stale_claim.RULE]).findings):
        try:
            done = _fix_target(estate, target, diff)
        except GuardsError as exc:
            echo_error(exc)
            failed = True
            continue
        replaced += len(done.replaced)
        left += len(done.left)
    verb = "would replace" if diff else "replaced"
    counted = f"{verb} {replaced} stale cop{'y' if replaced == 1 else 'ies'}"
    if marks.marked:
        counted += f", {'would mark' if diff else 'marked'} {marks.marked} citation"
        counted += "s" if marks.marked != 1 else ""
    left += marks.left
    echo(f"guards fix: {counted}, {left} left")
    raise typer.Exit(2 if failed else 1 if left else 0)


def _fix_target(estate, target, diff: bool):
    """One file's stale copies replaced (or shown), each said; the copies left with the edit a
    person can make."""
    from ..facts.regions import unified_diff

    path = target.path
    done, rewritten = _fix_one(estate, target, "diff" if diff else "write")
    if diff:
        echo(unified_diff(path, rewritten.source.raw, rewritten.after), nl=False)
    for copy in done.replaced:
        echo(f"{path}:{copy.line}: stale copy of {copy.claim} -> guards:claim region")
    for copy, why in done.left:
        echo(f"left: {path}:{copy.line}: stale copy of {copy.claim} ({why})")
        if copy in done.proposals:
            echo(done.proposals[copy].say(path), nl=False)
    return done


def _fix_one(estate, target, mode):
    """One file's stale copies replaced (in ``mode``): what was done, and the file."""
    from ..write.fix import fix_stale_copies
    from ..write.rewrite import rewrite

    fixed = []
    shown = target.path

    def edits(source):
        templates = estate.config.templates_path
        note = target.compose is None
        found = fix_stale_copies(
            source.text, shown, target.copies, estate.registry, templates, estate.root, note
        )
        fixed.append(found)
        return found.edits

    text = target.compose.text if target.compose is not None else target.note.text
    path = estate.root / shown
    rewritten = rewrite(path, shown, text, edits, mode, estate.config.max_bytes)
    return fixed[-1], rewritten


class _Marks:
    """What marking the citations did: counts, and whether a file could not be read."""

    marked = left = 0
    failed = False


def _mark_citations(estate, diff: bool) -> _Marks:
    """Every C002 citation of a withdrawn claim written as current, marked as withdrawn in
    place (``--diff``: shown); the ones left are said with the edit a person can make."""
    from ..rules import registry_drift

    counts = _Marks()
    cited: dict[str, set[tuple[int, int]]] = {}
    for finding in run_rule(estate, registry_drift.RULE):
        if finding.message.startswith("cites claim"):
            cited.setdefault(finding.path, set()).add((finding.line, finding.column))
    for target in [*estate.composes, *estate.notes]:
        where = cited.get(target.path)
        if not where:
            continue
        citations = [c for c in target.citations if (c.line, c.column) in where]
        try:
            done = _mark_one(estate, target, citations, diff)
        except GuardsError as exc:
            echo_error(exc)
            counts.failed = True
            continue
        for citation in done.marked:
            column = f"{citation.line}:{citation.column}"
            echo(f"{target.path}:{column}: claim:{citation.claim_id} -> cited as withdrawn")
        for item in done.left:
            edit = f"; edit by hand: {item.edit}" if item.edit else ""
            echo(
                f"left: {target.path}:{item.line}:{item.column}: citation of withdrawn claim "
                f"{item.claim} ({item.why}){edit}"
            )
        counts.marked += len(done.marked)
        counts.left += len(done.left)
    return counts


def _mark_one(estate, target, citations, diff: bool):
    """One file's citations marked through the rewrite loop (``--diff``: the diff printed)."""
    from ..facts.regions import unified_diff
    from ..write.marks import Marked, mark_citations
    from ..write.rewrite import Mode, rewrite

    done: list[Marked] = []

    def edits(source):
        done.append(mark_citations(target, source.text, citations, estate.registry))
        return done[-1].edits or None

    mode: Mode = "diff" if diff else "write"
    path = estate.root / target.path
    rewritten = rewrite(path, target.path, target.text, edits, mode, estate.config.max_bytes)
    if diff and rewritten.changed:
        echo(unified_diff(target.path, rewritten.source.raw, rewritten.after), nl=False)
    return done[-1]


def run_rule(estate, rule):
    from ..run.suite import run

    return run(estate, [rule]).findings


def _adopt_profiles(
    root: Path, config: Path | None, paths: list[Path] | None, diff: bool, force: bool
) -> None:
    from ..rules import header_drift
    from ..run.suite import run
    from ..write.adopt import NOTHING

    settings = load_settings(root, config)
    estate = load(settings, paths)
    failed = bool(estate.errors)
    disagreeing: dict[str, set[int]] = {}
    for finding in run(estate, [header_drift.RULE]).findings:
        disagreeing.setdefault(finding.path, set()).add(finding.line)
    adopted = left = 0
    for compose in estate.composes:
        lines = frozenset(disagreeing.get(compose.path, ()))
        try:
            result = _adopt_one(estate, compose, lines, diff, force)
        except GuardsError as exc:
            echo_error(exc)
            failed = True
            continue
        if result.left == NOTHING:
            continue
        if result.left is not None:
            echo(f"left: {compose.path}:{result.line}: {result.left}")
            left += 1
            continue
        if not result.reproduced and not force:
            echo(
                f"left: {compose.path}:{result.line}: the profile template lays this "
                "block out differently (diff above); --force adopts it anyway"
            )
            left += 1
            continue
        body = " (the body's values replace the header's: diff above)" if result.changed else ""
        echo(f"{compose.path}:{result.line}: profile block -> guards:profile region{body}")
        adopted += 1
    verb = "would adopt" if diff else "adopted"
    plural = "s" if adopted != 1 else ""
    echo(f"guards fix: {verb} {adopted} profile block{plural}, {left} left")
    raise typer.Exit(2 if failed else 1 if left else 0)


def _adopt_one(estate, compose, disagreeing: frozenset[int], diff: bool, force: bool):
    """The profile block of one compose adopted (``--diff``: shown only). The diff is shown
    under the lock, before the write: a write that then fails (a read-only file) still shows
    what it would have changed, as the command always has."""
    from ..facts.regions import unified_diff
    from ..sources.compose.compose import parse_compose
    from ..write.adopt import adopt_profile
    from ..write.rewrite import Mode, rewrite

    outcome = []

    def edits(source):
        compose_now = parse_compose(source.text, compose.path)
        templates, registry = estate.config.templates_path, estate.registry
        result = adopt_profile(compose_now, registry, templates, estate.root, disagreeing)
        outcome.append(result)
        if result.left is not None:
            return None
        if diff or result.changed or not result.reproduced:
            after = source.render(result.edits)
            echo(unified_diff(compose.path, source.raw, after), nl=False)
        return None if not result.reproduced and not force else result.edits

    path = estate.root / compose.path
    mode: Mode = "diff" if diff else "write"
    rewrite(path, compose.path, compose.text, edits, mode, estate.config.max_bytes)
    return outcome[-1]
