"""``guards fix --adopt-profile``: a hand-written ``# Profile (at-a-glance):`` block becomes a
``profile`` region.

Every row moves, as written, into the compose's ``x-guards: profile:`` mapping; in the rows the
compose body decides (Max ctx, the TP / ``-ts`` of Topology, the KV dtype, the drafter depth)
the stated value becomes a ``{knob}`` placeholder, so the body's value is what is rendered from
then on. The block is first rendered with the values as stated: when that does not give back
the original lines (a layout the template cannot reproduce), the file is left unless forced.
What differs in the final rendering is then exactly where the header disagreed with the body.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from ..facts.regions import PROFILE_LAYOUT, regenerate
from ..sources import yamlsrc
from ..sources.compose.compose import Compose
from ..sources.compose.engines import UNKNOWN
from ..sources.compose.header import HeaderField
from ..sources.compose.xguards import KEY
from ..sources.edit import Edit, apply, line_edits, line_starts
from ..sources.registry import Registry

# (row key, knob, the stated value in the row's first line). Only these are the body's facts.
FACTS = (
    ("max ctx", "max_model_len", re.compile(r"^\d+")),
    ("topology", "tensor_parallel_size", re.compile(r"(?<=\bTP=)\d+")),
    ("topology", "tensor_split", re.compile(r"(?<=-ts )[\d.,/]+")),
    ("kv", "kv_cache_dtype", re.compile(r"^[A-Za-z0-9_]+")),
    ("drafter", "drafter_depth", re.compile(r"(?<=\bn=)\d+")),
)


NOTHING = "nothing to adopt"  # no profile block, or one already adopted: not reported


class Adopted(NamedTuple):
    # Edits of the compose's text, whole lines at a time (so a write keeps every untouched
    # line's own ending): the block becomes a region and the rows move into x-guards.
    edits: list[Edit]
    reproduced: bool  # rendered with the values as stated, the block came back unchanged
    left: str | None = None  # why the block was not adopted
    line: int = 0  # the block's first line
    changed: bool = False  # the rendered block differs from the original (the body won)


def adopt_profile(
    compose: Compose,
    registry: Registry,
    templates: Path | None,
    root: Path | None,
    disagreeing: frozenset[int] = frozenset(),
) -> Adopted:
    """Adopt the compose's profile block. ``disagreeing``: the lines where the header
    disagrees with the body (D001 findings); there the body's value replaces the stated one,
    elsewhere a stated value becomes a placeholder only when it is the body's value as written
    (``bf16`` for ``bfloat16`` agrees, and stays as written)."""
    header = compose.header
    if header.profile_line is None or not header.fields:
        return Adopted([], True, NOTHING)
    if header.notes:
        return Adopted(
            [],
            True,
            "the block has lines that are not `Key: value` rows",
            header.profile_line,
        )
    if compose.data != type(compose.data)() or any(
        header.profile_line in r for r in compose.regions
    ):
        return Adopted([], True, NOTHING)
    knobs = _knobs(compose)
    stated = {f.key: _row_text(f) for f in header.fields}
    placed = {
        f.key: _placeholders(_row_text(f), f.key, knobs, f.line in disagreeing)
        for f in header.fields
    }
    first, last = header.profile_line, max(f.end_line for f in header.fields)
    as_stated = _render(compose, stated, first, last, registry, templates, root)
    original = "".join(line + "\n" for line in compose.lines[first - 1 : last])
    reproduced = _region_body(as_stated) == original
    final = _render(compose, placed, first, last, registry, templates, root)
    changed = _region_body(final) != original
    return Adopted(line_edits(compose.text, final), reproduced, None, first, changed)


def _knobs(compose: Compose) -> dict[str, str]:
    """The knobs the template sees (those of the first service with a known engine)."""
    service = next((s for s in compose.shipped if s.engine != UNKNOWN), None)
    return {k: v.value for k, v in service.knobs.items() if v.value} if service else {}


CONTINUATION = PROFILE_LAYOUT["value_column"]  # where the template puts continuation lines


def _row_text(field: HeaderField) -> str:
    """The row's value as written: continuation lines keep any indentation past the column the
    template gives them."""
    lines = [field.lines[0].text.split(":", 1)[1].strip()]  # the key line's own value
    for line in field.lines[1:]:
        text = line.text[1:] if line.text.startswith(" ") else line.text
        lead = text[:CONTINUATION]
        lines.append(text[CONTINUATION:] if not lead.strip() else text.strip())
    return "\n".join(lines)


def _placeholders(text: str, key: str, knobs: dict[str, str], disagrees: bool) -> str:
    """The row's text with the body's facts as ``{knob}`` (on its first line only)."""
    first, _, rest = text.partition("\n")
    for row, knob, pattern in FACTS:
        found = pattern.search(first) if key.lower() == row and knob in knobs else None
        if found and (disagrees or found.group(0) == knobs[knob]):
            first = first[: found.start()] + "{" + knob + "}" + first[found.end() :]
    return first + ("\n" + rest if rest else "")


def _render(
    compose: Compose,
    rows: dict[str, str],
    first: int,
    last: int,
    registry: Registry,
    templates: Path | None,
    root: Path | None,
) -> str:
    """The compose with lines ``first``-``last`` as an empty profile region and ``rows`` in
    its x-guards data, rendered."""
    text, lines = compose.text, compose.lines
    starts = [*line_starts(text), len(text)]
    end = starts[last] if last < len(lines) else len(text)
    top = _first_key_line(compose)
    data = f"{KEY}:\n  profile:" + "".join(
        f"\n    {yamlsrc.value_text(key, 4)}:{yamlsrc.after_key(yamlsrc.value_text(value, 4))}"
        for key, value in rows.items()
    )
    edits = [
        Edit(starts[first - 1], end, "# >>> guards:profile\n# <<< guards:profile\n"),
        Edit(starts[top - 1], starts[top - 1], data + "\n"),
    ]
    staged = apply(text, edits)
    return apply(staged, regenerate(staged, compose.path, registry, templates, root, force=False))


def _first_key_line(compose: Compose) -> int:
    root = yamlsrc.compose(compose.text, compose.path)
    keys = [yamlsrc.line_of(key) for _, key, _ in yamlsrc.items(root)]
    return min(keys)


def _region_body(text: str) -> str:
    """The body of the profile region in ``text``, with its ``Profile`` title line."""
    start = text.index("# >>> guards:profile\n") + len("# >>> guards:profile\n")
    return text[start : text.index("# <<< guards:profile", start)]
