"""The ``guards`` command line. Thin: parse options, call the library, print, exit.

Exit codes: 0 every check passed; 1 a check failed; 2 usage or config error, or an input that
could not be read or parsed (the rest is still checked); 3 an internal error (see the log).

The commands live one module per group: check (check, baseline), write (regen, fix), claims,
evidence, reference (rules, schema, explain); what they share is in common.
"""

# No `from __future__ import annotations` here: typer reads the annotations of every command
# on every run, and strings would each be evaluated (about 6 ms a run).

import sys

import typer

from ..errors import GuardsError
from . import check, reference, server, write
from .claims import claims_app
from .evidence import evidence_app

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
app.command()(check.check)
app.command("baseline")(check.write_baseline)
app.command()(write.regen)
app.command()(write.fix)
app.command("rules")(reference.list_rules)
app.command("schema")(reference.print_schema)
app.command()(reference.explain)
app.command()(server.server)
app.add_typer(claims_app, name="claims")
app.add_typer(evidence_app, name="evidence")


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
