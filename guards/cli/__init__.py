"""The ``guards`` command line. Thin: parse options, call the library, print, exit.

Exit codes: 0 every check passed; 1 a check failed; 2 usage or config error, or an input that
could not be read or parsed (the rest is still checked); 3 an internal error (see the log).

``main`` runs ``check PATH...`` with no option (the pre-commit hook's command line) straight
through ``checking``, without typer; every other command line goes to the typer application
(``app``). The commands live one module per group: check (check, baseline; their work in
checking), write (regen, fix), claims, evidence, reference (rules, schema, explain); the
options they share are in options, the helpers in common.
"""

import sys
from pathlib import Path

from ..errors import GuardsError


def main() -> None:
    try:
        sys.exit(_run(sys.argv[1:]))
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


def _run(argv: list[str]) -> int:
    """The command's exit code. ``guards check PATH...`` with no option, what the pre-commit
    hook runs on every commit, runs without typer (about 30 ms a run less); any other command
    line goes through it."""
    paths = plain_check(argv)
    if paths is not None:
        from .checking import run_check

        return run_check(paths=paths or None)
    from .app import run

    return run()


def plain_check(argv: list[str]) -> list[Path] | None:
    """The paths of ``check PATH...`` when nothing else is given (no option, no ``-`` for
    standard input, no ``--``); None for any other command line."""
    if not argv or argv[0] != "check" or any(arg.startswith("-") for arg in argv[1:]):
        return None
    return [Path(arg) for arg in argv[1:]]
