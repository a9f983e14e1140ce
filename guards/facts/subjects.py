"""Who a statement is about, resolved the way a maintainer reads it.

A subject is named by a compose's path (whole, without its extension, or elided with ``…``), its
file stem, a service name, its ``container_name``, a served model name (``--served-model-name``,
``--alias``) or a profile. Names are compared in a loose spelling (case, spaces and punctuation dropped: "Open
WebUI" is ``open-webui``). A name resolves to one service, which may be written in several
files: Compose merges the files that define a service by its name (a base and its overlays), so
every definition of it is a place it is shipped from. A name that fits two different services
is ambiguous, and an ambiguous subject is no subject: the statement is a remark, never a
finding. A variable's statement is about the services that read the variable; a request or
config parameter's (``top_p`` in a table of defaults) about the one variable that sets it
server-side, ``LLM_TOP_P`` whose prefix the headings above name.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from ..sources.compose.compose import Compose
from ..sources.compose.services import Service
from .defaults import Site, variable_defaults

WORD = re.compile(r"[a-z0-9]+")
ELLIPSIS = re.compile(r"/?(?:…|\.\.\.)/?")
MIN_NAME = 4  # shorter loose names ("db", "app") are words of every sentence
YAML = re.compile(r"\.ya?ml$")


class Target(NamedTuple):
    """One definition of a service: the compose that writes it and the service as parsed."""

    compose: Compose
    service: Service


@dataclass
class Subjects:
    """The estate's names, each with the services it names."""

    composes: list[Compose]
    names: dict[str, set[str]] = field(default_factory=dict)  # loose name -> service names
    targets: dict[str, list[Target]] = field(default_factory=dict)  # service name -> targets
    files: dict[str, list[Target]] = field(default_factory=dict)  # compose path -> targets
    sites: dict[str, dict[str, list[Site]]] = field(default_factory=dict)  # path -> defaults
    _variables: frozenset[str] | None = field(default=None, init=False, repr=False)

    def resolve(self, subject: str, here: Compose | None = None) -> list[Target] | None:
        """The definitions of the one service ``subject`` names, or None."""
        if subject in ("this compose", "(this)") and here is not None:
            return self.files.get(here.path) or None
        by_path = self._path(subject)
        if by_path is not None:
            return by_path
        services = self.names.get(loose(subject), set())
        if len(services) != 1:
            return None
        return self.targets[next(iter(services))]

    def mentioned(self, passage: str) -> list[Target] | None:
        """The definitions of the one service a passage names, or None (none, or several)."""
        words = WORD.findall(passage.lower())
        runs = {"".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words))}
        services = set().union(*(self.names.get(r, set()) for r in runs if len(r) >= MIN_NAME))
        if len(services) != 1:
            return None
        return self.targets[next(iter(services))]

    def readers(self, variable: str) -> list[Target]:
        """The services that read ``variable``: an ``environment:`` entry or a ``${...}``."""
        found = []
        for compose in self.composes:
            defaults = self.defaults(compose)
            for service in compose.shipped:
                if variable in service.environment or variable in defaults:
                    found.append(Target(compose, service))
        return found

    def variables(self) -> frozenset[str]:
        """Every variable some service's environment holds or some compose interpolates."""
        if self._variables is None:
            names: set[str] = set()
            for compose in self.composes:
                names.update(self.defaults(compose))
                for service in compose.shipped:
                    names.update(service.environment)
            self._variables = frozenset(names)
        return self._variables

    def parameter(self, name: str, context: str) -> str | None:
        """The one variable that sets the request or config parameter ``name`` (``top_p``):
        ``<PREFIX>_TOP_P`` whose prefix words ``context`` (the headings over the statement) all
        name (``LLM_TOP_P`` under "LLM parameters", not ``VLM_TOP_P``). A bare ``TOP_P`` is not
        enough: a table of an engine's own parameters quotes the engine's defaults."""
        wanted, words = "_" + name.upper(), set(WORD.findall(context.lower()))
        found = [
            variable
            for variable in self.variables()
            if variable.endswith(wanted)
            and set(variable[: -len(wanted)].lower().split("_")) <= words
        ]
        return found[0] if len(found) == 1 else None

    def defaults(self, compose: Compose) -> dict[str, list[Site]]:
        if compose.path not in self.sites:
            self.sites[compose.path] = variable_defaults(compose)
        return self.sites[compose.path]

    def compose(self, written: str) -> Compose | None:
        """The one compose a path names (whole, a tail of it, or elided with ``…``)."""
        path = self._named_path(written)
        return self.files[path][0].compose if path is not None else None

    def _path(self, subject: str) -> list[Target] | None:
        path = self._named_path(subject)
        return self.files[path] if path is not None else None

    def _named_path(self, subject: str) -> str | None:
        text = subject.strip("`*'\" ").lstrip("./")
        if not YAML.search(text):
            return None
        parts = ELLIPSIS.split(text)
        paths = [
            p
            for p in self.files
            if (p == text or p.endswith("/" + text))
            or (len(parts) > 1 and p.startswith(parts[0]) and p.endswith(parts[-1]))
        ]
        return paths[0] if len(paths) == 1 else None


def loose(name: str) -> str:
    """A name in the loose spelling subjects are compared in."""
    return "".join(WORD.findall(name.lower()))


def subjects(composes: Iterable[Compose]) -> Subjects:
    """The names of every compose and service of the estate."""
    found = Subjects(list(composes))
    for compose in found.composes:
        stem = YAML.sub("", posixpath.basename(compose.path))
        for service in compose.shipped:
            target = Target(compose, service)
            found.targets.setdefault(service.name, []).append(target)
            found.files.setdefault(compose.path, []).append(target)
            for name in _names(service, stem, len(compose.shipped) == 1):
                if len(name) >= MIN_NAME:
                    found.names.setdefault(name, set()).add(service.name)
    return found


def _names(service: Service, stem: str, alone: bool) -> set[str]:
    names = {loose(service.name), *(loose(p) for p in service.profiles)}
    if service.container_name:
        names.add(loose(service.container_name))
    served = service.value("served_model_name")
    if served:
        names.add(loose(served))
    if alone:  # a file of one service is named by its stem too
        names.add(loose(stem))
    return names


_LAST: list[tuple[object, Subjects]] = []


def of_estate(estate: object, composes: Iterable[Compose]) -> Subjects:
    """The subjects of ``estate``, built once per estate (checks are many, the estate one)."""
    if _LAST and _LAST[0][0] is estate:
        return _LAST[0][1]
    built = subjects(composes)
    _LAST[:] = [(estate, built)]
    return built
