"""Median parse time per compose: the reader guards uses against a ruamel round-trip load.

    .venv/bin/python bench/parse_speed.py [--repeat N]

Reads the bundled estate's composes, plus ../shared/corpus/club-3090-sample when present.
Both readers run in the same process on the same texts; the ratio is what matters.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "corpus" / "club-3090-sample"


def texts() -> list[str]:
    files = sorted((ROOT / "composes").rglob("*.yml"))
    if SAMPLES.is_dir():
        files += sorted(SAMPLES.rglob("*.yml"))
    return [f.read_text(encoding="utf-8") for f in files]


def median_ms_per_file(fn, inputs: list[str], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in inputs:
            fn(text)
        runs.append((time.perf_counter() - start) / len(inputs))
    return statistics.median(runs) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    from ruamel.yaml import YAML

    from guards.sources import yamlsrc
    from guards.sources.compose.compose import parse_compose

    inputs = texts()
    round_trip = YAML()
    ruamel = median_ms_per_file(round_trip.load, inputs, args.repeat)
    compose_only = median_ms_per_file(lambda t: yamlsrc.compose(t, "x"), inputs, args.repeat)
    full = median_ms_per_file(lambda t: parse_compose(t, "x"), inputs, args.repeat)
    print(f"{len(inputs)} composes, median of {args.repeat} runs, ms per file")
    print(f"  ruamel round-trip load (baseline)   {ruamel:7.3f}")
    print(
        f"  libyaml compose (guards' reader)     {compose_only:7.3f}  "
        f"{ruamel / compose_only:5.1f}x faster"
    )
    print(f"  full parse_compose (header+knobs)    {full:7.3f}  {ruamel / full:5.1f}x faster")


if __name__ == "__main__":
    main()
