"""The baseline: the findings an estate had when it adopted guards, so a check reports only
new ones while the old ones are worked off.

``guards baseline`` writes one entry per reported finding: its fingerprint (rule, path, claim
or knob, and the whitespace-folded text of the lines it is about — never its line number, see
:func:`guards.findings.fingerprint`), with the rule, path, line and message for a reader.
``guards check --baseline FILE`` waives the findings whose fingerprint is in it and lists the
entries that match nothing any more (fixed, or the text they were about rewritten) so the file
can shrink; ``--strict-baseline`` fails the run while there are such entries. An entry is only
judged when its rule ran and its file was checked in this run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import GuardsError
from ..findings import Run, Waiver

DEFAULT = ".guards-baseline.json"
VERSION = 1
FIELDS = {"fingerprint": str, "rule": str, "path": str, "line": int, "message": str}
MAX_LINE = 10**9  # an entry's line is a line number, not a 4,000-digit integer


class BaselineEntry(NamedTuple):
    fingerprint: str
    rule: str
    path: str
    line: int  # where the finding was when the baseline was written, for a reader
    message: str


def dump(run: Run) -> str:
    """The baseline document for a run's reported findings, one entry per line so a diff of
    the file shows which findings came and went."""
    rows = [
        json.dumps(
            {
                "fingerprint": f.fingerprint,
                "rule": f.rule,
                "path": f.path,
                "line": f.line,
                "message": f.message,
            },
            ensure_ascii=False,
        )
        for f in run.findings
    ]
    body = ",\n    ".join(rows)
    entries = f"[\n    {body}\n  ]" if rows else "[]"
    return f'{{\n  "version": {VERSION},\n  "tool": "guards",\n  "entries": {entries}\n}}\n'


def load(path: Path, shown: str) -> list[BaselineEntry]:
    """The entries of a baseline file; anything else is an error naming the file and line."""
    from ..sources.edit import check_path, read

    if not check_path(path, shown).exists():
        raise GuardsError("baseline file not found; write one with `guards baseline`", shown)
    text = read(path, shown).text
    document = _document(text, shown)
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise GuardsError('not a baseline: expected an object with an "entries" list', shown, 1)
    if document.get("version") != VERSION:
        raise GuardsError(
            f"baseline version {document.get('version')!r} is not {VERSION}; rewrite it with "
            "`guards baseline`",
            shown,
            _line_of_key(text, "version"),
        )
    lines = _lines(text, _entry_starts(text))
    return [
        _entry(raw, shown, lines[i] if i < len(lines) else 1)
        for i, raw in enumerate(document["entries"])
    ]


def _document(text: str, shown: str) -> Any:
    """The JSON, read as every estate JSON file is (:mod:`guards.sources.jsonsrc`)."""
    from ..sources.jsonsrc import parse

    try:
        return parse(text, shown)
    except GuardsError as exc:
        raise GuardsError(f"not a baseline: {exc.message}", shown, exc.line, exc.column) from None


def _entry(raw: Any, shown: str, line: int) -> BaselineEntry:
    if not isinstance(raw, dict):
        raise GuardsError("baseline entry is not an object", shown, line)
    for key, kind in FIELDS.items():
        value = raw.get(key)
        if type(value) is not kind or (kind is str and not value):
            raise GuardsError(f"baseline entry has no valid `{key}`", shown, line)
    if not 0 < raw["line"] < MAX_LINE:
        raise GuardsError("baseline entry has no valid `line` (a line number)", shown, line)
    return BaselineEntry(**{key: raw[key] for key in FIELDS})


def _entry_starts(text: str) -> Iterator[int]:
    """The offset of each element of the top-level ``entries`` array (for error lines)."""
    decoder = json.JSONDecoder()
    key = text.find('"entries"')
    at = text.find("[", key) + 1 if key >= 0 else 0
    while 0 < at < len(text):
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        if at >= len(text) or text[at] == "]":
            return
        yield at
        try:
            at = decoder.raw_decode(text, at)[1]
        except (ValueError, RecursionError):
            return


def _lines(text: str, starts: Iterator[int]) -> list[int]:
    """The line of each entry, counted in one pass (not from the top again for each)."""
    lines, line, previous = [], 1, 0
    for start in starts:
        line += text.count("\n", previous, start)
        lines.append(line)
        previous = start
    return lines


def _line_of_key(text: str, key: str) -> int:
    at = text.find(f'"{key}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def apply(run: Run, entries: list[BaselineEntry], shown: str, strict: bool = False) -> Run:
    """The run with the findings in the baseline waived, and the entries in scope (their rule
    ran on their file) that matched no finding listed as stale."""
    remaining: dict[str, BaselineEntry] = {entry.fingerprint: entry for entry in entries}
    waiver = Waiver("baseline", "accepted when the baseline was written", shown)

    def decide(finding: Any) -> Waiver | None:
        return waiver if remaining.pop(finding.fingerprint, None) is not None else None

    results = tuple(result.waive(decide) for result in run.results)
    judged = [e for e in remaining.values() if e.rule in run.rules and e.path in run.checked]
    stale = tuple(sorted(judged, key=lambda e: (e.path, e.line, e.rule)))
    return run._replace(results=results, baseline=shown, stale=stale, strict_baseline=strict)
