"""``guards check`` of this tree against the same check of an earlier revision, in fresh
processes: a kept run (the run cache warm) and a computed one (``--no-cache``).

    .venv/bin/python bench/against_revision.py REV [--root DIR] [--repeat N] [ARGS...]

The revision is checked out into a temporary worktree; both trees are compiled to bytecode
first and run with the same interpreter from a neutral folder (so each imports its own
``guards``). One round runs each command once, in turn; medians of ``--repeat`` rounds and the
median of the ratios within the rounds are printed. ARGS go to both checks (``--config F``).
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


def _time(tree: Path, args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "guards", "check", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        cwd=tempfile.gettempdir(),
        env={**env, "PYTHONPATH": str(tree)},
    )
    return time.perf_counter() - started


def _rounds(trees: dict[str, Path], args: list[str], env: dict[str, str], repeat: int) -> None:
    times: dict[str, list[float]] = {name: [] for name in trees}
    for tree in trees.values():
        _time(tree, args, env)  # fills the cache of a kept run; warms the file system
    for _ in range(repeat):
        for name, tree in trees.items():
            times[name].append(_time(tree, args, env))
    ratios = [now / then for then, now in zip(*times.values(), strict=True)]
    for name, values in times.items():
        print(f"    {name:<10} {statistics.median(values) * 1000:8.1f} ms")
    print(f"    ratio      {statistics.median(ratios):8.3f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("revision")
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--repeat", type=int, default=7)
    known, extra = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as folder:
        before = Path(folder) / "before"
        subprocess.run(
            [
                "git",
                "-C",
                str(ROOT),
                "worktree",
                "add",
                "-q",
                "--detach",
                str(before),
                known.revision,
            ],
            check=True,
        )
        try:
            for tree in (before, ROOT):
                subprocess.run(
                    [sys.executable, "-m", "compileall", "-q", str(tree / "guards")], check=True
                )
            trees = {known.revision[:10]: before, "this tree": ROOT}
            args = ["--root", str(known.root.resolve()), *extra]
            env = dict(os.environ)
            env.pop("GUARDS_NO_CACHE", None)
            print(f"{known.root.resolve().name}, median of {known.repeat} rounds (fresh processes)")
            print("  kept run (cache warm):")
            _rounds(
                trees, args, {**env, "GUARDS_CACHE_DIR": str(Path(folder) / "cache")}, known.repeat
            )
            print("  computed run (--no-cache):")
            _rounds(trees, [*args, "--no-cache"], env, known.repeat)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=False
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
