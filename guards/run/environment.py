"""The environment each compose is evaluated in, as Compose computes it.

Interpolation (``${VAR}`` in a compose) takes the variables of its project's env files: the
``.env`` in the compose's folder (Compose's project directory), or the files the ``env-files``
setting names for that folder, later files overriding earlier ones. The operator's
``--env-file`` replaces them for the run, as ``docker compose --env-file`` does; the compose as
shipped (``Compose.shipped``, what headers and comments describe) keeps the estate's own, since
they are committed with it. A service's ``env_file:`` feeds its container environment only: the
parser asks :meth:`ComposeEnv.read_env_file` for it and opens no file itself.

Every file is read under the path policy (:mod:`guards.sources.paths`: inside the root, links
followed) and through the recorded reader, so a kept run notices an edit; a ``.env`` that is not
there is recorded as absent, so adding one is a change too.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..errors import GuardsError, located
from ..sources import reads, yamlsrc
from ..sources.compose.interpolate import TemplateError, interpolate
from ..sources.compose.written import Written
from ..sources.config import Config
from ..sources.envfile import EnvFile, parse_env
from ..sources.paths import check_path, inside, is_inside
from ..sources.patterns import glob_match, lazy
from .discovery import shown_path

DEFAULT = ".env"
LISTED = 10  # variable names a remark lists before it says how many more


class Consulted(Mapping[str, str]):
    """An environment that notes each name looked up in it: which variables fed a compose."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.held = values
        self.looked: set[str] = set()

    def __getitem__(self, name: str) -> str:
        self.looked.add(name)
        return self.held[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.held)

    def __len__(self) -> int:
        return len(self.held)


class Project(NamedTuple):
    """The interpolation env of one compose folder: the files, in order, and their values."""

    files: tuple[EnvFile, ...] = ()

    @property
    def values(self) -> dict[str, str]:
        return {name: value for file in self.files for name, value in file.items()}

    def fed(self, looked: set[str]) -> Iterator[tuple[EnvFile, list[str]]]:
        """Each file with the variables it gave the compose (a later file's value wins)."""
        last = {name: index for index, file in enumerate(self.files) for name in file}
        for index, file in enumerate(self.files):
            yield file, [n for n in file if n in looked and last[n] == index]


class Environments:
    """The estate's env files and the operator's overlay, for :func:`load_estate`. The files
    ``env-files`` names are read at once (an error there stops the run at the settings line);
    a folder's ``.env`` when a compose of the folder is parsed."""

    def __init__(self, config: Config, overlay: Mapping[str, str] | None) -> None:
        self.config = config
        self.overlay = overlay or None
        named = _named_files(config.env_files)
        self._texts = {name: self._named(name, glob) for name, glob in named.items()}
        self._projects: dict[str, Project | GuardsError] = {}
        self._held: dict[str, EnvVariables | None] = {}
        self._shells: dict[str, list[str]] = {}

    def remarks(self) -> list[str]:
        """What -v says of the overlay: its skipped lines."""
        return self.overlay.remarks() if isinstance(self.overlay, EnvFile) else []

    def for_compose(self, path: Path, shown: str) -> ComposeEnv:
        """The environments of the compose at ``path``; a bad ``.env`` raises."""
        project = self._project(path.parent)
        run = Consulted(self.overlay if self.overlay is not None else project.values)
        shipped = Consulted(project.values) if self.overlay is not None else run
        return ComposeEnv(self.config, path, shown, project, run, shipped, self.overlay)

    def uses(self, composes: list[tuple[str, Written, Mapping[str, str]]]) -> dict[str, EnvUse]:
        """Which env files each compose (shown path, what its YAML says as written, its
        interpolation env) reads, for the rules that judge env files (D010); a folder whose env
        files are bad reads none."""
        used = {}
        for shown, written, env in composes:
            try:
                project = self._project((self.config.root / shown).parent).files
            except GuardsError:
                project = ()
            folder = posixpath.dirname(shown)
            named = tuple(_env_file_names(written, env))
            container = tuple(posixpath.normpath(posixpath.join(folder, n)) for n in named)
            sources = tuple(f.source for f in project)
            loaded = tuple(self._found(folder, n) for n in named)
            shell = tuple(p for p in self._shell_files(folder) if p not in sources)
            kept = [*sources, *shell, *(p for p in loaded if p)]
            files = {p: v for p in dict.fromkeys(kept) if (v := self._variables(p)) is not None}
            used[shown] = EnvUse(
                sources, container, named, tuple(p for p in loaded if p), shell, files
            )
        return used

    def _found(self, folder: str, name: str) -> str | None:
        """The file an ``env_file:`` name ``name`` of a compose in ``folder`` loads: taken from
        that folder or the nearest folder above that holds it (a project of several ``-f``
        files takes it from the first file's folder), None when none does."""
        while True:
            candidate = posixpath.normpath(posixpath.join(folder, name))
            if not candidate.startswith("../") and (self.config.root / candidate).is_file():
                return candidate
            if not folder:
                return None
            folder = posixpath.dirname(folder)

    def _shell_files(self, folder: str) -> list[str]:
        """The env files of ``folder`` written as shell exports (``export NAME=...``): files
        the operator sources before ``docker compose``, so their values reach interpolation
        (and bare ``environment:`` names) only, never a container by themselves."""
        if folder not in self._shells:
            found = []
            try:
                entries = sorted((self.config.root / folder).iterdir())
            except OSError:
                entries = []
            for entry in entries:
                name = entry.name
                if (name.endswith(".env") or name.startswith(".env")) and entry.is_file():
                    shown = posixpath.join(folder, name)
                    variables = self._variables(shown)
                    if variables is not None and variables.exports:
                        found.append(shown)
            self._shells[folder] = found
        return self._shells[folder]

    def _variables(self, shown: str) -> EnvVariables | None:
        """What the env file ``shown`` holds (read once); None when it cannot be read."""
        if shown not in self._held:
            try:
                path = inside(self.config.root, self.config.root / shown, shown)
                text = yamlsrc.read_text(path, shown, self.config.max_bytes)
                self._held[shown] = EnvVariables.of(shown, text)
            except GuardsError:
                self._held[shown] = None
        return self._held[shown]

    def _named(self, name: str, glob: str | None) -> str:
        """The text of a file ``env-files`` names (in the entry of ``glob``, for a table),
        checked by the path policy; an error is placed at the line that names it."""
        config = self.config
        line = config.line_of_table("env-files", glob) if glob else config.line_of("env-files")
        path = config.estate_path("env-files", name, line)
        if not path.exists():
            reads.record(path, None)
            raise GuardsError(f"`env-files` {name!r}: no such file", config.source, line)
        text = yamlsrc.read_text(path, name, config.max_bytes)
        with located(name):
            parse_env(text)  # a quote that never closes stops the run here, at the file
        return text

    def _project(self, folder: Path) -> Project:
        key = shown_path(self.config, folder)
        if key not in self._projects:
            try:
                self._projects[key] = self._read_project(folder, key)
            except GuardsError as error:
                self._projects[key] = error
        found = self._projects[key]
        if isinstance(found, GuardsError):
            raise found
        return found

    def _read_project(self, folder: Path, key: str) -> Project:
        names = _names_for(self.config.env_files, key)
        if names is not None:
            return Project(_chain((self._texts[name], name) for name in names))
        path = folder / DEFAULT
        shown = shown_path(self.config, path)
        if not path.exists():  # Compose needs no .env: none is an empty one
            reads.record(path, None)
            return Project()
        text = yamlsrc.read_text(
            inside(self.config.root, path, shown), shown, self.config.max_bytes
        )
        return Project(_chain([(text, shown)]))


@dataclass(frozen=True)
class EnvUse:
    """The env files one compose reads, as shown paths: those that feed its interpolation
    (its folder's ``.env`` or the ``env-files``), and those its services' ``env_file:`` name
    (from the compose's folder, whether there or not: a project of several ``-f`` files takes
    them from the first file's folder), with the names as written (``named``)."""

    interpolation: tuple[str, ...] = ()
    container: tuple[str, ...] = ()
    named: tuple[str, ...] = ()
    loaded: tuple[str, ...] = ()  # the ``env_file:`` files found, from its folder or above
    shell: tuple[str, ...] = ()  # files of shell exports in its folder (sourced, not loaded)
    files: Mapping[str, EnvVariables] = field(default_factory=dict)  # of the files above


# `NAME=value` in a comment: a commented-out setting, or one a sentence names.
NAMED = lazy(r"(?<![\w${])(?:export\s+)?([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])=(?=[^\s=])")
EXPORT = lazy(r"^[ \t]*export[ \t]+[A-Za-z_]\w*=", re.M)


class EnvVariables(NamedTuple):
    """What one env file holds, as plain data for the rules that judge knobs (D010): each
    variable it sets with the line that sets it last, each ``NAME=value`` its comments name
    (a commented-out setting, an example in a sentence) with its line, and whether it is
    written as shell exports (a file to ``source``)."""

    path: str
    sets: Mapping[str, int]
    named: tuple[tuple[str, int], ...]
    exports: bool

    @classmethod
    def of(cls, shown: str, text: str) -> EnvVariables:
        """Read from ``text``; a line the env reader skips sets nothing."""
        with located(shown):
            parsed = parse_env(text)
        named = []
        for number, line in enumerate(text.split("\n"), 1):
            if line.lstrip().startswith("#"):
                named += [(m.group(1), number) for m in NAMED.finditer(line)]
        return cls(shown, dict(parsed.lines), tuple(named), EXPORT.search(text) is not None)


def _env_file_names(written: Written, env: Mapping[str, str]) -> Iterator[str]:
    """Each ``env_file:`` entry of the compose's services (a name, a list, ``{path}`` items),
    interpolated; one that cannot be interpolated, or names an absolute path, is left out."""
    for entry in written.env_files:
        try:
            name = interpolate(entry, env).text.strip()
        except TemplateError:
            continue
        if name and not posixpath.isabs(name):
            yield name


def _named_files(setting: tuple[str, ...] | Mapping[str, tuple[str, ...]]) -> dict[str, str | None]:
    """Each file ``env-files`` names, with the folder glob of the first entry naming it."""
    if not isinstance(setting, Mapping):
        return dict.fromkeys(setting)
    named: dict[str, str | None] = {}
    for glob, files in setting.items():
        for name in files:
            named.setdefault(name, glob)
    return named


def _names_for(setting, folder: str) -> tuple[str, ...] | None:
    """The files ``env-files`` names for ``folder``; None: the setting leaves it to ``.env``."""
    if not isinstance(setting, Mapping):
        return tuple(setting) or None
    matched = [files for glob, files in setting.items() if glob_match(folder, glob)]
    return tuple(n for files in matched for n in files) if matched else None


def _chain(texts) -> tuple[EnvFile, ...]:
    """Env files parsed in order, each one's references seeing the variables set before."""
    files: list[EnvFile] = []
    for text, shown in texts:
        with located(shown):
            parsed = parse_env(text, {n: v for f in files for n, v in f.items()})
        parsed.source = shown
        files.append(parsed)
    return tuple(files)


@dataclass
class ComposeEnv:
    """What one compose is interpolated with (``run``, and ``shipped`` for the compose as
    shipped), the reader of its services' ``env_file:``, and what -v says of them."""

    config: Config
    path: Path
    shown: str
    project: Project
    run: Consulted
    shipped: Consulted
    overlay: Mapping[str, str] | None
    said: list[str] = field(default_factory=list)

    def read_env_file(
        self, name: str, required: bool, env: Mapping[str, str], declared_in: str | None = None
    ) -> Mapping[str, str] | None:
        """A service's ``env_file:``, relative to the folder of the file that declares it (the
        compose's, or ``declared_in``'s for a service extended from another file); None when
        it is not there or not the estate's. A required one that is missing is a remark:
        Compose would refuse to start the service (kept a remark until a rule says so)."""
        folder = (self.config.root / declared_in).parent if declared_in else self.path.parent
        path = folder / name
        try:
            shown = shown_path(self.config, check_path(path, name))
        except GuardsError:
            self._say(f"env_file {name!r} names no file the system can look up")
            return None
        if not is_inside(self.config.root, path):
            self._say(f"env_file {shown} leads outside the root: not read")
            return None
        if not path.exists():
            reads.record(path, None)
            why = "Compose would refuse to start the service" if required else "required: false"
            self._say(f"env_file {shown} does not exist ({why}); read as empty")
            return None
        try:  # Compose reads bytes: a file guards cannot read as text is a remark here
            text = yamlsrc.read_text(path, shown, self.config.max_bytes)
            with located(shown):
                parsed = parse_env(text, env)
        except GuardsError as error:
            self._say(f"env_file not read: {error}")
            return None
        parsed.source = shown
        self.said += parsed.remarks()
        self._say(
            f"env_file {shown}: container environment, not interpolation ({_names(list(parsed))})"
        )
        return parsed

    def remarks(self) -> list[str]:
        """Which file fed which variable of the compose (one line per file), then the rest."""
        lines = []
        if self.overlay is not None:
            source = getattr(self.overlay, "source", "")
            name = f"{source}, the --env-file" if source else "the --env-file"
            used = [n for n in self.overlay if n in self.run.looked]
            lines.append(f"{self.shown}: interpolated from {name} ({_names(used)})")
        prefix = "as shipped, " if self.overlay is not None else ""
        for file, used in self.project.fed(self.shipped.looked):
            fed = _names(used) if used else f"none of its {len(file)} variables used"
            lines.append(f"{self.shown}: {prefix}interpolated from {file.source} ({fed})")
        skipped = [remark for file in self.project.files for remark in file.remarks()]
        return lines + skipped + self.said

    def _say(self, text: str) -> None:
        self.said.append(f"{self.shown}: {text}")


def _names(names: list[str]) -> str:
    if not names:
        return "no variable"
    shown = ", ".join(names[:LISTED]) + (
        f", and {len(names) - LISTED} more" if len(names) > LISTED else ""
    )
    return f"{len(names)} variable{'s' if len(names) != 1 else ''}: {shown}"
