"""Which composes run together: the ``-f base -f overlay`` stacks the estate's composes form.

An override fragment checked alone is noise or blind (no engine, no image), and its base misses
what it adds; so each stack is checked merged, as Compose runs it. The stacks are, in order:

- the ``stacks`` setting, when the estate gives one: exactly the combinations it names;
- else Compose's own default: ``compose.override.yaml`` (or ``.yml``, or the ``docker-compose``
  names) beside ``compose.yaml`` (the first of the names Compose looks for) in one folder;
- and the overlays of a base in its folder: a plain fragment (its services all lack ``image``,
  ``build`` and ``extends``), or a compose that only swaps what a base's services run
  (:func:`_covers`), each of whose service names is defined by one and the same base of the
  folder (a compose no other one covers, not a fragment).

One stack per base is checked as the base itself. Several overlays of one base (one per GPU
vendor: the launcher picks the one the host has) are **alternatives**: the base is checked
alone, and each alternative merged with it as a target of its own, the overlay's name
(:func:`once` then keeps a finding the base alone also gives to the base). File names decide
nothing beyond Compose's own default.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ..errors import GuardsError
from ..findings import CheckResult, Finding
from ..sources import yamlsrc
from ..sources.compose.compose import Compose
from ..sources.config import Config

DEFAULT_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
OVERRIDE_FILES = (
    "compose.override.yaml",
    "compose.override.yml",
    "docker-compose.override.yaml",
    "docker-compose.override.yml",
)
SWAPPED = frozenset({"image", "build"})  # what an overlay may set that its base sets too

Stack = tuple[Path, list[Path]]  # the base, the files merged onto it in order
Named = tuple[str, list[str]]  # the same, as shown names


@dataclass
class Plan:
    """The stacks checked as their base (one per base), and the alternatives: stacks of a
    base with several, each checked as its last file."""

    stacks: list[Stack] = field(default_factory=list)
    alternatives: list[Stack] = field(default_factory=list)


def plan(config: Config, composes: list[Compose], said: dict[str, None]) -> Plan:
    """The stacks of the parsed ``composes``; what -v should say of them goes in ``said``."""
    if config.stacks:
        found, alternatives = _named(config, {c.path for c in composes})
    else:
        found, alternatives = _fragments(composes, said)
        found = _defaults(composes) + found
    for base, overlays in found:
        said[f"stack {base}: {_merged(base, overlays)}"] = None
    for base, overlays in alternatives:
        said[
            f"alternative {overlays[-1]}: {_merged(base, overlays)}; {base} is also checked alone"
        ] = None
    return Plan(_paths(config, found), _paths(config, alternatives))


def _merged(base: str, overlays: list[str]) -> str:
    files = [base, *overlays]
    return (
        f"{' + '.join(files)} are checked merged, as "
        f"`docker compose {' '.join(f'-f {name}' for name in files)}` runs them"
    )


def _paths(config: Config, stacks: list[Named]) -> list[Stack]:
    return [(config.root / base, [config.root / name for name in rest]) for base, rest in stacks]


def _named(config: Config, composes: set[str]) -> tuple[list[Named], list[Named]]:
    """The ``stacks`` setting's combinations whose base is a compose of this run, a base listed
    in several giving alternatives; a file it names that is not there, or two alternatives
    ending in the same file (the target of both), is an error at the setting."""
    by_base: dict[str, list[list[str]]] = defaultdict(list)
    for stack in config.stacks:
        for name in stack:
            if not config.estate_path("stacks", name).is_file():
                raise _setting(config, f"`stacks` names {name!r}, which is not a file")
        by_base[stack[0]].append(list(stack[1:]))
    found: list[Named] = []
    alternatives: list[Named] = []
    ends = [rest[-1] for rests in by_base.values() if len(rests) > 1 for rest in rests]
    twice = next((end for end in ends if ends.count(end) > 1), None)
    if twice is not None:
        raise _setting(
            config, f"`stacks`: two alternative stacks end in {twice!r}, the name of both"
        )
    for base, rests in by_base.items():
        if base in composes:
            target = found if len(rests) == 1 else alternatives
            target += [(base, rest) for rest in rests]
    return found, alternatives


def _setting(config: Config, problem: str) -> GuardsError:
    return GuardsError(problem, config.source, config.line_of("stacks"))


def _folders(composes: list[Compose]) -> dict[PurePosixPath, list[Compose]]:
    folders: dict[PurePosixPath, list[Compose]] = defaultdict(list)
    for compose in composes:
        folders[PurePosixPath(compose.path).parent].append(compose)
    return folders


def _defaults(composes: list[Compose]) -> list[Named]:
    """Compose's default pair in each folder: its file and the override beside it."""
    found = []
    for folder, group in _folders(composes).items():
        names = {PurePosixPath(c.path).name for c in group}
        base = next((n for n in DEFAULT_FILES if n in names), None)
        override = next((n for n in OVERRIDE_FILES if n in names), None)
        if base and override:
            found.append((str(folder / base), [str(folder / override)]))
    return found


def _fragments(composes: list[Compose], said: dict[str, None]) -> tuple[list[Named], list[Named]]:
    """Each overlay onto the one base of its folder that defines its services: alone, the
    base's stack; one of several (or beside Compose's override file), an alternative."""
    defaults = dict(_defaults(composes))  # these run with Compose's override file already
    overrides = {name for names in defaults.values() for name in names}
    fits: dict[str, list[str]] = defaultdict(list)
    for group in _folders(composes).values():
        keys = _service_keys(group)
        covered = _covered(set(keys.values()))
        roots = [c for c in group if not c.fragment and keys[c.path] not in covered]
        taken = overrides | {c.path for c in roots}
        for overlay in (c for c in group if c.path not in taken):
            base = _base_of(overlay, roots)
            if base is not None and (
                overlay.fragment or _covers(keys[base.path], keys[overlay.path])
            ):
                fits[base.path].append(overlay.path)
            elif overlay.fragment:
                said[
                    f"{overlay.path}: its services set no image, build or extends, but no one "
                    "other compose of its folder defines them all: checked alone (name its "
                    "base in `stacks`)"
                ] = None
    found: list[Named] = []
    alternatives: list[Named] = []
    for name, overlays in fits.items():
        if len(overlays) == 1 and name not in defaults:
            found.append((name, overlays))
        else:
            alternatives += [(name, [overlay]) for overlay in overlays]
    return found, alternatives


def _base_of(overlay: Compose, roots: list[Compose]) -> Compose | None:
    """The one base defining every service of ``overlay``, else None."""
    owners = set()
    for service in overlay.services:
        defining = [b for b in roots if any(s.name == service.name for s in b.services)]
        if len(defining) != 1:
            return None
        owners.add(defining[0].path)
    return next((b for b in roots if owners == {b.path}), None)


Keys = frozenset[tuple[str, frozenset[str]]]  # each service of a compose, the keys it writes


def _covered(signatures: set[Keys]) -> set[Keys]:
    """The key sets of the composes another one covers (compared once per distinct set: a
    folder of many variants of one service has few)."""
    return {mine for mine in signatures if any(_covers(b, mine) for b in signatures)}


def _covers(base: Keys, overlay: Keys) -> bool:
    """``overlay`` only swaps what ``base``'s services run: every service of ``overlay`` is
    one of ``base``, and on each it writes fewer keys than ``base`` and none that ``base``
    writes too but ``image`` and ``build`` (and no ``extends``). Two full definitions of one
    service share more than that (``command``, ``ports``, ...)."""
    theirs = dict(base)
    return bool(overlay) and all(
        name in theirs
        and "extends" not in written
        and len(written) < len(theirs[name])
        and written & theirs[name] <= SWAPPED
        for name, written in overlay
    )


def _service_keys(group: list[Compose]) -> dict[str, Keys]:
    """The keys each service of a compose writes, for the composes of a folder that set what
    their services run and share a service name with another (the others: none)."""
    counts: dict[str, int] = defaultdict(int)
    for compose in group:
        for name in {s.name for s in compose.services}:
            counts[name] += 1
    found: dict[str, Keys] = {}
    for compose in group:
        shared = not compose.fragment and any(counts[s.name] > 1 for s in compose.services)
        found[compose.path] = _keys_of(compose) if shared else frozenset()
    return found


def _keys_of(compose: Compose) -> Keys:
    services = yamlsrc.get(yamlsrc.compose(compose.text), "services")
    return frozenset(
        (name, frozenset(key for key, _, _ in yamlsrc.items(node)))
        for name, _, node in yamlsrc.items(services)
    )


def once(results: list[CheckResult], alternatives: Mapping[str, Compose]) -> list[CheckResult]:
    """The checks of a run with each alternative's settled: a finding the base alone also
    gives (same rule, place and message) is the base's, reported once; one in another file
    than the overlay that only the stack gives names the overlays. An alternative's check
    and its overlay file's own (header, comments) are one check of that file."""
    if not alternatives:
        return results
    alone = {(r.rule, r.target): r.findings for r in results if r.target not in alternatives}
    settled: list[CheckResult] = []
    at: dict[tuple[str, str], int] = {}
    for result in results:
        if result.target in alternatives:
            result = _settled(result, alternatives[result.target], alone)
            key = (result.rule, result.target)
            if key in at:
                settled[at[key]] = _joined(settled[at[key]], result)
                continue
            at[key] = len(settled)
        settled.append(result)
    return settled


def _settled(
    result: CheckResult, stack: Compose, alone: Mapping[tuple[str, str], tuple[Finding, ...]]
) -> CheckResult:
    given = {_place(f) for f in alone.get((result.rule, stack.path), ())}
    named = f" (with {' + '.join(stack.stack)})"
    findings = tuple(
        f if f.path == result.target else replace(f, message=f.message + named)
        for f in result.findings
        if _place(f) not in given
    )
    return result if findings == result.findings else result._replace(findings=findings)


def _place(finding: Finding) -> tuple[str, str, int, int, str]:
    return (finding.rule, finding.path, finding.line, finding.column, finding.message)


def _joined(first: CheckResult, then: CheckResult) -> CheckResult:
    return first._replace(
        findings=tuple(sorted(first.findings + then.findings, key=Finding.sort_key)),
        remarks=first.remarks + then.remarks,
        not_judged=first.not_judged + then.not_judged,
    )
