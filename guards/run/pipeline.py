"""One check of an estate, the one ``guards check`` and the editor server both run: the
settings, discovery, the estate, the rules the layered selection picks
(:mod:`guards.run.selection`), the suite with its suppressions — or a kept run in its place
(:mod:`guards.run.cache`) — and then the views of the run: the operator's env file
(:mod:`guards.run.operator`) and the baseline (:mod:`guards.run.baseline`).

The callers give plain values (``Asked``: no command-line parsing here) and say what they must
themselves: nothing here prints. What the write layer adds to a computed run (the fixes of the
findings their rules marked ``fixable``) comes in as ``Asked.finish``, applied before the run is
kept, so a kept run carries it and this layer imports nothing of the write layer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ..findings import Run
    from ..sources.config import Config
    from .baseline import BaselineEntry
    from .estate import Estate

Finish = Callable[["Run", "Estate"], "Run"]


class Baseline(NamedTuple):
    """``--baseline FILE``: its entries (read before the run, so a bad file stops it at once)."""

    shown: str
    entries: list[BaselineEntry]
    strict: bool = False  # --strict-baseline: entries that match nothing fail the run


class Asked(NamedTuple):
    """What a check is asked for, as plain values: the command line's options, or what the
    editor server knows (an estate's root and the files open in it)."""

    root: Path
    config: Path | None = None  # --config; else the estate's own settings
    paths: Sequence[Path] | None = None  # the files to check; None: the whole estate
    env_file: Path | None = None  # the operator's env file (--env-file)
    env_only: bool = False  # with it, only the findings it causes
    select: Sequence[str] = ()  # selectors on top of the settings', each comma-separated
    ignore: Sequence[str] = ()
    extend_select: Sequence[str] = ()
    extend_ignore: Sequence[str] = ()
    baseline: Baseline | None = None
    cache: bool = False  # a kept run may stand for the run, and a computed one is kept
    cache_shipped: bool = False  # the same for the run as shipped, beside the env file's
    workers: int = 0  # worker processes for large estates: 0 one per usable core, 1 none
    # what a computed run gains before it is kept (the fixes); every caller that keeps runs
    # gives the same one, since a kept run is read back as it was kept
    finish: Finish | None = None


class Checked(NamedTuple):
    """A check's run as reported, the estate it ran on (None when the run came from the
    cache) and the settings it went by."""

    run: Run
    estate: Estate | None
    settings: Config


def check(asked: Asked) -> Checked:
    """The run ``asked`` is for: the suite on the estate (with the env file, when one is
    given), then the operator's view of it beside the run as shipped, then the baseline."""
    done = run_once(asked)
    result = done.run
    if asked.env_file is not None and done.estate is not None:
        from .operator import operator_view

        shipped = run_once(asked._replace(env_file=None, cache=asked.cache_shipped)).run
        result = operator_view(result, shipped, done.estate, str(asked.env_file), asked.env_only)
    if asked.baseline is not None:
        from . import baseline

        given = asked.baseline
        result = baseline.apply(result, given.entries, given.shown, given.strict)
    return done._replace(run=result)


def run_once(asked: Asked) -> Checked:
    """The suite on the estate (or the named files of it), with ``asked.env_file`` in place
    of the estate's env files and no view of the run: the run, the estate, the settings. A
    run with an env file is never kept (its view needs the estate itself)."""
    from ..sources.configfile import load_config
    from . import cache
    from .discovery import discover
    from .selection import layers, selection_key

    store = cache.open_store(asked.root) if asked.cache and asked.env_file is None else None
    settings = load_config(
        asked.root, asked.config, cache.Kept(store, "settings") if store else None
    )
    env = operator_env(asked.env_file)
    chosen = layers(settings, asked.select, asked.extend_select, asked.ignore, asked.extend_ignore)
    paths = asked.paths
    if paths and any(affects_every_file(settings, path) for path in paths):
        paths = None  # a new registry, config or template can change any file's result
    found = discover(settings, list(paths) if paths else None)
    today = dt.date.today()
    key = None
    if store:
        key = cache.run_key(store, settings, selection_key(chosen), found, env, today)
    loaded: dict[str, Any] = {}

    def compute() -> Run:
        from ..rules import all_rules
        from ..rules.options import load_options
        from .estate import load_estate
        from .parallel import workers_for
        from .selection import chosen_rules, selecting
        from .suite import run

        rules = all_rules()
        options = load_options(settings, rules, cache.Kept(store, "options") if store else None)
        picked = chosen_rules(rules, chosen)
        processes = workers_for(len(found.composes) + len(found.notes), asked.workers)
        registry = cache.Kept(store, "registry") if store else None
        renders = cache.Kept(store, "renders", cache.MAX_RENDERS) if store else None
        loaded["estate"] = estate = load_estate(
            settings, env=env, found=found, workers=processes, kept=registry, renders=renders
        )
        done = run(estate, picked, options, today, processes, selected=selecting(chosen))
        # a run with an env file is keyed apart and has no fixes: they are of the estate as shipped
        if asked.finish is None or asked.env_file is not None:
            return done
        return asked.finish(done, estate)

    result = cache.through(store, key, compute)
    return Checked(result, loaded.get("estate"), settings)


def operator_env(env_file: Path | None) -> dict[str, str]:
    """The variables of ``--env-file`` (none without one)."""
    if env_file is None:
        return {}
    from ..sources.envfile import load_env_file

    return load_env_file(env_file, str(env_file))


def affects_every_file(settings: Config, path: Path) -> bool:
    """``path`` is the claims registry, the settings file, a region template or an env file
    (a ``.env`` or one the ``env-files`` setting names: it feeds the composes that read it)."""
    try:
        inside = path.resolve().relative_to(settings.root.resolve()).as_posix()
    except (ValueError, OSError):
        return False
    named = settings.env_files
    env_files = [f for files in named.values() for f in files] if isinstance(named, dict) else named
    return (
        inside in (settings.claims, settings.source, "pyproject.toml", "guards.toml")
        or inside.startswith(settings.templates.rstrip("/") + "/")
        or path.name == ".env"
        or inside in env_files
    )
