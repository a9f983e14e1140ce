"""``guards check`` without its command line: the options as keywords, the run, the report,
the exit code. No typer here: ``guards check PATH...``, what the pre-commit hook runs, is run
from ``guards.cli.main`` without importing it (``guards.cli.check`` declares the options)."""

import datetime as dt
import os
import sys
from pathlib import Path

from ..errors import GuardsError
from ..sources.paths import writable
from .common import echo, echo_error, echo_raw, estate_root, load_settings, shown


def run_check(
    *,
    paths: list[Path] | None = None,
    root: Path | None = None,
    config: Path | None = None,
    env_file: Path | None = None,
    output: str = "text",
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
    ignore: list[str] | None = None,
    extend_ignore: list[str] | None = None,
    fix: bool = False,
    diff: bool = False,
    show_fixes: bool = False,
    exit_zero: bool = False,
    stdin_filename: Path | None = None,
    verbose: bool = False,
    output_file: Path | None = None,
    statistics: bool = False,
    show_suppressed: bool = False,
    baseline: Path | None = None,
    strict_baseline: bool = False,
    env_only: bool = False,
    color: str = "auto",
    no_cache: bool = False,
    jobs: int = 0,
) -> int:
    """Run the guard suite, print the report; the exit code (``guards check``'s options as
    keywords, each default the command's own)."""
    stdin = _reads_stdin(paths, stdin_filename)
    if stdin:
        paths = [stdin_filename]  # type: ignore[list-item]  # set: _reads_stdin says so
    root = estate_root(root, config, paths)
    _refuse_combinations(output, statistics, strict_baseline, baseline, env_only, env_file)
    _refuse_fix_combinations(
        fix, diff, show_fixes, stdin, env_file, output, statistics, output_file
    )
    accepted = _baseline(baseline, strict_baseline)  # read before the run: a bad one stops it
    given = _stdin_text(root, stdin_filename) if stdin else {}
    asked = _asked(
        (root, config, paths),
        (env_file, env_only),
        (select, ignore, extend_select, extend_ignore),
        accepted,
        cached=not (no_cache or verbose or env_file or given),  # those need the estate itself
        no_cache=no_cache,
        jobs=jobs,
    )
    result, estate, failed = _fixed_and_checked(asked, given, fix, diff, show_fixes, exit_zero)
    if verbose:
        _explain_load(result.remarks, estate, len(result.rules))
    painted = color == "always" or (color == "auto" and output_file is None and _tty())
    _report(result, output, verbose, show_suppressed, painted, statistics, root, output_file)
    code = 2 if failed else result.exit_code
    return 0 if exit_zero and code == 1 else code


def _asked(where, env, chosen, accepted, cached: bool, no_cache: bool, jobs: int):
    """The options as what the pipeline is asked for (:class:`guards.run.pipeline.Asked`),
    with the fixes the reports mark computed for a run that is not taken from the cache."""
    from ..run.pipeline import Asked

    (root, config, paths), (env_file, env_only), (select, ignore, *extend) = where, env, chosen
    return Asked(
        root=root,
        config=config,
        paths=paths,
        env_file=env_file,
        env_only=env_only,
        select=select or (),
        ignore=ignore or (),
        extend_select=extend[0] or (),
        extend_ignore=extend[1] or (),
        baseline=accepted,
        cache=cached,
        cache_shipped=not no_cache,
        workers=jobs,
        finish=_with_fixes,
    )


def _baseline(baseline: Path | None, strict: bool):
    if baseline is None:
        return None
    from ..run import baseline as accepted
    from ..run.pipeline import Baseline

    return Baseline(str(baseline), accepted.load(baseline, str(baseline)), strict)


def _fixed_and_checked(asked, given, fix: bool, diff: bool, show_fixes: bool, exit_zero: bool):
    """The run, with standard input (``given``) in place of its file: fixed first and checked
    again with --fix, its fixes shown (and the command ended) with --diff. The run, the estate,
    and whether a file could not be fixed."""
    from ..sources.files import overridden

    with overridden(given):
        for path in given:
            _readable(asked.root, asked.config, path)
        result, estate, settings = _checked(asked, quiet=fix and not diff)
        if diff:
            _diff(result, estate, settings, show_fixes, exit_zero)
        failed = False
        if fix:
            failed = _fix(result, estate, settings, show_fixes)
            result, estate, settings = _checked(asked)
    return result, estate, failed


def _checked(asked, quiet: bool = False):
    """The run as reported (:func:`guards.run.pipeline.check`: the operator's view with
    --env-file, compared with the baseline), the estate (None when the run came from the
    cache) and the settings; load errors and warnings printed (unless ``quiet``)."""
    from ..run.pipeline import check as checked_run

    done = checked_run(asked)
    say_problems(done.run, quiet)
    return done.run, done.estate, done.settings


def say_problems(result, quiet: bool) -> None:
    for error in () if quiet else result.errors:
        echo_error(error)
    for warning in () if quiet else result.warnings:
        echo(f"guards: warning: {warning}", err=True)


def _refuse_combinations(output, statistics, strict_baseline, baseline, env_only, env_file):
    if statistics and output != "text":
        raise GuardsError(f"--statistics is a text view; it cannot go with --format {output}")
    if strict_baseline and baseline is None:
        raise GuardsError("--strict-baseline needs --baseline FILE")
    if env_only and env_file is None:
        raise GuardsError("--env-only needs --env-file FILE")


def _refuse_fix_combinations(
    fix, diff, show_fixes, stdin, env_file, output, statistics, output_file
):
    if show_fixes and not (fix or diff):
        raise GuardsError("--show-fixes lists what --fix or --diff fixes; it needs one of them")
    if (fix or diff) and env_file is not None:
        asked = "--diff" if diff else "--fix"
        raise GuardsError(f"{asked} fixes the estate as shipped; it cannot go with --env-file")
    if fix and not diff and stdin:
        raise GuardsError("--fix cannot write standard input back; --diff shows its fixes")
    if not diff:
        return
    clash = f"--format {output}" if output != "text" else None
    clash = clash or ("--statistics" if statistics else "--output" if output_file else None)
    if clash:
        raise GuardsError(f"--diff prints a diff; it cannot go with {clash}")


def _reads_stdin(paths: list[Path] | None, stdin_filename: Path | None) -> bool:
    """Whether the one path is ``-``, standard input (which then needs --stdin-filename)."""
    dash = [p for p in paths or [] if str(p) == "-"]
    if dash and len(paths or []) > 1:
        raise GuardsError("`-` (standard input) is the only path when it is given")
    if dash and stdin_filename is None:
        raise GuardsError("`-` reads standard input: --stdin-filename FILE says which file it is")
    if not dash and stdin_filename is not None:
        raise GuardsError("--stdin-filename names the file `-` (standard input) stands for")
    return bool(dash)


def _stdin_text(root: Path, stdin_filename: Path | None) -> dict[Path, bytes]:
    """Standard input's bytes, in place of the file ``--stdin-filename`` names, which must be
    a file of the estate."""
    from ..sources.paths import check_path, is_inside

    assert stdin_filename is not None
    shown = str(stdin_filename)
    check_path(stdin_filename, shown)
    if not is_inside(root, stdin_filename):
        raise GuardsError(f"--stdin-filename is outside the estate ({root}); not checked", shown)
    if not stdin_filename.is_file():
        raise GuardsError("--stdin-filename names no file of the estate; not checked", shown)
    return {stdin_filename: sys.stdin.buffer.read()}


def _readable(root: Path, config: Path | None, stdin_filename: Path | None) -> None:
    """Standard input, read as that file would be: not UTF-8, or too large, stops the run."""
    from ..sources.edit import read

    assert stdin_filename is not None
    settings = load_settings(root, config)
    read(stdin_filename, shown(settings, stdin_filename), settings.max_bytes)


def _with_fixes(result, estate):
    """The run with each finding a fix exists for carrying it (what the reports mark): the
    findings their rules marked ``fixable``, each with the fix the write layer computes (and
    that layer imported only when there is one). A run with --env-file gets none: the fixes
    are of the estate as shipped."""
    fixable = [f for f in result.findings if f.fixable]
    if not fixable:
        return result
    from ..write.fixes import with_fixes

    return result.with_fixes(with_fixes(estate, fixable))


def _carried(result, estate, settings, mode):
    """Every fix of the run's findings made in memory (on the run's estate, else, the run
    came from the cache, on the files they are in, loaded), then rewritten or only rendered
    (``mode``); the errors and the fixes refused said. The plan, each file rewritten, and the
    files that could not be."""
    from ..write.fixes import Plan, carry_out, plan

    paths = sorted({f.path for f in result.findings if f.fixable})
    if not paths:
        return Plan(), [], []
    if estate is None:
        from ..run.estate import load_estate

        estate = load_estate(settings, [settings.root / path for path in paths])
    from ..rules import all_rules
    from ..rules.options import load_options

    options = load_options(settings, all_rules())
    planned = plan(estate, result.findings, options, dt.date.today())
    done, errors = carry_out(estate, planned, mode)
    for error in errors:
        echo_error(error)
    for refused in planned.refused:  # the findings stay, and say what to do by hand
        echo(f"guards: not fixed: {refused}", err=True)
    return planned, done, errors


def _diff(result, estate, settings, show_fixes: bool, exit_zero: bool) -> None:
    """``--diff``: each file's fixes as a unified diff, nothing written; exit 1 if there is one
    (0 with --exit-zero), 2 when an input could not be read or a file could not be rendered."""
    from ..facts.regions import unified_diff

    planned, rendered, errors = _carried(result, estate, settings, "diff")
    for done in rendered:
        echo(unified_diff(done.source.shown, done.source.raw, done.after), nl=False)
    _say_fixes(planned, {done.source.shown for done in rendered}, "would fix", show_fixes)
    code = 2 if result.errors or errors else 1 if rendered else 0
    raise SystemExit(0 if exit_zero and code == 1 else code)  # --diff ends the command


def _fix(result, estate, settings, show_fixes: bool) -> bool:
    """``--fix``: every fix written (through the write lock, to files that still hold what was
    checked); True when a file could not be written."""
    planned, written, errors = _carried(result, estate, settings, "write")
    files = {done.source.shown for done in written if done.written}
    _say_fixes(planned, files, "fixed", show_fixes)
    return bool(errors)


def _say_fixes(planned, files: set[str], verb: str, listed: bool) -> None:
    """How many findings the fixes in ``files`` repair (each of them with --show-fixes);
    nothing when there were none."""
    from ..errors import MAX_PATH, printable

    fixed = sorted((f for f in planned.fixed if f.path in files), key=lambda f: f.sort_key())
    if not fixed:
        return
    if listed:
        for finding in fixed:
            where = f"{printable(finding.path, MAX_PATH)}:{finding.line}:{finding.column}"
            echo(f"guards: {verb} {where}: {finding.rule} {planned.fixed[finding]}", err=True)
    count = f"{len(fixed)} finding{'s' if len(fixed) != 1 else ''}"
    echo(f"guards: {verb} {count} in {len(files)} file{'s' if len(files) != 1 else ''}", err=True)


def _report(result, output, verbose, show_suppressed, painted, statistics, root, output_file):
    """The report, to standard output or ``--output``; the step summary on GitHub."""
    from ..report import reporter

    if statistics:
        from ..report.text import StatisticsReporter

        report = StatisticsReporter(verbose, color=painted).render(result)
    else:
        report = reporter(output, verbose, show_suppressed, painted).render(result)
    if output_file is None:
        echo_raw(report)
    else:
        _write_report(writable(root, output_file, str(output_file)), report, "w")
    if output == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        from ..report.github import step_summary

        _write_report(Path(os.environ["GITHUB_STEP_SUMMARY"]), step_summary(result), "a")


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
