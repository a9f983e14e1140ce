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

from .errors import MAX_PATH, GuardsError, printable

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
        why = "is a link that leads" if _is_link_somewhere(root, path) else "is"
        raise GuardsError(
            f"{why} outside the estate root; guards reads and writes only files inside "
            "--root that the estate names",
            shown,
            line,
        )
    return path


def estate_file(root: Path, name: str, shown: str, line: int | None = None) -> Path:
    """The file a setting or an estate file names (relative to ``root``), checked by
    :func:`inside`. An absolute name or one that climbs out with ``..`` is refused even where
    it would land inside."""
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in parts:
        raise GuardsError(
            f"{name!r} must be a path relative to the root, without '..'", shown, line
        )
    return inside(root, root / name, shown, line)


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


def _is_link_somewhere(root: Path, path: Path) -> bool:
    """Whether a component of ``path`` below ``root`` is a symlink (for the message)."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return False
    here = root
    for part in relative.parts:
        here = here / part
        if os.path.islink(here):
            return True
    return False
