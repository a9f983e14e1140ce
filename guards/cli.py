"""The ``guards`` command line. Thin: parse options, call the library, print, exit.

Exit codes: 0 every check passed; 1 a check failed; 2 usage or config error, or an input that
could not be read or parsed (the rest is still checked); 3 an internal error (see the log).
"""

from __future__ import annotations

import sys
import tempfile
import traceback
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from .errors import GuardsError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Lint compose estates and the claims their headers and notes make.")


class Format(str, Enum):
    text = "text"
    json = "json"


def _split(values: Optional[list[str]]) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


@app.command()
def check(
    paths: Optional[list[Path]] = typer.Argument(None, help="Files or folders to check "
                                                 "(default: the whole estate)."),
    root: Path = typer.Option(Path("."), "--root", help="The estate to check."),
    config: Optional[Path] = typer.Option(None, "--config", help="TOML file with the keys of "
                                          "[tool.guards]."),
    env_file: Optional[Path] = typer.Option(None, "--env-file", help="Evaluate composes with "
                                            "this operator .env overlay."),
    output: Format = typer.Option(Format.text, "--format", help="Output format."),
    select: Optional[list[str]] = typer.Option(None, "--select", help="Rule ids, names, "
                                               "prefixes or families to run."),
    ignore: Optional[list[str]] = typer.Option(None, "--ignore", help="Rules to skip."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Explain what was loaded and "
                                 "show hints."),
) -> None:
    """Run the guard suite and print one line per failing check."""
    from . import rules as rule_registry
    from .config import load_config
    from .estate import load_estate
    from .suite import run

    settings = load_config(_root(root), config)
    env = _env(env_file)
    chosen = rule_registry.select(rule_registry.all_rules(), _split(select) or settings.select,
                                  _split(ignore) or settings.ignore)
    estate = load_estate(settings, list(paths) if paths else None, env)
    results = run(estate, chosen)
    for error in estate.errors:
        typer.echo(f"guards: error: {error}", err=True)
    if verbose:
        _explain_load(estate, len(chosen))
    if output is Format.json:
        from .report import json as reporter
        typer.echo(reporter.render(results, estate.files), nl=False)
    else:
        from .report import text
        typer.echo(text.render(results, estate.files, verbose), nl=False)
    raise typer.Exit(2 if estate.errors else (1 if any(not r.passed for r in results) else 0))


@app.command("rules")
def list_rules() -> None:
    """List every rule: id, name, family and what it checks."""
    from .rules import all_rules
    for rule in all_rules():
        typer.echo(f"{rule.id}  {rule.name:<18} {rule.family:<7} {rule.summary}")


@app.command()
def explain(rule: str = typer.Argument(..., help="Rule id or name.")) -> None:
    """Print a rule's documentation: why it exists, a bad and a good example."""
    from .rules import all_rules, find
    found = find(all_rules(), rule) or find(all_rules(), rule.upper())
    if found is None:
        raise GuardsError(f"unknown rule `{rule}` (see `guards rules`)")
    typer.echo(found.doc.strip())


def _root(root: Path) -> Path:
    if not root.is_dir():
        raise GuardsError("--root is not a directory", str(root))
    return root


def _env(env_file: Optional[Path]) -> dict[str, str]:
    if env_file is None:
        return {}
    from .envfile import load_env_file
    return load_env_file(env_file, str(env_file))


def _explain_load(estate, rule_count: int) -> None:
    for remark in estate.remarks:
        typer.echo(f"guards: {remark}", err=True)
    typer.echo(f"guards: {len(estate.composes)} composes, {len(estate.notes)} notes, "
               f"{rule_count} rules (config: {estate.config.source or 'none, discovery'})",
               err=True)


def main() -> None:
    try:
        app()
    except GuardsError as error:
        print(f"guards: error: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception:  # noqa: BLE001 - the one place unexpected errors are turned into exit 3
        with tempfile.NamedTemporaryFile("w", prefix="guards-crash-", suffix=".log",
                                         delete=False) as log:
            traceback.print_exc(file=log)
        print(f"guards: internal error: {sys.exc_info()[1]!r} (details in {log.name})",
              file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
