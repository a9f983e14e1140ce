"""CPU of a cold one-process ``guards check`` and of its hot per-file code, against a baseline
tree in the same run.

    .venv/bin/python bench/hot_checks.py --tree DIR [--size 1000] [--repeat 5] [--sample DIR]
                                         [--profile] [--top 25]

``--tree`` is another source tree of guards (``git archive REV | tar -x -C DIR``), the
baseline. Estates: the one bench/estates.py generates (``--size`` composes and as many notes),
this repository's own, and ``--sample`` folders (default: ../shared/corpus/club-3090-sample
when present, checked with the header preset its composes are written in). Each run is a fresh
``guards check -j 1 --no-cache`` process; its CPU (user + system, ``os.wait4``) is what is
timed, so a machine shared with other work inflates the wall clock but much less the CPU. The
rounds alternate the trees; medians, and the median of the per-round ratios (this tree /
baseline), are printed. Both trees are compiled to bytecode first.

``--profile`` adds one profiled run per tree and estate (cProfile with ``time.process_time``
as its clock, so waiting for the CPU is not counted): the CPU seconds and share of the run of
the functions the per-file work is spent in (figures, comment defaults, text normalisation,
K002, D002, D007), and with ``--top N`` the N heaviest functions by own and by cumulative time.
"""

from __future__ import annotations

import argparse
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import estates  # the generator of bench/estates.py

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "corpus" / "club-3090-sample"
SAMPLE_SETTINGS = '[header]\npreset = "profile"\n'
CHECK = ["check", "-j", "1", "--no-cache"]
PROFILED = (
    "import cProfile, runpy, sys, time\n"
    "out = sys.argv.pop(1)\n"
    "sys.argv[0] = 'guards'\n"
    "profile = cProfile.Profile(time.process_time)\n"
    "try:\n"
    "    profile.runcall(runpy.run_module, 'guards', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "profile.dump_stats(out)\n"
)
# (label, file, function, shown by): the functions issue 25 named, and the rules' checks
HOT = [
    ("find_figures", "facts/figures.py", "find_figures", "cum"),
    ("figures._figure_matches", "facts/figures.py", "_figure_matches", "cum"),
    ("textmatch.normalise", "claims/textmatch.py", "normalise", "cum"),
    ("tokens.Tokens", "claims/tokens.py", "tokenize", "cum"),
    ("K002 check", "rules/max_num_seqs.py", "check", "cum"),
    ("D002 check", "rules/comment_default.py", "check", "cum"),
    ("D007 check", "rules/figure_conflict.py", "check", "cum"),
]


def cpu(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    """User + system CPU seconds of one fresh process."""
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed in {cwd}")
    return usage.ru_utime + usage.ru_stime


def environment(tree: Path, cache: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "GUARDS_CACHE_DIR": cache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def rounds(trees: dict[str, Path], where: Path, args: list[str], repeat: int) -> str:
    """One line: the medians of each tree and of the per-round ratios. ``where`` is the folder
    the checks run in, holding no ``guards`` package (``-m`` imports from it first)."""
    times: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as cache:
        for _ in range(repeat):
            for name, tree in trees.items():
                command = [sys.executable, "-m", "guards", *CHECK, *args]
                times[name].append(cpu(command, where, environment(tree, cache)))
    base, this = times.values()
    ratio = statistics.median(now / then for then, now in zip(base, this, strict=True))
    medians = "  ".join(f"{name} {statistics.median(t):7.2f} s" for name, t in times.items())
    return f"{medians}  ratio {ratio:.2f}x"


def profiled(tree: Path, where: Path, args: list[str], out: Path) -> pstats.Stats:
    with tempfile.TemporaryDirectory() as cache:
        command = [sys.executable, "-c", PROFILED, str(out), *CHECK, *args]
        cpu(command, where, environment(tree, cache))
    return pstats.Stats(str(out))


def hot_lines(stats: pstats.Stats, top: int) -> list[str]:
    raw = stats.stats  # type: ignore[attr-defined]
    total = max(ct for _, _, _, ct, _ in raw.values())  # the whole run's cumulative time
    lines = [f"      whole run {total:7.2f} s CPU (profiled)"]
    for label, file, function, _ in HOT:
        found = [
            ct
            for (f, _, name), (_, _, _, ct, _) in raw.items()
            if f.endswith(file) and name == function
        ]
        seconds = sum(found)
        lines.append(f"      {label:<26} {seconds:7.2f} s  {100 * seconds / total:5.1f}%")
    for key in ("tottime", "cumulative")[: 2 if top else 0]:
        ordered = sorted(raw.items(), key=lambda item: item[1][2 if key == "tottime" else 3])
        lines.append(f"      top {top} by {key}:")
        for (f, line, name), (_, calls, tt, ct, _) in reversed(ordered[-top:]):
            shown = f.split("/guards/")[-1] if "/guards/" in f else Path(f).name
            lines.append(f"        {tt:7.2f} {ct:7.2f} {calls:9d}  {shown}:{line}({name})")
    return lines


def estates_to_check(
    size: int, samples: list[Path], workdir: Path
) -> list[tuple[str, Path, list[str]]]:
    generated, _ = estates.cached_estate(workdir, size)
    found = [(f"{size} composes + {size} notes", generated, []), ("this repository", ROOT, [])]
    found = [(label, where, ["--root", str(where)]) for label, where, _ in found]
    settings = workdir / "sample-settings.toml"
    settings.write_text(SAMPLE_SETTINGS, encoding="utf-8")
    for sample in samples:
        if sample.is_dir():
            options = ["--root", str(sample), "--config", str(settings)]
            found.append((f"sample {sample.name}", sample, options))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, required=True, help="the baseline source tree")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sample", type=Path, action="append")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "guards-bench"
    )
    args = parser.parse_args()
    trees = {"baseline": args.tree.resolve(), "this": ROOT}
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "guards")], check=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    print(f"guards check -j 1 --no-cache, CPU seconds, medians of {args.repeat} rounds")
    neutral = args.workdir  # the checks name their estate with --root
    for label, _, extra in estates_to_check(args.size, args.sample or [SAMPLE], args.workdir):
        print(f"  {label}: {rounds(trees, neutral, extra, args.repeat)}", flush=True)
        for name, tree in trees.items() if args.profile else ():
            out = args.workdir / f"hot-{name}.prof"
            print(f"    {name}:")
            print("\n".join(hot_lines(profiled(tree, neutral, extra, out), args.top)), flush=True)


if __name__ == "__main__":
    main()
