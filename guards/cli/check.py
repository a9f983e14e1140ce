"""``guards check`` and ``guards baseline``: the suite on the estate, reported or recorded."""

from pathlib import Path

import typer

from ..errors import GuardsError
from ..report import FORMATS
from ..sources.paths import inside, writable
from .checking import run_check, say_problems
from .common import echo, estate_root
from .options import CONFIG_OPTION, ENV_FILE_OPTION, ROOT_OPTION


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
EXTEND_SELECT = typer.Option(
    None, "--extend-select", metavar="IDS", help="Rules to run besides those selected."
)
EXTEND_IGNORE = typer.Option(
    None, "--extend-ignore", metavar="IDS", help="Rules to skip besides those ignored."
)
FIX = typer.Option(
    False, "--fix", help="Apply the fixes (C001, C002, G001) first, then report what remains."
)
DIFF = typer.Option(
    False, "--diff", help="Print the fixes as a unified diff; write nothing (exit 1 if any)."
)
SHOW_FIXES = typer.Option(False, "--show-fixes", help="List each fix --fix (or --diff) makes.")
EXIT_ZERO = typer.Option(
    False, "--exit-zero", help="Exit 0 even when a check fails (2 still means an error)."
)
STDIN_FILENAME = typer.Option(
    None,
    "--stdin-filename",
    metavar="FILE",
    help="With `-` as the path: the file of the estate the text on standard input stands for.",
)
FORMAT = typer.Option(
    "text", "--format", metavar="|".join(FORMATS), help="Output format.", callback=_format
)
VERBOSE = typer.Option(False, "--verbose", "-v", help="Explain what was loaded and show hints.")
REPORT_FILE = typer.Option(
    None, "--output", metavar="FILE", help="Write the report to FILE, not standard output."
)
STATISTICS = typer.Option(
    False, "--statistics", help="Count the findings (and the fixable ones) per rule."
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
    extend_select: list[str] | None = EXTEND_SELECT,
    ignore: list[str] | None = IGNORE_OPTION,
    extend_ignore: list[str] | None = EXTEND_IGNORE,
    fix: bool = FIX,
    diff: bool = DIFF,
    show_fixes: bool = SHOW_FIXES,
    exit_zero: bool = EXIT_ZERO,
    stdin_filename: Path | None = STDIN_FILENAME,
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
    raise typer.Exit(run_check(**locals()))


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
    from ..run.pipeline import Asked, run_once
    from ..sources.edit import locked, write_file

    result = run_once(
        Asked(
            root=root,
            config=config,
            paths=paths,
            env_file=env_file,
            select=select or (),
            ignore=ignore or (),
        )
    ).run
    say_problems(result, quiet=False)
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
