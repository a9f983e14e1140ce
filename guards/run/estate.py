"""Discovery and loading: config -> files -> one read-only :class:`Estate`.

Every input is read and parsed once. An input that cannot be read or parsed becomes an entry
in :attr:`Estate.errors` (the run goes on and exits 2: coverage was partial); an invalid
registry or config raises at once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..errors import GuardsError
from ..sources import reads, yamlsrc
from ..sources.compose.compose import Compose, OtherFile, parse_compose
from ..sources.compose.header import Convention, convention
from ..sources.config import Config, Kept
from ..sources.modelfile import Modelfile, parse_modelfile
from ..sources.paths import check_path, inside, is_inside
from ..sources.patterns import glob_match
from . import parallel, stacks
from .discovery import Found, Tree, discover, shown_path
from .environment import Environments, EnvUse

if TYPE_CHECKING:
    from ..claims.scan import ClaimScan
    from ..facts.regions import RegionError, Rendered
    from ..sources.notes.notes import Note
    from ..sources.registry import Registry

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
    warnings: list[str] = field(default_factory=list)  # shown on every run, exit unchanged
    tree: Tree = field(default_factory=Tree)  # every file under the root (discovery's listing)
    env_use: dict[str, EnvUse] = field(default_factory=dict)  # env files each compose reads
    modelfiles: list[Modelfile] = field(default_factory=list)  # Ollama Modelfiles (D008)
    # alternative stacks of a base (guards.run.stacks), each by its target: its last file
    alternatives: dict[str, Compose] = field(default_factory=dict)
    _rendered: dict[str, list[Rendered] | RegionError] = field(default_factory=dict, repr=False)
    renders: Kept | None = field(default=None, repr=False)  # earlier renders of regions

    @property
    def files(self) -> int:
        return len(self.composes) + len(self.notes)

    @cached_property
    def compose_names(self) -> frozenset[str]:
        """How comments name the estate's composes (``guards.facts.figures.estate_names``)."""
        from ..facts.figures import estate_names

        return estate_names(c.path for c in self.composes)

    @cached_property
    def composes_by_path(self) -> Mapping[str, Compose]:
        """The composes by path, built once: a check that looks up the composes another one
        names reads this, not a mapping of the whole estate of its own."""
        return MappingProxyType({c.path: c for c in self.composes})

    def prepare(self) -> None:
        """Build what every check shares, once (before worker processes inherit the estate,
        each of which would build it again)."""
        _ = self.compose_names, self.composes_by_path
        self.claim_scan.prepare()

    @cached_property
    def claim_scan(self) -> ClaimScan:
        """The estate read for claims (passages, vocabulary), built once when first used."""
        from ..claims.scan import ClaimScan

        return ClaimScan(self)

    def rendered_regions(self, compose: Compose) -> list[Rendered] | RegionError:
        """The compose's regions as its templates render them, once per compose (the region
        guards share it); a region that cannot be rendered gives its error."""
        cache = self._rendered
        if compose.path not in cache:
            from ..facts.regions import (  # jinja2 only for files with regions
                RegionError,
                render_regions,
            )

            try:
                cache[compose.path] = render_regions(
                    compose,
                    self.registry,
                    self.root / self.config.templates,
                    self.root,
                    self.renders,
                )
            except RegionError as exc:
                cache[compose.path] = exc
        return cache[compose.path]


def load_estate(
    config: Config,
    paths: list[Path] | None = None,
    env: Mapping[str, str] | None = None,
    found: Found | None = None,
    workers: int = 1,
    kept: Kept | None = None,
    renders: Kept | None = None,
) -> Estate:
    """The estate: ``found`` by discovery (of ``paths``, or under the root), parsed in
    ``workers`` processes when there are enough files (``guards.run.parallel``), with the
    cycle collector paused (what parsing builds outlives it); the claims registry validated,
    or built from what ``kept`` holds for its text; regions rendered, or taken from what
    ``renders`` holds (:func:`guards.facts.regions.render_regions`)."""
    with parallel.collector_paused():
        estate = _load(config, paths, env, found, workers, kept)
    estate.renders = renders
    return estate


def _load(
    config: Config,
    paths: list[Path] | None,
    env: Mapping[str, str] | None,
    found: Found | None,
    workers: int,
    kept: Kept | None,
) -> Estate:
    registry, remark = _registry(config, kept)
    estate = Estate(config.root, config, registry, remarks=[remark] if remark else [])
    found = found or discover(config, paths)
    estate.errors += found.errors
    estate.tree = found.tree
    if not found.named:
        _unmatched_patterns(config, (found.composes, found.notes), estate)
    files = [*found.composes, *((path, None) for path in found.notes)]
    environments = Environments(config, env)  # a bad `env-files` stops the run here
    said = dict.fromkeys([*estate.remarks, *environments.remarks()])
    parse = functools.partial(_parse_file, config, environments, convention(config.header))
    for parsed, remarks in parallel.ordered_map(parse, files, workers):
        said.update(dict.fromkeys(remarks))  # a folder's env file is said once, not per compose
        if isinstance(parsed, GuardsError):
            if str(parsed) not in map(str, estate.errors):  # a bad `.env`: once per folder
                estate.errors.append(parsed)
        elif isinstance(parsed, Compose):
            estate.composes.append(parsed)
        elif parsed is not None:
            estate.notes.append(parsed)
    header = convention(config.header)
    planned = stacks.plan(config, estate.composes, said)
    for stack in planned.stacks:
        _stack(config, environments, header, estate, stack)
    for stack in planned.alternatives:
        _stack(config, environments, header, estate, stack, alternative=True)
    estate.env_use = environments.uses([(c.path, c.written, c.env) for c in estate.composes])
    _modelfiles(config, found.modelfiles, estate)
    estate.remarks = list(said)
    return estate


def _stack(
    config: Config,
    environments: Environments,
    header: Convention | None,
    estate: Estate,
    stack: tuple[Path, list[Path]],
    alternative: bool = False,
) -> None:
    """The base of a stack parsed again with its overlays merged onto it: in the base's place,
    or beside it as an ``alternative`` named by its last file. Each overlay that is a compose
    of the estate keeps its header and comments, its services checked in the stack. A file
    that cannot be read or parsed is an error; the base stays as it was."""
    base, overlays = stack
    shown = shown_path(config, base)
    try:
        texts = [(shown_path(config, p), _read(config, p)) for p in overlays]
        env = environments.for_compose(base, shown)
        merged = parse_compose(
            _read(config, base),
            shown,
            env.run,
            header,
            shipped_env=env.shipped,
            env_files=env.read_env_file,
            overlays=texts,
            other_file=_other_file(config, base),
        )
    except GuardsError as error:
        estate.errors.append(error)
        return
    by_path = {c.path: i for i, c in enumerate(estate.composes)}
    if alternative:
        estate.alternatives[texts[-1][0]] = merged
    else:
        estate.composes[by_path[shown]] = merged
    for name, _ in texts:
        if name in by_path:
            fragment = estate.composes[by_path[name]]
            fragment.services, fragment.shipped, fragment.merged_into = [], [], shown


def _modelfiles(config: Config, paths: list[Path], estate: Estate) -> None:
    """The Modelfiles discovery listed, each read (and recorded) once; one that cannot be
    read is an error, as a note is."""
    for path in paths:
        try:
            estate.modelfiles.append(parse_modelfile(_read(config, path), shown_path(config, path)))
        except GuardsError as error:
            estate.errors.append(error)


def _read(config: Config, path: Path) -> str:
    shown = shown_path(config, path)
    return yamlsrc.read_text(inside(config.root, path, shown), shown, config.max_bytes)


def _other_file(config: Config, compose: Path) -> OtherFile:
    """Reads the file an ``extends.file`` of ``compose`` names, under the path policy: a
    name that leads out of the root is not read (Compose would read it; guards reads nothing
    outside the estate: the service is checked as written, and -v says so); no such file is
    an error at the ``extends:`` line, as it is for Compose."""

    def read(name: str, line: int) -> tuple[str, str] | None:
        path = compose.parent / name
        shown = shown_path(config, path)
        if not is_inside(config.root, check_path(path, shown, line)):
            return None
        if not path.is_file():
            reads.record(path, None)
            raise GuardsError(f"`extends.file` {name!r}: no such file", None, line)
        return shown, yamlsrc.read_text(path, shown, config.max_bytes)

    return read


def _parse_file(
    config: Config,
    environments: Environments,
    header: Convention | None,
    file: tuple[Path, bool | None],
) -> tuple[Compose | Note | GuardsError | None, list[str]]:
    """A compose (``certain``: named as one; else a candidate, one if it has a top-level
    ``services:``) with its header read by the estate's convention, or a note (``certain``
    None); the error that stopped it. Beside it, what -v says of the compose's environment."""
    path, certain = file
    shown = shown_path(config, path)
    try:
        text = yamlsrc.read_text(inside(config.root, path, shown), shown, config.max_bytes)
        if certain is None:
            from ..sources.notes.notes import parse_note

            return parse_note(text, shown), []
        if not (certain or SERVICES_LINE.search(text)):
            return None, []
        env = environments.for_compose(path, shown)
        compose = parse_compose(
            text,
            shown,
            env.run,
            header,
            shipped_env=env.shipped,
            env_files=env.read_env_file,
            other_file=_other_file(config, path),
        )
        return compose, [*env.remarks(), *(f"{shown}: {b}" for b in compose.bases_elsewhere)]
    except GuardsError as error:
        return error, []


def _registry(config: Config, kept: Kept | None) -> tuple[Registry, str | None]:
    path = config.claims_path
    shown = shown_path(config, path)
    if not path.exists():
        reads.record(path, None)
        if config.claims_named:
            raise GuardsError(f"claims registry named by {config.source} does not exist", shown)
        from ..sources.registry import empty

        return empty(shown), (f"no {shown}: claim guards run against an empty registry")
    from ..sources.registry import load

    registry = load(path, shown, config.max_bytes, kept)
    return registry, f"registry {shown}: {len(registry.claims)} claims"


def _unmatched_patterns(
    config: Config, found: tuple[list[tuple[Path, bool]], list[Path]], estate: Estate
) -> None:
    """A pattern the config names that selects no file is a warning while the other patterns
    of its setting select some (a folder not there yet, a pattern for another layout); a
    setting none of whose patterns selects a file is an error, as is an estate with nothing to
    check: a misconfigured CI must not pass with `0 pass / 0 fail`."""
    shown = [shown_path(config, p) for p, _ in found[0]] + [shown_path(config, p) for p in found[1]]
    for key, patterns in (("composes", config.composes or ()), ("notes", config.notes)):
        if key not in config.named:
            continue
        empty = [p for p in patterns if not any(glob_match(path, p) for path in shown)]
        for pattern in empty:
            problem = GuardsError(
                f"`{key}` pattern {pattern!r} matches no file", config.source, config.line_of(key)
            )
            if len(empty) < len(patterns):
                estate.warnings.append(str(problem))
            else:
                estate.errors.append(problem)
    if not shown and not estate.registry.claims and not estate.errors:
        estate.errors.append(
            GuardsError(
                "nothing to check: no compose, no note and no claim found under the root",
                config.source or shown_path(config, config.root),
            )
        )
