"""The persistent cache: a run's result kept with the state of every file it read.

A run is reused only when nothing it depends on changed. What it depends on comes in two
parts:

- the **key**: the guards code (its version and the size and time of every file of the
  package), the installed distributions (their names and versions), Python, the settings text,
  the rules chosen, the files discovery found (with its listing of the root), the ``.env``
  values and the day (suppressions expire);
- the **reads**: every file the run read, recorded as it was read (``record``) with a digest
  of its bytes, and every input it looked for and did not find. A stored run is reused only
  when each of them still has that state, so an input a rule reads for itself (a catalog, a
  statuses file, a sibling compose) is covered without the rule saying so. A run during which
  a file could not be read is not stored. Templates are inputs like any other: the region
  loader (``guards.facts.sandbox``) reads each through ``guards.sources.edit.read`` and records a name it
  looked for and did not find, so a template added, edited or reached through a link is seen.

Entries live in the user's cache folder (``$XDG_CACHE_HOME/guards`` or ``~/.cache/guards``,
one folder per estate root), or under ``GUARDS_CACHE_DIR``; never in the estate, so a checkout
cannot bring entries of its own. Writes are atomic (a temporary file, then ``os.replace``):
concurrent runs each see a whole entry or none, and the last to finish wins, which is right
either way since entries are keyed by content. The folder is kept under ``MAX_ENTRIES`` runs
and ``MAX_BYTES``, the least recently used going first. Word rarities (``guards.claims.vocabulary``)
are kept beside the runs, keyed by the installed distributions, so a run whose claims use only
known words does not load the word-frequency data.

Whoever can write the cache folder decides what the next run reports, so:

- entries are data only: JSON of this ``FORMAT``, every field's type checked and every object
  built explicitly (``findings.from_json``). An entry that is anything else (truncated, not
  UTF-8, too big, of another shape or format, not a regular file of this user, a link) is a
  miss; entries are opened without following links and without blocking;
- the cache is used only in folders only this user can write: the base folder (a link to a
  folder is judged where it leads), the estate's folder and ``runs`` in it must be owned by
  the user and not writable by group or others, and the base must not lie inside the estate.
  A relative ``XDG_CACHE_HOME`` is ignored (the XDG base directory spec calls it invalid), a
  relative ``GUARDS_CACHE_DIR`` refused. A refused cache is no cache: the run is computed, and
  ``refusal`` says why for ``--verbose``. Folders are made 0o700, entries 0o600, and each
  folder is checked on the descriptor that is then used to reach what is in it.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import MAX_PATH, printable
from ..findings import Run, from_json, to_json
from ..sources.edit import replace_atomically
from ..sources.paths import is_inside
from ..sources.reads import Reads, checked_states, digest, recording
from .parallel import collector_paused

if TYPE_CHECKING:
    from ..sources.config import Config
    from .discovery import Found

FORMAT = 6  # bumped when what an entry holds changes shape
MAX_ENTRIES = 64
MAX_BYTES = 512 * 1024 * 1024
MAX_ENTRY = 256 * 1024 * 1024  # bytes of one kept run: a bigger file is not one of ours
MAX_RARITIES = 16 * 1024 * 1024
MAX_KEPT = 16 * 1024 * 1024  # bytes of kept settings, claims, rule options or a render
MAX_RENDERS = 1024  # kept renders of regions (a process keeps at most one: the others keep
# MAX_ENTRIES of each kind)
PACKAGE = Path(__file__).resolve().parents[1]
UNREADABLE = (ValueError, TypeError, RecursionError)  # JSON that is not a kept run or rarities


# -- where the cache is ---------------------------------------------------------------------


class Refused(Exception):
    """Why there is no cache for an estate (``--verbose`` shows it)."""


def locate(root: Path) -> tuple[Path, str] | None:
    """The cache's base folder and the name of the estate's folder in it; None when
    ``GUARDS_NO_CACHE`` is set or there is no home to put it in. Refused when the base lies
    inside the estate (a checkout would bring entries of its own) or is relative."""
    if os.environ.get("GUARDS_NO_CACHE"):
        return None
    base = _base()
    if base is None:
        return None
    if is_inside(root, base):
        raise Refused(f"{_shown(base)} is inside the estate")
    return base, digest(os.path.abspath(root).encode("utf-8", "surrogateescape"))


def _base() -> Path | None:
    chosen = os.environ.get("GUARDS_CACHE_DIR")
    if chosen:
        if not os.path.isabs(chosen):
            raise Refused(f"GUARDS_CACHE_DIR is a relative path ({_shown(chosen)})")
        return Path(chosen)
    home = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(home):  # a relative one is invalid (XDG base directory spec): ignored
        return Path(home) / "guards"
    try:
        user = Path.home()
    except RuntimeError:  # no home folder to be found
        return None
    return user / ".cache" / "guards" if user.is_absolute() else None


def _shown(path: Path | str) -> str:
    return printable(str(path), MAX_PATH)


def refusal(root: Path) -> str | None:
    """Why runs of the estate at ``root`` are not kept, in one line; None when they are (or
    the cache is turned off). Creates nothing."""
    try:
        place = locate(root)
        if place is not None:
            with _folder(place[0], (place[1], "runs"), create=False):
                pass
    except FileNotFoundError:
        return None  # a folder not made yet is made 0o700 when a run is kept
    except Refused as why:
        return f"cache off: {why}"
    return None


@contextmanager
def _folder(base: Path, names: Sequence[str], create: bool) -> Iterator[int]:
    """A descriptor of the folder ``base``/``names``, each step checked by ``_open_folder``
    on the descriptor the next step is opened from: ``base`` may be a link to a folder, the
    steps below it may not."""
    shown = base
    handle = _open_folder(str(base), None, shown, create)
    try:
        for name in names:
            shown = shown / name
            inner = _open_folder(name, handle, shown, create)
            os.close(handle)
            handle = inner
        yield handle
    finally:
        os.close(handle)


def _open_folder(name: str, parent: int | None, shown: Path, create: bool) -> int:
    """A descriptor of the folder ``name`` (in the folder ``parent``), made 0o700 when absent
    and ``create``. Refused when it cannot be used or others could write in it;
    FileNotFoundError when it is absent and not to be made."""
    try:
        if create:
            with suppress(FileExistsError):
                if parent is None:
                    os.makedirs(name, 0o700)
                else:
                    os.mkdir(name, 0o700, dir_fd=parent)
        flags = os.O_RDONLY | os.O_DIRECTORY | (0 if parent is None else os.O_NOFOLLOW)
        handle = os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
        raise Refused(f"{_shown(shown)} cannot be made") from None
    except OSError as error:
        why = "is a link" if _is_link(name, parent) else f"cannot be used ({error.strerror})"
        raise Refused(f"{_shown(shown)} {why}") from None
    problem = _unsafe(os.fstat(handle))
    if problem:
        os.close(handle)
        raise Refused(f"{_shown(shown)} {problem}")
    return handle


def _is_link(name: str, parent: int | None) -> bool:
    """Whether ``name`` in ``parent`` is a link (not followed below the base folder)."""
    try:
        return parent is not None and stat.S_ISLNK(os.lstat(name, dir_fd=parent).st_mode)
    except OSError:
        return False


def _unsafe(info: os.stat_result) -> str:
    """What lets others put entries in a folder; "" when nothing does."""
    if info.st_uid != os.geteuid():
        return f"is owned by another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by others (mode {stat.S_IMODE(info.st_mode):o})"
    return ""


# -- the key --------------------------------------------------------------------------------


def environment() -> list[str]:
    """What every result depends on besides the estate: the code and what it runs on."""
    return [
        f"format {FORMAT}",
        sys.version,
        *sorted(code_files()),
        *distributions(),
    ]  # the version: a dist-info name


CODE = (".py", ".j2", ".json", ".md")  # the package's files that decide what a run gives


def code_files(folder: str = str(PACKAGE), under: str = "") -> Iterator[str]:
    """``path:size:mtime`` of every code file of the package, by one ``scandir`` per folder
    (every run keys on them, a kept one too: ``pathlib``'s walk took most of its 7 ms)."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                yield from code_files(entry.path, f"{under}{entry.name}/")
            elif entry.name.endswith(CODE):
                info = entry.stat()
                yield f"{under}{entry.name}:{info.st_size}:{info.st_mtime_ns}"


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


def key_of(parts: list[str]) -> str:
    return digest("\0".join(parts).encode("utf-8", "surrogateescape"))


# -- the store ------------------------------------------------------------------------------


class Store:
    """Runs by key, and word rarities, in the estate's folder of the cache."""

    def __init__(self, base: Path, name: str, environment: list[str]) -> None:
        self.base = base
        self.name = name
        self.environment = environment
        self.rarities = self._load_rarities()

    def get(self, key: str) -> Run | None:
        """The run stored under ``key`` whose reads are all unchanged, else None."""
        data = self._read(("runs",), key, MAX_ENTRY, touch=True)
        try:
            with collector_paused():
                return None if data is None else _entry(data, key)
        except UNREADABLE:  # damaged, of an older format, or not ours: a miss
            return None

    def put(self, key: str, reads: Reads, run: Run) -> None:
        if not reads.complete:
            return
        entry = {"format": FORMAT, "key": key, "reads": reads.states, "run": to_json(run)}
        self._write(("runs",), key, json.dumps(entry, separators=(",", ":")).encode())

    def _load_rarities(self) -> dict[str, float]:
        data = self._read((), self._rarity_name(), MAX_RARITIES)
        try:
            return {} if data is None else _rarities(data)
        except UNREADABLE:
            return {}

    def keep_rarities(self) -> None:
        """Add the word rarities this process computed to the kept ones."""
        from ..claims import vocabulary

        learned = vocabulary.learned()
        if learned.keys() - self.rarities.keys():
            self.rarities = {**self.rarities, **learned}
            kept = {"format": FORMAT, "rarities": self.rarities}
            self._write((), self._rarity_name(), json.dumps(kept, sort_keys=True).encode())

    def _rarity_name(self) -> str:
        return f"rarity-{key_of(distributions())}.json"

    def _read(
        self, folder: tuple[str, ...], name: str, limit: int, touch: bool = False
    ) -> bytes | None:
        """The bytes of the entry ``name`` in ``folder`` of the estate's folder; None when it
        is absent or not a regular file of this user of at most ``limit`` bytes."""
        try:
            with _folder(self.base, (self.name, *folder), create=False) as parent:
                return read_entry(parent, name, limit, touch)
        except (Refused, OSError):
            return None

    def _write(
        self, folder: tuple[str, ...], name: str, data: bytes, entries: int = MAX_ENTRIES
    ) -> None:
        """Atomically; a cache that cannot be written is no cache, not an error. A write to a
        folder (``runs``, a kind of kept data) prunes it to ``entries``."""
        try:
            with _folder(self.base, (self.name, *folder), create=True) as parent:
                write_entry(parent, name, data)
                if folder:
                    prune(parent, entries)
        except (Refused, OSError):
            pass


class Kept:
    """What a text validated or rendered to, by that text (:class:`guards.sources.config.Kept`):
    the settings (``kind`` "settings"), the claims registry ("registry"), each rule's options
    table ("options") and each region's render ("renders", by its template's data). A run
    whose settings and registry are unchanged reads them without validating them again, and
    so without pydantic, and a region whose data is unchanged without jinja2; the reader
    builds its records from the data, checking each field."""

    def __init__(self, store: Store, kind: str, entries: int = MAX_ENTRIES) -> None:
        self.store = store
        self.kind = kind
        self.entries = entries
        self.prefix = key_of([*store.environment, kind])  # hashed once: a run may keep 1,000

    def _name(self, text: str) -> str:
        return key_of([self.prefix, text])

    def get(self, text: str) -> object:
        data = self.store._read((self.kind,), self._name(text), MAX_KEPT)
        try:
            return None if data is None else json.loads(data)
        except UNREADABLE:
            return None

    def put(self, text: str, values: object) -> None:
        try:
            data = json.dumps(values, separators=(",", ":")).encode()
        except (TypeError, ValueError):  # a TOML date or time: not kept, validated each run
            return
        self.store._write((self.kind,), self._name(text), data, self.entries)


def _entry(data: bytes, key: str) -> Run | None:
    """The run a kept entry holds when its reads are unchanged; None when one changed."""
    entry = _envelope(data, {"format", "key", "reads", "run"})
    if entry["key"] != key:
        raise ValueError("an entry of another key")
    if not Reads(checked_states(entry["reads"])).unchanged():
        return None
    return from_json(entry["run"])


def _rarities(data: bytes) -> dict[str, float]:
    words = _envelope(data, {"format", "rarities"})["rarities"]
    if type(words) is not dict or not all(type(v) is float and 0 < v <= 1 for v in words.values()):
        raise ValueError("not word rarities")
    return words


def _envelope(data: bytes, keys: set[str]) -> dict:
    """The object a kept file holds, of this ``FORMAT`` and with exactly ``keys``."""
    loaded = json.loads(data.decode("utf-8"))
    if type(loaded) is not dict or loaded.keys() != keys or _format(loaded) != FORMAT:
        raise ValueError("not an entry of this format")
    return loaded


def _format(loaded: dict) -> int | None:
    return loaded["format"] if type(loaded["format"]) is int else None


def read_entry(folder: int, name: str, limit: int, touch: bool = False) -> bytes | None:
    """The bytes of the file ``name`` in ``folder`` (a descriptor), opened without following
    a link or blocking on a FIFO; None unless it is a regular file of this user of at most
    ``limit`` bytes. ``touch``: marked recently used (pruned last)."""
    handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return None
        if info.st_size > limit:
            return None
        with open(handle, "rb", closefd=False) as opened:
            data = opened.read(limit + 1)
        if touch:
            os.utime(handle)
        return data if len(data) <= limit else None
    finally:
        os.close(handle)


def write_entry(folder: int, name: str, data: bytes) -> None:
    """``data`` as the file ``name`` in ``folder`` (a descriptor), mode 0o600, through a
    temporary file (``.tmp-``, which ``prune`` leaves alone): readers see the whole file or
    none."""
    replace_atomically(name, data, 0o600, folder=folder, prefix=".tmp-")


def prune(folder: int, entries: int = MAX_ENTRIES, limit: int = MAX_BYTES) -> None:
    """Drop the least recently used entries of ``folder`` (a descriptor) beyond ``entries``
    or ``limit`` bytes in all."""
    try:
        with os.scandir(folder) as listing:
            found = [
                (item.stat(follow_symlinks=False), item.name)
                for item in listing
                if not item.name.startswith(".tmp-")
            ]
    except OSError:
        return
    found.sort(key=lambda item: item[0].st_mtime_ns, reverse=True)
    total = 0
    for count, (info, name) in enumerate(found):
        total += info.st_size
        if count >= entries or total > limit:
            with suppress(OSError):
                os.unlink(name, dir_fd=folder)


# -- a run through the cache ----------------------------------------------------------------


def open_store(root: Path) -> Store | None:
    """The store for the estate at ``root``, its word rarities loaded; None when the cache is
    off, has no home, or is refused (``refusal`` says why)."""
    from ..claims import vocabulary

    try:
        place = locate(root)
        if place is None:
            return None
        with _folder(place[0], (place[1],), create=True):
            pass  # made, and checked: nothing is read from a folder others could write
    except Refused:
        return None
    store = Store(*place, environment())
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
            *found.tree.key(),
            *(f"env {k}={v}" for k, v in sorted(env.items())),
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
