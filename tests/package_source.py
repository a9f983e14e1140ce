"""The package's modules as the tests that read their source see them: each module's syntax
tree parsed once per test process (the layer, length, one-home, atomic-write and error-location
tests walk the same modules, a thousand parses a run before). The trees are shared: a test
walks them and never changes them."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def syntax(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
