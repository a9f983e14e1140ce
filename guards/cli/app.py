"""The typer application: every command and group, registered in the order `guards --help`
lists them, and how typer's own exits become exit codes (``run``)."""

# No `from __future__ import annotations` here: typer reads the annotations of every command
# on every run, and strings would each be evaluated (about 6 ms a run).

import sys

import typer

from .check import check, write_baseline
from .claims import claims_app
from .evidence import evidence_app
from .reference import explain, list_rules, print_schema
from .server import server
from .write import fix, regen

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Lint compose estates and the claims their headers and notes make.",
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"guards {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Lint compose estates and the claims their headers and notes make."""


# In the order `guards --help` lists them (the groups come after the commands).
app.command()(check)
app.command("baseline")(write_baseline)
app.command()(regen)
app.command()(fix)
app.command("rules")(list_rules)
app.command("schema")(print_schema)
app.command()(explain)
app.command()(server)
app.add_typer(claims_app, name="claims")
app.add_typer(evidence_app, name="evidence")


def run() -> int:
    """Parse the command line with typer and run the command: its exit code. Typer's usage
    errors are one line and exit 2, as every other error; the rest is ``guards.cli.main``'s."""
    try:
        code = app(standalone_mode=False)  # returns the code of a `typer.Exit`
        return code if isinstance(code, int) else 0
    except typer.Exit as done:
        return done.exit_code
    except typer.Abort:
        return 130
    except typer.TyperException as error:  # usage errors: one line, like every other error
        if type(error).__name__ == "NoArgsIsHelpError":  # `guards` alone: the help, as usage
            print(error.format_message(), file=sys.stderr)
            return 2
        ctx = getattr(error, "ctx", None)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        print(f"guards: error: {error.format_message()}{where}", file=sys.stderr)
        return 2
