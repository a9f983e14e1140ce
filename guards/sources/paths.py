"""The one path policy: which files guards may read or write.

Two kinds of path reach guards:

- **named by the estate**: a setting (``claims``, ``templates``, a rule option such as D001's
  ``statuses`` or D004's ``catalogs``), a template a template includes, the default baseline,
  the compose's own ``.env``, and every file discovery finds. Anybody who can commit can write
  them, so each must resolve -- every symlink followed -- to a place inside ``--root``; else
  :func:`inside` raises a one-line error and nothing is read or written.
- **named by the user** on the command line (``--output``, ``--config``, ``--env-file``,
  ``--baseline``, the paths given to ``check``): they may point anywhere, since the person who
  typed them chose them. A write to one still replaces a symlink's target only when the link
  itself is not part of the estate (:func:`writable`): a link committed inside the root that
  leads out is refused, and the user can name its target instead.

Also here: :func:`check_path`, whether the system can look a path up at all.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import MAX_PATH, GuardsError, printable

NAME_MAX = 255  # bytes in one file name, on every system guards runs on
PATH_MAX = 4096  # bytes in a whole path (Linux)


def check_path(path: Path, shown: str, line: int | None = None) -> Path:
    """``path`` if the system can look it up at all, else GuardsError: a NUL byte, a name past
    ``NAME_MAX`` bytes or a path past ``PATH_MAX`` is bad input, not an internal error."""
    problem = None
    if "\0" in str(path):
        problem = "path contains a NUL byte"
    elif len(os.fsencode(path)) >= PATH_MAX:
        problem = f"path is longer than {PATH_MAX} bytes"
    elif any(len(os.fsencode(part)) > NAME_MAX for part in path.parts):
        problem = f"path has a name longer than {NAME_MAX} bytes"
    if problem:  # such a path names no file: it is shown cut, in JSON too
        raise GuardsError(problem, printable(shown, MAX_PATH), line)
    return path


def is_inside(root: Path, path: Path) -> bool:
    """True when ``path``, every symlink followed (a dangling one to where it points), lies
    inside ``root`` (itself resolved)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def inside(root: Path, path: Path, shown: str, line: int | None = None) -> Path:
    """``path`` (a file or folder the estate names) when it resolves inside ``root``, else
    GuardsError naming ``shown`` (and ``line``, where the name was given)."""
    check_path(path, shown, line)
    if not is_inside(root, path):
        raise GuardsError(f"{_outside_why(root, path)}; not read or written", shown, line)
    return path


def estate_file(root: Path, name: str, setting: str, where: str | None, line: int | None) -> Path:
    """``root / name`` for a name a setting gives (``setting``, set at ``where``:``line``, or
    a default when ``where`` is None), checked by :func:`relative_name` and :func:`inside`."""
    shown, at = (where, line) if where else (name, None)
    relative_name(name, setting, shown, at)
    path = root / name
    check_path(path, shown, at)
    if not is_inside(root, path):
        why = _outside_why(root, path)
        raise GuardsError(f"`{setting}` {name!r}: {why}; not read or written", shown, at)
    return path


def relative_name(name: str, setting: str, shown: str | None, line: int | None) -> str:
    """``name`` when it is a path relative to the root that does not climb with ``..``: an
    absolute name or a climbing one is refused even where it would land inside, since settings
    name files of the estate by their place in it."""
    problem = not_relative(name)
    if problem:
        raise GuardsError(f"`{setting}` {problem}", shown, line)
    return name


def not_relative(name: str) -> str | None:
    """Why ``name`` is not a relative path without ``..`` (None when it is one)."""
    parts = name.replace("\\", "/").split("/")
    if (
        not name
        or name.startswith(("/", "\\"))
        or (len(name) > 1 and name[1] == ":")
        or ".." in parts
    ):
        return f"{name!r} must be a path relative to the root, without '..'"
    return None


def writable(root: Path, path: Path, shown: str) -> Path:
    """``path`` as a place the user named for guards to write: anywhere, except through a
    symlink inside the estate that leads out of it."""
    check_path(path, shown)
    if os.path.islink(path) and is_inside(root, path.parent) and not is_inside(root, path):
        raise GuardsError(
            "is a link inside the estate that leads outside it; not written through (name "
            "its target to write there)",
            shown,
        )
    return path


def _outside_why(root: Path, path: Path) -> str:
    """Why ``path`` is outside: a symlink below ``root`` leads out, or it simply is."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return "is outside the estate root"
    here = root
    for part in relative.parts:
        here = here / part
        if os.path.islink(here):
            return (
                f"{here.relative_to(root).as_posix()} is a link that leads outside the estate root"
            )
    return "is outside the estate root"
