"""Wall time and peak memory of `guards check` on synthetic estates of 100 to 10,000 composes.

    .venv/bin/python bench/estates.py [--sizes 100,1000,10000] [--repeat N] [--repeat-large N]
                                      [--stress] [--cache] [--workdir DIR]

Each estate is generated from this repository's own (composes/, learnings/, claims.yaml): N
composes and N notes. The composes are copied tree by tree into ``models/m0000/…``,
``models/m0001/…`` (so the sibling references inside one copy still resolve), each copy with
its own service names, served model name (the family name kept, so the registry's claims still
apply: the most work per compose), published port and shm size; the notes are copied into
``learnings/`` with their own title and a few words changed. The registry is the bundled
claims.yaml (it holds a withdrawn claim); ``--stress`` adds runs against a registry where every
claim also appears withdrawn (the stress case of bench/claim_scan.py). Estates are cached under
``--workdir`` (default: a folder in the system temp dir) and rebuilt only when the sources or
this script change.

Every run is a fresh process (output discarded), timed with its peak RSS; the rows of one
group alternate so machine noise hits all alike, and each ratio is against a baseline measured
in the same group:

- ``guards check <one compose>`` (a pre-commit run on one staged file) against
  ``python -c pass`` and against ``yamllint -d relaxed`` on the same file (when installed);
- ``guards check`` on each estate against reading and line-splitting every file of that estate
  in a fresh Python process;
- ``guards check`` on the notes only of the smallest estate (the markdown cost).

``--cache`` adds a warm run after each cold one (``--no-cache`` is passed to the cold run when
``guards check --help`` lists it), and the cold run again in one process (``--jobs 1``): the
ratio of the two is what the worker processes gain, and where it drops under 1.0x is the
break-even that ``guards.run.parallel.MIN_FILES`` records. Medians of ``--repeat`` runs (``--repeat-large`` for estates
of 5,000 composes or more). The script compiles the guards package to bytecode first, so no
run pays for compiling it. Peak RSS is read per child with ``os.wait4``: the
``RUSAGE_CHILDREN`` maximum only ever grows, so its deltas hide a small child run after a big
one.

``--sizes 100 --repeat 3`` takes about 15 s on a 2-core machine; the default sizes about
11 minutes, most of it the one run on 10,000 composes. Progress goes to stderr, the table to
stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUARDS = [sys.executable, "-m", "guards", "check"]
LARGE = 5_000
CONFIG = 'composes = ["models/**/*.yml"]\nnotes = ["learnings/**/*.md"]\nclaims = "{claims}"\n'
NOTES_ONLY = 'composes = []\nnotes = ["learnings/**/*.md"]\nclaims = "claims.yaml"\n'
READ_SPLIT = (
    "import pathlib, sys\n"
    "for pattern in sys.argv[1:]:\n"
    "    for path in pathlib.Path().glob(pattern):\n"
    "        path.read_text(encoding='utf-8').splitlines()\n"
)
ALL_FILES = ["models/**/*.yml", "learnings/**/*.md", "claims.yaml"]
WORDS = ["steady", "careful", "measured", "plain", "usual", "recorded", "shared", "small"]
SERVICE_KEY = re.compile(r"^( +)([A-Za-z0-9_.-]+):\s*(#.*)?$")
MODEL_FLAG = re.compile(
    r"--(?:served-model-name|alias)\b[\s\"'=-]*(?:\$\{(?P<var>\w+):-)?(?P<value>\w[\w.:/-]*)"
)
PUBLISHED_PORT = re.compile(r"\$\{(?P<var>\w+):-(?P<value>\d{2,5})\}+:\d+")
SHM_SIZE = re.compile(r"(shm_size:\s*[\"']?)(\d+)")
PROSE_WORD = re.compile(r"(?<![\w:/.`\-])[a-z]{5,}(?![\w:/.`\-])")


# -- the estates ---------------------------------------------------------------------------


def sources() -> tuple[list[Path], list[Path]]:
    composes = sorted((ROOT / "composes").rglob("*.yml"))
    notes = sorted((ROOT / "learnings").rglob("*.md"))
    return composes, notes


def generate(target: Path, size: int) -> None:
    """Write an estate of ``size`` composes and ``size`` notes into ``target``."""
    composes, notes = sources()
    for index in range(size):
        source = composes[index % len(composes)]
        relative = source.relative_to(ROOT / "composes")
        path = target / "models" / f"m{index // len(composes):04d}" / relative
        _write(path, vary_compose(source.read_text(encoding="utf-8"), index))
    for index in range(size):
        source = notes[index % len(notes)]
        path = target / "learnings" / f"{source.stem}-{index:05d}.md"
        _write(path, vary_note(source.read_text(encoding="utf-8"), index))
    registry = (ROOT / "claims.yaml").read_text(encoding="utf-8")
    _write(target / "claims.yaml", registry)
    _write(target / "claims-stress.yaml", stress_registry(registry))
    _write(target / "guards.toml", CONFIG.format(claims="claims.yaml"))
    _write(target / "guards-stress.toml", CONFIG.format(claims="claims-stress.yaml"))
    _write(target / "guards-notes.toml", NOTES_ONLY)


def vary_compose(text: str, index: int) -> str:
    """The compose with its own service names, served model name, published port and shm size."""
    suffix = f"c{index:05d}"
    for name in service_names(text):
        text = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w.-])", f"{name}-{suffix}", text)
    text = _vary(text, MODEL_FLAG, lambda old: f"{old}-{suffix}")
    text = _vary(text, PUBLISHED_PORT, lambda old: str(20_000 + index % 40_000))
    return SHM_SIZE.sub(lambda m: f"{m[1]}{8 + index % 5 * 4}", text)


def _vary(text: str, pattern: re.Pattern[str], new: Callable[[str], str]) -> str:
    """Give the value each match of ``pattern`` sets outside comments a new value, and change
    it too in the comment lines that name its variable (``PORT ... (default: 8100)``)."""
    documented: dict[str, tuple[str, str]] = {}

    def change(match: re.Match[str]) -> str:
        if "#" in text[text.rfind("\n", 0, match.start()) + 1 : match.start()]:
            return match[0]
        value = new(match["value"])
        if match["var"]:
            documented[match["var"]] = (match["value"], value)
        start, end = match.start("value") - match.start(), match.end("value") - match.start()
        return match[0][:start] + value + match[0][end:]

    text = pattern.sub(change, text)
    for var, (old, value) in documented.items():
        word = re.compile(rf"(?<![\w.-]){re.escape(old)}(?![\w.-])")
        comment = re.compile(rf"(?m)^[ \t]*#.*\b{var}\b.*$")
        text = comment.sub(lambda m, word=word, value=value: word.sub(value, m[0]), text)
    return text


def service_names(text: str) -> list[str]:
    """The keys of the top-level ``services:`` mapping (block style)."""
    names: list[str] = []
    indent = None
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"services:\s*$", line)), None)
    for line in lines[start + 1 :] if start is not None else []:
        if line.strip() == "" or line.lstrip().startswith("#"):
            continue
        match = SERVICE_KEY.match(line)
        if not line.startswith(" "):
            break
        indent = indent or (len(match[1]) if match else None)
        if match and len(match[1]) == indent:
            names.append(match[2])
    return names


def vary_note(text: str, index: int) -> str:
    """The note with its own title and heading and a few prose words changed."""
    suffix = f"(copy {index})"
    text = re.sub(
        r"(?m)\A(---\n(?:(?!---$).*\n)*?title: *)(.+)$", lambda m: _retitle(m, suffix), text
    )
    text = re.sub(r"(?m)^(# .+)$", rf"\1 {suffix}", text, count=1)
    chance = random.Random(index)
    lines = text.split("\n")
    prose = [i for i, line in enumerate(lines) if _is_prose(line)]
    for number in chance.sample(prose, min(3, len(prose))):
        words = list(PROSE_WORD.finditer(lines[number]))
        if words:
            word = chance.choice(words)
            line = lines[number]
            lines[number] = line[: word.start()] + chance.choice(WORDS) + line[word.end() :]
    return "\n".join(lines)


def _retitle(match: re.Match[str], suffix: str) -> str:
    title = match[2]
    if title[:1] in "\"'" and title.endswith(title[0]) and len(title) > 1:
        return f"{match[1]}{title[:-1]} {suffix}{title[0]}"
    return f"{match[1]}{title} {suffix}"


def _is_prose(line: str) -> bool:
    return line[:1].isalpha() and "claim:" not in line and ":" not in line[:20]


def stress_registry(registry: str) -> str:
    """The registry plus a withdrawn copy of every claim (as in bench/claim_scan.py)."""
    withdrawn = re.sub(r"(?m)^    status: active$", "    status: superseded", registry)
    withdrawn = re.sub(r"(?m)^  - id: ", "  - id: old-", withdrawn.split("claims:\n", 1)[1])
    withdrawn = re.sub(r"(?m)^    superseded_by: .*\n", "", withdrawn)
    return registry + withdrawn


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def fingerprint(size: int) -> str:
    digest = hashlib.sha256(f"{size}\n".encode())
    composes, notes = sources()
    for path in [Path(__file__), ROOT / "claims.yaml", *composes, *notes]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def cached_estate(workdir: Path, size: int) -> tuple[Path, float | None]:
    """The estate of ``size`` composes under ``workdir``, generated unless it is up to date;
    with the seconds generating it took (None when reused)."""
    target = workdir / f"estate-{size}"
    marker = target / ".generated"
    stamp = fingerprint(size)
    if marker.is_file() and marker.read_text(encoding="utf-8") == stamp:
        return target, None
    start = time.perf_counter()
    scratch = workdir / f"estate-{size}.partial-{os.getpid()}"
    shutil.rmtree(scratch, ignore_errors=True)
    generate(scratch, size)
    (scratch / ".generated").write_text(stamp, encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    scratch.rename(target)
    return target, time.perf_counter() - start


# -- running and timing --------------------------------------------------------------------


@dataclass
class Row:
    label: str
    estate: str
    command: list[str]
    cwd: Path
    against: list[str] = field(default_factory=list)  # labels of rows in the same group
    short: str = ""  # the name in other rows' ratios (default: the label)
    prime: bool = False  # one untimed run first (fills a cache for the warm runs)
    seconds: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    codes: set[int] = field(default_factory=set)
    error: str = ""


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, its workers included: ``os.wait4`` counts the
    children it waited for) and peak RSS (bytes) of one fresh process, which must end 0 or 1."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed in {cwd}")
    rss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return elapsed, usage.ru_utime + usage.ru_stime, rss


def run_child(row: Row) -> None:
    """Run the row's command once as a fresh process: wall time, peak RSS, exit code."""
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        child = subprocess.Popen(row.command, cwd=row.cwd, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            stderr.seek(0)
            lines = stderr.read().decode("utf-8", "replace").strip().splitlines()
            row.error = lines[-1] if lines else "(no message)"
    row.seconds.append(elapsed)
    row.rss.append(usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024))
    row.codes.add(code)


def measure(group: list[Row], repeat: int) -> None:
    where = next((row.estate for row in group if row.estate != "-"), "-")
    print(f"estate {where}: {len(group)} rows x {repeat} runs", file=sys.stderr, flush=True)
    for row in group:
        if row.prime:
            run_child(row)
            row.seconds.clear()
            row.rss.clear()
    for _ in range(repeat):
        for row in group:
            run_child(row)


def yamllint() -> tuple[list[str] | None, str]:
    if importlib.util.find_spec("yamllint") is not None:
        return [sys.executable, "-m", "yamllint"], ""
    found = shutil.which("yamllint")
    if found:
        return [found], ""
    return None, "yamllint is not installed here (`pip install yamllint` to compare with it)"


def has_no_cache() -> bool:
    help_text = subprocess.run(
        [*GUARDS, "--help"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout
    return "--no-cache" in help_text


# -- the groups ----------------------------------------------------------------------------


def one_compose(estate: Path) -> str:
    return sorted((estate / "models").rglob("*.yml"))[0].relative_to(estate).as_posix()


def startup_group(estate: Path, size: int, cache: tuple[bool, bool]) -> tuple[list[Row], str]:
    one = one_compose(estate)
    where = f"{size:,}"
    rows = [Row("python -c pass", "-", [sys.executable, "-c", "pass"], estate)]
    lint, skipped = yamllint()
    peers = ["python -c pass"]
    if lint is not None:
        rows.append(
            Row(
                "yamllint -d relaxed <one compose>",
                where,
                [*lint, "-d", "relaxed", one],
                estate,
                ["python -c pass"],
                short="yamllint",
            )
        )
        peers.append("yamllint -d relaxed <one compose>")
    command = [*GUARDS, one]
    rows += checks("guards check <one compose>", where, command, estate, peers, cache, serial=False)
    return rows, skipped


def estate_group(
    estate: Path, size: int, notes: bool, stress: bool, cache: tuple[bool, bool]
) -> list[Row]:
    where = f"{size:,}"
    base = "read + split every file"
    rows = [Row(base, where, [sys.executable, "-c", READ_SPLIT, *ALL_FILES], estate)]
    rows += checks("guards check", where, list(GUARDS), estate, [base], cache)
    whole = rows[1].label  # the cold run when --cache gives a warm one too
    if stress:
        command = [*GUARDS, "--config", "guards-stress.toml"]
        label = "guards check, stress registry"
        rows += checks(label, where, command, estate, [base, whole], cache)
    if notes:
        notes_base = "read + split every note"
        read_notes = [sys.executable, "-c", READ_SPLIT, ALL_FILES[1]]
        rows.append(Row(notes_base, where, read_notes, estate))
        command = [*GUARDS, "--config", "guards-notes.toml"]
        label = "guards check, notes only"
        rows += checks(label, where, command, estate, [notes_base, whole], cache)
    return rows


def checks(
    label: str,
    where: str,
    command: list[str],
    cwd: Path,
    against: list[str],
    cache: tuple[bool, bool],
    serial: bool = True,
) -> list[Row]:
    """A guards row, and with --cache its warm twin (cold: --no-cache when guards has it) and,
    with ``serial``, the cold run in one process."""
    wanted, supported = cache
    if not wanted:
        return [Row(label, where, command, cwd, against)]
    cold = [*command[:4], "--no-cache", *command[4:]] if supported else command
    rows = []
    if supported and serial:  # the cold run in one process: what the worker processes gain
        serial = [*cold[:5], "--jobs", "1", *cold[5:]]
        rows.append(Row(f"{label} (cold, one process)", where, serial, cwd, against))
        against = [*against, rows[0].label]
    return [
        *rows,
        Row(f"{label} (cold)", where, cold, cwd, against),
        Row(f"{label} (warm)", where, command, cwd, [f"{label} (cold)"], prime=supported),
    ]


# -- the report ----------------------------------------------------------------------------


def duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.2f} s"


def table(groups: list[list[Row]]) -> list[str]:
    lines = [
        "| scenario | estate | runs | median | ratio (same group) | peak RSS | exit |",
        "| --- | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for group in groups:
        medians = {row.label: statistics.median(row.seconds) for row in group}
        names = {row.label: row.short or row.label for row in group}
        for row in group:
            median = medians[row.label]
            ratio = " · ".join(
                f"{median / medians[peer]:.1f}x {names[peer]}" for peer in row.against
            )
            lines.append(
                f"| {row.label} | {row.estate} | {len(row.seconds)} | {duration(median)} "
                f"| {ratio or 'baseline'} | {max(row.rss) / 2**20:.0f} MiB "
                f"| {','.join(map(str, sorted(row.codes)))} |"
            )
    return lines


def estate_line(estate: Path, size: int, built: float | None) -> str:
    yml = sum(p.stat().st_size for p in (estate / "models").rglob("*.yml"))
    md = sum(p.stat().st_size for p in (estate / "learnings").rglob("*.md"))
    how = f"generated in {built:.1f} s" if built is not None else "reused from the cache"
    return (
        f"- estate {size:,}: {size:,} composes ({yml / 1e6:.1f} MB), {size:,} notes "
        f"({md / 1e6:.1f} MB) at {estate}, {how}"
    )


def machine_lines() -> list[str]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    unset = "set" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "not set"
    return [
        f"- machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs "
        f"({usable} usable), load average {load}",
        f"- Python {platform.python_version()} ({sys.executable})",
        "- bytecode compiled first (`python -m compileall -q guards`; PYTHONDONTWRITEBYTECODE "
        f"is {unset}, so no timed run compiles or writes .pyc files)",
    ]


# -- main ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="estate sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=5, help="runs per row (median)")
    parser.add_argument("--repeat-large", type=int, default=1, help=f"runs per row at ≥{LARGE:,}")
    parser.add_argument(
        "--stress", action="store_true", help="also the every-claim-withdrawn registry"
    )
    parser.add_argument("--cache", action="store_true", help="a warm run after each cold one")
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "guards-bench-estates"
    )
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    if not sizes or min(sizes) < 1:
        parser.error("--sizes: give positive numbers, e.g. 100,1000")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "guards"], cwd=ROOT, check=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    cache = (args.cache, args.cache and has_no_cache())
    if args.cache and not cache[1]:
        notes.append(
            "- no cache yet: `guards check --help` lists no --no-cache, so cold and warm runs are the same command"
        )
    estates = []
    for size in sizes:
        estate, built = cached_estate(args.workdir, size)
        estates.append((size, estate))
        notes.append(estate_line(estate, size, built))
    startup, skipped = startup_group(estates[0][1], sizes[0], cache)
    notes.append(f"- <one compose>: {one_compose(estates[0][1])} (the {sizes[0]:,} estate)")
    if skipped:
        notes.append(f"- yamllint skipped: {skipped}")
    groups = [startup]
    for size, estate in estates:
        groups.append(estate_group(estate, size, size == sizes[0], args.stress, cache))
    for group in groups:
        big = any(row.estate != "-" and int(row.estate.replace(",", "")) >= LARGE for row in group)
        measure(group, args.repeat_large if big else args.repeat)
    print("\n".join(table(groups)))
    print()
    print("\n".join(machine_lines() + notes + failures(groups)))


def failures(groups: list[list[Row]]) -> list[str]:
    return [
        f"- {row.label} (estate {row.estate}) exited {sorted(row.codes)}: {row.error}"
        for group in groups
        for row in group
        if row.error
    ]


if __name__ == "__main__":
    main()
