"""Start-up: `guards check` of one compose in a fresh process, against a bare interpreter and
against yamllint on the same file.

    .venv/bin/python bench/startup.py [--file COMPOSE] [--repeat N] [--importtime [N]] [--tree DIR]

Every command runs as a fresh process (output discarded); one round runs each command once,
in turn, so machine noise hits all alike, and each ratio is the median of the ratios within
the rounds. The rows:

- ``python -c pass``: the interpreter alone (the baseline);
- ``yamllint -d relaxed FILE``: a YAML linter on the same file (when installed);
- ``guards --version``: the command line alone;
- ``python -c "import guards.cli"``: the imports every command pays;
- ``guards check FILE``: a pre-commit run, its result kept from the run before (the cache
  lives in a temporary folder, filled once before timing);
- ``guards check FILE, edited``: a pre-commit run on a file changed since the last run: no
  result kept for it, but the word rarities of the claims kept (a cache folder whose ``runs``
  cannot be written or read);
- ``guards check --no-cache FILE``: the same run computed from scratch (when the option exists).

``--tree DIR`` (another source tree: ``git archive REV | tar -x -C DIR``) runs the three
``guards check`` rows for both trees, each as ``python -m guards`` with its tree first on
``PYTHONPATH`` (so both pay the same start-up), with a ratio to the other tree's row, and
leaves out the ``--version`` and import rows.

The guards package (of both trees) is compiled to bytecode first, so no run pays for compiling
it. ``--importtime`` adds, for one ``guards check FILE`` run of each kind, the N top-level
packages whose own import time (``python -X importtime``) is largest.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = "composes/qwen3.8-27b/ik-llama/single/mtp.yml"
BIN = Path(sys.executable).parent


def guards(*args: str) -> list[str]:
    script = BIN / "guards"
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "guards", *args]


def commands(file: str, tree: Path | None) -> dict[str, list[str]]:
    rows = {"python -c pass (baseline)": [sys.executable, "-c", "pass"]}
    yamllint = BIN / "yamllint" if (BIN / "yamllint").exists() else shutil.which("yamllint")
    if yamllint:
        rows["yamllint -d relaxed FILE"] = [str(yamllint), "-d", "relaxed", file]
    if tree is not None:  # both trees as `python -m guards`, each from its own folder
        for name, folder in (("", ROOT), ("baseline: ", tree)):
            rows[f"{name}guards check FILE"] = [*tree_guards(folder), "check", file]
            rows[f"{name}guards check --no-cache FILE"] = [
                *tree_guards(folder),
                "check",
                "--no-cache",
                file,
            ]
        return rows
    rows["guards --version"] = guards("--version")
    rows['python -c "import guards.cli"'] = [sys.executable, "-c", "import guards.cli"]
    rows["guards check FILE"] = guards("check", file)
    if "--no-cache" in run(guards("check", "--help")).stdout:
        rows["guards check --no-cache FILE"] = guards("check", "--no-cache", file)
    return rows


def tree_guards(tree: Path) -> list[str]:
    """``python -m guards`` of the source tree ``tree``: ``env`` puts it on the path, and ``-P``
    keeps the current folder (this checkout) off it."""
    return ["env", f"PYTHONPATH={tree}", sys.executable, "-P", "-m", "guards"]


def run(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def importtime(command: list[str], env: dict[str, str], top: int) -> list[tuple[str, float]]:
    """The ``top`` top-level packages by their modules' own import time, in ms."""
    if sys.executable not in command:
        command = [sys.executable, *command]  # the console script is a Python file
    at = command.index(sys.executable) + 1
    found = run([*command[:at], "-X", "importtime", *command[at:]], env).stderr
    own: Counter[str] = Counter()
    for line in found.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \| *(\S+)", line)
        if match:
            parts = match.group(2).split(".")
            package = ".".join(parts[:2]) if parts[0] == "guards" else parts[0]
            own[package] += int(match.group(1))
    return [(name, micros / 1000) for name, micros in own.most_common(top)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--file", default=FILE, help="The compose to check (relative to the root).")
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--importtime", type=int, nargs="?", const=12, default=0, metavar="N")
    parser.add_argument("--tree", type=Path, help="a baseline source tree of guards")
    args = parser.parse_args()
    tree = args.tree.resolve() if args.tree else None
    for folder in (ROOT, *([tree] if tree else [])):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(folder / "guards")], check=True
        )
    rows = commands(args.file, tree)
    with tempfile.TemporaryDirectory(prefix="guards-startup-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "GUARDS_NO_CACHE"}
        env["GUARDS_CACHE_DIR"] = cache
        for command in rows.values():
            run(command, env)  # warm: the cache filled, the files in the page cache
        envs = {name: env for name in rows}
        if "guards check --no-cache FILE" in rows:
            edited = os.path.join(cache, "edited")
            shutil.copytree(cache, edited, ignore=shutil.ignore_patterns("edited"))
            for folder in Path(edited).glob("*/runs"):
                shutil.rmtree(folder)
                folder.write_text("no runs are kept here")
            for kept in [name for name in rows if name.endswith("guards check FILE")]:
                rows[f"{kept}, edited"] = rows[kept]
                envs[f"{kept}, edited"] = {**env, "GUARDS_CACHE_DIR": edited}
        samples: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.repeat):
            for name, command in rows.items():
                samples[name].append(timed(command, envs[name]))
        report(samples, args.repeat)
        if args.importtime:
            for name in (
                "guards check FILE",
                "guards check FILE, edited",
                "guards check --no-cache FILE",
            ):
                if name in rows:
                    print(f"\n-X importtime, {name}: own import time by package")
                    for package, ms in importtime(rows[name], envs[name], args.importtime):
                        print(f"  {package:<28} {ms:6.1f} ms")


def report(samples: dict[str, list[float]], repeat: int) -> None:
    names = list(samples)
    base, lint = names[0], "yamllint -d relaxed FILE"

    def ratio(name: str, against: str) -> str:
        if against not in samples:
            return ""
        pairs = zip(samples[name], samples[against], strict=True)
        return f"{statistics.median(a / b for a, b in pairs):6.2f}x"

    print(f"median of {repeat} paired runs (fresh processes)")
    print(f"  {'':<40} {'median':>9}  {'/ python':>8}  {'/ yamllint':>10}  {'/ baseline':>10}")
    for name in names:
        median = statistics.median(samples[name]) * 1000
        cells = [ratio(name, base), ratio(name, lint), ratio(name, f"baseline: {name}")]
        print(f"  {name:<40} {median:6.1f} ms  {cells[0]:>8}  {cells[1]:>10}  {cells[2]:>10}")


if __name__ == "__main__":
    main()
