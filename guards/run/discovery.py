"""Discovery: which files of the estate (or of the named paths) are composes and notes.

Cheap and apart from loading: a run looks at what discovery found before it parses anything
(``guards.run.cache`` keys a run by it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..errors import GuardsError
from ..sources.config import ALWAYS_EXCLUDED, TOOL_MADE, Config
from ..sources.modelfile import is_modelfile
from ..sources.paths import check_path
from ..sources.patterns import glob_match

YAML_SUFFIXES = (".yml", ".yaml")
MAX_TREE = 100_000  # entries listed under the root; past it the listing is incomplete


class Tree(NamedTuple):
    """Every file and folder under the root, as shown paths (``/``-separated, from the root),
    for rules that judge paths documents name (D011). A folder listed but not looked into is
    ``closed``: a version-control folder, one the settings exclude, a link to a folder, one
    that cannot be listed; what lies below it is unknown, not absent. A folder tools make
    (``TOOL_MADE``) is not listed at all, and what lies below one is unknown too. ``complete`` is False
    when the listing stopped at ``MAX_TREE`` entries (or was never made)."""

    files: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()
    closed: frozenset[str] = frozenset()
    complete: bool = False

    def key(self) -> list[str]:
        """The listing as the run cache keys it: a file added or removed is another run."""
        return [
            f"tree {self.complete}",
            *(f"file {p}" for p in sorted(self.files)),
            *(f"folder {p}" for p in sorted(self.folders)),
            *(f"closed {p}" for p in sorted(self.closed)),
        ]


@dataclass
class Found:
    """What discovery found: compose candidates (path, certainly a compose), notes, and the
    paths it could not look at; beside them, the listing of the whole root and the Ollama
    Modelfiles in it (taken from the listing, so only when discovery ran under the root)."""

    composes: list[tuple[Path, bool]]
    notes: list[Path]
    errors: list[GuardsError]
    named: bool  # the paths were named, not discovered under the root
    tree: Tree = field(default_factory=Tree)
    modelfiles: list[Path] = field(default_factory=list)


def discover(config: Config, paths: list[Path] | None = None) -> Found:
    errors: list[GuardsError] = []
    composes, notes = _targets(config, paths, errors)
    tree = list_tree(config)
    modelfiles = [] if paths else modelfiles_of(config, tree)
    return Found(composes, notes, errors, bool(paths), tree, modelfiles)


def modelfiles_of(config: Config, tree: Tree) -> list[Path]:
    """The Modelfiles of the root's listing that the settings do not exclude, read for what
    their names say (``llama3_48k.Modelfile``). The listing is in the run's key, so a
    Modelfile added or removed is another run, and each one read is recorded."""
    return [
        config.root / shown
        for shown in sorted(tree.files)
        if is_modelfile(shown) and not _excluded(config, shown)
    ]


def list_tree(config: Config) -> Tree:
    """The root's :class:`Tree`, by one ``os.scandir`` walk that does not follow links and
    reads no file (a listing that cannot be made is a closed folder, never an error)."""
    files: list[str] = []
    folders: list[str] = []
    closed: list[str] = []
    stack = [""]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(os.path.join(config.root, folder)) as listing:
                entries = [(e.name, _is_folder(e), e.is_symlink()) for e in listing]
        except OSError:
            closed.append(folder)
            continue
        for name, is_folder, link in entries:
            shown = f"{folder}/{name}" if folder else name
            if not is_folder:
                files.append(shown)
            elif name in TOOL_MADE and not link:
                continue
            elif link or name in ALWAYS_EXCLUDED or _excluded(config, shown + "/"):
                closed.append(shown)
            else:
                folders.append(shown)
                stack.append(shown)
        if len(files) + len(folders) > MAX_TREE:
            return Tree(frozenset(files), frozenset(folders), frozenset(closed), False)
    opened = "" not in closed  # the root itself could be listed
    return Tree(frozenset(files), frozenset(folders), frozenset(c for c in closed if c), opened)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # a link to a folder counts: it is listed closed
    except OSError:
        return False


def shown_path(config: Config, path: Path) -> str:
    """A path as users see it: relative to the root with ``/`` when it is inside the root."""
    # abspath, not resolve(): a symlink is shown (and matched) under its own name.
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(config.root)).as_posix()
    except ValueError:
        return path.as_posix()


def _targets(
    config: Config, paths: list[Path] | None, errors: list[GuardsError]
) -> tuple[list[tuple[Path, bool]], list[Path]]:
    """Compose candidates (path, certainly a compose) and notes to load."""
    if not paths:
        return _discover(config, config.root, errors)
    composes: list[tuple[Path, bool]] = []
    notes: list[Path] = []
    for path in paths:
        try:
            check_path(path, str(path))
        except GuardsError as exc:
            errors.append(exc)
            continue
        if path.is_dir():
            found = _discover(config, path, errors)
            composes += found[0]
            notes += found[1]
        elif not path.exists():
            errors.append(GuardsError("no such file or directory", shown_path(config, path)))
        elif _outside(config, path):
            errors.append(
                GuardsError(
                    f"is outside the estate (--root {config.root}); not checked",
                    shown_path(config, path),
                )
            )
        elif not _excluded(config, shown_path(config, path)):
            _sort(config, path, composes, notes)
    return list(dict.fromkeys(composes)), list(dict.fromkeys(notes))


def _outside(config: Config, path: Path) -> bool:
    shown = shown_path(config, path)
    return shown.startswith(("/", "../")) or shown == ".."


def _discover(
    config: Config, top: Path, errors: list[GuardsError]
) -> tuple[list[tuple[Path, bool]], list[Path]]:
    composes: list[tuple[Path, bool]] = []
    notes: list[Path] = []
    for path in _walk(config, top, errors):
        _sort(config, path, composes, notes)
    return composes, notes


def _sort(config: Config, path: Path, composes: list[tuple[Path, bool]], notes: list[Path]) -> None:
    """A file named or found goes where the settings' globs put it (or nowhere)."""
    kind = _kind(config, path)
    if kind == "note":
        notes.append(path)
    elif kind is not None:
        composes.append((path, kind == "compose"))


def _walk(config: Config, top: Path, errors: list[GuardsError]) -> list[Path]:
    found: list[Path] = []

    def unreadable(error: OSError) -> None:
        errors.append(
            GuardsError(
                f"cannot list directory: {error.strerror}",
                shown_path(config, Path(error.filename or top)),
            )
        )

    for folder, dirs, files in os.walk(top, onerror=unreadable):
        base = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in ALWAYS_EXCLUDED and not _excluded(config, shown_path(config, base / d))
        )
        for name in sorted(files):
            path = base / name
            if not _excluded(config, shown_path(config, path)):
                found.append(path)
    return found


def _kind(config: Config, path: Path) -> str | None:
    shown = shown_path(config, path)
    if _matches(shown, config.notes):
        return "note"
    if path.suffix not in YAML_SUFFIXES or shown == config.claims:
        return None
    if config.composes is not None:
        return "compose" if _matches(shown, config.composes) else None
    return "candidate"  # without config: a compose if it has a top-level `services:` key


def _matches(shown: str, patterns: tuple[str, ...]) -> bool:
    return any(glob_match(shown, pattern) for pattern in patterns)


def _excluded(config: Config, shown: str) -> bool:
    return any(
        glob_match(shown, pattern) or shown.startswith(pattern.rstrip("/") + "/")
        for pattern in config.exclude
    )
