"""The persistent cache: a run's result kept with the state of every file it read.

A run is reused only when nothing it depends on changed. What it depends on comes in two
parts:

- the **key**: the guards code (its version and the size and time of every file of the
  package), the installed distributions (their names and versions), Python, the settings text,
  the rules chosen, the files discovery found, the ``.env`` values, the templates folder's
  files and the day (suppressions expire);
- the **reads**: every file the run read, recorded as it was read (``record``) with a digest
  of its bytes, and every input it looked for and did not find. A stored run is reused only
  when each of them still has that state, so an input a rule reads for itself (a catalog, a
  statuses file, a sibling compose) is covered without the rule saying so. A run during which
  a file could not be read is not stored.

Entries live in the user's cache folder (``$XDG_CACHE_HOME/guards`` or ``~/.cache/guards``,
one folder per estate root), or under ``GUARDS_CACHE_DIR``; never in the estate, so a checkout
cannot bring entries of its own. Writes are atomic (a temporary file, then ``os.replace``):
concurrent runs each see a whole entry or none, and the last to finish wins, which is right
either way since entries are keyed by content. The folder is kept under ``MAX_ENTRIES`` runs
and ``MAX_BYTES``, the least recently used going first. Word rarities (``guards.vocabulary``)
are kept beside the runs, keyed by the installed distributions, so a run whose claims use only
known words does not load the word-frequency data.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .findings import Run

if TYPE_CHECKING:
    from .config import Config
    from .discovery import Found

FORMAT = 2  # bumped when what an entry holds changes shape
MAX_ENTRIES = 64
MAX_BYTES = 512 * 1024 * 1024
ABSENT = "absent"
PACKAGE = Path(__file__).resolve().parent


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def cache_dir(root: Path) -> Path | None:
    """The folder for the estate at ``root``; None when ``GUARDS_NO_CACHE`` is set or there
    is no home to put it in."""
    if os.environ.get("GUARDS_NO_CACHE"):
        return None
    base = os.environ.get("GUARDS_CACHE_DIR")
    if not base:
        home = os.environ.get("XDG_CACHE_HOME")
        if not home:
            try:
                home = str(Path.home() / ".cache")
            except RuntimeError:  # no home folder to be found
                return None
        base = os.path.join(home, "guards")
    name = digest(os.path.abspath(root).encode("utf-8", "surrogateescape"))
    return Path(base) / name


# -- what a run read ------------------------------------------------------------------------


@dataclass
class Reads:
    """The state of every input a run read or looked for, by absolute path."""

    states: dict[str, str] = field(default_factory=dict)
    complete: bool = True  # False once a read failed: such a run is not stored

    def unchanged(self) -> bool:
        return all(state_of(path, state) == state for path, state in self.states.items())


_reads: Reads | None = None


@contextmanager
def recording() -> Iterator[Reads]:
    """Record what is read until the block ends."""
    global _reads
    outer, _reads = _reads, Reads()
    try:
        yield _reads
    finally:
        _reads = outer


def record(path: Path, data: bytes | None) -> None:
    """``path`` was read and held ``data``; None: it does not exist."""
    if _reads is not None:
        _reads.states[os.path.abspath(path)] = ABSENT if data is None else _state(data)


def merge(states: dict[str, str], complete: bool) -> None:
    """What another process read for this run (``guards.parallel``)."""
    if _reads is not None:
        _reads.states.update(states)
        _reads.complete = _reads.complete and complete


def record_failure() -> None:
    """A read failed: the run's result depends on more than file contents."""
    if _reads is not None:
        _reads.complete = False


def _state(data: bytes) -> str:
    return f"{len(data)}:{digest(data)}"


def state_of(path: str, expected: str = "") -> str:
    """What ``record`` would record for ``path`` now. Only a regular file is read (opened
    without blocking: a file swapped for a FIFO since must not stop the run), and only when
    its size is the ``expected`` state's."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return ABSENT
    except OSError:
        return "unreadable"
    with os.fdopen(handle, "rb") as opened:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if expected and not expected.startswith(f"{info.st_size}:"):
            return "another size"
        return _state(opened.read())


# -- the key --------------------------------------------------------------------------------


def environment() -> list[str]:
    """What every result depends on besides the estate: the code and what it runs on."""
    code = sorted(
        f"{p.relative_to(PACKAGE)}:{s.st_size}:{s.st_mtime_ns}"
        for p in PACKAGE.rglob("*")
        if p.suffix in (".py", ".j2", ".json", ".md") and (s := p.stat())
    )
    return [f"format {FORMAT}", __version__, sys.version, *code, *distributions()]


def distributions() -> list[str]:
    """The names (with versions) of the distributions installed where Python looks."""
    found = []
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        found += [n for n in names if n.endswith((".dist-info", ".egg-info"))]
    return sorted(found)


def folder_state(folder: Path) -> list[str]:
    """Each file under ``folder`` with the digest of its bytes (templates)."""
    if not folder.is_dir():
        return []
    return sorted(f"{p}:{state_of(str(p))}" for p in folder.rglob("*") if p.is_file())


def key_of(parts: list[str]) -> str:
    return digest("\0".join(parts).encode("utf-8", "surrogateescape"))


# -- the store ------------------------------------------------------------------------------


class Store:
    """Runs by key, and word rarities, in one folder."""

    def __init__(self, folder: Path, environment: list[str]) -> None:
        self.folder = folder
        self.environment = environment
        self.rarities = self._load_rarities()

    def get(self, key: str) -> object | None:
        """The run stored under ``key`` whose reads are all unchanged, else None."""
        path = self.folder / "runs" / key
        try:
            with open(path, "rb") as handle:
                stored_key, reads, value = pickle.load(handle)
        except Exception:  # absent, half-written by an older version, unreadable: a miss
            return None
        if stored_key != key or not reads.unchanged():
            return None
        with suppress(OSError):
            os.utime(path)  # recently used: pruned last
        return value

    def put(self, key: str, reads: Reads, value: object) -> None:
        if not reads.complete:
            return
        runs = self.folder / "runs"
        self._write(runs, key, pickle.dumps((key, reads, value), pickle.HIGHEST_PROTOCOL))
        prune(runs)

    def _load_rarities(self) -> dict[str, float]:
        try:
            with open(self._rarity_path(), encoding="utf-8") as handle:
                loaded = json.load(handle)
        except (OSError, ValueError):
            return {}
        if not isinstance(loaded, dict):
            return {}
        return {w: v for w, v in loaded.items() if isinstance(v, float)}

    def keep_rarities(self) -> None:
        """Add the word rarities this process computed to the kept ones."""
        from . import vocabulary

        learned = vocabulary.learned()
        if learned.keys() - self.rarities.keys():
            self.rarities = {**self.rarities, **learned}
            path = self._rarity_path()
            data = json.dumps(self.rarities, sort_keys=True).encode()
            self._write(path.parent, path.name, data)

    def _rarity_path(self) -> Path:
        return self.folder / f"rarity-{key_of(distributions())}.json"

    def _write(self, folder: Path, name: str, data: bytes) -> None:
        """Atomically; a cache that cannot be written is no cache, not an error."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                os.replace(temporary, folder / name)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass


def prune(folder: Path, entries: int = MAX_ENTRIES, limit: int = MAX_BYTES) -> None:
    """Drop the least recently used entries beyond ``entries`` or ``limit`` bytes in all."""
    try:
        found = [(p.stat(), p) for p in folder.iterdir() if not p.name.startswith(".tmp-")]
    except OSError:
        return
    found.sort(key=lambda item: item[0].st_mtime_ns, reverse=True)
    total = 0
    for count, (info, path) in enumerate(found):
        total += info.st_size
        if count >= entries or total > limit:
            with suppress(OSError):
                path.unlink()


# -- a run through the cache ----------------------------------------------------------------


def open_store(root: Path) -> Store | None:
    """The store for the estate at ``root``, its word rarities loaded; None without a home."""
    from . import vocabulary

    folder = cache_dir(root)
    if folder is None:
        return None
    store = Store(folder, environment())
    vocabulary.remember(store.rarities)
    return store


def run_key(
    store: Store,
    config: Config,
    selection: tuple[Sequence[str], Sequence[str]],
    found: Found,
    env: dict[str, str],
    today: date,
) -> str | None:
    """The key of a run of the rules ``selection`` (selected, ignored) picks over ``found``;
    None when discovery failed somewhere."""
    if found.errors:
        return None
    return key_of(
        [
            *store.environment,
            os.path.abspath(config.root),
            f"settings {config.source}",
            config.source_text,
            f"select {' '.join(selection[0])}",
            f"ignore {' '.join(selection[1])}",
            f"named {found.named}",
            *(f"compose {os.path.abspath(p)} {certain}" for p, certain in found.composes),
            *(f"note {os.path.abspath(p)}" for p in found.notes),
            *(f"env {k}={v}" for k, v in sorted(env.items())),
            *folder_state(config.root / config.templates),
            f"today {today.isoformat()}",
        ]
    )


def through(store: Store | None, key: str | None, compute: Callable[[], Run]) -> Run:
    """The run stored under ``key``, else ``compute()``'s, stored when it read every input it
    needed and had no errors."""
    if store is None:
        return compute()
    stored = store.get(key) if key is not None else None
    if isinstance(stored, Run):
        return stored
    with recording() as reads:
        result = compute()
    if key is not None and not result.errors:
        store.put(key, reads, result)
    store.keep_rarities()
    return result
