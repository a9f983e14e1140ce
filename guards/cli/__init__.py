"""The ``guards`` command line. Thin: parse options, call the library, print, exit.

Exit codes: 0 every check passed; 1 a check failed; 2 usage or config error, or an input that
could not be read or parsed (the rest is still checked); 3 an internal error (see the log).
"""

# No `from __future__ import annotations` here: typer reads the annotations of every command
# on every run, and strings would each be evaluated (about 6 ms a run).

import contextlib
import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

import typer

from ..errors import GuardsError, printable_lines
from ..report import FORMATS
from ..sources.paths import inside, writable

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Lint compose estates and the claims their headers and notes make.",
)


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _format(value: str) -> str:
    if value not in FORMATS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(FORMATS)}")
    return value


def _color(value: str) -> str:
    if value not in ("auto", "always", "never"):
        raise typer.BadParameter(f"{value!r} is not one of auto, always, never")
    return value


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"guards {__version__}")
        raise typer.Exit()


ROOT_OPTION = typer.Option(Path("."), "--root", metavar="DIR", help="The estate.")
CONFIG_OPTION = typer.Option(
    None, "--config", metavar="FILE", help="A TOML file with the settings of [tool.guards]."
)


def _paths(what: str):
    return typer.Argument(
        None,
        metavar="PATHS",
        help=f"Composes or folders to {what} (default: the whole estate under --root).",
        show_default=False,
    )


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Lint compose estates and the claims their headers and notes make."""


PATHS_ARGUMENT = typer.Argument(
    None,
    metavar="PATHS",
    help="Files or folders to check, relative to the current directory as pre-commit "
    "passes them (default: the whole estate under --root).",
    show_default=False,
)
ENV_FILE_OPTION = typer.Option(
    None, "--env-file", metavar="FILE", help="Evaluate composes with this operator .env."
)
SELECT_OPTION = typer.Option(
    None, "--select", metavar="IDS", help="Rule ids, names, prefixes or families to run."
)
IGNORE_OPTION = typer.Option(None, "--ignore", metavar="IDS", help="Rules to skip.")


@app.command()
def check(
    paths: list[Path] | None = PATHS_ARGUMENT,
    root: Path = typer.Option(Path("."), "--root", metavar="DIR", help="The estate to check."),
    config: Path | None = CONFIG_OPTION,
    env_file: Path | None = ENV_FILE_OPTION,
    output: str = typer.Option(
        "text",
        "--format",
        metavar="|".join(FORMATS),
        help="Output format.",
        callback=_format,
    ),
    select: list[str] | None = SELECT_OPTION,
    ignore: list[str] | None = IGNORE_OPTION,
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Explain what was loaded and show hints."
    ),
    output_file: Path | None = typer.Option(
        None, "--output", metavar="FILE", help="Write the report to FILE, not standard output."
    ),
    statistics: bool = typer.Option(
        False, "--statistics", help="Count the findings per rule instead of listing them."
    ),
    show_suppressed: bool = typer.Option(
        False, "--show-suppressed", help="List the suppressed and baselined findings too."
    ),
    baseline: Path | None = typer.Option(
        None,
        "--baseline",
        metavar="FILE",
        help="Report only findings not in this baseline (see `guards baseline`).",
    ),
    strict_baseline: bool = typer.Option(
        False, "--strict-baseline", help="Fail while the baseline holds entries that match nothing."
    ),
    env_only: bool = typer.Option(
        False, "--env-only", help="With --env-file: only the findings the env file causes."
    ),
    color: str = typer.Option(
        "auto",
        "--color",
        metavar="auto|always|never",
        help="Colour the text output.",
        callback=_color,
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Check every file again, not reusing an earlier run's result."
    ),
    jobs: int = typer.Option(
        0,
        "--jobs",
        "-j",
        metavar="N",
        min=0,
        help="Worker processes for large estates (default 0: one per usable core).",
    ),
) -> None:
    """Run the guard suite and print one line per failing check."""
    if statistics and output != "text":
        raise GuardsError(f"--statistics is a text view; it cannot go with --format {output}")
    if strict_baseline and baseline is None:
        raise GuardsError("--strict-baseline needs --baseline FILE")
    from ..report import reporter

    if env_only and env_file is None:
        raise GuardsError("--env-only needs --env-file FILE")
    entries = None
    if baseline is not None:  # read before the run, so a bad one stops it at once
        from ..run import baseline as accepted

        entries = accepted.load(baseline, str(baseline))
    cached = not (no_cache or verbose or env_file)  # those need the estate itself
    result, estate, rule_count = _run(
        paths, root, config, env_file, select, ignore, use_cache=cached, workers=jobs
    )
    if env_file is not None:
        from ..run.operator import operator_view

        shipped, _, _ = _run(
            paths, root, config, None, select, ignore, quiet=True, use_cache=not no_cache
        )
        result = operator_view(result, shipped, estate, str(env_file), env_only)
    if entries is not None:
        result = accepted.apply(result, entries, str(baseline), strict_baseline)
    if verbose:
        _explain_load(result.remarks, estate, rule_count)
    painted = color == "always" or (color == "auto" and output_file is None and _tty())
    if statistics:
        from ..report.text import StatisticsReporter

        report = StatisticsReporter(verbose, color=painted).render(result)
    else:
        report = reporter(output, verbose, show_suppressed, painted).render(result)
    if output_file is None:
        typer.echo(report, nl=False, color=painted)  # click strips ANSI off a pipe unless told
    else:
        _write_report(writable(root, output_file, str(output_file)), report, "w")
    if output == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        from ..report.github import step_summary

        _write_report(Path(os.environ["GITHUB_STEP_SUMMARY"]), step_summary(result), "a")
    raise typer.Exit(result.exit_code)


@app.command("baseline")
def write_baseline(
    paths: list[Path] | None = PATHS_ARGUMENT,
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
    env_file: Path | None = ENV_FILE_OPTION,
    select: list[str] | None = SELECT_OPTION,
    ignore: list[str] | None = IGNORE_OPTION,
    output_file: Path | None = typer.Option(
        None,
        "--output",
        metavar="FILE",
        help="Where to write the baseline (default: .guards-baseline.json under --root).",
    ),
) -> None:
    """Record today's findings so `check --baseline FILE` reports only new ones."""
    from ..run import baseline as accepted
    from ..sources.edit import locked, write_file

    result, _, _ = _run(paths, root, config, env_file, select, ignore)
    if result.errors:
        raise GuardsError("inputs could not be read (above); no baseline written")
    if output_file is not None:
        target = writable(root, output_file, str(output_file))
    else:  # a file the estate holds: it must not lead out of it
        target = inside(root, root / accepted.DEFAULT, accepted.DEFAULT)
    with locked(target, str(target)):
        write_file(target, accepted.dump(result), str(target))
    count = len(result.findings)
    _echo(f"guards: {count} finding{'s' if count != 1 else ''} recorded in {target}")


def _run(paths, root, config, env_file, select, ignore, quiet=False, use_cache=False, workers=0):
    """The suite on the estate (or the named files of it): the run, the estate (None when
    the run came from the cache), the number of rules; load errors are printed (unless
    ``quiet``)."""
    from ..run import cache
    from ..run.discovery import discover
    from ..sources.config import load_config

    settings = load_config(_root(root), config)
    env = _env(env_file)
    selection = (_split(select) or settings.select, _split(ignore) or settings.ignore)
    if paths and any(_affects_every_file(settings, path) for path in paths):
        paths = None  # a new registry, config or template can change any file's result
    found = discover(settings, list(paths) if paths else None)
    today = dt.date.today()
    store = cache.open_store(settings.root) if use_cache else None
    key = cache.run_key(store, settings, selection, found, env, today) if store else None
    loaded: dict[str, Any] = {}

    def compute():
        from ..rules import all_rules
        from ..rules import select as pick
        from ..rules.options import load_options
        from ..run.estate import load_estate
        from ..run.parallel import workers_for
        from ..run.suite import run

        rules = all_rules()
        options = load_options(settings, rules)
        loaded["rules"] = chosen = pick(rules, *selection)
        processes = workers_for(len(found.composes) + len(found.notes), workers)
        loaded["estate"] = estate = load_estate(settings, env=env, found=found, workers=processes)
        return run(estate, chosen, options, today, processes)

    result = cache.through(store, key, compute)
    for error in () if quiet else result.errors:
        _echo(f"guards: error: {error}", err=True)
    return result, loaded.get("estate"), len(loaded.get("rules", result.rules))


def _echo(text: str, err: bool = False, nl: bool = True) -> None:
    """Print text that carries what files hold (paths, diffs, passages): every line escaped
    (guards.errors.printable_lines), so no file can write to the terminal or forge a CI log
    command."""
    typer.echo(printable_lines(text), err=err, nl=nl)


def _tty() -> bool:
    """Colour for a terminal, unless NO_COLOR is set (https://no-color.org) or TERM is dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


def _write_report(path: Path, text: str, mode: str) -> None:
    """The report to a file (``--output``, or the step summary GitHub appends to)."""
    if mode == "w":
        from ..sources.edit import write_file

        return write_file(path, text, str(path))
    try:
        with path.open(mode, encoding="utf-8") as out:
            out.write(text)
    except (OSError, ValueError) as exc:
        raise GuardsError(
            f"cannot write the report: {getattr(exc, 'strerror', None) or exc}", str(path)
        ) from None


@app.command()
def regen(
    paths: list[Path] | None = _paths("regenerate"),
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
    check_only: bool = typer.Option(
        False, "--check", help="Write nothing; print a diff and exit 1 if anything would change."
    ),
    diff: bool = typer.Option(False, "--diff", help="Print the changes as a diff; write nothing."),
    force: bool = typer.Option(False, "--force", help="Overwrite regions edited by hand."),
) -> None:
    """Rewrite every generated region (# >>> guards:NAME ... # <<< guards:NAME) from its
    template."""
    from contextlib import nullcontext

    from ..sources import edit

    settings = _settings(root, config)
    estate = _load(settings, paths)
    failed = bool(estate.errors)
    changed = 0
    for compose in estate.composes:
        if not compose.regions and not compose.marker_problems:
            continue
        path = estate.root / compose.path
        try:
            with nullcontext() if check_only or diff else edit.locked(path, compose.path):
                source = edit.read(path, compose.path, settings.max_bytes)
                new_raw = _regenerated(source, estate, force)
                if new_raw == source.raw:
                    continue
                changed += 1
                if check_only or diff:
                    from ..facts.regions import unified_diff

                    _echo(unified_diff(compose.path, source.raw, new_raw), nl=False)
                else:
                    edit.write(source, new_raw)
                    _echo(f"regenerated {compose.path}")
        except GuardsError as exc:
            _echo(f"guards: error: {exc}", err=True)
            failed = True
    verb = "would change" if check_only or diff else "regenerated"
    _echo(f"guards regen: {changed} file{'s' if changed != 1 else ''} {verb}")
    raise typer.Exit(2 if failed else 1 if check_only and changed else 0)


@app.command()
def fix(
    paths: list[Path] | None = _paths("fix"),
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
    diff: bool = typer.Option(False, "--diff", help="Print the changes as a diff; write nothing."),
    adopt: bool = typer.Option(
        False,
        "--adopt-profile",
        help="Instead: turn each hand-written profile block into a profile region.",
    ),
    force: bool = typer.Option(
        False, "--force", help="With --adopt-profile: adopt blocks the template re-lays out."
    ),
) -> None:
    """Replace each stale copy of a withdrawn claim in a compose (C001) with a claim region;
    or, with --adopt-profile, each hand-written profile block with a profile region."""
    if adopt:
        _adopt_profiles(root, config, paths, diff, force)
    from ..facts.regions import unified_diff
    from ..rules import stale_claim
    from ..run.suite import run
    from ..write.fix import fix_compose, targets

    estate = _load(_settings(root, config), paths)
    failed = bool(estate.errors)
    replaced = left = 0
    for target in targets(estate, run(estate, [stale_claim.RULE]).findings):
        path, found = target.path, target.copies
        if target.compose is None:
            for copy in found:
                _echo(f"left: {path}:{copy.line}: stale copy of {copy.claim} in a note")
            left += len(found)
            continue
        try:
            done, before, after = fix_compose(estate, target.compose, found, write=not diff)
            if diff:
                _echo(unified_diff(path, before, after), nl=False)
        except GuardsError as exc:
            _echo(f"guards: error: {exc}", err=True)
            failed = True
            continue
        for copy in done.replaced:
            _echo(f"{path}:{copy.line}: stale copy of {copy.claim} -> guards:claim region")
        for copy, why in done.left:
            _echo(f"left: {path}:{copy.line}: stale copy of {copy.claim} ({why})")
        replaced += len(done.replaced)
        left += len(done.left)
    verb = "would replace" if diff else "replaced"
    _echo(f"guards fix: {verb} {replaced} stale cop{'y' if replaced == 1 else 'ies'}, {left} left")
    raise typer.Exit(2 if failed else 1 if left else 0)


def _adopt_profiles(
    root: Path, config: Path | None, paths: list[Path] | None, diff: bool, force: bool
) -> None:
    from ..facts.regions import unified_diff
    from ..rules import header_drift
    from ..run.suite import run
    from ..sources import edit
    from ..sources.compose.compose import parse_compose
    from ..write.adopt import NOTHING, adopt_profile

    settings = _settings(root, config)
    estate = _load(settings, paths)
    failed = bool(estate.errors)
    disagreeing: dict[str, set[int]] = {}
    for finding in run(estate, [header_drift.RULE]).findings:
        disagreeing.setdefault(finding.path, set()).add(finding.line)
    adopted = left = 0
    for compose in estate.composes:
        path = estate.root / compose.path
        try:
            with edit.locked(path, compose.path) if not diff else contextlib.nullcontext():
                source = edit.read(path, compose.path, settings.max_bytes)
                if source.text != compose.text:  # the findings' lines are of what was checked
                    raise GuardsError(
                        "changed since it was checked; rerun guards fix", compose.path
                    )
                result = adopt_profile(
                    parse_compose(source.text, compose.path),
                    estate.registry,
                    settings.templates_path,
                    estate.root,
                    frozenset(disagreeing.get(compose.path, ())),
                )
                if result.left == NOTHING:
                    continue
                if result.left is not None:
                    _echo(f"left: {compose.path}:{result.line}: {result.left}")
                    left += 1
                    continue
                new_raw = source.render(edit.line_edits(source.text, result.text))
                if diff or result.changed or not result.reproduced:
                    _echo(unified_diff(compose.path, source.raw, new_raw), nl=False)
                if not result.reproduced and not force:
                    _echo(
                        f"left: {compose.path}:{result.line}: the profile template lays this "
                        "block out differently (diff above); --force adopts it anyway"
                    )
                    left += 1
                    continue
                if not diff:
                    edit.write(source, new_raw)
        except GuardsError as exc:
            _echo(f"guards: error: {exc}", err=True)
            failed = True
            continue
        body = " (the body's values replace the header's: diff above)" if result.changed else ""
        _echo(f"{compose.path}:{result.line}: profile block -> guards:profile region{body}")
        adopted += 1
    verb = "would adopt" if diff else "adopted"
    plural = "s" if adopted != 1 else ""
    _echo(f"guards fix: {verb} {adopted} profile block{plural}, {left} left")
    raise typer.Exit(2 if failed else 1 if left else 0)


def _regenerated(source, estate, force: bool) -> str:
    from ..facts.regions import regenerate

    templates = estate.config.templates_path
    edits = regenerate(source.text, source.shown, estate.registry, templates, estate.root, force)
    return source.render(edits)


claims_app = typer.Typer(no_args_is_help=True, help="The claims registry: list, show, retract.")
app.add_typer(claims_app, name="claims")


@claims_app.command("list")
def claims_list(root: Path = ROOT_OPTION, config: Path | None = CONFIG_OPTION) -> None:
    """Every claim: id, status, dates, places citing it and stale copies."""
    from ..claims.scan import places

    estate = _estate(root, config)
    rows = [("ID", "STATUS", "ASSERTED", "RETRACTED", "CITED", "STALE")]
    for claim in estate.registry.claims:
        found = places(estate, claim)
        stale = sum(1 for p in found if p.how == "stale copy")
        rows.append(
            (
                claim.id,
                claim.status,
                str(claim.asserted or "-"),
                str(claim.retracted or "-"),
                str(len(found) - stale),
                str(stale),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        _echo(
            "  ".join(
                cell.rjust(w) if i >= 4 else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=False))
            ).rstrip()
        )
    _exit_for(estate)


@claims_app.command("show")
def claims_show(
    claim_id: str = typer.Argument(..., metavar="ID"),
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """One claim and every place that cites, retracts or still asserts it."""
    from ..claims.scan import places
    from ..errors import MAX_PATH, printable

    def shown(text: str) -> str:
        """A registry field on its line, whole, escaped: a line break in it cannot start a
        line of its own (a CI runner reads ``::error::`` there), nor an escape reach the
        terminal."""
        return printable(" ".join(text.split()), 10_000)

    estate = _estate(root, config)
    claim = _claim(estate, claim_id)
    when = f" {claim.retracted}" if claim.retracted else ""
    _echo(f"{claim.id}: {shown(claim.title)}")
    _echo(
        f"  status       {claim.status}{when}"
        + (f" (asserted {claim.asserted})" if claim.asserted else "")
    )
    _echo(f"  defined at   {printable(estate.registry.path, MAX_PATH)}:{claim.line}")
    for label, value in (
        ("reason", claim.reason),
        ("replacement", claim.replacement),
        ("superseded by", claim.superseded_by),
        ("refs", " ".join(claim.refs) or None),
    ):
        if value:
            _echo(f"  {label:<12} {shown(value)}")
    found = places(estate, claim)
    _echo(f"places ({len(found)}):")
    for place in found:
        where = f"{printable(place.path, MAX_PATH)}:{place.line}:{place.column}"
        _echo(f"  {where}  {place.how}")
    _exit_for(estate)


@claims_app.command("retract")
def claims_retract(
    claim_id: str = typer.Argument(..., metavar="ID"),
    date: str = typer.Option(..., "--date", help="Retraction date, YYYY-MM-DD."),
    reason: str = typer.Option(..., "--reason", help="Why it was retracted."),
    replacement_file: Path = typer.Option(
        ...,
        "--replacement-file",
        help="File holding what to say instead ('-' reads standard input).",
    ),
    force: bool = typer.Option(
        False, "--force", help="Retract a claim that is already retracted or superseded."
    ),
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Retract a claim in claims.yaml in place, then list what still cites or asserts it."""
    from ..claims.scan import places
    from ..run.discovery import shown_path
    from ..run.estate import load_estate
    from ..sources import edit
    from ..sources.registry import load
    from ..write.registry_edits import check_date, retract_edits

    settings = _settings(root, config)
    check_date(date)
    replacement = _read_replacement(replacement_file)
    path = settings.claims_path
    shown = shown_path(settings, path)
    if not path.is_file():
        raise GuardsError("no claims registry to edit", shown)
    with edit.locked(path, shown):
        source = edit.read(path, shown)
        edits = retract_edits(source.text, shown, claim_id, date, reason, replacement, force)
        edit.write(source, source.render(edits))
    _echo(f"{shown}: retracted {claim_id} on {date}")
    estate = load_estate(settings)
    claim = load(path, shown).get(claim_id)
    assert claim is not None
    remaining = [
        p for p in places(estate, claim) if p.how not in ("retracts", "cites in a retraction")
    ]
    _echo(f"still citing or asserting it: {len(remaining)}")
    for place in remaining:
        _echo(f"  {place.path}:{place.line}:{place.column}  {place.how}")
    for error in estate.errors:
        _echo(f"guards: error: {error}", err=True)


@claims_app.command("find")
def claims_find(
    claim_id: str = typer.Argument(..., metavar="ID"),
    limit: int = typer.Option(20, "--limit", metavar="N", help="Show the N most similar."),
    confirm: str | None = typer.Option(
        None,
        "--confirm",
        metavar="PATH:LINE",
        help="Record the passage there as a wording "
        "of the claim (a variant): `check` then finds copies of it.",
    ),
    dismiss: str | None = typer.Option(
        None,
        "--dismiss",
        metavar="PATH:LINE",
        help="Record the passage there as not the "
        "claim (not_match): it is not shown or reported again.",
    ),
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Rank every passage of the estate by similarity to a claim, and say why.

    For recall: `check` reports only confident stale copies; `find` shows the rest, for an
    active claim too, so uncited copies are visible before a retraction."""
    from ..claims.scan import rank

    estate = _estate(root, config)
    claim = _claim(estate, claim_id)
    found = rank(estate.claim_scan, claim)
    if confirm or dismiss:
        place = confirm or dismiss or ""
        field = "variants" if confirm else "not_match"
        _record(estate, claim, field, _passage_at(found, place, estate.registry.path))
        return
    when = f" {claim.retracted}" if claim.retracted else ""
    _echo(f"{claim.id} ({claim.status}{when}): {len(found)} passages share its words")
    for candidate in found[:limit]:
        span = f"-{candidate.end_line}" if candidate.end_line > candidate.line else ""
        _echo(
            f"{candidate.score:5.2f}  {candidate.status:<10}  "
            f"{candidate.path}:{candidate.line}{span}"
        )
        _echo(f"       {_why(candidate)}")
        _echo(f"       > {_excerpt(candidate.text)}")
    _exit_for(estate)


def _why(candidate) -> str:
    """Shared distinctive words, shared numbers, repeated phrases."""
    numbers = [w for w in candidate.shared if any(ch.isdigit() for ch in w)]
    terms = [w for w in candidate.shared if w not in numbers]
    parts = [f"words: {', '.join(terms)}"] if terms else []
    parts += [f"numbers and ids: {', '.join(numbers)}"] if numbers else []
    parts += (
        ["repeats: " + "; ".join(f'"{_excerpt(p, 50)}"' for p in candidate.phrases[:2])]
        if candidate.phrases
        else []
    )
    return " · ".join(parts) or "nothing distinctive"


def _passage_at(found, place: str, registry_path: str) -> str:
    path, _, line = place.rpartition(":")
    if not path or not line.isdigit():
        raise GuardsError(f"{place!r} is not PATH:LINE")
    number = int(line)
    hit = next((c for c in found if c.path == path and c.line <= number <= c.end_line), None)
    if hit is None:
        raise GuardsError("no ranked passage there (see `guards claims find ID`)", path, number)
    return hit.text


def _record(estate, claim, field: str, text: str) -> None:
    """Append the passage to the claim's list, the registry read afresh under the lock."""
    from ..sources import edit
    from ..write.registry_edits import append_edits

    path = estate.config.claims_path
    with edit.locked(path, estate.registry.path):
        source = edit.read(path, estate.registry.path)
        edits = append_edits(source.text, source.shown, claim.id, field, text)
        if not edits:
            _echo(f"{estate.registry.path}: {claim.id} already lists that passage in {field}")
            return
        edit.write(source, source.render(edits))
    _echo(f"{estate.registry.path}: added the passage to {claim.id}.{field}")


def _excerpt(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@claims_app.command("add")
def claims_add(
    claim_id: str = typer.Argument(..., metavar="ID"),
    title: str = typer.Option(..., "--title", help="One line: what the claim says."),
    text_file: Path | None = typer.Option(
        None, "--text-file", metavar="FILE", help="The wording as published ('-': stdin)."
    ),
    source: str | None = typer.Option(
        None,
        "--from",
        metavar="PATH:LINE[-END]",
        help="Take the wording from these lines of a compose or note (comment markers removed).",
    ),
    date: str | None = typer.Option(
        None, "--date", help="When it was asserted, YYYY-MM-DD (default: today)."
    ),
    match: list[str] | None = typer.Option(
        None, "--match", metavar="PHRASE", help="A distinctive phrase of it (repeatable)."
    ),
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Register a new active claim, its wording from a file or from a passage of the estate."""
    import datetime as dt

    from ..sources import edit
    from ..sources.markers import CLAIM_ID
    from ..write.registry_edits import add_claim_edits, check_date, tidy

    settings = _settings(root, config)
    if not CLAIM_ID.fullmatch(claim_id):
        raise GuardsError(f"{claim_id!r} is not a kebab-case claim id")
    if (text_file is None) == (source is None):
        raise GuardsError("give the wording with exactly one of --text-file or --from")
    text = _read_replacement(text_file) if text_file else _lines_of(settings, source or "")
    entry: dict[str, str | list[str] | dt.date] = {
        "id": claim_id,
        "title": tidy(title),
        "status": "active",
        "asserted": dt.date.fromisoformat(check_date(date or dt.date.today().isoformat())),
        "text": tidy(text),
    }
    if match:
        entry["match"] = list(match)
    path = settings.claims_path
    with edit.locked(path, _shown(settings, path)):
        registry = edit.read(path, _shown(settings, path))
        edits = add_claim_edits(registry.text, registry.shown, entry)
        edit.write(registry, registry.render(edits))
    _echo(f"{registry.shown}: added {claim_id}")


def _lines_of(settings, place: str) -> str:
    """Lines PATH:LINE[-END] of a file under the root, without comment markers."""
    import textwrap

    from ..sources import yamlsrc

    path, _, span = place.rpartition(":")
    first, _, last = span.partition("-")
    if not path or not first.isdigit() or not (last or first).isdigit():
        raise GuardsError(f"{place!r} is not PATH:LINE or PATH:LINE-END")
    lines = yamlsrc.read_text(settings.root / path, path).split("\n")
    start, end = int(first), int(last or first)
    if not 1 <= start <= end <= len(lines):
        raise GuardsError(f"lines {start}-{end} are not in the file", path, start)
    picked = [
        line.lstrip()[1:] if line.lstrip().startswith("#") else line
        for line in lines[start - 1 : end]
    ]
    return textwrap.dedent("\n".join(picked))


def _shown(settings, path: Path) -> str:
    from ..run.discovery import shown_path

    return shown_path(settings, path)


def _settings(root: Path, config: Path | None):
    from ..sources.config import load_config

    return load_config(_root(root), config)


def _estate(root: Path, config: Path | None):
    return _load(_settings(root, config), None)


def _load(settings, paths: list[Path] | None):
    """The estate (or the given paths of it); load errors printed as they are found."""
    from ..run.estate import load_estate

    estate = load_estate(settings, list(paths) if paths else None)
    for error in estate.errors:
        _echo(f"guards: error: {error}", err=True)
    return estate


def _exit_for(estate) -> None:
    raise typer.Exit(2 if estate.errors else 0)


def _claim(estate, claim_id: str):
    claim = estate.registry.get(claim_id)
    if claim is None:
        raise GuardsError(f"no claim with id {claim_id!r}", estate.registry.path)
    return claim


def _read_replacement(path: Path) -> str:
    """The text of ``--replacement-file`` (``-``: standard input); empty is refused."""
    from ..sources import edit

    where = "standard input" if str(path) == "-" else str(path)
    if str(path) == "-":
        text = sys.stdin.read(edit.MAX_BYTES + 1)
        if len(text) > edit.MAX_BYTES:
            raise GuardsError("the replacement on standard input is too long", where)
    elif not path.exists():
        raise GuardsError("replacement file not found", where)
    else:
        text = edit.read(path, where).text
    if not text.strip():
        raise GuardsError("the replacement is empty; nothing written", where)
    return text


evidence_app = typer.Typer(no_args_is_help=True, help="Figures from a vLLM /metrics scrape.")
app.add_typer(evidence_app, name="evidence")
claims_evidence_app = typer.Typer(no_args_is_help=True, help="A claim's evidence.")
claims_app.add_typer(claims_evidence_app, name="evidence")
AFTER_ARGUMENT = typer.Argument(
    None,
    metavar="AFTER",
    help="A second scrape, taken after the run: the figures are what changed in between.",
    show_default=False,
)
EVIDENCE_MODEL_OPTION = typer.Option(
    None, "--model", metavar="NAME", help="The served model (model_name label) to read."
)


@evidence_app.callback()
def _evidence() -> None:
    """Figures from a vLLM /metrics scrape."""


@claims_evidence_app.callback()
def _claims_evidence() -> None:
    """A claim's evidence."""


def _json_or_text(value: str) -> str:
    if value not in ("text", "json"):
        raise typer.BadParameter(f"{value!r} is not one of text, json")
    return value


@evidence_app.command("read")
def evidence_read(
    before: Path = typer.Argument(
        ..., metavar="BEFORE", help="A scrape of /metrics (alone: totals since the server started)."
    ),
    after: Path | None = AFTER_ARGUMENT,
    compose: Path | None = typer.Option(
        None, "--compose", metavar="FILE", help="Set the figures beside what this compose ships."
    ),
    model: str | None = EVIDENCE_MODEL_OPTION,
    env_file: Path | None = ENV_FILE_OPTION,
    output: str = typer.Option(
        "text", "--format", metavar="text|json", help="Output format.", callback=_json_or_text
    ),
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Decode tok/s, preemptions, KV cache usage, running/waiting requests and spec-decode
    acceptance from a vLLM /metrics scrape; with --compose, whether they confirm K002."""
    import json

    from ..run import evidence

    first, last = evidence.load_pair(before, after)
    found = evidence.figures(last, first, model)
    side = None
    if compose is not None:
        estate, options = _evidence_compose(root, config, compose, env_file)
        chosen, side = evidence.beside(found, estate, options, model)
        found = [chosen]
    if output == "json":
        typer.echo(json.dumps(evidence.document(first, last, found, side), indent=2))
    else:
        typer.echo(evidence.text(first, last, found, side), nl=False)


def _evidence_compose(root: Path, config: Path | None, compose: Path, env_file: Path | None):
    """The estate with only ``compose`` loaded (as `guards check FILE` loads it), and the
    rules' options; a compose that cannot be loaded is an error."""
    from ..rules import all_rules
    from ..rules.options import load_options
    from ..run.estate import load_estate

    settings = _settings(root, config)
    estate = load_estate(settings, [compose], _env(env_file))
    if estate.errors:
        raise estate.errors[0]
    if not estate.composes:
        raise GuardsError(
            "not a compose of the estate under --root (see `composes` in the settings)",
            str(compose),
        )
    return estate, load_options(settings, all_rules())


@claims_evidence_app.command("add")
def claims_evidence_add(
    claim_id: str = typer.Argument(..., metavar="ID"),
    after: Path | None = AFTER_ARGUMENT,
    scrape: Path = typer.Option(
        ..., "--scrape", metavar="BEFORE", help="The scrape of /metrics (the first of two)."
    ),
    engine: str | None = typer.Option(
        None,
        "--engine",
        metavar="TAG",
        help="The engine image or version the scrape came from (vLLM's /metrics names none).",
    ),
    compose: Path | None = typer.Option(
        None,
        "--compose",
        metavar="FILE",
        help="The compose the server ran: its image is the engine.",
    ),
    model: str | None = EVIDENCE_MODEL_OPTION,
    note: str | None = typer.Option(None, "--note", metavar="TEXT", help="A note to keep with it."),
    date: str | None = typer.Option(
        None, "--date", help="When it was measured, YYYY-MM-DD (default: today)."
    ),
    root: Path = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Append an evidence entry (source, date, engine, the figures) read from a vLLM /metrics
    scrape (or a before/after pair) to a claim in claims.yaml, editing it in place."""
    from ..run import evidence
    from ..sources import edit
    from ..write.evidence_edit import entry, evidence_edits, summary
    from ..write.registry_edits import check_date

    when = check_date(date or dt.date.today().isoformat())
    first, last = evidence.load_pair(scrape, after)
    found = evidence.figures(last, first, model)
    if len(found) > 1:
        raise GuardsError(
            f"the scrape serves {len(found)} models ({', '.join(f.model for f in found)}): "
            "name one with --model",
            last.shown,
        )
    if compose is not None:
        estate, options = _evidence_compose(root, config, compose, None)
        chosen, side = evidence.beside(found, estate, options, model)
        found, engine = [chosen], engine or side.image
    if not engine:
        raise GuardsError(
            "the scrape does not say which engine it came from: give --engine TAG or --compose FILE"
        )
    settings = _settings(root, config)
    path = settings.claims_path
    shown = _shown(settings, path)
    if not path.is_file():
        raise GuardsError("no claims registry to edit", shown)
    scrapes = [s.shown for s in (first, last) if s is not None]
    new = entry(found[0], scrapes, when, engine, note)
    with edit.locked(path, shown):
        source = edit.read(path, shown)
        edits = evidence_edits(source.text, shown, claim_id, new)
        if not edits:
            _echo(f"{shown}: {claim_id} already records that evidence")
            return
        edit.write(source, source.render(edits))
    _echo(f"{shown}: added evidence to {claim_id} (on {engine}): {summary(found[0])}")


@app.command("rules")
def list_rules(
    markdown: bool = typer.Option(
        False, "--markdown", help="Print the full rules reference (docs/rules.md) instead."
    ),
) -> None:
    """List every rule: id, name, family and what it checks."""
    from ..rules import all_rules

    rules = all_rules()
    if markdown:
        from ..rules.docs import markdown as reference

        typer.echo(reference(rules), nl=False)
        return
    name = max(len(r.name) for r in rules)
    family = max(len(r.family) for r in rules)
    for rule in rules:
        typer.echo(f"{rule.id}  {rule.name:<{name}}  {rule.family:<{family}}  {rule.summary}")


@app.command("schema")
def print_schema() -> None:
    """Print the JSON schema of the settings, for an editor to validate them."""
    from ..run.schema import text

    typer.echo(text(), nl=False)


@app.command()
def explain(rule: str = typer.Argument(..., help="Rule id or name.")) -> None:
    """Print a rule's documentation: why it exists, a bad and a good example."""
    from ..rules import all_rules, find
    from ..rules.docs import explain as explanation

    found = find(all_rules(), rule) or find(all_rules(), rule.upper())
    if found is None:
        raise GuardsError(f"unknown rule `{rule}` (see `guards rules`)")
    typer.echo(explanation(found), nl=False)


def _affects_every_file(settings, path: Path) -> bool:
    """``path`` is the claims registry, the settings file or a region template."""
    try:
        inside = path.resolve().relative_to(settings.root.resolve()).as_posix()
    except (ValueError, OSError):
        return False
    return inside in (
        settings.claims,
        settings.source,
        "pyproject.toml",
        "guards.toml",
    ) or inside.startswith(settings.templates.rstrip("/") + "/")


def _root(root: Path) -> Path:
    from ..sources.paths import check_path

    if not check_path(root, str(root)).is_dir():
        raise GuardsError("--root is not a directory", str(root))
    return root


def _env(env_file: Path | None) -> dict[str, str]:
    if env_file is None:
        return {}
    from ..sources.envfile import load_env_file

    return load_env_file(env_file, str(env_file))


def _explain_load(remarks: tuple[str, ...], estate, rule_count: int) -> None:
    for remark in remarks:
        _echo(f"guards: {remark}", err=True)
    _echo(
        f"guards: {len(estate.composes)} composes, {len(estate.notes)} notes, "
        f"{rule_count} rules (config: {estate.config.source or 'none, discovery'})",
        err=True,
    )
    from ..run import cache

    refused = cache.refusal(estate.config.root)  # why runs are not kept, if they are not
    if refused:
        _echo(f"guards: {refused}", err=True)


def main() -> None:
    try:
        code = app(standalone_mode=False)  # returns the code of a `typer.Exit`
        sys.exit(code if isinstance(code, int) else 0)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.Abort:
        sys.exit(130)
    except typer.TyperException as error:  # usage errors: one line, like every other error
        if type(error).__name__ == "NoArgsIsHelpError":  # `guards` alone: the help, as usage
            print(error.format_message(), file=sys.stderr)
            sys.exit(2)
        ctx = getattr(error, "ctx", None)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        print(f"guards: error: {error.format_message()}{where}", file=sys.stderr)
        sys.exit(2)
    except GuardsError as error:
        print(f"guards: error: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception:
        import tempfile
        import traceback

        with tempfile.NamedTemporaryFile(
            "w", prefix="guards-crash-", suffix=".log", delete=False
        ) as log:
            traceback.print_exc(file=log)
        print(
            f"guards: internal error: {sys.exc_info()[1]!r} (details in {log.name})",
            file=sys.stderr,
        )
        sys.exit(3)


if __name__ == "__main__":
    main()
