"""Regular expressions compiled on first use.

A module-level ``re.compile`` runs in every process that imports the module, whether or not the
pattern is ever used, and `guards check` of one compose imports the note parsers and every
rule. ``lazy(...)`` stands in for ``re.compile(...)`` where a pattern costs to compile and a
run often does not use it: it compiles on the first ``search``, ``sub``, ``groupindex``, ...
and from then on costs what the compiled pattern costs.

The stand-in is not an ``re.Pattern``: use its methods and its ``pattern``, not ``isinstance``
or the module functions (``re.sub(PATTERN, ...)``).
"""

from __future__ import annotations

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
