"""Finding and loading the settings: ``--config FILE``, else ``[tool.guards]`` in
pyproject.toml, else ``guards.toml``.

The file's TOML table is validated against :mod:`guards.sources.settings` (the one schema), and
an error is placed at the line of the key it concerns. A kept run hands in the values
validated before (``kept``), keyed by the file's text: validating needs pydantic, and a kept run
does without it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import GuardsError, located
from . import plain
from .config import Config, Kept, line_of, parse_toml


def find_settings(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` with settings: a guards.toml, or a
    pyproject.toml with a ``[tool.guards]`` table (ruff's and pytest's search). None when no
    folder up to the top has them."""
    for folder in (start, *start.parents):
        if (folder / "guards.toml").is_file() or _has_tool_table(folder / "pyproject.toml"):
            return folder
    return None


def _has_tool_table(pyproject: Path) -> bool:
    try:
        text = pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:  # absent, a folder, unreadable: not settings
        return False
    if "tool.guards" not in text:
        return False
    shown = os.path.relpath(pyproject)  # as errors name it: pyproject.toml, ../pyproject.toml
    with located(shown):
        return _tool_table(parse_toml(text, shown), text) is not None


def load_config(root: Path, config_file: Path | None = None, kept: Kept | None = None) -> Config:
    """Settings from ``--config FILE``, else ``[tool.guards]`` in pyproject.toml, else
    ``guards.toml``. A guards.toml or ``--config`` file takes the keys at its top level or,
    pasted from pyproject.toml, under ``[tool.guards]``."""
    if config_file is not None:
        return _load(root, config_file, str(config_file), kept, standalone=True)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        found = _load(root, pyproject, "pyproject.toml", kept, standalone=False)
        if found is not None:
            return found
    standalone = root / "guards.toml"
    if standalone.is_file():
        return _load(root, standalone, "guards.toml", kept, standalone=True)
    return Config(root=root)


def _load(root: Path, path: Path, shown: str, kept: Kept | None, standalone: bool) -> Any:
    """The settings in ``path``; a pyproject.toml without ``[tool.guards]`` gives None. The
    checks below raise without a file: this places them."""
    from .edit import check_path, read

    if not check_path(path, shown).exists():
        raise GuardsError("config file not found", shown)
    text = read(path, shown).text
    data = parse_toml(text, shown)
    with located(shown):
        table = _tool_table(data, text)
        if table is None and not standalone:
            return None
        if table is not None and standalone and set(data) != {"tool"}:
            raise GuardsError(
                "settings both at the top level and under [tool.guards]; keep one",
                None,
                line_of(text, "tool"),
            )
        table = data if table is None else table
        values = from_kept(kept.get(text)) if kept is not None else None
        if values is None:
            values = _validated(table, text)
            if kept is not None:
                kept.put(text, values)
    return Config(root=root, named=frozenset(table), source=shown, source_text=text, **values)


def _tool_table(data: dict[str, Any], text: str) -> dict[str, Any] | None:
    tool = data.get("tool")
    if tool is None:
        return None
    table = tool.get("guards") if isinstance(tool, dict) else None
    if (tool is not None and not isinstance(tool, dict)) or (
        table is not None and not isinstance(table, dict)
    ):
        raise GuardsError("`tool.guards` must be a table", None, line_of(text, "tool"))
    return table


def _validated(table: dict[str, Any], text: str) -> dict[str, Any]:
    from .settings import validate

    return validate(table, lambda key, inner: (None, line_of(text, inner or key)))


def from_kept(values: Any) -> dict[str, Any] | None:
    """Settings kept as JSON, as :class:`Config` fields, each checked against its type (lists
    back to tuples); None when they are not the fields this code has, of their types (kept by
    another version, or damaged): a miss."""
    kinds = plain.fields_of(Config)
    names = kinds.keys() - {"root", "named", "source", "source_text"}
    if not isinstance(values, dict) or values.keys() != names:
        return None
    try:
        return {name: plain.build(kinds[name], value) for name, value in values.items()}
    except (ValueError, TypeError):
        return None
