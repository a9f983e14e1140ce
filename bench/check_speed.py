"""Wall time of a pre-commit-style run against a bare interpreter, both as fresh processes.

    .venv/bin/python bench/check_speed.py [--repeat N]

Runs ``guards check`` on one staged compose and on the whole bundled estate, and
``python -c pass`` as the baseline, alternating so machine noise hits all three alike.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    one = sorted((ROOT / "composes").rglob("*.yml"))[0].relative_to(ROOT).as_posix()
    commands = {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        f"guards check {one}": [sys.executable, "-m", "guards.cli", "check", one],
        "guards check (whole estate)": [sys.executable, "-m", "guards.cli", "check"],
    }
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            samples[name].append(timed(command))
    base = statistics.median(samples["python -c pass (baseline)"])
    print(f"median of {args.repeat} runs")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:<55} {median * 1000:7.1f} ms  {median / base:5.1f}x baseline")


if __name__ == "__main__":
    main()
