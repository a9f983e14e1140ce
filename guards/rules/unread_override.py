"""D010 unread-override: an env file the estate keeps as a knob is one some compose loads.

Why: an estate that gives each service an env file of overrides (``env_file:
./svc/override.env``) invites the operator to set knobs there. A file of that name that no
compose loads - the copy left behind when the files moved, the service whose compose forgot
its ``env_file:`` entry - looks the same and changes nothing: a value set there never reaches
a container, and a reader who finds it has two values for one knob. An env file is the
estate's when it is named ``*.env`` or ``.env*`` under the root (the always-excluded folders
and the ``exclude`` setting aside); it is flagged only when nothing loads it - no
``env_file:`` names it, from the compose's folder or a folder above it (a project of several
``-f`` files takes paths from the first file's folder), and it feeds no interpolation - and a
compose in its folder, the folder above or one below loads a file of the same name, or a
loaded file's path ends with its path (the same file at another depth). Copies meant to be
made (``.env.example``, ``*.sample``, ``*.template``, ``*.dist``) are documentation, and an env
file nothing relates to (a launcher's settings) is silent.

Bad:
    --- composes/example.yml
    services:
      ollama:
        image: ollama/ollama:0.9
        env_file: ./ollama/override.env
      tgi:
        image: ghcr.io/huggingface/text-generation-inference:3.3
        env_file: ./.env
    --- composes/ollama/override.env
    OLLAMA_CONTEXT_LENGTH=16384
    --- composes/tgi/override.env
    MAX_TOTAL_TOKENS=16384

Finds:
    composes/tgi/override.env:1:1: D010 no compose loads composes/tgi/override.env, while composes/example.yml loads composes/ollama/override.env through env_file: a value set here never reaches a container

Good:
    --- composes/example.yml
    services:
      ollama:
        image: ollama/ollama:0.9
        env_file: ./ollama/override.env
      tgi:
        image: ghcr.io/huggingface/text-generation-inference:3.3
        env_file: [./.env, ./tgi/override.env]
    --- composes/ollama/override.env
    OLLAMA_CONTEXT_LENGTH=16384
    --- composes/tgi/override.env
    MAX_TOTAL_TOKENS=16384
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.patterns import glob_match
from .base import Context, Rule
from .options import RuleOptions

if TYPE_CHECKING:
    from ..run.environment import EnvUse
    from ..run.estate import Estate

TEMPLATE = re.compile(r"(?:^|[._-])(?:example|sample|template|tmpl|dist)(?:$|[._-])", re.I)


def check(compose: Compose, context: Context) -> list[Finding]:
    estate = context.estate
    use = estate.env_use.get(compose.path)
    sources = _sources(estate, compose.path, use) if use is not None else []
    if not sources:
        return []
    loaded = _loaded(estate)
    findings = []
    for orphan in _env_files(estate):
        if orphan in loaded:
            continue
        sibling = next((f for f in sources if _related(compose.path, f, orphan)), None)
        if sibling is not None and _first_relating(estate, orphan) == compose.path:
            findings.append(_finding(compose, orphan, sibling))
    return findings


def _finding(compose: Compose, orphan: str, sibling: str) -> Finding:
    return RULE.at(
        orphan,
        1,
        1,
        f"no compose loads {orphan}, while {compose.path} loads {sibling} through env_file: "
        "a value set here never reaches a container",
        hint=f"name {orphan} in the env_file: of the service it is for, or delete it",
    )


def _env_files(estate: Estate) -> list[str]:
    """The estate's env files, by name, except copies meant to be made from them."""
    files = []
    for path in sorted(estate.tree.files):
        name = posixpath.basename(path)
        if not (name.endswith(".env") or name.startswith(".env")):
            continue
        if TEMPLATE.search(name.removeprefix(".env")) or _excluded(estate, path):
            continue
        files.append(path)
    return files


def _excluded(estate: Estate, path: str) -> bool:
    return any(glob_match(path, pattern) for pattern in estate.config.exclude)


def _loaded(estate: Estate) -> set[str]:
    """Every file a compose may load: its interpolation files, and each ``env_file:`` name
    resolved from the compose's folder and from every folder above it."""
    loaded: set[str] = set()
    for path, use in estate.env_use.items():
        loaded.update(use.interpolation)
        for folder in _folders(posixpath.dirname(path)):
            loaded.update(posixpath.normpath(posixpath.join(folder, n)) for n in use.named)
    return loaded


def _sources(estate: Estate, path: str, use: EnvUse) -> list[str]:
    """The files ``env_file:`` names that exist, from the folder of the compose or above."""
    files = estate.tree.files
    found = []
    for name in use.named:
        for folder in _folders(posixpath.dirname(path)):
            candidate = posixpath.normpath(posixpath.join(folder, name))
            if candidate in files:
                found.append(candidate)
                break
    return found


def _folders(folder: str) -> list[str]:
    """``folder`` and every folder above it up to the root ("")."""
    found = [folder]
    while folder:
        folder = posixpath.dirname(folder)
        found.append(folder)
    return found


def _related(compose: str, loaded: str, orphan: str) -> bool:
    """The compose loads a file the estate clearly meant ``orphan`` to be one of."""
    if loaded == orphan or posixpath.basename(loaded) != posixpath.basename(orphan):
        return False
    if loaded.endswith("/" + orphan):
        return True  # the same file at another depth
    here, there = posixpath.dirname(compose), posixpath.dirname(orphan)
    return here == there or posixpath.dirname(there) == here or posixpath.dirname(here) == there


def _first_relating(estate: Estate, orphan: str) -> str | None:
    """The first compose (by path) that relates to ``orphan``: it alone reports it."""
    for path in sorted(estate.env_use):
        if any(_related(path, f, orphan) for f in _sources(estate, path, estate.env_use[path])):
            return path
    return None


RULE: Rule[RuleOptions] = Rule(
    id="D010",
    name="unread-override",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__ or "",
)
