"""What CI costs: the README's test command on a fresh clone, installs included, for this
checkout's HEAD and (``--before REV``) an earlier revision, in one run.

    .venv/bin/python bench/suite.py [--before REV] [--repeat 1] [--thorough]

Each round clones the repository (``git clone`` of the committed history, no caches, no
virtual environment) once per revision into a temporary folder and runs ``.ci/run`` there;
the revisions alternate within a round so machine noise hits both alike. Printed per revision:
the wall time of the whole command and of its installs (the venv and ``pip install``, timed
apart by running them first), the CPU seconds of the tests (``os.wait4`` of the pytest
process: its xdist workers and every process they started), and the ratio to ``--before``.
``--thorough`` runs the tests with ``GUARDS_THOROUGH=1`` (every property's full example
count). Nothing is written outside the temporary folders.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]'"


def clone(revision: str, folder: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    subprocess.run(["git", "checkout", "-q", revision], cwd=folder, check=True)
    return folder


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process and the children it waited for)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed in {cwd}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def one_round(revision: str, env: dict[str, str]) -> tuple[float, float, float]:
    """Install wall seconds, test wall seconds, test CPU seconds on a fresh clone."""
    with tempfile.TemporaryDirectory(prefix="guards-suite-") as folder:
        tree = clone(revision, Path(folder) / "guards")
        install, _ = timed(["sh", "-c", INSTALL], tree, env)
        tests, cpu = timed([str(tree / ".venv" / "bin" / "pytest")], tree, env)
    return install, tests, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="a git revision to measure beside HEAD")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--thorough", action="store_true")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "GUARDS_"))}
    if args.thorough:
        env["GUARDS_THOROUGH"] = "1"
    revisions = {"HEAD": "HEAD", **({args.before: args.before} if args.before else {})}
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in revisions}
    for _ in range(args.repeat):
        for name, revision in revisions.items():
            rows[name].append(one_round(revision, env))
            print(f"{name}: install {rows[name][-1][0]:.0f} s, tests {rows[name][-1][1]:.0f} s",
                  file=sys.stderr)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.2f}; {args.repeat} round(s); medians")
    print("| revision | install (s) | tests (s) | total (s) | tests CPU (s) | total / before |")
    print("|---|---|---|---|---|---|")
    totals = {n: statistics.median(i + t for i, t, _ in r) for n, r in rows.items()}
    for name, runs in rows.items():
        install, tests, cpu = (statistics.median(column) for column in zip(*runs, strict=True))
        ratio = f"{totals[name] / totals[args.before]:.2f}" if args.before else "-"
        print(
            f"| {name} | {install:.0f} | {tests:.0f} | {totals[name]:.0f} | {cpu:.0f} | {ratio} |"
        )


if __name__ == "__main__":
    main()
