"""The options and arguments several commands declare (typer). Apart from the helpers they share
(``guards.cli.common``), which the command line's typer-free path (``guards check PATH...``)
imports too."""

# No `from __future__ import annotations` in the command modules: typer reads the annotations
# of every command on every run, and strings would each be evaluated (about 6 ms a run).

import typer

ROOT_OPTION = typer.Option(
    None,
    "--root",
    metavar="DIR",
    help="The estate (default: the nearest folder at or above the current one, or above the "
    "first path named, with a guards.toml or a pyproject.toml with [tool.guards]).",
)
CONFIG_OPTION = typer.Option(
    None, "--config", metavar="FILE", help="A TOML file with the settings of [tool.guards]."
)
ID_ARGUMENT = typer.Argument(..., metavar="ID")  # a claim's id
ENV_FILE_OPTION = typer.Option(
    None, "--env-file", metavar="FILE", help="Evaluate composes with this operator .env."
)


def paths_argument(what: str):
    """The PATHS argument of a command that rewrites files."""
    return typer.Argument(
        None,
        metavar="PATHS",
        help=f"Composes or folders to {what} (default: the whole estate under --root).",
        show_default=False,
    )
