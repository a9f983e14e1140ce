"""Discovery and loading: config -> files -> one read-only :class:`Estate`.

Every input is read and parsed once. An input that cannot be read or parsed becomes an entry
in :attr:`Estate.errors` (the run goes on and exits 2: coverage was partial); an invalid
registry or config raises at once.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from . import yamlsrc
from .compose import Compose, parse_compose
from .config import ALWAYS_EXCLUDED, Config
from .edit import check_path
from .errors import GuardsError

if TYPE_CHECKING:
    from .claimscan import ClaimScan
    from .notes import Note
    from .regen import RegionError, Rendered
    from .registry import Registry

YAML_SUFFIXES = (".yml", ".yaml")
SERVICES_LINE = re.compile(r"^services\s*:", re.MULTILINE)


@dataclass
class Estate:
    root: Path
    config: Config
    registry: Registry
    composes: list[Compose] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    errors: list[GuardsError] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)  # what --verbose explains
    _rendered: dict[str, list[Rendered] | RegionError] = field(default_factory=dict, repr=False)

    @property
    def files(self) -> int:
        return len(self.composes) + len(self.notes)

    @cached_property
    def claim_scan(self) -> ClaimScan:
        """The estate read for claims (passages, vocabulary), built once when first used."""
        from .claimscan import ClaimScan

        return ClaimScan(self)

    def rendered_regions(self, compose: Compose) -> list[Rendered] | RegionError:
        """The compose's regions as its templates render them, once per compose (the region
        guards share it); a region that cannot be rendered gives its error."""
        cache = self._rendered
        if compose.path not in cache:
            from .regen import RegionError, render_regions  # jinja2 only for files with regions

            try:
                cache[compose.path] = render_regions(
                    compose, self.registry, self.root / self.config.templates, self.root
                )
            except RegionError as exc:
                cache[compose.path] = exc
        return cache[compose.path]


def load_estate(
    config: Config, paths: list[Path] | None = None, env: Mapping[str, str] | None = None
) -> Estate:
    registry, remark = _registry(config)
    estate = Estate(config.root, config, registry, remarks=[remark] if remark else [])
    compose_files, note_files = _targets(config, paths, estate)
    for path, certain in compose_files:
        _load(estate, path, functools.partial(_add_compose, estate, env=env, certain=certain))
    if note_files:
        from .notes import parse_note

        for path in note_files:
            _load(estate, path, lambda text, shown: estate.notes.append(parse_note(text, shown)))
    return estate


def shown_path(config: Config, path: Path) -> str:
    """A path as users see it: relative to the root with ``/`` when it is inside the root."""
    # abspath, not resolve(): a symlink is shown (and matched) under its own name.
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(config.root)).as_posix()
    except ValueError:
        return path.as_posix()


def _registry(config: Config) -> tuple[Registry, str | None]:
    path = config.root / config.claims
    shown = shown_path(config, path)
    try:
        check_path(path, shown)
    except GuardsError as exc:
        raise GuardsError(
            f"`claims`: {exc.message}", config.source or shown, config.line_of("claims")
        ) from None
    if not path.exists():
        if config.claims_named:
            raise GuardsError(f"claims registry named by {config.source} does not exist", shown)
        from .registry import empty

        return empty(shown), (f"no {shown}: claim guards run against an empty registry")
    from .registry import load

    registry = load(path, shown, config.max_bytes)
    return registry, f"registry {shown}: {len(registry.claims)} claims"


def _add_compose(
    estate: Estate, text: str, shown: str, env: Mapping[str, str] | None, certain: bool
) -> None:
    """Parse a compose; a discovered YAML file without ``services:`` is simply not one."""
    if certain or SERVICES_LINE.search(text):
        estate.composes.append(parse_compose(text, shown, env))


def _load(estate: Estate, path: Path, parse) -> None:
    shown = shown_path(estate.config, path)
    try:
        parse(yamlsrc.read_text(path, shown, estate.config.max_bytes), shown)
    except GuardsError as error:
        estate.errors.append(error)


# -- discovery --------------------------------------------------------------------------------


def _targets(
    config: Config, paths: list[Path] | None, estate: Estate
) -> tuple[list[tuple[Path, bool]], list[Path]]:
    """Compose candidates (path, certainly a compose) and notes to load."""
    if not paths:
        found = _discover(config, config.root, estate)
        _unmatched_patterns(config, found, estate)
        return found
    composes: list[tuple[Path, bool]] = []
    notes: list[Path] = []
    for path in paths:
        try:
            check_path(path, str(path))
        except GuardsError as exc:
            estate.errors.append(exc)
            continue
        if path.is_dir():
            found = _discover(config, path, estate)
            composes += found[0]
            notes += found[1]
        elif not path.exists():
            estate.errors.append(GuardsError("no such file or directory", shown_path(config, path)))
        elif _outside(config, path):
            estate.errors.append(
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


def _unmatched_patterns(
    config: Config, found: tuple[list[tuple[Path, bool]], list[Path]], estate: Estate
) -> None:
    """A pattern the config names that selects no file, or an estate with nothing to check,
    is an error: a misconfigured CI must not pass with `0 pass / 0 fail`."""
    shown = [shown_path(config, p) for p, _ in found[0]] + [shown_path(config, p) for p in found[1]]
    for key, patterns in (("composes", config.composes or ()), ("notes", config.notes)):
        if key not in config.named:
            continue
        for pattern in patterns:
            if not any(glob_match(path, pattern) for path in shown):
                estate.errors.append(
                    GuardsError(
                        f"`{key}` pattern {pattern!r} matches no file",
                        config.source,
                        config.line_of(key),
                    )
                )
    if not shown and not estate.registry.claims and not estate.errors:
        estate.errors.append(
            GuardsError(
                "nothing to check: no compose, no note and no claim found under the root",
                config.source or shown_path(config, config.root),
            )
        )


def _discover(
    config: Config, top: Path, estate: Estate
) -> tuple[list[tuple[Path, bool]], list[Path]]:
    composes: list[tuple[Path, bool]] = []
    notes: list[Path] = []
    for path in _walk(config, top, estate):
        _sort(config, path, composes, notes)
    return composes, notes


def _sort(config: Config, path: Path, composes: list[tuple[Path, bool]], notes: list[Path]) -> None:
    """A file named or found goes where the settings' globs put it (or nowhere)."""
    kind = _kind(config, path)
    if kind == "note":
        notes.append(path)
    elif kind is not None:
        composes.append((path, kind == "compose"))


def _walk(config: Config, top: Path, estate: Estate) -> list[Path]:
    found: list[Path] = []

    def unreadable(error: OSError) -> None:
        estate.errors.append(
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


def glob_match(shown: str, pattern: str) -> bool:
    """Glob match where ``**/`` may match no directory at all (``a/**/*.yml`` matches a/x.yml)."""
    if fnmatch.fnmatchcase(shown, pattern):
        return True
    return "**/" in pattern and fnmatch.fnmatchcase(shown, pattern.replace("**/", ""))


def _excluded(config: Config, shown: str) -> bool:
    return any(
        glob_match(shown, pattern) or shown.startswith(pattern.rstrip("/") + "/")
        for pattern in config.exclude
    )
