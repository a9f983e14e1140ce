"""What any ``guards`` run must satisfy, however bad its input, and the runners that check it.

The contract: bad input gets one line on stderr, ``guards: error: FILE:LINE: ...``, exit 2, the
rest of the estate still checked, nothing written; never a traceback (exit 3), never a hang,
never a write by ``guards check``. Each broken property is a :class:`Violation` whose ``kind``
names its class (exception type and innermost ``guards/`` frame for a crash), so a campaign can
keep one reproducer per class.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fuzz_strategies import ROOT, EstateCase

GUARDS = ROOT / "guards"
ERROR_PREFIX = "guards: error: "
LINE_MAX = 1000  # characters in one line of stderr (an error quotes at most a bounded excerpt)
# A stdout line holds a path, a position, a rule and a message (cut at 1,000). Text output cuts
# the path at 300; JSON keeps it whole, and a path that names a file is under PATH_MAX (4,096
# bytes; a longer one is refused and cut): anything past this is output nobody bounded.
STDOUT_LINE_MAX = 4096 + 100
BREAKS = re.compile(r"\r\n|[\n\r\x85\u2028\u2029]")
FINDING_LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): [A-Z]\d{3} ")
ERROR_PLACE = re.compile(r"^guards: error: (?P<path>[^:\n]+?):(?P<line>\d+)(?::(?P<column>\d+))?: ")
ERROR_FILE = re.compile(r"^guards: error: (?P<path>[^:\n]+): (?P<message>.*)")
# Errors about a file as a whole (or about an argument), which have no line to name.
NOT_ABOUT_A_LINE = (
    "no claim with id",
    "--root is not",
    "is a directory",
    "no such file",
    "config file not found",
    "is outside the estate",
    "cannot read",
    "is not a regular file",
    "is larger than",
    "claims registry named by",
)
CRASH_LOG = re.compile(r"details in (\S+?\.log)\)")
FRAME = re.compile(r'File "(?P<file>[^"]+)", line \d+, in (?P<function>\S+)')


@dataclass(frozen=True)
class Violation:
    kind: str  # the class: what de-duplicates failures
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}" if self.detail else self.kind


@dataclass
class Outcome:
    code: int | None  # None: killed after the time limit
    out: str
    err: str
    seconds: float
    crash: str | None = None  # the traceback of an internal error
    extra: dict = field(default_factory=dict)


# --- lines as guards counts them ------------------------------------------------------------


def decoded(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def last_line(text: str) -> int:
    """The highest line a location in ``text`` may name: the line after a final line break
    included (the end of the file)."""
    return len(BREAKS.findall(text)) + 1


def line_total(text: str) -> int:
    """How many lines ``text`` has (a final line break ends the last line; at least 1)."""
    breaks = len(BREAKS.findall(text))
    return max(1, breaks if text.endswith(("\n", "\r", "\x85", "\u2028", "\u2029")) else breaks + 1)


# --- time limits ----------------------------------------------------------------------------


class Hang(BaseException):
    """Raised in the main thread when a run outlives its limit (a BaseException, so the CLI's
    own ``except Exception`` does not turn it into exit 3)."""


@contextlib.contextmanager
def time_limit(seconds: float, cpu: bool = False) -> Iterator[None]:
    """Raise Hang after ``seconds`` of wall clock, or of this process's CPU time (``cpu``: a
    limit a loaded machine cannot trip; a loop that never ends still spends CPU)."""

    def alarm(signum, frame):
        raise Hang(f"still running after {seconds:g} s{' of CPU time' if cpu else ''}")

    timer, signum = (
        (signal.ITIMER_PROF, signal.SIGPROF) if cpu else (signal.ITIMER_REAL, signal.SIGALRM)
    )
    previous = signal.signal(signum, alarm)
    signal.setitimer(timer, seconds)
    try:
        yield
    finally:
        signal.setitimer(timer, 0)
        signal.signal(signum, previous)


# --- crashes --------------------------------------------------------------------------------


def innermost_guards_frame(frames: list[tuple[str, str]]) -> str:
    """``guards/<file>:<function>`` of the last frame inside the package (or ``?``)."""
    for filename, function in reversed(frames):
        path = Path(filename).resolve()
        if path.is_relative_to(GUARDS):
            return f"guards/{path.relative_to(GUARDS).as_posix()}:{function}"
    return "?"


def crash_kind(exc: BaseException) -> str:
    frames = [(f.filename, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    return f"{type(exc).__name__} @ {innermost_guards_frame(frames)}"


def crash_kind_from_log(text: str) -> str:
    last = text.rsplit("Traceback (most recent call last):", 1)[-1]
    frames = [(m["file"], m["function"]) for m in FRAME.finditer(last)]
    tail = [line for line in last.splitlines() if line and not line.startswith(" ")]
    exc_type = tail[-1].split(":", 1)[0].rsplit(".", 1)[-1] if tail else "?"
    return f"{exc_type} @ {innermost_guards_frame(frames)}"


def _collect_crash_log(err: str) -> str | None:
    found = CRASH_LOG.search(err)
    if not found:
        return None
    path = Path(found.group(1))
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        path.unlink()
    except OSError:
        return None
    return text


# --- running the CLI ------------------------------------------------------------------------


def write_estate(case: EstateCase, root: Path) -> None:
    for name, data in case.files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def run_in_process(args: tuple[str, ...], cwd: Path, limit: float, cpu: bool = False) -> Outcome:
    """The console entry point in this process, as a user would run it from ``cwd``; stopped
    after ``limit`` seconds (of CPU time with ``cpu``)."""
    from guards.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv, code = sys.argv, 0
    sys.argv = ["guards", *args]
    start = time.perf_counter()
    try:
        with (
            time_limit(limit, cpu),
            contextlib.chdir(cwd),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except Hang:
        code = None
    finally:
        sys.argv = argv
    seconds = time.perf_counter() - start
    text = err.getvalue()
    return Outcome(
        code, out.getvalue(), text, seconds, _collect_crash_log(text) if code == 3 else None
    )


def forked(work: Callable[[], Any]) -> Callable[[], Any]:
    """Start ``work()`` in a forked copy of this process and return the call that waits for it
    and gives what it returned (pickled through a pipe). The copy is a process of its own, as a
    second ``guards`` is (its own locks, descriptors and memory), without the interpreter's
    start-up and imports (0.15 s of CPU time a run); it leaves by ``os._exit``, so none of this
    process's exit handlers run twice."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: whatever happens, report it and leave
        try:
            os.close(read)
            try:
                result: tuple[bool, Any] = (True, work())
            except BaseException:  # sent back, to fail the test that started it
                result = (False, traceback.format_exc())
            with os.fdopen(write, "wb") as sent:
                pickle.dump(result, sent)
        finally:
            os._exit(0)
    os.close(write)

    def wait() -> Any:
        with os.fdopen(read, "rb") as received:
            data = received.read()
        _, status = os.waitpid(pid, 0)
        assert data, f"the forked process sent nothing back (wait status {status})"
        done, result = pickle.loads(data)
        assert done, f"the forked process failed:\n{result}"
        return result

    return wait


def best_time(work: Callable[[], object], repeat: int, enough: float = 0.0) -> float:
    """The CPU time (``time.process_time``: another worker's load does not count) of the
    fastest of ``repeat`` calls of ``work``, or of the first under ``enough`` seconds: the
    fastest can only be faster, so a check against ``enough`` gets the same answer."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
        if best < enough:
            break
    return best


def run_subprocess(args: tuple[str, ...], cwd: Path, limit: float) -> Outcome:
    """``guards`` as its own process (start-up included), killed after ``limit`` seconds."""
    command = [str(ROOT / ".venv" / "bin" / "guards"), *args]
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            timeout=limit,
            env={**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "100"},
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        out = (expired.stdout or b"").decode("utf-8", "replace")
        err = (expired.stderr or b"").decode("utf-8", "replace")
        return Outcome(None, out, err, time.perf_counter() - start)
    seconds = time.perf_counter() - start
    out = done.stdout.decode("utf-8", "replace")
    err = done.stderr.decode("utf-8", "replace")
    return Outcome(
        done.returncode,
        out,
        err,
        seconds,
        _collect_crash_log(err) if done.returncode == 3 else None,
    )


def budget(case: EstateCase) -> float:
    """Seconds a run over ``case`` may take: 1.5 s, plus 1 s per 10,000 characters of input (a
    3,000-character estate: 1.8 s; the repository's own 60 KB estate checks in 0.2 s)."""
    return 1.5 + case.size() / 10_000


def check_estate(
    case: EstateCase, *, subprocess_run: bool = False, limit: float | None = None
) -> tuple[Outcome, list[Violation]]:
    """Write ``case`` to a fresh folder, run ``guards`` in it and check every property."""
    with tempfile.TemporaryDirectory(prefix="guards-fuzz-") as folder:
        root = Path(folder)
        write_estate(case, root)
        before = tree_digest(root)
        allowed = budget(case) + (1.5 if subprocess_run else 0.0)
        hard = limit if limit is not None else max(10.0, 4 * allowed)
        runner = run_subprocess if subprocess_run else run_in_process
        outcome = runner(case.args, root, hard)
        after = tree_digest(root)
    found = estate_violations(case, outcome, before, after, allowed)
    return outcome, found


def estate_violations(
    case: EstateCase,
    outcome: Outcome,
    before: dict[str, str],
    after: dict[str, str],
    allowed: float,
) -> list[Violation]:
    found: list[Violation] = []
    texts = {name: decoded(data) for name, data in case.files.items()}
    if outcome.code is None:
        return [Violation("hang", f"killed after {outcome.seconds:.1f} s")]
    if outcome.code == 3:
        kind = crash_kind_from_log(outcome.crash) if outcome.crash else "? (no crash log)"
        found.append(Violation(f"exit 3: {kind}", _first_line(outcome.err)))
    elif outcome.code not in (0, 1, 2):
        found.append(Violation(f"exit {outcome.code}", _first_line(outcome.err)))
    if outcome.seconds > allowed:
        found.append(
            Violation(
                "slow", f"{outcome.seconds:.2f} s > {allowed:.2f} s for {case.size():,} bytes"
            )
        )
    if before != after:
        changed = sorted(set(before.items()) ^ set(after.items()))
        found.append(Violation("wrote into the estate", ", ".join(sorted({c[0] for c in changed}))))

    verbose = "--verbose" in case.args
    err_lines = outcome.err.splitlines()
    if outcome.code == 2 and not any(line.startswith(ERROR_PREFIX) for line in err_lines):
        found.append(Violation("exit 2 without an error line", _first_line(outcome.err)))
    if (
        outcome.code in (0, 1)
        and not verbose
        and any(line.startswith(ERROR_PREFIX) for line in err_lines)
    ):
        found.append(Violation("error reported but exit 0/1", _first_line(outcome.err)))
    if outcome.code in (0, 1, 2):
        prefix = "guards: " if verbose else ERROR_PREFIX
        for line in err_lines:
            if not line.startswith(prefix):
                found.append(
                    Violation(f"stderr line without the error prefix ({stem(line)})", line[:200])
                )
                break
        for line in err_lines:
            if len(line) > LINE_MAX:
                found.append(
                    Violation("stderr line too long", f"{len(line):,} characters: {line[:120]}")
                )
                break
        found += _error_places(err_lines, texts)
    for line in outcome.out.splitlines():
        if len(line) > STDOUT_LINE_MAX:
            key = re.match(r'\s*"(\w+)":|[^:\s]+:\d+:\d+: ([A-Z]\d{3})', line)
            what = (key.group(1) or key.group(2)) if key else stem(line, 2)
            found.append(
                Violation(
                    f"stdout line too long ({what})", f"{len(line):,} characters: {line[:120]}"
                )
            )
            break
    if outcome.code in (0, 1, 2):
        if "--format" in case.args and case.args[case.args.index("--format") + 1] == "json":
            found += _json_violations(outcome, texts)
        elif case.args[:1] == ("check",):
            found += _text_violations(outcome, texts)
    return found


class _Totals(dict):
    """Line totals of the estate's files, each counted once."""

    def __init__(self, texts: dict[str, str]) -> None:
        super().__init__()
        self.texts = texts

    def __missing__(self, path: str) -> int:
        self[path] = line_total(self.texts[path])
        return self[path]


def stem(message: str, words: int = 4) -> str:
    """The first words of a message, numbers and quoted text blanked: one name for one cause."""
    message = re.sub(r"'[^']*'|`[^`]*`|\"[^\"]*\"", "…", message)
    message = re.sub(r"\d+", "N", message)
    return " ".join(message.split()[:words])


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else ""


def _error_places(err_lines: list[str], texts: dict[str, str]) -> list[Violation]:
    found = []
    for line in err_lines:
        bare = ERROR_FILE.match(line)
        if (
            bare
            and bare["path"] in texts
            and texts[bare["path"]].strip()
            and not bare["message"].startswith(NOT_ABOUT_A_LINE)
        ):
            found.append(
                Violation(f"error about a file names no line ({stem(bare['message'])})", line[:160])
            )
        place = ERROR_PLACE.match(line)
        if place and place["path"] in texts:
            text = texts[place["path"]]
            if not 1 <= int(place["line"]) <= last_line(text):
                found.append(
                    Violation(
                        f"error line out of range ({stem(line[len(place.group(0)) :])})",
                        f"{line[:160]} (file has {last_line(text)})",
                    )
                )
            if place["column"] is not None and int(place["column"]) < 1:
                found.append(Violation("error column < 1", line[:160]))
    return found


def _json_violations(outcome: Outcome, texts: dict[str, str]) -> list[Violation]:
    if not outcome.out.strip():
        if outcome.code in (0, 1):
            return [Violation("no JSON on stdout", f"exit {outcome.code}")]
        return []  # the run stopped at a config or registry error: stderr says why
    try:
        document = json.loads(outcome.out)
    except ValueError as exc:
        return [Violation("stdout is not JSON", str(exc)[:200])]
    if not isinstance(document, dict) or "findings" not in document:
        return []  # a claims subcommand prints no findings document
    found = []
    totals = _Totals(texts)
    for finding in document["findings"]:
        text = texts.get(finding["path"])
        where = f"{finding['path']}:{finding['line']}:{finding['column']} {finding['rule']}"
        if text is None:
            found.append(
                Violation(f"finding names a file outside the estate ({finding['rule']})", where)
            )
            continue
        total = totals[finding["path"]]
        if not 1 <= finding["line"] <= total:
            found.append(
                Violation(
                    f"finding line out of range ({finding['rule']})",
                    f"{where} (file has {total} lines)",
                )
            )
        if not finding["line"] <= finding["end_line"] <= total:
            found.append(
                Violation(
                    "finding end_line out of range",
                    f"{where}-{finding['end_line']} (file has {total})",
                )
            )
        if finding["column"] < 1:
            found.append(Violation(f"finding column < 1 ({finding['rule']})", where))
    for error in document["errors"]:
        text = texts.get(error["path"] or "")
        if text is None or error["line"] is None:
            continue
        if not 1 <= error["line"] <= last_line(text):
            found.append(
                Violation(
                    f"error line out of range ({stem(error['message'])})",
                    f"{error['path']}:{error['line']}: {error['message'][:120]}",
                )
            )
        if error["column"] is not None and error["column"] < 1:
            found.append(
                Violation("error column < 1", f"{error['path']}:{error['line']}:{error['column']}")
            )
    return found


def _text_violations(outcome: Outcome, texts: dict[str, str]) -> list[Violation]:
    found = []
    totals = _Totals(texts)
    lines = outcome.out.splitlines()
    if outcome.code in (0, 1) and not (lines and lines[-1].startswith("guard suite: ")):
        found.append(Violation("text output has no suite total", (lines or [""])[-1][:200]))
    for line in lines:
        finding = FINDING_LINE.match(line)
        if finding is None or finding["path"] not in texts:
            continue
        total = totals[finding["path"]]
        if not 1 <= int(finding["line"]) <= total:
            found.append(
                Violation(
                    f"finding line out of range ({line.split(': ', 1)[1][:4]})",
                    f"{line[:160]} (file has {total} lines)",
                )
            )
        if int(finding["column"]) < 1:
            found.append(
                Violation(f"finding column < 1 ({line.split(': ', 1)[1][:4]})", line[:160])
            )
    return found


# --- the parsers, called directly -----------------------------------------------------------


def parse_directly(kind: str, text: str, env: dict[str, str] | None = None, limit: float = 10.0):
    """Call the parser for ``kind`` on ``text``: the result, or the :class:`GuardsError`."""
    from guards.errors import GuardsError

    with time_limit(limit):
        try:
            if kind == "compose":
                from guards.sources.compose.compose import parse_compose

                return parse_compose(text, "fuzz.yml", env or {})
            if kind == "note":
                from guards.sources.notes.notes import parse_note

                return parse_note(text, "fuzz.md")
            if kind == "registry":
                from guards.sources import registry

                return registry.parse(text, "claims.yaml")
            if kind == "env":
                from guards.sources.envfile import load_env_file

                with tempfile.TemporaryDirectory(prefix="guards-fuzz-") as folder:
                    path = Path(folder) / "fuzz.env"
                    path.write_bytes(text.encode("utf-8", "surrogatepass"))
                    return load_env_file(path, "fuzz.env")
            if kind == "config":
                from guards.rules import all_rules
                from guards.rules.options import load_options
                from guards.sources.configfile import load_config

                with tempfile.TemporaryDirectory(prefix="guards-fuzz-") as folder:
                    path = Path(folder) / "guards.toml"
                    path.write_bytes(text.encode("utf-8", "surrogatepass"))
                    config = load_config(Path(folder))
                    return load_options(config, all_rules())
        except GuardsError as error:
            return error
    raise ValueError(f"unknown kind {kind!r}")


def parser_violations(kind: str, text: str, env: dict[str, str] | None = None) -> list[Violation]:
    """A parser either returns or raises a one-line :class:`GuardsError` whose line lies within
    its input; anything else is a violation named by exception type and innermost frame."""
    from guards.errors import GuardsError

    start = time.perf_counter()
    allowed = 1.0 + len(text) / 10_000  # 3,000 characters: 1.3 s
    try:
        result = parse_directly(kind, text, env, limit=max(10.0, 4 * allowed))
    except Hang:
        return [Violation(f"{kind} parser: hang", f"{len(text):,} characters")]
    except Exception as exc:  # the property under test: nothing else escapes
        return [Violation(f"{kind} parser: {crash_kind(exc)}", f"{exc!r}"[:300])]
    seconds = time.perf_counter() - start
    found = []
    if seconds > allowed:
        found.append(
            Violation(f"{kind} parser: slow", f"{seconds:.2f} s for {len(text):,} characters")
        )
    if isinstance(result, GuardsError):
        message = str(result)
        if "\n" in message or "\r" in message:
            found.append(
                Violation(
                    f"{kind} parser: multi-line error ({stem(result.message)})", message[:200]
                )
            )
        if len(message) > LINE_MAX:
            found.append(
                Violation(f"{kind} parser: error too long", f"{len(message):,} characters")
            )
        if result.line is not None and not 1 <= result.line <= last_line(text):
            found.append(
                Violation(
                    f"{kind} parser: error line out of range ({stem(result.message)})",
                    f"line {result.line}, input has {last_line(text)}: {message[:120]}",
                )
            )
        if result.column is not None and result.column < 1:
            found.append(Violation(f"{kind} parser: error column < 1", message[:160]))
        return found
    total = last_line(text)
    if kind == "compose":
        places = [*result.comments, *result.services]
        places += [k for s in result.services for k in s.knobs.values()]
        for place in places:
            if not 1 <= place.line <= total:
                found.append(Violation("compose parser: location out of range", f"{place!r}"[:200]))
                break
    elif kind == "note":
        for citation in result.citations:
            if not 1 <= citation.line <= total or citation.column < 1:
                found.append(Violation("note parser: citation out of range", f"{citation!r}"[:200]))
                break
    return found
