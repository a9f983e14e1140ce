"""Patterns: regular expressions compiled on first use, and the one glob for paths.

A module-level ``re.compile`` runs in every process that imports the module, whether or not the
pattern is ever used, and `guards check` of one compose imports the note parsers and every
rule. ``lazy(...)`` stands in for ``re.compile(...)`` where a pattern costs to compile and a
run often does not use it: it compiles on the first ``search``, ``sub``, ``groupindex``, ...
and from then on costs what the compiled pattern costs.

The stand-in is not an ``re.Pattern``: use its methods and its ``pattern``, not ``isinstance``
or the module functions (``re.sub(PATTERN, ...)``).

:func:`glob_match` is how every setting that takes a path glob matches (discovery's
``composes``, ``notes``, ``exclude``, ``history``, per-path ignores, a claim's
``applies_to.paths``): ``**/`` may stand for no folder at all.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, cast


class _Lazy:
    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern  # readable without compiling: patterns built from patterns
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        """Only called for what the instance does not hold yet: compile, then hold every
        attribute of the compiled pattern, so later calls skip this method."""
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags)
        for attribute in dir(compiled):
            if not attribute.startswith("_"):
                setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __reduce__(self) -> tuple[type[_Lazy], tuple[str, int]]:
        return _Lazy, (self.pattern, self._flags)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self._flags})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled when it is first used."""
    return cast(re.Pattern[str], _Lazy(pattern, flags))


def glob_match(shown: str, pattern: str) -> bool:
    """Glob match where ``**/`` may match no directory at all (``a/**/*.yml`` matches a/x.yml)."""
    if fnmatch.fnmatchcase(shown, pattern):
        return True
    return "**/" in pattern and fnmatch.fnmatchcase(shown, pattern.replace("**/", ""))
