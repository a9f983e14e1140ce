"""Editing files in place: the one home for every command that writes (``claims`` edits,
``regen``, ``fix``, ``baseline``).

A file is read into a :class:`Source`: the text every parser sees (``\\n`` line breaks, no BOM)
and what is needed to write it back as it was. Edits are spans of that text with new text
(:class:`Edit`), applied from the end backwards so earlier offsets stay valid (pre-commit's
``migrate_config``). Writing keeps each untouched line's own ending (CRLF or LF; new lines take
the file's dominant one), the BOM and the file mode, goes through a temp file and
``os.replace``, and happens only when the text changed (cog's ``process_string``). A command
holds :func:`locked` from reading to writing, and :func:`write` refuses a file that is no
longer the one read (bytes, inode, mtime, size), so no update is lost to another writer.
"""

from __future__ import annotations

import bisect
import difflib
import errno
import fcntl
import itertools
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..errors import GuardsError
from . import files, reads
from .paths import check_path

BOM = "\ufeff"
MAX_BYTES = 50_000_000  # the largest file read unless the config says otherwise (max-file-mb)
# Every line break that libyaml or markdown-it honours, besides "\n". Mapped one-for-one to
# "\n" (so offsets stay put) wherever text is read: one definition of "line" for every parser.
YAML_11_BREAKS = "\x85\u2028\u2029"  # line breaks to YAML 1.1, text to YAML 1.2
LINE_BREAKS = str.maketrans({"\r": "\n", "\x85": "\n", "\u2028": "\n", "\u2029": "\n"})


def unify_breaks(text: str) -> str:
    """``text`` with CRLF as LF and every other line break as LF (same length otherwise)."""
    text = text.replace("\r\n", "\n")
    if "\r" in text or "\x85" in text or "\u2028" in text or "\u2029" in text:
        text = text.translate(LINE_BREAKS)
    return text


@dataclass(frozen=True, order=True)
class Edit:
    """Replace ``text[start:end]`` (offsets in :attr:`Source.text`) with ``new``."""

    start: int
    end: int
    new: str


class Source(NamedTuple):
    path: Path
    shown: str  # the path as users see it, for messages
    raw: str  # the file as decoded, BOM removed, line endings as written
    text: str  # ``raw`` with every line break as LF (``unify_breaks``): what parsers read
    bom: bool
    data: bytes = b""  # the bytes read, and the file's (st_ino, st_mtime_ns, st_size) then:
    stamp: tuple[int, int, int] | None = None  # write() refuses a file that no longer has them

    @property
    def newline(self) -> str:
        """The file's dominant line ending, for lines an edit adds."""
        crlf = self.raw.count("\r\n")
        return "\r\n" if crlf * 2 > self.raw.count("\n") else "\n"

    def render(self, edits: list[Edit]) -> str:
        """``raw`` with ``edits`` applied; untouched line endings stay as written."""
        # Where each CRLF of ``raw`` stands in ``text`` (as its LF): a text offset past k of
        # them is k characters further on in ``raw``. Other breaks map one for one.
        collapsed = [at - k for k, at in enumerate(_crlf_offsets(self.raw))]

        def to_raw(offset: int) -> int:
            return offset + bisect.bisect_left(collapsed, offset)

        out = self.raw
        for edit in reversed(_ordered(edits)):
            new = edit.new.replace("\n", self.newline) if self.newline != "\n" else edit.new
            start = to_raw(edit.start)
            if new and start and out[start - 1] in YAML_11_BREAKS:
                # YAML 1.1 readers (and guards) end a line there, YAML 1.2 readers do not:
                # what is spliced in after it starts on a line of its own for both
                new = self.newline + new
            out = out[:start] + new + out[to_raw(edit.end) :]
        return out


def apply(text: str, edits: list[Edit]) -> str:
    """``text`` with ``edits`` applied (from the end backwards; they may not overlap)."""
    for edit in reversed(_ordered(edits)):
        text = text[: edit.start] + edit.new + text[edit.end :]
    return text


def read(path: Path, shown: str, limit: int = MAX_BYTES) -> Source:
    """Read a UTF-8 file (a BOM is tolerated); errors name the file and line. Only regular
    files are read (a FIFO would block, ``/dev/zero`` never ends), and at most ``limit``
    bytes."""
    try:
        given = files.override(check_path(path, shown))
        if given is None:
            data, stamp = _read_regular(path, shown, limit)
        else:  # bytes in place of the file's: no stamp, so write() refuses this source
            data, stamp = _given(given, shown, limit), None
    except GuardsError:
        reads.record_failure()  # a result that depends on more than file contents
        raise
    if given is None:
        reads.record(path, data)
    else:
        reads.record_failure()  # nor is a run that read given bytes kept
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise GuardsError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", shown, line, column
        ) from None
    bom = decoded.startswith(BOM)
    raw = decoded[1:] if bom else decoded
    return Source(path, shown, raw, unify_breaks(raw), bom, data, stamp)


def _given(data: bytes, shown: str, limit: int) -> bytes:
    """Bytes read in place of a file (:mod:`guards.sources.files`), under the same limit."""
    if len(data) > limit:
        raise GuardsError(f"is larger than {_megabytes(limit)} (setting max-file-mb)", shown)
    return data


def _read_regular(path: Path, shown: str, limit: int) -> tuple[bytes, tuple[int, int, int]]:
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise GuardsError("is a directory, not a file", shown)
        if not stat.S_ISREG(info.st_mode):
            raise GuardsError("is not a regular file (a FIFO, socket or device); not read", shown)
        if info.st_size > limit:
            raise GuardsError(f"is larger than {_megabytes(limit)} (setting max-file-mb)", shown)
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
            stamp = _stamp(os.fstat(handle.fileno()))
    except FileNotFoundError:
        raise GuardsError("no such file", shown) from None
    except OSError as exc:
        raise GuardsError(f"cannot read: {exc.strerror or exc}", shown) from None
    if len(data) > limit:  # it grew while being read
        raise GuardsError(f"is larger than {_megabytes(limit)} (setting max-file-mb)", shown)
    return data, stamp


def _stamp(info: os.stat_result) -> tuple[int, int, int]:
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def _megabytes(limit: int) -> str:
    return f"{limit / 1_000_000:g} MB"


LOCK_WAIT = 10.0  # seconds a write command waits for another one editing the same folder


@contextmanager
def locked(path: Path, shown: str, wait: float | None = None) -> Iterator[None]:
    """Hold the write lock for ``path`` over a read-verify-write span, so two guards commands
    editing one file never both read the old text (the second would drop the first's change).

    The lock is an advisory ``flock`` on the folder the file really lives in (the folder, not
    the file: ``os.replace`` gives the file a new inode, and no lock file is left behind). A
    command that cannot have it within ``wait`` seconds stops with an error, nothing written;
    a file system without locks (some network mounts) is written unlocked, the check before the
    rename still refusing a file changed since it was read. ``wait`` defaults to
    ``GUARDS_LOCK_WAIT`` seconds when that is set (tests hold a lock past a short wait), else
    ``LOCK_WAIT``."""
    folder = os.path.dirname(os.path.realpath(check_path(path, shown))) or "."
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        raise GuardsError(f"cannot write: {exc.strerror or exc}; nothing written", shown) from None
    try:
        _take_lock(handle, shown, _lock_wait() if wait is None else wait)
        yield
    finally:
        os.close(handle)  # releases the lock


def _lock_wait() -> float:
    setting = os.environ.get("GUARDS_LOCK_WAIT")
    if setting is None:
        return LOCK_WAIT
    try:
        wait = float(setting)
    except ValueError:
        wait = -1.0
    if not 0 <= wait < 1e6:
        raise GuardsError(f"GUARDS_LOCK_WAIT={setting!r} is not a number of seconds")
    return wait


def _take_lock(handle: int, shown: str, wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise GuardsError(
                    f"another guards command has been editing files in this folder for {wait:g} s; "
                    "nothing written (try again when it is done)",
                    shown,
                ) from None
            time.sleep(0.05)
        except OSError as exc:
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL):
                return
            raise GuardsError(
                f"cannot lock: {exc.strerror or exc}; nothing written", shown
            ) from None


def write(source: Source, new_raw: str) -> bool:
    """Write ``new_raw`` (a rendering of ``source``) when it differs; True when written.

    Atomic (temp file in the same folder, then ``os.replace``); keeps the file mode; writes
    through a symlink to its target; refuses a read-only file. Right before the rename, with
    the new text already in the temp file, the file must still hold the bytes ``source`` was
    read from, with the same inode, mtime and size: a change another program made since (one
    that does not take the lock) is refused, never overwritten."""
    if new_raw == source.raw:
        return False
    target = Path(os.path.realpath(source.path))
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError as exc:
        raise GuardsError(
            f"cannot write: {exc.strerror or exc}; nothing written", source.shown
        ) from None
    _unchanged(source, target)
    if not mode & 0o222:
        raise GuardsError("file is read-only; nothing written", source.shown)
    data = ((BOM if source.bom else "") + new_raw).encode("utf-8")
    try:
        replace_atomically(target, data, mode, check=lambda: _unchanged(source, target))
    except OSError as exc:
        raise GuardsError(
            f"cannot write: {exc.strerror or exc}; nothing written", source.shown
        ) from None
    return True


def _unchanged(source: Source, target: Path) -> None:
    """GuardsError unless ``target`` is still the file ``source`` was read from, as it was."""
    try:
        with target.open("rb") as handle:
            stamp = _stamp(os.fstat(handle.fileno()))
            same = stamp == source.stamp and handle.read(len(source.data) + 1) == source.data
    except OSError as exc:
        raise GuardsError(
            f"cannot write: {exc.strerror or exc}; nothing written", source.shown
        ) from None
    if not same:
        raise GuardsError("changed since it was read; nothing written", source.shown)


def write_file(path: Path, text: str, shown: str) -> None:
    """A whole file guards owns (a report, the baseline), written atomically: an existing file
    keeps its mode, a new one gets the umask's; on an error nothing is written."""
    check_path(path, shown)
    target = Path(os.path.realpath(path))
    try:
        if target.exists() and not target.is_file():
            raise GuardsError("not a regular file; nothing written", shown)
        if target.exists():
            mode = stat.S_IMODE(target.stat().st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        replace_atomically(target, text.encode("utf-8"), mode)
    except OSError as exc:
        raise GuardsError(f"cannot write: {exc.strerror or exc}; nothing written", shown) from None


def replace_atomically(
    target: str | Path,
    data: bytes,
    mode: int,
    folder: int | None = None,
    prefix: str | None = None,
    check: Callable[[], None] | None = None,
) -> None:
    """``data`` as the file ``target``, mode ``mode``, through a temporary file beside it that
    is renamed over it: a reader sees the old file or the new one, never part of either.

    The one atomic write, for edited files and the run cache alike. ``folder``: a descriptor
    ``target`` is relative to (the cache reaches its folders only through descriptors it has
    checked, so a path swapped meanwhile is not followed). The temporary file (named
    ``prefix``, by default ``.NAME.``, then the process and a random part) is made new, not
    through a link and readable by this user only until it holds ``data``; ``check`` runs just
    before the rename and may refuse it. On any error the temporary file is removed."""
    head, name = os.path.split(os.fspath(target))
    start = f".{name}." if prefix is None else prefix
    temporary = os.path.join(head, f"{start}{os.getpid()}-{os.urandom(6).hex()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    handle = os.open(temporary, flags, 0o600, dir_fd=folder)
    try:
        with open(handle, "wb") as out:
            out.write(data)
        if folder is None:
            os.chmod(temporary, mode)
        else:  # the folder is checked: only this user can put a link in its place
            os.chmod(temporary, mode, dir_fd=folder)
        if check is not None:
            check()
        os.replace(temporary, target, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise


def line_edits(before: str, after: str) -> list[Edit]:
    """Edits that turn ``before`` into ``after``, whole lines at a time (so a write through
    :meth:`Source.render` keeps every untouched line's own ending). The lines both texts
    open and close with are set aside first: the diff runs on the changed middle only, which
    keeps a local change linear in the file (a diff of many equal lines is quadratic)."""
    old, new = before.split("\n"), after.split("\n")
    starts = [*line_starts(before), len(before) + 1]
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(None, middle_old, middle_new, autojunk=False)
    edits = []
    # Offsets are those of ``before + "\n"`` (every line, the last too, ends with a break);
    # an edit reaching that last, virtual break is brought back inside ``before``.
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = starts[head + i1], starts[head + i2]
        text = "".join(line + "\n" for line in middle_new[j1:j2])
        if start > len(before):  # lines added after the last one: a break before them
            start, end, text = len(before), len(before), "\n" + text[:-1]
        elif end > len(before):
            end, text = len(before), text[:-1]
            if not text and j1 == j2:
                start -= 1  # the lines deleted to the end take the break before them along
        edits.append(Edit(start, end, text))
    return edits


def line_starts(text: str) -> list[int]:
    """Offset of the first character of every line of ``text`` (``\\n`` line breaks)."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _crlf_offsets(raw: str) -> list[int]:
    found, at = [], raw.find("\r\n")
    while at >= 0:
        found.append(at)
        at = raw.find("\r\n", at + 2)
    return found


def _ordered(edits: list[Edit]) -> list[Edit]:
    # A stable sort: two inserts at one offset keep the order they were given in.
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for before, after in itertools.pairwise(ordered):
        if after.start < before.end:
            raise ValueError(f"overlapping edits at offsets {before.start} and {after.start}")
    return ordered
