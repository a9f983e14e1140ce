"""Time of parsing an estate's notes: markdown-it-py alone against guards' fast reader.

    python -m compileall -q guards && .venv/bin/python bench/notes_speed.py [--repeat N]

The notes are this repository's own (learnings/ and docs/), each padded with its own text
(as bench/claim_scan.py pads them) into 121 notes of about 2 MB in all: two of 220 KB and 119
of about 13 KB. Timed, alternating, in one process: splitting every note into lines (the
baseline: what any reader pays to look at the text), ``parse_note`` with the body read by
markdown-it alone (``fast=False``, how every note was read before) and ``parse_note`` as it
runs now (guards.sources.notes.mdfast, markdown-it only for what it does not carry). Then cold: a fresh
interpreter per run that imports guards.sources.notes.notes, reads the 121 files and parses them once, so
the import of markdown-it (or its absence) and first calls are counted. Medians.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from guards.sources.notes.notes import parse_note

ROOT = Path(__file__).resolve().parents[1]
NOTES, BIG, BIG_BYTES, TOTAL_BYTES = 121, 2, 220_000, 2_000_000

COLD = """
import sys, time
start = time.perf_counter()
from pathlib import Path
from guards.sources.notes.notes import parse_note
for path in sorted(Path(sys.argv[1]).glob("*.md")):
    parse_note(path.read_text(encoding="utf-8"), path.name, fast=sys.argv[2] == "fast")
print(time.perf_counter() - start)
"""


def padded_notes() -> list[str]:
    """The bundled notes, each padded with its own body to its share of the total."""
    sources = sorted((ROOT / "learnings").rglob("*.md")) + sorted((ROOT / "docs").rglob("*.md"))
    small = (TOTAL_BYTES - BIG * BIG_BYTES) // (NOTES - BIG)
    notes = []
    for index, source in zip(range(NOTES), itertools.cycle(sources), strict=False):
        text = source.read_text(encoding="utf-8")
        body = text.split("\n---\n", 1)[-1]
        target = BIG_BYTES if index < BIG else small
        while len(text.encode()) < target:
            text += f"\n\n## Part {len(text)}\n\n" + body
        notes.append(text[: text.rfind("\n", 0, target) + 1])  # whole lines, about target
    return notes


def warm(notes: list[str], repeat: int) -> dict[str, float]:
    runs: dict[str, list[float]] = {"split": [], "markdown-it": [], "fast": []}
    for _ in range(repeat):
        start = time.perf_counter()
        for text in notes:
            text.split("\n")
        runs["split"].append(time.perf_counter() - start)
        for name, fast in (("markdown-it", False), ("fast", True)):
            start = time.perf_counter()
            for index, text in enumerate(notes):
                parse_note(text, f"learnings/n{index:03d}.md", fast=fast)
            runs[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in runs.items()}


def cold(notes: list[str], repeat: int) -> dict[str, float]:
    runs: dict[str, list[float]] = {"markdown-it": [], "fast": []}
    with tempfile.TemporaryDirectory() as tmp:
        for index, text in enumerate(notes):
            (Path(tmp) / f"n{index:03d}.md").write_text(text, encoding="utf-8")
        for _ in range(repeat):
            for name, mode in (("markdown-it", "markdown-it"), ("fast", "fast")):
                done = subprocess.run(
                    [sys.executable, "-c", COLD, tmp, mode],
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=ROOT,
                )
                runs[name].append(float(done.stdout))
    return {name: statistics.median(times) for name, times in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    notes = padded_notes()
    sizes = sorted((len(text.encode()) for text in notes), reverse=True)
    print(
        f"{len(notes)} notes, {sum(sizes) / 1e6:.2f} MB of markdown "
        f"(largest {sizes[0] // 1000} KB and {sizes[1] // 1000} KB); median of {args.repeat} runs"
    )
    times = warm(notes, args.repeat)
    base = times["split"]
    print(f"  {'split into lines (baseline)':<40} {base * 1000:8.1f} ms")
    for name, label in (("markdown-it", "parse_note, markdown-it alone"), ("fast", "parse_note")):
        print(f"  {label:<40} {times[name] * 1000:8.1f} ms")
    print(f"  {'faster by':<40} {times['markdown-it'] / times['fast']:8.1f}x")
    print("cold (a fresh interpreter: import, read 121 files, parse once)")
    times = cold(notes, max(3, args.repeat // 2))
    for name, label in (("markdown-it", "markdown-it alone"), ("fast", "as now")):
        print(f"  {label:<40} {times[name] * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
