"""``guards fix``: every stale copy of a withdrawn claim in a compose (a C001 finding) becomes a
``claim`` region rendering the claim as it stands now — its retraction, reason and replacement.

Like an unsafe fix in ruff, a fix that would delete text a person wrote is not applied: the
copy's lines are replaced only when every word on them is the claim's own wording (a light
edit of one word in a row, ``t/s`` for ``tok/s``, still counts as the copy). A copy with
other words inside it — an interleaved note, a sentence before it on its first line or after it
on its last — is left as it is and reported, as is one that is not whole comment lines (a
trailing comment, a line inside a script). The file's regions are then rendered by
:func:`guards.facts.regions.regenerate`, with its checks: nothing outside the regions changes, nor the
YAML data.

The findings come from the estate as loaded; the file is read again, under the write lock,
and fixed only when its text is still the text they were computed from (the loop ``regen``
and ``--adopt-profile`` share: :func:`guards.write.rewrite.rewrite`). Every step is linear in
the file: the edits are composed, never recovered by diffing the old and new text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..claims.textmatch import SHINGLE, normalise
from ..errors import GuardsError
from ..facts.regions import indentation, regenerate
from ..findings import Finding
from ..sources import yamlsrc
from ..sources.edit import Edit, apply, line_starts
from ..sources.registry import Claim, Registry

if TYPE_CHECKING:
    from ..run.estate import Estate
    from ..sources.compose.compose import Compose
    from ..sources.notes.notes import Note

HAND_WRITTEN = "hand-written text inside the copy"
# Words of a claim's wording or another script; identifiers (fp8_e4m3, 1.5) stay one word.
WORD = re.compile(r"[^\W_]+(?:[._][^\W_]+)*")
LIGHT_EDIT = 1  # words in a row inside a copy that its wording lacks and that still count as it
# What may stand beside a copy on its first or last line besides the claim's own characters:
# the bullets and warning signs a copy opens with (as ``guards.claims.scan`` splits units).
DECORATION = frozenset(" \t#-*•⤷→▸⚠⭐❌✅🧪‼\ufe0f")


class Proposal(NamedTuple):
    """The edit ``fix`` leaves for a person: lines of the file as fixed, and what replaces them."""

    line: int  # the first line replaced, in the file as ``fix`` leaves it
    old: list[str]
    new: list[str]

    def say(self, shown: str) -> str:
        last = self.line + len(self.old) - 1
        where = f"{shown}:{self.line}" + (f"-{last}" if last > self.line else "")
        return "".join(
            [f"  edit {where}: replace\n", *(f"  - {line}\n" for line in self.old), "  with\n"]
            + [f"  + {line}\n" for line in self.new]
        )


@dataclass(frozen=True)
class Fixed:
    text: str  # the file with its copies replaced and (a compose) its regions rendered
    edits: list[Edit]  # the edits that turn the file's text into ``text``
    replaced: list[Finding]  # the copies now inside claim regions
    left: list[tuple[Finding, str]]  # the copies not replaced, and why
    proposals: dict[Finding, Proposal] = field(default_factory=dict)  # for copies left


class Target(NamedTuple):
    """A file with stale copies; ``compose`` is None for a note."""

    path: str
    compose: Compose | None
    copies: list[Finding]
    note: Note | None = None


def targets(estate: Estate, findings: Iterable[Finding]) -> list[Target]:
    """The files the C001 ``findings`` are in, each real file once: a path named twice, or a
    link and its target, is fixed once (a second pass would splice lines that have moved)."""
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    composes = {c.path: c for c in estate.composes}
    notes = {n.path: n for n in estate.notes}
    seen: set[str] = set()
    found = []
    for path, copies in by_path.items():
        real = os.path.realpath(estate.root / path)
        if real not in seen:
            seen.add(real)
            unique = list(dict.fromkeys(copies))
            found.append(Target(path, composes.get(path), unique, notes.get(path)))
    return found


def fix_stale_copies(
    text: str,
    shown: str,
    copies: list[Finding],
    registry: Registry,
    templates: Path | None,
    root: Path | None,
    note: bool = False,
) -> Fixed:
    """``text`` with each copy (a C001 finding in it) that holds nothing but the claim's
    wording replaced by a rendered claim region; for a copy left, the edit a person can make
    (its whole unit replaced by the region) when the unit is whole lines."""
    lines = text.split("\n")
    starts = [*line_starts(text), len(text)]
    edits: list[Edit] = []
    replaced: list[Finding] = []
    left: list[tuple[Finding, str]] = []
    last = 0
    for copy in sorted(copies, key=lambda f: (f.line, f.end_line)):
        end_line = max(copy.end_line, copy.line)
        why = _why_left(copy, lines[copy.line - 1 : end_line], last, registry, note)
        if why:
            left.append((copy, why))
            continue
        render = note_region if note else compose_region
        region = render(
            copy.claim or "", indentation(lines[copy.line - 1]), registry, templates, root, shown
        )
        end = starts[end_line] if end_line < len(lines) else len(text)
        edits.append(Edit(starts[copy.line - 1], end, region))
        replaced.append(copy)
        last = end_line
    staged = apply(text, edits)
    rendered = [] if note else regenerate(staged, shown, registry, templates, root, force=False)
    final = apply(staged, rendered)
    if not note and yamlsrc.data(text, shown) != yamlsrc.data(final, shown):
        raise GuardsError(
            "refusing to write: replacing the stale copies would change the YAML data (is a "
            "copy inside a block scalar?); nothing written",
            shown,
        )
    done = composed(edits, rendered, final)
    fixed = Fixed(final, done, replaced, left)
    return replace(fixed, proposals=_proposals(fixed, text, registry, templates, root, shown, note))


def _why_left(
    copy: Finding, lines: list[str], last: int, registry: Registry, note: bool = False
) -> str | None:
    """Why a copy (its ``lines``) is not replaced, or None; ``last``: the last line replaced."""
    if copy.line <= last:
        return "overlaps a copy already replaced"
    if note:
        lines = ["#" + line for line in lines]  # a note's lines read as comment lines
    elif not all(line.lstrip().startswith("#") for line in lines):
        return "not whole comment lines"
    claim = registry.get(copy.claim or "")
    if claim is None or hand_written(lines, claim):
        return HAND_WRITTEN
    return None


# -- what is the copy, and what a person wrote beside it ---------------------------------------


def hand_written(lines: list[str], claim: Claim) -> bool:
    """Whether comment ``lines`` holding a copy of ``claim`` hold anything else: a line with
    no word of the claim's wording, words before the copy on its first line or after it on its
    last, more than ``LIGHT_EDIT`` words in a row the wording lacks, or characters beside the
    copy that are neither the claim's nor a bullet or warning sign. A word is the wording's
    when a run of ``SHINGLE`` words around it is (a whole ``match`` phrase, when shorter)."""
    texts = [normalise(line.lstrip()[1:]) for line in lines]
    words = [(n, m) for n, text in enumerate(texts) for m in WORD.finditer(text)]
    covered = _covered([m.group() for _, m in words], _wording_runs(claim))
    if not any(covered):
        return True
    first, last = covered.index(True), len(covered) - 1 - covered[::-1].index(True)
    if first > 0 and words[first - 1][0] == words[first][0]:
        return True  # words before the copy on its first line
    if last < len(words) - 1 and words[last + 1][0] == words[last][0]:
        return True  # words after it on its last line
    if not _beside_only(texts, words[first], words[last], claim):
        return True
    return _uncovered_line(texts, words, covered) or _long_edit(covered[first : last + 1])


def _wording_runs(claim: Claim) -> set[tuple[str, ...]]:
    """Every run of ``SHINGLE`` words of the claim's wordings and phrases (a shorter phrase
    whole)."""
    runs: set[tuple[str, ...]] = set()
    for wording in [*claim.wordings, *claim.match]:
        said = WORD.findall(normalise(wording))
        size = min(SHINGLE, len(said))
        runs.update(tuple(said[i : i + size]) for i in range(len(said) - size + 1) if size)
    return runs


def _covered(words: list[str], runs: set[tuple[str, ...]]) -> list[bool]:
    """For each word, whether it sits in a run of the wording."""
    covered = [False] * len(words)
    for size in {len(run) for run in runs}:
        for i in range(len(words) - size + 1):
            if tuple(words[i : i + size]) in runs:
                covered[i : i + size] = [True] * size
    return covered


def _beside_only(
    texts: list[str],
    first: tuple[int, re.Match[str]],
    last: tuple[int, re.Match[str]],
    claim: Claim,
) -> bool:
    """The characters before the copy's first word and after its last (on those lines) are
    the claim's own punctuation, bullets or warning signs."""
    allowed = DECORATION | set(normalise(" ".join([*claim.wordings, *claim.match])))
    before = texts[first[0]][: first[1].start()]
    after = texts[last[0]][last[1].end() :]
    return set(before + after) <= allowed


def _uncovered_line(
    texts: list[str], words: list[tuple[int, re.Match[str]]], covered: list[bool]
) -> bool:
    """A line of the copy with no word of the wording (a bare ``#`` line aside)."""
    has_word = {n for (n, _), hit in zip(words, covered, strict=True) if hit}
    return any(text.strip(" \t#") and n not in has_word for n, text in enumerate(texts))


def _long_edit(covered: list[bool]) -> bool:
    """More than ``LIGHT_EDIT`` words in a row that the wording lacks."""
    run = 0
    for hit in covered:
        run = 0 if hit else run + 1
        if run > LIGHT_EDIT:
            return True
    return False


# -- edits -----------------------------------------------------------------------------------


def composed(first: list[Edit], second: list[Edit], final: str) -> list[Edit]:
    """Edits that take a text straight to ``final``, which is the text with ``first`` applied
    and then ``second`` (offsets in the text ``first`` made). Each group of edits that touch
    becomes one edit, in one pass: no diff of the two texts (a diff of many equal lines, a file
    of bare ``#`` lines, takes time quadratic in the file)."""
    spans = []
    shift = 0
    for one in sorted(first):
        start = one.start + shift
        spans.append((start, start + len(one.new), len(one.new) - (one.end - one.start), 0))
        shift += len(one.new) - (one.end - one.start)
    spans += [(e.start, e.end, 0, len(e.new) - (e.end - e.start)) for e in second]
    spans.sort()
    out: list[Edit] = []
    before = after = 0  # how far the original and the final text are shifted from this one
    at = 0
    while at < len(spans):
        start, end = spans[at][0], spans[at][1]
        moved = [spans[at]]
        at += 1
        while at < len(spans) and spans[at][0] <= end:
            end = max(end, spans[at][1])
            moved.append(spans[at])
            at += 1
        origin, target = start - before, start + after
        before += sum(span[2] for span in moved)
        after += sum(span[3] for span in moved)
        out.append(Edit(origin, end - before, final[target : end + after]))
    return out


# -- regions and the edits left for a person -------------------------------------------------


def compose_region(
    claim_id: str,
    indent: str,
    registry: Registry,
    templates: Path | None,
    root: Path | None,
    shown: str,
) -> str:
    """A claim region's markers at ``indent``; ``regenerate`` renders its body."""
    return f"{indent}# >>> guards:claim {claim_id}\n{indent}# <<< guards:claim\n"


def rendered_region(
    claim_id: str,
    indent: str,
    registry: Registry,
    templates: Path | None,
    root: Path | None,
    shown: str,
) -> str:
    """A compose's claim region for ``claim_id``, rendered as ``regen`` renders it."""
    markers = compose_region(claim_id, indent, registry, templates, root, shown)
    text = markers + "services: {}\n"  # a compose of the region alone
    rendered = apply(text, regenerate(text, shown, registry, templates, root, force=False))
    return rendered[: -len("services: {}\n")]


def note_region(
    claim_id: str,
    indent: str,
    registry: Registry,
    templates: Path | None,
    root: Path | None,
    shown: str,
) -> str:
    """A note's claim region: the claim template's lines between HTML-comment markers (which
    markdown does not show), rendered as a compose's region is."""
    body = rendered_region(claim_id, "", registry, templates, root, shown).split("\n")[1:-2]
    lines = [line[2:] if line.startswith("# ") else line[1:] for line in body]
    return "".join(
        [f"<!-- >>> guards:claim {claim_id} -->\n", *(f"{line}\n" for line in lines)]
        + ["<!-- <<< guards:claim -->\n"]
    )


def _proposals(
    fixed: Fixed,
    text: str,
    registry: Registry,
    templates: Path | None,
    root: Path | None,
    shown: str,
    note: bool,
) -> dict[Finding, Proposal]:
    """For each copy left, the edit that replaces its whole unit (sentence run, bullet, table
    row or paragraph) with the claim's region, when those are whole lines outside what was
    replaced: the person decides whether the words around the copy still hold."""
    from ..claims.scan import passages
    from ..sources.compose.compose import parse_compose
    from ..sources.notes.notes import parse_note

    if not fixed.left:
        return {}
    target = parse_note(text, shown) if note else parse_compose(text, shown)
    units = [[n for n, _ in unit.lines] for p in passages(target) for unit in p.units]
    lines = text.split("\n")
    starts = [*line_starts(text), len(text)]
    taken = {n for c in fixed.replaced for n in range(c.line, max(c.line, c.end_line) + 1)}
    found = {}
    for copy, _ in fixed.left:
        touched = [n for u in units if any(copy.line <= n <= copy.end_line for n in u) for n in u]
        if not touched or copy.claim is None:
            continue
        first, last = min(touched), max(touched)
        span = lines[first - 1 : last]
        if taken & set(range(first, last + 1)):
            continue
        if not note and not all(line.lstrip().startswith("#") for line in span):
            continue
        render = note_region if note else rendered_region
        new = render(copy.claim, indentation(lines[first - 1]), registry, templates, root, shown)
        shift = sum(
            e.new.count("\n") - text[e.start : e.end].count("\n")
            for e in fixed.edits
            if e.end <= starts[first - 1]
        )
        found[copy] = Proposal(first + shift, span, new.rstrip("\n").split("\n"))
    return found
