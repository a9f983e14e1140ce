"""``guards fix``: every stale copy of a withdrawn claim in a compose (a C001 finding) becomes a
``claim`` region rendering the claim as it stands now — its retraction, reason and replacement.

The copy's lines (first to last) are replaced by an empty region, and the file's regions are
then rendered by :func:`guards.regen.regenerate`, with its checks: nothing outside the regions
changes, nor the YAML data. A copy that is not whole comment lines (a trailing comment, a line
inside a script) is left for a person and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import yamlsrc
from .edit import Edit, apply, line_starts
from .errors import GuardsError
from .findings import Finding
from .regen import indentation, regenerate
from .registry import Registry


@dataclass(frozen=True)
class Fixed:
    text: str  # the compose with its copies replaced and its regions rendered
    replaced: list[Finding]  # the copies now inside claim regions
    left: list[tuple[Finding, str]]  # the copies not replaced, and why


def fix_stale_copies(
    text: str,
    shown: str,
    copies: list[Finding],
    registry: Registry,
    templates: Path | None,
    root: Path | None,
) -> Fixed:
    """``text`` with each copy (a C001 finding in it) replaced by a rendered claim region."""
    lines = text.split("\n")
    starts = [*line_starts(text), len(text)]
    edits: list[Edit] = []
    replaced: list[Finding] = []
    left: list[tuple[Finding, str]] = []
    last = 0
    for copy in sorted(copies, key=lambda f: (f.line, f.end_line)):
        end_line = max(copy.end_line, copy.line)
        if copy.line <= last:
            left.append((copy, "overlaps a copy already replaced"))
            continue
        if not all(lines[n - 1].lstrip().startswith("#") for n in range(copy.line, end_line + 1)):
            left.append((copy, "not whole comment lines"))
            continue
        indent = indentation(lines[copy.line - 1])
        region = f"{indent}# >>> guards:claim {copy.claim}\n{indent}# <<< guards:claim\n"
        end = starts[end_line] if end_line < len(lines) else len(text)
        edits.append(Edit(starts[copy.line - 1], end, region))
        replaced.append(copy)
        last = end_line
    staged = apply(text, edits)
    final = apply(staged, regenerate(staged, shown, registry, templates, root, force=False))
    if yamlsrc.data(text, shown) != yamlsrc.data(final, shown):
        raise GuardsError(
            "refusing to write: replacing the stale copies would change the YAML data (is a "
            "copy inside a block scalar?); nothing written",
            shown,
        )
    return Fixed(final, replaced, left)
