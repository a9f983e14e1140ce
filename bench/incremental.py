"""What a run after an edit costs: the rows of the incremental table, as ratios in one run.

    .venv/bin/python bench/incremental.py [--size 1000] [--repeat 3] [--tree DIR]

On the estate bench/estates.py generates (``--size`` composes and as many notes), each row a
fresh ``guards check`` process, its rounds alternating so machine noise hits all alike:

- warm: nothing changed since the run before (the kept run);
- one edited compose: a comment line appended to one compose before each run (the kept run
  cannot be used; kept checks can);
- registry edit: a comment line appended to claims.yaml before each run;
- cold: ``--no-cache``, with the default workers and with ``-j 1``;

each with its peak RSS (``os.wait4``). ``--tree`` runs the guards package of another source
tree (``git archive REV | tar -x -C DIR``) for the numbers before a change. The package is
compiled to bytecode first, so no run pays for compiling it; the cache lives in a temporary
folder made for the run. Medians of ``--repeat`` rounds; the table goes to stdout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import estates  # the generator of bench/estates.py

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """Seconds and peak RSS (bytes) of one fresh process (``estates.timed``)."""
    elapsed, _, rss = estates.timed(command, cwd, env)
    return elapsed, rss


def appender(path: Path) -> Callable[[int], None]:
    original = path.read_text(encoding="utf-8")

    def edit(round_: int) -> None:
        path.write_text(f"{original}# edited {round_} {time.time_ns()}\n", encoding="utf-8")

    return edit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "guards-bench"
    )
    args = parser.parse_args()
    tree = args.tree.resolve()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "guards")], check=True)
    estate, _ = estates.cached_estate(args.workdir, args.size)
    compose = sorted(estate.glob("models/**/*.yml"))[0]
    registry = estate / "claims.yaml"
    originals = {path: path.read_text(encoding="utf-8") for path in (compose, registry)}
    edits = {"compose": appender(compose), "registry": appender(registry)}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPATH": str(tree), "GUARDS_CACHE_DIR": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        check = [sys.executable, "-m", "guards", "check"]
        rows: dict[str, list[tuple[float, int]]] = {}
        try:
            timed(check, estate, env)  # fills the cache
            for round_ in range(args.repeat):
                rows.setdefault("warm", []).append(timed(check, estate, env))
                edits["compose"](round_)
                rows.setdefault("one edited compose", []).append(timed(check, estate, env))
                timed(check, estate, env)  # warm again before the next edit
                edits["registry"](round_)
                rows.setdefault("registry edit", []).append(timed(check, estate, env))
                cold = [*check, "--no-cache"]
                rows.setdefault("cold, default workers", []).append(timed(cold, estate, env))
                rows.setdefault("cold, -j 1", []).append(timed([*cold, "-j", "1"], estate, env))
        finally:  # the generated estate as it was, for the next bench run
            for path, text in originals.items():
                path.write_text(text, encoding="utf-8")
    print(table(rows, args.size, tree))


def table(rows: dict[str, list[tuple[float, int]]], size: int, tree: Path) -> str:
    median = {label: statistics.median(s for s, _ in runs) for label, runs in rows.items()}
    peak = {label: max(m for _, m in runs) for label, runs in rows.items()}
    against = {
        "one edited compose": "warm",
        "registry edit": "warm",
        "cold, default workers": "cold, -j 1",
    }
    lines = [
        f"{size} composes + {size} notes, tree {tree}, medians of {len(rows['warm'])} rounds",
        "",
        "| run | median | peak RSS | ratio |",
        "|---|---|---|---|",
    ]
    for label, seconds in median.items():
        base = against.get(label)
        ratio = f"{seconds / median[base]:.2f}x {base}" if base else ""
        lines.append(f"| {label} | {seconds:.2f} s | {peak[label] / 2**20:.0f} MiB | {ratio} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
