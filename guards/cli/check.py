"""``guards check`` and ``guards baseline``: the suite on the estate, reported or recorded."""

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

import typer

from ..errors import GuardsError
from ..report import FORMATS
from ..sources.paths import inside, writable
from .common import (
    CONFIG_OPTION,
    ENV_FILE_OPTION,
    ROOT_OPTION,
    echo,
    echo_error,
    estate_root,
    load_settings,
    operator_env,
    root_dir,
)


def _format(value: str) -> str:
    if value not in FORMATS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(FORMATS)}")
    return value


def _color(value: str) -> str:
    if value not in ("auto", "always", "never"):
        raise typer.BadParameter(f"{value!r} is not one of auto, always, never")
    return value


PATHS_ARGUMENT = typer.Argument(
    None,
    metavar="PATHS",
    help="Files or folders to check, relative to the current directory as pre-commit "
    "passes them (default: the whole estate under --root).",
    show_default=False,
)
SELECT_OPTION = typer.Option(
    None, "--select", metavar="IDS", help="Rule ids, names, prefixes or families to run."
)
IGNORE_OPTION = typer.Option(None, "--ignore", metavar="IDS", help="Rules to skip.")
FORMAT = typer.Option(
    "text", "--format", metavar="|".join(FORMATS), help="Output format.", callback=_format
)
VERBOSE = typer.Option(False, "--verbose", "-v", help="Explain what was loaded and show hints.")
REPORT_FILE = typer.Option(
    None, "--output", metavar="FILE", help="Write the report to FILE, not standard output."
)
STATISTICS = typer.Option(
    False, "--statistics", help="Count the findings per rule instead of listing them."
)
SHOW_SUPPRESSED = typer.Option(
    False, "--show-suppressed", help="List the suppressed and baselined findings too."
)
BASELINE = typer.Option(
    None,
    "--baseline",
    metavar="FILE",
    help="Report only findings not in this baseline (see `guards baseline`).",
)
STRICT_BASELINE = typer.Option(
    False, "--strict-baseline", help="Fail while the baseline holds entries that match nothing."
)
ENV_ONLY = typer.Option(
    False, "--env-only", help="With --env-file: only the findings the env file causes."
)
COLOR = typer.Option(
    "auto", "--color", metavar="auto|always|never", help="Colour the text output.", callback=_color
)
NO_CACHE = typer.Option(
    False, "--no-cache", help="Check every file again, not reusing an earlier run's result."
)
JOBS = typer.Option(
    0,
    "--jobs",
    "-j",
    metavar="N",
    min=0,
    help="Worker processes for large estates (default 0: one per usable core).",
)
BASELINE_FILE = typer.Option(
    None,
    "--output",
    metavar="FILE",
    help="Where to write the baseline (default: .guards-baseline.json under --root).",
)


def check(
    paths: list[Path] | None = PATHS_ARGUMENT,
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
    env_file: Path | None = ENV_FILE_OPTION,
    output: str = FORMAT,
    select: list[str] | None = SELECT_OPTION,
    ignore: list[str] | None = IGNORE_OPTION,
    verbose: bool = VERBOSE,
    output_file: Path | None = REPORT_FILE,
    statistics: bool = STATISTICS,
    show_suppressed: bool = SHOW_SUPPRESSED,
    baseline: Path | None = BASELINE,
    strict_baseline: bool = STRICT_BASELINE,
    env_only: bool = ENV_ONLY,
    color: str = COLOR,
    no_cache: bool = NO_CACHE,
    jobs: int = JOBS,
) -> None:
    """Run the guard suite and print one line per failing check."""
    root = estate_root(root, config, paths)
    if statistics and output != "text":
        raise GuardsError(f"--statistics is a text view; it cannot go with --format {output}")
    if strict_baseline and baseline is None:
        raise GuardsError("--strict-baseline needs --baseline FILE")
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
    _report(result, output, verbose, show_suppressed, painted, statistics, root, output_file)
    raise typer.Exit(result.exit_code)


def _report(result, output, verbose, show_suppressed, painted, statistics, root, output_file):
    """The report, to standard output or ``--output``; the step summary on GitHub."""
    from ..report import reporter

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


def write_baseline(
    paths: list[Path] | None = PATHS_ARGUMENT,
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
    env_file: Path | None = ENV_FILE_OPTION,
    select: list[str] | None = SELECT_OPTION,
    ignore: list[str] | None = IGNORE_OPTION,
    output_file: Path | None = BASELINE_FILE,
) -> None:
    """Record today's findings so `check --baseline FILE` reports only new ones."""
    root = estate_root(root, config, paths)
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
    echo(f"guards: {count} finding{'s' if count != 1 else ''} recorded in {target}")


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _run(paths, root, config, env_file, select, ignore, quiet=False, use_cache=False, workers=0):
    """The suite on the estate (or the named files of it): the run, the estate (None when
    the run came from the cache), the number of rules; load errors are printed (unless
    ``quiet``)."""
    from ..run import cache
    from ..run.discovery import discover

    store = cache.open_store(root_dir(root)) if use_cache else None
    settings = load_settings(root, config, cache.KeptSettings(store) if store else None)
    env = operator_env(env_file)
    selection = (_split(select) or settings.select, _split(ignore) or settings.ignore)
    if paths and any(_affects_every_file(settings, path) for path in paths):
        paths = None  # a new registry, config or template can change any file's result
    found = discover(settings, list(paths) if paths else None)
    today = dt.date.today()
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
        return run(estate, chosen, options, today, processes, selected=selection[0])

    result = cache.through(store, key, compute)
    for error in () if quiet else result.errors:
        echo_error(error)
    for warning in () if quiet else result.warnings:
        echo(f"guards: warning: {warning}", err=True)
    return result, loaded.get("estate"), len(result.rules)  # the rules that ran


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


def _affects_every_file(settings, path: Path) -> bool:
    """``path`` is the claims registry, the settings file, a region template or an env file
    (a ``.env`` or one the ``env-files`` setting names: it feeds the composes that read it)."""
    try:
        inside = path.resolve().relative_to(settings.root.resolve()).as_posix()
    except (ValueError, OSError):
        return False
    named = settings.env_files
    env_files = [f for files in named.values() for f in files] if isinstance(named, dict) else named
    return (
        inside in (settings.claims, settings.source, "pyproject.toml", "guards.toml")
        or inside.startswith(settings.templates.rstrip("/") + "/")
        or path.name == ".env"
        or inside in env_files
    )


def _explain_load(remarks: tuple[str, ...], estate, rule_count: int) -> None:
    for remark in remarks:
        echo(f"guards: {remark}", err=True)
    echo(
        f"guards: {len(estate.composes)} composes, {len(estate.notes)} notes, "
        f"{rule_count} rules (config: {estate.config.source or 'none, discovery'})",
        err=True,
    )
    from ..run import cache

    refused = cache.refusal(estate.config.root)  # why runs are not kept, if they are not
    if refused:
        echo(f"guards: {refused}", err=True)
