"""Time of the stale-claim scan (C001) on an estate of 150 composes and 120 notes.

    python -m compileall -q guards && .venv/bin/python bench/claim_scan.py [--repeat N]
        [--copies 0,1,3]

The estate is built in a temporary folder from this repository's own: its composes copied to
150 files, its notes copied to 120 files, each note padded with its own text to about 16 KB
(2.1 MB of markdown in all). Registries: the bundled one (one withdrawn claim among nine), and
stress cases where every bundled claim also appears withdrawn once, or three times, under other
ids (10 or 28 withdrawn claims, all about what every note discusses). Timed, in one process,
alternating: reading and line-splitting every file (the baseline: what any tool pays to look
at the estate), loading the estate (parsing), and the claim scan itself (every withdrawn claim
against every compose and note, vocabulary included), split into reading the passages and
weighing the vocabulary (the same whatever the claims) and matching and judging. Medians. Then
how many (passage, claim) pairs the matcher compared out of passages x withdrawn claims.
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from guards.claims.scan import targets
from guards.rules import all_rules, find
from guards.run.estate import Estate, load_estate
from guards.run.suite import run
from guards.sources.config import Config

ROOT = Path(__file__).resolve().parents[1]
COMPOSES, NOTES, NOTE_BYTES = 150, 120, 16_000


def build(target: Path, stress: bool | int = True) -> None:
    """``stress``: how many withdrawn copies of the whole registry to add (``True``: one)."""
    composes = sorted((ROOT / "composes").rglob("*.yml"))
    for index, source in zip(range(COMPOSES), itertools.cycle(composes), strict=False):
        path = target / "composes" / f"c{index:03d}" / source.name
        path.parent.mkdir(parents=True)
        shutil.copy(source, path)
    notes = sorted((ROOT / "learnings").rglob("*.md"))
    for index, source in zip(range(NOTES), itertools.cycle(notes), strict=False):
        text = source.read_text(encoding="utf-8")
        body = text.split("\n---\n", 1)[-1]
        while len(text.encode()) < NOTE_BYTES:
            text += f"\n\n## Part {len(text)}\n\n" + body
        path = target / "learnings" / f"n{index:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    registry = (ROOT / "claims.yaml").read_text(encoding="utf-8")
    withdrawn = re.sub(r"(?m)^    status: active$", "    status: superseded", registry)
    withdrawn = re.sub(r"(?m)^    superseded_by: .*\n", "", withdrawn.split("claims:\n", 1)[1])
    copies = [
        re.sub(r"(?m)^  - id: ", f"  - id: old{n if n > 1 else ''}-", withdrawn)
        for n in range(1, int(stress) + 1)
    ]
    (target / "claims.yaml").write_text(registry + "".join(copies), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--copies", default="0,1,3", help="withdrawn copies of the registry, one run each"
    )
    args = parser.parse_args()
    for copies in map(int, args.copies.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            measure(Path(tmp), copies, args.repeat)


def measure(root: Path, copies: int, repeat: int) -> None:
    build(root, copies)
    config = Config(root=root, composes=("composes/**/*.yml",), notes=("learnings/**/*.md",))
    files = sorted(root.rglob("*.yml")) + sorted(root.rglob("*.md"))
    size = sum(p.stat().st_size for p in root.rglob("*.md"))
    rule = find(all_rules(), "C001")
    samples: dict[str, list[float]] = {"read": [], "load": [], "scan": [], "passages": []}
    for _ in range(repeat):
        start = time.perf_counter()
        for path in files:
            path.read_text(encoding="utf-8").splitlines()
        samples["read"].append(time.perf_counter() - start)
        start = time.perf_counter()
        estate = load_estate(config)
        samples["load"].append(time.perf_counter() - start)
        start = time.perf_counter()
        estate.claim_scan.vocabulary  # noqa: B018 - reads every passage
        middle = time.perf_counter()
        result = run(estate, [rule])
        samples["scan"].append(time.perf_counter() - start)
        samples["passages"].append(middle - start)
    withdrawn = sum(1 for c in estate.registry.claims if c.is_withdrawn)
    print(
        f"{len(estate.composes)} composes, {len(estate.notes)} notes "
        f"({size / 1e6:.1f} MB of markdown), {withdrawn} withdrawn claims; "
        f"{len(result.findings)} C001 findings; median of {repeat} runs"
    )
    base = statistics.median(samples["read"])
    for name, label in (
        ("read", "read + split every file (baseline)"),
        ("load", "load the estate (parse)"),
        ("scan", "claim scan (C001, vocabulary included)"),
        ("passages", "  of which passages and vocabulary"),
    ):
        median = statistics.median(samples[name])
        print(f"  {label:<42} {median * 1000:8.1f} ms  {median / base:6.1f}x baseline")
    print("  " + compared(estate))


def compared(estate: Estate) -> str:
    """How many (passage, claim) pairs the matcher looked at, of all there are, and how many
    of those it matched."""
    scan = estate.claim_scan
    claims = [c for c in estate.registry.claims if c.is_withdrawn]
    passages = sum(len(scan.passages(t)) for t in targets(estate))
    compared = [(c, p) for c in claims for t in targets(estate) for p in scan.candidates(c, t)]
    matched = sum(1 for c, p in compared if scan.matcher(c).find(p.tokens))
    return (
        f"pairs compared: {len(compared)} ({matched} match) of {passages} passages x "
        f"{len(claims)} claims = {passages * len(claims)}"
    )


if __name__ == "__main__":
    main()
