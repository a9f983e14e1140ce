"""Time of `guards check` on inputs far past any real estate: the documented limits.

    python -m compileall -q guards && .venv/bin/python bench/big_inputs.py [--repeat N] [--scale S]

Three estates, each built in a temporary folder: a 20 MB note (headings, list items and
paragraphs of ordinary words), a compose whose `command` is one flow list of a million tokens
(13 MB on one line), and a registry of 10,000 retracted claims against 2,000 paragraphs. Each
is checked in one process (load, then every rule) next to its baseline, measured in the same
run: for the note, markdown-it's own parse of the file (the library floor every note pays);
for the others, reading and YAML-parsing the files with PyYAML's C reader. `--scale 0.1`
builds inputs a tenth the size, to see that time grows linearly. Medians.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

from guards.rules import all_rules
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.config import Config

WORDS = [
    "the",
    "decode",
    "speed",
    "falls",
    "context",
    "card",
    "pool",
    "drafter",
    "depth",
    "slow",
    "fast",
    "steady",
]
CLAIM = """\
  - id: claim-{i}
    title: Claim {i}
    status: retracted
    asserted: 2025-01-01
    retracted: 2026-01-01
    text: throughput number {i} drops sharply with token budget w{i}x on several cards
    replacement: fine
"""
COMPOSE = "# A header\nservices:\n  a:\n    image: x\n    command: {command}\n"


def big_note(root: Path, scale: float) -> None:
    chance, lines, size = random.Random(1), [], 0
    while size < 20_000_000 * scale:
        line = " ".join(chance.choice(WORDS) for _ in range(12))
        line = chance.choices(["## ", "- ", ""], [1, 1, 18])[0] + line
        lines.append(line)
        size += len(line) + 1
    _write(root / "learnings" / "big.md", "\n".join(lines))
    _write(root / "composes" / "a.yml", COMPOSE.format(command="--max-num-seqs 4"))


def long_command(root: Path, scale: float) -> None:
    tokens = ", ".join(f"'--opt-{i}', '{i}'" for i in range(int(500_000 * scale)))
    _write(root / "composes" / "a.yml", COMPOSE.format(command=f"[{tokens}]"))


def many_claims(root: Path, scale: float) -> None:
    count = int(10_000 * scale)
    _write(root / "claims.yaml", "claims:\n" + "".join(CLAIM.format(i=i) for i in range(count)))
    paragraphs = (f"Para {i}: decode speed on card {i} is steady." for i in range(count // 5))
    _write(root / "learnings" / "n.md", "# Notes\n\n" + "\n\n".join(paragraphs))
    _write(root / "composes" / "a.yml", COMPOSE.format(command="--max-num-seqs 4"))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def markdown_floor(root: Path) -> None:
    for path in root.rglob("*.md"):
        MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))


def yaml_floor(root: Path) -> None:
    for path in root.rglob("*.y*ml"):
        yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def check(root: Path) -> None:
    config = Config(root=root, composes=("composes/**/*.yml",), notes=("learnings/**/*.md",))
    run(load_estate(config), all_rules())


CASES: list[tuple[str, Callable[[Path, float], None], Callable[[Path], None], str]] = [
    ("20 MB note", big_note, markdown_floor, "markdown-it parse"),
    ("1M-token command", long_command, yaml_floor, "PyYAML C load"),
    ("10,000 retracted claims", many_claims, yaml_floor, "PyYAML C load"),
]


def median_seconds(action: Callable[[Path], None], root: Path, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action(root)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    print(f"scale {args.scale}, median of {args.repeat} runs")
    for name, build, floor, floor_name in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            build(root, args.scale)
            base = median_seconds(floor, root, args.repeat)
            total = median_seconds(check, root, args.repeat)
            print(
                f"  {name:<24} guards check {total:6.2f} s   {floor_name} {base:6.2f} s"
                f"   {total / base:5.1f}x"
            )


if __name__ == "__main__":
    main()
