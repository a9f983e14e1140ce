"""What the worker processes gain: a cold ``guards check`` with the default workers and ``-j 2``
against ``-j 1``, wall and CPU time, for this tree and (``--before REV``) an earlier revision, in one run.

    .venv/bin/python bench/workers.py [--sizes 100,1000] [--repeat 5] [--before REV]

On the estates bench/estates.py generates (N composes and N notes), each row a fresh
``guards check --no-cache`` process, the rows of a round run in turn so machine noise hits all
alike. CPU time is the process's and its workers' (``os.wait4``: a child's usage includes the
children it waited for). ``--before`` checks the revision out into a temporary folder (``git
archive``); both trees are compiled to bytecode first and run with the same interpreter. Medians
of ``--repeat`` rounds; each ratio is the median of the ratios within the rounds. The load
average before and after is printed: on a shared machine the default chooses fewer workers
(``guards.run.parallel.free_cores``), so say how busy it was with the numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import estates  # the generator of bench/estates.py

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh process (``estates.timed``)."""
    elapsed, cpu, _ = estates.timed(command, cwd, env)
    return elapsed, cpu


def export(revision: str, folder: Path) -> Path:
    archive = subprocess.run(
        ["git", "archive", revision, "guards"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def rounds(
    trees: dict[str, Path], estate: Path, repeat: int, cache: str
) -> dict[str, list[tuple[float, float]]]:
    check = [sys.executable, "-m", "guards", "check", "--no-cache"]
    rows: dict[str, list[tuple[float, float]]] = {}
    for _ in range(repeat):
        for name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree), "GUARDS_CACHE_DIR": cache}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            rows.setdefault(f"{name}, default", []).append(timed(check, estate, env))
            rows.setdefault(f"{name}, -j 1", []).append(timed([*check, "-j", "1"], estate, env))
            rows.setdefault(f"{name}, -j 2", []).append(timed([*check, "-j", "2"], estate, env))
    return rows


def table(size: int, rows: dict[str, list[tuple[float, float]]], names: list[str]) -> list[str]:
    lines = [
        f"{size:,} composes + {size:,} notes, medians of {len(next(iter(rows.values())))} rounds",
        "",
        "| run | wall | CPU | / -j 1: wall | CPU |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        serial = rows[f"{name}, -j 1"]
        for label in (f"{name}, default", f"{name}, -j 2", f"{name}, -j 1"):
            runs = rows[label]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            ratios = ""
            if runs is not serial:
                ratio = [
                    statistics.median(d[i] / s[i] for d, s in zip(runs, serial, strict=True))
                    for i in (0, 1)
                ]
                ratios = f"{ratio[0]:.2f}x | {ratio[1]:.2f}x"
            lines.append(f"| {label} | {wall:.2f} s | {cpu:.2f} s | {ratios or '|'} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", help="a git revision to measure beside this tree")
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "guards-bench-estates"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"this tree": ROOT}
        if args.before:
            trees = {f"before ({args.before})": export(args.before, Path(scratch)), **trees}
        for tree in trees.values():
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(tree / "guards")], check=True
            )
        print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
        for size in sorted({int(s) for s in args.sizes.split(",")}):
            estate, _ = estates.cached_estate(args.workdir, size)
            rows = rounds(trees, estate, args.repeat, str(Path(scratch) / "cache"))
            print("\n".join(["", *table(size, rows, list(trees))]), flush=True)
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
