"""The cost of K006 and K007 (the engine facts): ``guards check`` of the real sample with every
rule, against the same run without the two, in fresh processes, no run cache.

    .venv/bin/python bench/engine_facts.py [--root DIR] [--repeat N]

The package is compiled to bytecode first. One round runs each command once, in turn; the
ratio printed is the median of the ratios within the rounds (medians of 7 by default).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "corpus" / "club-3090-sample"
GUARDS = [sys.executable, "-m", "guards"]


def _time(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--root", type=Path, default=SAMPLE)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "guards")], check=True)
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "guards.toml"
        config.write_text('composes = ["**/*.yml"]\n[header]\npreset = "profile"\n')
        base = [*GUARDS, "check", "--root", str(args.root), "--config", str(config), "--no-cache"]
        rows = {"without K006, K007": [*base, "--ignore", "K006,K007"], "every rule": base}
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.repeat):
            for name, command in rows.items():
                times[name].append(_time(command))
    ratios = [b / a for a, b in zip(*times.values(), strict=True)]
    print(f"{args.root.name}, median of {args.repeat} paired runs (fresh processes)")
    for name, values in times.items():
        print(f"  {name:<20} {statistics.median(values) * 1000:8.1f} ms")
    print(f"  ratio                {statistics.median(ratios):8.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
