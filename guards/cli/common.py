"""What every command module shares: printing, and loading the settings and the estate. No
typer here (the shared options are in ``guards.cli.options``): the typer-free path of
``guards check PATH...`` (``guards.cli.checking``) uses it too. Here rather than in the
package's ``__init__``: a command importing the package back would close a cycle."""

import sys
from pathlib import Path

from ..errors import GuardsError, printable_lines


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """Print text that carries what files hold (paths, diffs, passages): every line escaped
    (guards.errors.printable_lines), so no file can write to the terminal or forge a CI log
    command."""
    echo_raw(printable_lines(text) + ("\n" if nl else ""), err)


def echo_raw(text: str, err: bool = False) -> None:
    """Write ``text`` as it is (a report, its colours included when it has them) and flush."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text)
    stream.flush()


def echo_error(error: GuardsError) -> None:
    echo(f"guards: error: {error}", err=True)


def estate_root(
    root: Path | None, config: Path | None = None, paths: list[Path] | None = None
) -> Path:
    """The estate's folder: ``--root``; else, with ``--config``, the current folder; else the
    nearest folder with settings at or above the first path named (the current folder when
    none is named), as ruff finds its settings; else the current folder."""
    if root is not None:
        return root_dir(root)
    if config is not None:
        return Path(".")
    import os

    from ..sources.configfile import find_settings

    try:
        start = Path(os.path.abspath(paths[0] if paths else "."))
        found = find_settings(start if start.is_dir() else start.parent)
    except (OSError, ValueError):  # a name the system cannot look up: its check says why
        found = find_settings(Path(os.path.abspath(".")))
    return Path(os.path.relpath(found)) if found is not None else Path(".")


def root_dir(root: Path) -> Path:
    from ..sources.paths import check_path

    if not check_path(root, str(root)).is_dir():
        raise GuardsError("--root is not a directory", str(root))
    return root


def load_settings(root: Path, config: Path | None, kept=None):
    """The settings for ``root``; ``kept`` (the run cache's) spares validating them again."""
    from ..sources.configfile import load_config

    return load_config(root_dir(root), config, kept)


def shown(settings, path: Path) -> str:
    """``path`` as messages show it (relative to the root)."""
    from ..run.discovery import shown_path

    return shown_path(settings, path)


def load(settings, paths: list[Path] | None):
    """The estate (or the given paths of it); load errors printed as they are found."""
    from ..run.estate import load_estate

    estate = load_estate(settings, list(paths) if paths else None)
    for error in estate.errors:
        echo_error(error)
    return estate


def whole_estate(root: Path, config: Path | None):
    return load(load_settings(root, config), None)


def exit_for(estate) -> None:
    """Exit 2 when an input could not be read, else 0."""
    raise SystemExit(2 if estate.errors else 0)
