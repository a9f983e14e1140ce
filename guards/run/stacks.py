"""Which composes run together: the ``-f base -f overlay`` stacks the estate's composes form.

An override fragment checked alone is noise or blind (no engine, no image), and its base misses
what it adds; so each stack is checked merged, as Compose runs it. The stacks are, in order:

- the ``stacks`` setting, when the estate gives one: exactly the combinations it names;
- else Compose's own default: ``compose.override.yaml`` (or ``.yml``, or the ``docker-compose``
  names) beside ``compose.yaml`` (the first of the names Compose looks for) in one folder;
- and a plain fragment: a compose whose services all lack ``image``, ``build`` and ``extends``,
  each of whose service names is defined by one and the same other compose of its folder (not
  a fragment itself). A fragment that fits no base, or whose base several fragments fit (they
  are then alternatives: which one runs is not known), is checked alone, with a remark.

File names decide nothing beyond Compose's own default.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path, PurePosixPath

from ..errors import GuardsError
from ..sources.compose.compose import Compose
from ..sources.config import Config

DEFAULT_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
OVERRIDE_FILES = (
    "compose.override.yaml",
    "compose.override.yml",
    "docker-compose.override.yaml",
    "docker-compose.override.yml",
)

Stack = tuple[Path, list[Path]]  # the base, the files merged onto it in order


def plan(config: Config, composes: list[Compose], said: dict[str, None]) -> list[Stack]:
    """The stacks of the parsed ``composes``; what -v should say of them goes in ``said``."""
    if config.stacks:
        found = _named(config, {c.path for c in composes})
    else:
        found = _defaults(composes) + _fragments(composes, said)
    for base, overlays in found:
        said[
            f"stack {base}: {' + '.join([base, *overlays])} are checked merged, as "
            f"`docker compose {' '.join(f'-f {name}' for name in [base, *overlays])}` runs them"
        ] = None
    return [
        (config.root / base, [config.root / name for name in overlays]) for base, overlays in found
    ]


def _named(config: Config, composes: set[str]) -> list[tuple[str, list[str]]]:
    """The ``stacks`` setting's combinations whose base is a compose of this run; a file it
    names that is not there is an error at the setting."""
    found = []
    for stack in config.stacks:
        for name in stack:
            path = config.estate_path("stacks", name)
            if not path.is_file():
                raise GuardsError(
                    f"`stacks` names {name!r}, which is not a file",
                    config.source,
                    config.line_of("stacks"),
                )
        if stack[0] in composes:
            found.append((stack[0], list(stack[1:])))
    return found


def _folders(composes: list[Compose]) -> dict[PurePosixPath, list[Compose]]:
    folders: dict[PurePosixPath, list[Compose]] = defaultdict(list)
    for compose in composes:
        folders[PurePosixPath(compose.path).parent].append(compose)
    return folders


def _defaults(composes: list[Compose]) -> list[tuple[str, list[str]]]:
    """Compose's default pair in each folder: its file and the override beside it."""
    found = []
    for folder, group in _folders(composes).items():
        names = {PurePosixPath(c.path).name for c in group}
        base = next((n for n in DEFAULT_FILES if n in names), None)
        override = next((n for n in OVERRIDE_FILES if n in names), None)
        if base and override:
            found.append((str(folder / base), [str(folder / override)]))
    return found


def _fragments(composes: list[Compose], said: dict[str, None]) -> list[tuple[str, list[str]]]:
    """Each plain fragment onto the one compose of its folder that defines its services."""
    defaults = dict(_defaults(composes))  # these run with Compose's override file already
    overrides = {name for names in defaults.values() for name in names}
    fits: dict[str, list[str]] = defaultdict(list)
    for group in _folders(composes).values():
        bases = [c for c in group if not c.fragment]
        for fragment in (c for c in group if c.fragment and c.path not in overrides):
            base = _base_of(fragment, bases)
            if base is None:
                said[
                    f"{fragment.path}: its services set no image, build or extends, but no one "
                    "other compose of its folder defines them all: checked alone (name its "
                    "base in `stacks`)"
                ] = None
            else:
                fits[base].append(fragment.path)
    found = []
    for base, fragments in fits.items():
        if len(fragments) == 1 and base not in defaults:
            found.append((base, fragments))
            continue
        also = " and its override file" if base in defaults else ""
        said[
            f"{base}: {', '.join(fragments)}{also} fit it; which runs with it is not known: "
            "each fragment is checked alone (name the combinations in `stacks`)"
        ] = None
    return found


def _base_of(fragment: Compose, bases: list[Compose]) -> str | None:
    """The one compose defining every service of ``fragment``, else None."""
    owners = set()
    for service in fragment.services:
        defining = [b.path for b in bases if any(s.name == service.name for s in b.services)]
        if len(defining) != 1:
            return None
        owners.add(defining[0])
    return owners.pop() if len(owners) == 1 else None
