"""A long fuzz campaign for ``guards``: the strategies of ``tests/test_fuzz.py``, many more times.

    .venv/bin/python tools/fuzz_campaign.py --examples 20000 [--seed N] [--out DIR]
        [--cli-runs N] [--jobs N] [--no-reduce]

``--examples`` in-process examples are shared out over the parsers, called directly
(``parse_compose``, ``parse_note``, ``registry.parse``, ``load_env_file``, config loading) and
whole-estate ``guards`` runs through the console entry point in this process; ``--cli-runs``
more estates (default: one per 50 examples, at least 300) go through the installed ``guards``
script as subprocesses, ``--jobs`` at a time. Every run is checked against the properties of
``tests/fuzz_props.py`` (exit 0/1/2, one bounded ``guards: error:`` line per error, bounded
output, findings inside their files, nothing written, no hang, no super-linear time).

Failures are de-duplicated into classes: an internal error (exit 3, or an exception escaping
a parser) by exception type and innermost ``guards/`` frame, anything else by the property it
breaks. For each class the smallest failing input is shrunk (delta debugging, unless
``--no-reduce``) and saved under ``--out`` (default ``$TMPDIR/guards-fuzz-seed<N>``): the
input files, the command that reproduces it and what happened (with the traceback of an
internal error). The summary table goes to stdout; the exit status is 1 when any class was
found. The same ``--seed`` gives the same inputs.

    .venv/bin/python tools/fuzz_campaign.py --writes --examples 5000 [--races N] [--minutes M]

``--writes`` runs the write commands' properties of ``tests/write/test_write_props.py`` instead
(``fix``, ``regen``, ``claims add/retract/find --confirm/--dismiss/evidence add``,
``baseline``: only the intended bytes change, the YAML data as three readers read it is the old
data with the intended change, nothing written outside the root, a second run changes nothing):
``--examples`` shared out over the commands, then ``--races`` rounds of each race (two
subprocesses writing at once; default 5). ``--minutes`` ends each command's share, and the
races, when its slice of that time is spent. The summary adds the refusals seen (exit 2 with one
error line and nothing written: the inputs a command declines), most common first; each failure
class is shrunk and saved as a folder holding ``root/``, ``outside/`` and ``inputs/`` with the
command to run in ``root/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from tests import fuzz_props as props  # noqa: E402
from tests import fuzz_strategies as strategies  # noqa: E402
from tests.fuzz_reduce import reduce_files, reduce_text  # noqa: E402

PARSERS = {  # kind -> (strategy, share of the in-process examples, file name of a reproducer)
    "compose": (strategies.compose_texts, 0.25, "input.yml"),
    "note": (strategies.note_texts, 0.15, "input.md"),
    "registry": (strategies.registry_texts, 0.12, "claims.yaml"),
    "env": (strategies.env_texts, 0.06, "input.env"),
    "config": (strategies.config_texts, 0.07, "guards.toml"),
}
ESTATE_SHARE = 1 - sum(share for _, share, _ in PARSERS.values())
SLOW = ("slow", "hang")  # classes too noisy to shrink by re-running


@dataclass
class Failure:
    kind: str
    detail: str
    where: str  # which kind of run found it
    count: int = 0
    example: object = None  # a parser's text or an EstateCase: the smallest seen
    size: int = 0
    crash: str | None = None


@dataclass
class Campaign:
    failures: dict[str, Failure] = field(default_factory=dict)
    runs: Counter = field(default_factory=Counter)
    failing_runs: Counter = field(default_factory=Counter)

    def record(
        self, where: str, found: list, example: object, size: int, crash: str | None = None
    ) -> None:
        self.runs[where] += 1
        if found:
            self.failing_runs[where] += 1
        for violation in {v.kind: v for v in found}.values():
            failure = self.failures.setdefault(
                violation.kind, Failure(violation.kind, violation.detail, where)
            )
            failure.count += 1
            if failure.example is None or size < failure.size:
                failure.example, failure.size, failure.detail = example, size, violation.detail
                failure.crash = crash or failure.crash


def _settings(count: int, seed_value: int):
    def wrap(test):
        if count <= 0:
            return lambda: None
        return seed(seed_value)(
            settings(
                max_examples=count,
                deadline=None,
                database=None,
                phases=(Phase.generate,),
                suppress_health_check=list(HealthCheck),
            )(test)
        )

    return wrap


def run_parsers(campaign: Campaign, kind: str, count: int, seed_value: int) -> None:
    strategy = PARSERS[kind][0]()

    @_settings(count, seed_value)
    @given(strategy)
    def one(text):
        campaign.record(f"{kind} parser", props.parser_violations(kind, text), text, len(text))

    one()


def run_estates_in_process(campaign: Campaign, count: int, seed_value: int) -> None:
    @_settings(count, seed_value)
    @given(strategies.estates())
    def one(case):
        outcome, found = props.check_estate(case)
        campaign.record("estate, in-process", found, case, case.size(), outcome.crash)

    one()


def run_estates_as_processes(campaign: Campaign, count: int, seed_value: int, jobs: int) -> None:
    cases: list = []

    @_settings(count, seed_value + 1)
    @given(strategies.estates())
    def collect(case):
        cases.append(case)

    collect()

    def one(case):
        return case, props.check_estate(case, subprocess_run=True)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for case, (outcome, found) in pool.map(one, cases):
            campaign.record("estate, subprocess", found, case, case.size(), outcome.crash)


# --- shrinking and saving -------------------------------------------------------------------


def _texts(case) -> dict[str, str]:
    return {name: data.decode("utf-8", "surrogateescape") for name, data in case.files.items()}


def _case(files: dict[str, str], args: tuple[str, ...]):
    encoded = {name: text.encode("utf-8", "surrogateescape") for name, text in files.items()}
    return strategies.EstateCase(encoded, args)


def shrink(failure: Failure) -> None:
    if failure.kind.rsplit(": ", 1)[-1] in SLOW:
        return
    if isinstance(failure.example, str):
        kind = failure.where.split()[0]

        def still_fails(text: str) -> bool:
            return any(v.kind == failure.kind for v in props.parser_violations(kind, text))

        if still_fails(failure.example):
            failure.example = reduce_text(failure.example, still_fails, attempts=600)
        return
    case = failure.example
    args = case.args

    def estate_fails(files: dict[str, str]) -> bool:
        _, found = props.check_estate(_case(files, args))
        return any(v.kind == failure.kind for v in found)

    files = _texts(case)
    if not estate_fails(files):  # a class seen only as a subprocess may not reproduce in-process
        return
    files = reduce_files(files, estate_fails, attempts=300)
    for index in reversed(range(1, len(args))):  # paths named on the command line
        takes_value = args[index - 1] in ("--config", "--env-file", "--format", "--root")
        if args[index] in case.files and not takes_value:
            fewer = args[:index] + args[index + 1 :]
            if estate_fails_with(files, fewer, failure.kind):
                args = fewer
    failure.example = _case(files, args)


def estate_fails_with(files: dict[str, str], args: tuple[str, ...], kind: str) -> bool:
    _, found = props.check_estate(_case(files, args))
    return any(v.kind == kind for v in found)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:70]


def save(failure: Failure, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    guards = ROOT / ".venv" / "bin" / "guards"
    python = ROOT / ".venv" / "bin" / "python"
    if isinstance(failure.example, str):
        kind = failure.where.split()[0]
        name = PARSERS[kind][2]
        (folder / name).write_bytes(failure.example.encode("utf-8", "surrogatepass"))
        call = {
            "compose": "from guards.sources.compose.compose import parse_compose as p; p(t, 'fuzz.yml')",
            "note": "from guards.sources.notes.notes import parse_note as p; p(t, 'fuzz.md')",
            "registry": "from guards.sources.registry import parse as p; p(t, 'claims.yaml')",
            "env": "from pathlib import Path; from guards.sources.envfile import load_env_file as p; "
            f"p(Path({name!r}), {name!r})",
            "config": "from pathlib import Path; from guards.sources.config import load_config as c; "
            "from guards.rules.options import load_options as o; from guards.rules import all_rules as r; "
            "o(c(Path('.')), r())",
        }[kind]
        read = f"t = open({name!r}, encoding='utf-8', newline='').read()"
        (folder / "repro.py").write_text(
            f"{read}\n{call.replace('; ', chr(10))}\n", encoding="utf-8"
        )
        command = f"cd {shlex.quote(str(folder))} && {python} repro.py"
        shown = repr(failure.example)
    else:
        case = failure.example
        estate = folder / "estate"
        shutil.rmtree(estate, ignore_errors=True)
        props.write_estate(case, estate)
        command = f"cd {shlex.quote(str(estate))} && {guards} {shlex.join(case.args)}"
        shown = "\n".join(f"--- {name}\n{text!r}" for name, text in _texts(case).items())
        shown = shown or "(no files)"
    report = [
        f"class:   {failure.kind}",
        f"found:   {failure.count} time(s), first in: {failure.where}",
        f"detail:  {re.sub(r'[(]details in [^)]*[)]', '(traceback below)', failure.detail)}",
        f"command: {command}",
        "",
        "input:",
        shown if len(shown) < 20_000 else shown[:20_000] + " …",
    ]
    if failure.crash:
        report += ["", "traceback:", failure.crash]
    (folder / "README.txt").write_text("\n".join(report) + "\n", encoding="utf-8")


# --- the campaign ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=5000, help="in-process examples")
    parser.add_argument("--cli-runs", type=int, default=None, help="subprocess guards runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="where reproducers go")
    parser.add_argument("--jobs", type=int, default=2, help="subprocess runs at a time")
    parser.add_argument("--no-reduce", action="store_true", help="save failures unshrunk")
    parser.add_argument("--writes", action="store_true", help="the write commands instead")
    parser.add_argument("--races", type=int, default=5, help="with --writes: rounds of races")
    parser.add_argument("--minutes", type=float, default=None, help="with --writes: time budget")
    options = parser.parse_args(argv)
    if options.writes:
        return writes_main(options)
    cli_runs = (
        options.cli_runs if options.cli_runs is not None else max(300, options.examples // 50)
    )

    campaign = Campaign()
    started = time.perf_counter()
    plan = {kind: round(options.examples * share) for kind, (_, share, _) in PARSERS.items()}
    plan["estates"] = options.examples - sum(plan.values())
    for kind, count in plan.items():
        print(f"... {count} {kind} examples", file=sys.stderr, flush=True)
        if kind == "estates":
            run_estates_in_process(campaign, count, options.seed)
        else:
            run_parsers(campaign, kind, count, options.seed)
    print(f"... {cli_runs} subprocess runs", file=sys.stderr, flush=True)
    run_estates_as_processes(campaign, cli_runs, options.seed, options.jobs)
    generated = time.perf_counter() - started

    out = options.out or Path(tempfile.gettempdir()) / f"guards-fuzz-seed{options.seed}"
    if out.exists():
        shutil.rmtree(out)
    ordered = sorted(campaign.failures.values(), key=lambda f: (f.where, f.kind))
    for index, failure in enumerate(ordered, 1):
        if not options.no_reduce:
            print(f"... shrinking {failure.kind}", file=sys.stderr, flush=True)
            shrink(failure)
        save(failure, out / f"{index:02d}-{slug(failure.kind)}")
    elapsed = time.perf_counter() - started

    print(
        f"guards fuzz campaign: seed {options.seed}, {sum(campaign.runs.values()):,} runs in "
        f"{generated:.0f} s (+{elapsed - generated:.0f} s shrinking), reproducers in {out}/"
    )
    print()
    print(f"{'run':<22} {'examples':>9} {'failing':>8}")
    for where in sorted(campaign.runs):
        print(f"{where:<22} {campaign.runs[where]:>9,} {campaign.failing_runs[where]:>8,}")
    print(
        f"{'total':<22} {sum(campaign.runs.values()):>9,} {sum(campaign.failing_runs.values()):>8,}"
    )
    print()
    if not ordered:
        print("no failures")
        return 0
    print(f"{'#':>2}  {'class':<68} {'count':>6}  first found in")
    for index, failure in enumerate(ordered, 1):
        print(f"{index:>2}  {failure.kind[:68]:<68} {failure.count:>6}  {failure.where}")
    return 1


# --- the write commands (--writes) ----------------------------------------------------------


def run_writes(
    campaign: Campaign,
    kind: str,
    count: int,
    seed_value: int,
    deadline: float,
    refused: Counter[tuple[str, str]],
) -> None:
    """``count`` cases of one kind (``tests/write_strategies.py:CASES``), each run twice and
    checked; a run that declined its input cleanly is counted in ``refused``."""
    from tests.write import test_write_props as writes
    from tests.write_strategies import CASES

    @_settings(count, seed_value)
    @given(CASES[kind]())
    def one(case):
        if time.monotonic() > deadline:
            return
        ran, found = writes.run_case(case)
        if ran is None:
            return
        crash = ran.first.crash or ran.again.crash
        campaign.record(case.command, found, case, case.size(), crash)
        if ran.first.code == 2 and not found:
            error = ran.first.err.strip().splitlines()[0] if ran.first.err.strip() else "?"
            refused[case.command, props.stem(error.removeprefix(props.ERROR_PREFIX), 7)] += 1

    one()


def run_races(campaign: Campaign, rounds: int, deadline: float) -> None:
    from tests.write import test_write_props as writes

    for _ in range(rounds):
        for name, race in writes.RACES.items():
            if time.monotonic() > deadline:
                return
            with tempfile.TemporaryDirectory(prefix="guards-race-") as folder:
                problems = race(Path(folder))
            found = [props.Violation(f"race ({name}): {props.stem(p, 6)}", p) for p in problems]
            campaign.record("race", found, name, 0)


def shrink_write(failure: Failure) -> None:
    """Fewer and shorter files (and inputs) for which the case still breaks the same
    property."""
    from tests.write import test_write_props as writes
    from tests.write_strategies import WriteCase

    case = failure.example
    if not isinstance(case, WriteCase) or failure.kind.endswith(SLOW):
        return
    # fix and regen cases are kept whole: what they expect names lines of the composes and
    # claims of the registry, which a smaller file would no longer hold
    kept = set(case.files) if case.command in ("fix", "regen") else set()
    texts = {
        n: d.decode("utf-8", "surrogateescape") for n, d in case.files.items() if n not in kept
    }
    scrapes = {n: d for n, d in case.inputs.items() if n.endswith(".prom")}  # fixtures, kept
    texts.update(
        {
            f"inputs/{n}": d.decode("utf-8", "surrogateescape")
            for n, d in case.inputs.items()
            if n not in scrapes
        }
    )

    def rebuilt(reduced: dict[str, str]) -> WriteCase:
        encoded = {n: t.encode("utf-8", "surrogateescape") for n, t in reduced.items()}
        files = {n: d for n, d in encoded.items() if not n.startswith("inputs/")}
        inputs = {
            n.removeprefix("inputs/"): d for n, d in encoded.items() if n.startswith("inputs/")
        }
        return dataclasses.replace(
            case, files={**{n: case.files[n] for n in kept}, **files}, inputs={**scrapes, **inputs}
        )

    def still_fails(reduced: dict[str, str]) -> bool:
        _, found = writes.run_case(rebuilt(reduced))
        return any(v.kind == failure.kind for v in found)

    if still_fails(texts):
        failure.example = rebuilt(reduce_files(texts, still_fails, attempts=200))


def save_write(failure: Failure, folder: Path) -> None:
    from tests.write import test_write_props as writes
    from tests.write_strategies import WriteCase

    folder.mkdir(parents=True, exist_ok=True)
    case = failure.example
    if not isinstance(case, WriteCase):  # a race, by name
        test = f"tests/write/test_write_props.py::test_concurrent_write_commands_never_lose_an_update[{case}]"
        command = f"cd {shlex.quote(str(ROOT))} && .venv/bin/pytest {shlex.quote(test)}"
        shown = f"race: {case}"
    else:
        ran, _ = writes.run_case(case)  # the arguments as run (find picks its passage)
        world = folder / "world"
        shutil.rmtree(world, ignore_errors=True)
        world.mkdir()
        writes.lay_down(case, world)
        guards = ROOT / ".venv" / "bin" / "guards"
        args = ran.args if ran is not None else case.args
        (folder / "repro.py").write_text(  # the arguments exactly (some hold control characters)
            "import subprocess, sys\n"
            f"args = {list(args)!r}\n"
            f"run = subprocess.run([{str(guards)!r}, *args], cwd={str(world / 'root')!r})\n"
            "sys.exit(run.returncode)\n",
            encoding="utf-8",
        )
        command = f"{ROOT / '.venv' / 'bin' / 'python'} {folder / 'repro.py'}"
        shown = case.shown()
    report = [
        f"class:   {failure.kind}",
        f"found:   {failure.count} time(s), first in: {failure.where}",
        f"detail:  {failure.detail}",
        f"command: {command}",
        "         (the files are as before the run: run it twice to see the second run too)",
        "",
        "input:",
        shown if len(shown) < 20_000 else shown[:20_000] + " …",
    ]
    if failure.crash:
        report += ["", "traceback:", failure.crash]
    (folder / "README.txt").write_text("\n".join(report) + "\n", encoding="utf-8")


def writes_main(options: argparse.Namespace) -> int:
    import os

    from tests.write_strategies import CASES

    os.environ.setdefault("GUARDS_NO_CACHE", "1")  # as in the tests: every run computed
    campaign, refused = Campaign(), Counter[tuple[str, str]]()
    started = time.monotonic()
    slot = options.minutes * 60 / (len(CASES) + 1) if options.minutes else None
    for index, kind in enumerate(CASES):
        count = options.examples // len(CASES) + (index < options.examples % len(CASES))
        deadline = started + slot * (index + 1) if slot else float("inf")
        print(f"... {count} {kind} examples", file=sys.stderr, flush=True)
        run_writes(campaign, kind, count, options.seed, deadline, refused)
    print(f"... {options.races} rounds of races", file=sys.stderr, flush=True)
    run_races(campaign, options.races, started + slot * (len(CASES) + 1) if slot else float("inf"))
    generated = time.monotonic() - started

    out = options.out or Path(tempfile.gettempdir()) / f"guards-write-fuzz-seed{options.seed}"
    if out.exists():
        shutil.rmtree(out)
    ordered = sorted(campaign.failures.values(), key=lambda f: (f.where, f.kind))
    for index, failure in enumerate(ordered, 1):
        if not options.no_reduce:
            print(f"... shrinking {failure.kind}", file=sys.stderr, flush=True)
            shrink_write(failure)
        save_write(failure, out / f"{index:02d}-{slug(failure.kind)}")
    elapsed = time.monotonic() - started

    total = sum(campaign.runs.values())
    print(
        f"guards write campaign: seed {options.seed}, {total:,} runs in {generated:.0f} s "
        f"(+{elapsed - generated:.0f} s shrinking), reproducers in {out}/"
    )
    print()
    print(f"{'command':<12} {'examples':>9} {'refused':>8} {'failing':>8}")
    for where in sorted(campaign.runs):
        declined = sum(n for (command, _), n in refused.items() if command == where)
        print(
            f"{where:<12} {campaign.runs[where]:>9,} {declined:>8,} {campaign.failing_runs[where]:>8,}"
        )
    failing = sum(campaign.failing_runs.values())
    print(f"{'total':<12} {total:>9,} {sum(refused.values()):>8,} {failing:>8,}")
    print()
    print("refused (exit 2, one error line, nothing written), the most common per command:")
    for where in sorted(campaign.runs):
        top = sorted(((n, why) for (c, why), n in refused.items() if c == where), reverse=True)
        for n, why in top[:3]:
            print(f"  {where:<10} {n:>6,}  {why}")
    print()
    if not ordered:
        print("no failures")
        return 0
    print(f"{'#':>2}  {'class':<68} {'count':>6}  first found in")
    for index, failure in enumerate(ordered, 1):
        print(f"{index:>2}  {failure.kind[:68]:<68} {failure.count:>6}  {failure.where}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
