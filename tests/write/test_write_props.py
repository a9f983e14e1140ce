"""Properties of the commands that write (``fix``, ``regen``, ``claims add``, ``claims
retract``, ``claims find --confirm/--dismiss``, ``claims evidence add``, ``baseline``), on the
generated registries, composes and estates of ``tests/write_strategies.py``:

- a command changes only the bytes it means to: outside the intended span (the new claim's
  lines, the edited claim's mapping, a stale copy's lines, the regions) the file is
  byte-identical, every comment survives, the BOM and the line endings stay;
- the YAML data, read by libyaml (``yaml.CSafeLoader``), PyYAML's own ``yaml.SafeLoader`` and
  ruamel.yaml (safe, pure Python), is the old data with the intended change, computed here
  from the command's arguments, and the three readers agree;
- nothing is written outside the root: each run happens in a folder holding ``root/``,
  ``outside/`` and ``inputs/``, every path, byte and mode of which is compared after it; links
  committed in the estate that lead into ``outside/`` (the registry, a compose, the templates
  folder, the baseline) are refused, never written or read through; no temp file is left;
- a second run changes nothing;
- two concurrent runs never lose an update: both changes land, or the one that lost exits
  non-zero with one error line and its change is absent;
- exit 0, 1 or 2 only, every error one ``guards: error: ...`` line; a plain edit (values and
  layouts with nothing odd about them) is never refused.

Runs are in-process (``tests/fuzz_props.run_in_process``), each racer in a process of its own
(``tests/fuzz_props.forked``).
Derandomized and without shrinking, as ``tests/test_fuzz.py``: a failure prints the case and
every property it broke. ``tools/fuzz_campaign.py --writes`` runs the same properties at
length and keeps a shrunk reproducer per class.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from ruamel.yaml import YAML

from guards.sources.edit import unify_breaks

from ..examples import examples
from ..fuzz_props import (
    ERROR_PREFIX,
    LINE_MAX,
    Outcome,
    Violation,
    crash_kind_from_log,
    forked,
    run_in_process,
    stem,
)
from ..write_strategies import (
    CASES,
    DATE,
    HAND_LINE,
    SCRAPES,
    STALE_COPY,
    Copy,
    WriteCase,
    registry_for_races,
)

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 30.0  # seconds one in-process run may take before it counts as a hang
WRITE = settings(
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=list(HealthCheck),
    print_blob=False,
)
# Commands that stop at their first error: exit 2 is exactly one error line.
ONE_ERROR = ("add", "retract", "confirm", "dismiss", "evidence")
# Commands that write one file: exit 2 means nothing was written.
ONE_FILE = (*ONE_ERROR, "baseline")
REGISTRY = "root/claims.yaml"


# --- the world a run happens in -------------------------------------------------------------


def lay_down(case: WriteCase, top: Path) -> None:
    """``top/root`` (the estate), ``top/outside`` and ``top/inputs``, and the links."""
    for folder, files in (("root", case.files), ("outside", case.outside), ("inputs", case.inputs)):
        (top / folder).mkdir()
        for name, data in files.items():
            path = top / folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    for name, target in case.links.items():
        path = top / "root" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)


def snapshot(top: Path) -> dict[str, tuple]:
    """Every path under ``top``: a link's target, a folder's mode, a file's mode and bytes."""
    found: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(folder, name)
            shown = os.path.relpath(path, top)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[shown] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[shown] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                found[shown] = ("file", stat.S_IMODE(info.st_mode), Path(path).read_bytes())
    return found


def data_of(files: dict[str, tuple], name: str) -> bytes | None:
    entry = files.get(name)
    return entry[2] if entry and entry[0] == "file" else None


@dataclass
class Ran:
    """One case, run twice: what each run did and the world before, between and after."""

    case: WriteCase
    args: tuple[str, ...]
    first: Outcome
    again: Outcome
    before: dict[str, tuple]
    after: dict[str, tuple]
    last: dict[str, tuple]
    extra: dict[str, Any]


def run_case(case: WriteCase, limit: float = LIMIT) -> tuple[Ran | None, list[Violation]]:
    """Lay the case down in a fresh folder, run its command twice, check every property.
    ``None`` when the case cannot be run as drawn (``find`` with no ranked passage)."""
    with tempfile.TemporaryDirectory(prefix="guards-write-") as folder:
        top = Path(folder)
        lay_down(case, top)
        root = top / "root"
        extra = PREPARE.get(case.command, _nothing)(case, root, limit)
        if extra is None:
            return None, []
        args = tuple(extra.get("passage", a) if a == "{PASSAGE}" else a for a in case.args)
        before = snapshot(top)
        first = run_in_process(args, root, limit)
        after = snapshot(top)
        again = run_in_process(args, root, limit)
        last = snapshot(top)
        ran = Ran(case, args, first, again, before, after, last, extra)
        if case.command == "baseline" and first.code == 0:
            extra["replay"] = run_in_process(
                ("check", "--baseline", case.expect["target"], *_config_args(args)), root, limit
            )
    return ran, violations(ran)


def _nothing(case: WriteCase, root: Path, limit: float) -> dict:
    return {}


def _config_args(args: tuple[str, ...]) -> tuple[str, ...]:
    at = args.index("--config") if "--config" in args else len(args)
    return args[at : at + 2]


def _ranked(case: WriteCase, root: Path, limit: float) -> dict | None:
    """`find` ranks the passages first; the case confirms or dismisses one of them."""
    listed = run_in_process(("claims", "find", case.expect["id"], "--limit", "100"), root, limit)
    places = re.findall(r"^ *[\d.]+ +\S+ +(\S+):(\d+)(?:-(\d+))?$", listed.out, re.MULTILINE)
    if not places:
        return None if listed.code == 0 else {"passage": "nowhere:1", "lines": None}
    path, line, end = places[case.expect["pick"] % len(places)]
    return {"passage": f"{path}:{line}", "lines": (path, int(line), int(end or line))}


def _findings(case: WriteCase, root: Path, limit: float) -> dict:
    """What `check` reports on the estate, for the baseline to be compared with."""
    if case.links:
        return {}
    found = run_in_process(("check", "--format", "json", *_config_args(case.args)), root, limit)
    try:
        document = json.loads(found.out)
    except ValueError:
        return {"check": found.code}
    return {
        "check": found.code,
        "fingerprints": sorted(f["fingerprint"] for f in document["findings"]),
    }


PREPARE: dict[str, Callable[[WriteCase, Path, float], dict | None]] = {
    "confirm": _ranked,
    "dismiss": _ranked,
    "baseline": _findings,
}


# --- the three readers ----------------------------------------------------------------------

RUAMEL = YAML(typ="safe", pure=True)
READERS: dict[str, Callable[[bytes], Any]] = {
    "libyaml": lambda data: yaml.load(data, Loader=yaml.CSafeLoader),
    "pyyaml": lambda data: yaml.load(data, Loader=yaml.SafeLoader),
    "ruamel": RUAMEL.load,
}


def normal(value: Any) -> Any:
    """Dates as ISO text (one reader's date is another's string), NaN comparable."""
    if isinstance(value, dict):
        return {normal(k): normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, float) and value != value:
        return "nan"
    return value


def read_all(data: bytes) -> dict[str, Any]:
    """What each reader loads from ``data`` (a refusal as ``<ErrorName>``), a copy the caller
    may change: the checks of one case ask for the same bytes up to five times, and the pure
    Python readers are most of what they cost, so each content is read once."""
    return copy.deepcopy(_read_all(data))


@functools.lru_cache(maxsize=16)
def _read_all(data: bytes) -> dict[str, Any]:
    loaded = {}
    for name, load in READERS.items():
        try:
            loaded[name] = normal(load(data))
        except Exception as exc:  # a reader's refusal is one of the answers compared
            loaded[name] = f"<{type(exc).__name__}>"
    return loaded


def agreed(data: bytes) -> tuple[bool, Any]:
    """Whether the three readers read ``data`` alike (and without an error), and what."""
    loaded = read_all(data)
    values = list(loaded.values())
    unread = any(isinstance(v, str) and v.startswith("<") for v in values)
    return (not unread and all(v == values[0] for v in values)), values[0]


def difference(old: Any, new: Any, where: str = "") -> str:
    """Where two values first differ, for a message."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            if old.get(key, "<absent>") != new.get(key, "<absent>"):
                return difference(
                    old.get(key, "<absent>"), new.get(key, "<absent>"), f"{where}.{key}"
                )
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for n, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                return difference(a, b, f"{where}[{n}]")
    return f"{where or '.'}: {old!r:.120} -> {new!r:.120}"


def readers_violations(what: str, data: bytes) -> list[Violation]:
    loaded = read_all(data)
    names = list(loaded)
    for name in names[1:]:
        if loaded[name] != loaded[names[0]]:
            return [
                Violation(
                    f"{what}: the YAML readers disagree on the written file ({names[0]} / {name})",
                    difference(loaded[names[0]], loaded[name]),
                )
            ]
    if isinstance(loaded[names[0]], str) and loaded[names[0]].startswith("<"):
        return [Violation(f"{what}: the written file is not YAML", loaded[names[0]])]
    return []


# --- what a value is stored as --------------------------------------------------------------


def intended(value: str) -> str:
    """A value as a command stores it: one line without its surrounding whitespace; several
    without the line breaks around them, a blank line empty."""
    body = value.strip("\n")
    if "\n" not in body:
        return value.strip()
    return "\n".join(line if line.strip() else "" for line in body.split("\n"))


def read_as_guards_reads(data: bytes) -> str:
    """A file named on the command line, as guards reads it (every line break a ``\\n``)."""
    return unify_breaks(data.decode("utf-8").removeprefix("\ufeff"))


def loose(value: Any) -> Any:
    """Text compared as :func:`intended` stores it: a command may keep the surrounding
    whitespace of a value and the spaces of a blank line, or not."""
    if isinstance(value, str):
        return intended(value)
    if isinstance(value, dict):
        return {k: loose(v) for k, v in value.items()}
    if isinstance(value, list):
        return [loose(v) for v in value]
    return value


def as_list(value: Any) -> list:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


# --- bytes ----------------------------------------------------------------------------------


def changed_window(old: bytes, new: bytes) -> tuple[int, int, int]:
    """(start, old end, new end): the smallest span outside which the two are equal."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    tail = 0
    while tail < limit - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return start, len(old) - tail, len(new) - tail


def kept_around(old: bytes, new: bytes, start: int, end: int) -> bool:
    """``new`` is ``old`` with at most ``old[start:end]`` replaced."""
    tail = len(old) - end
    return (
        new[:start] == old[:start]
        and new[len(new) - tail :] == old[end:]
        and len(new) >= start + tail
    )


def layout_violations(what: str, old: bytes, new: bytes) -> list[Violation]:
    found = []
    if old.startswith(b"\xef\xbb\xbf") != new.startswith(b"\xef\xbb\xbf"):
        found.append(Violation(f"{what}: the BOM was not kept"))
    crlf, bare = old.count(b"\r\n"), old.count(b"\n") - old.count(b"\r\n")
    new_crlf, new_bare = new.count(b"\r\n"), new.count(b"\n") - new.count(b"\r\n")
    if crlf and not bare and new_bare:
        found.append(Violation(f"{what}: LF lines written into a CRLF file", f"{new_bare} LF"))
    if bare and not crlf and new_crlf:
        found.append(Violation(f"{what}: CRLF lines written into an LF file", f"{new_crlf} CRLF"))
    return found


def marks_violations(what: str, marks: int, old: bytes, new: bytes) -> list[Violation]:
    """Every ``note N:`` comment of the old file is in the new one, as often."""
    lost = [
        n for n in range(1, marks + 1) if new.count(b"note %d:" % n) < old.count(b"note %d:" % n)
    ]
    if not lost:
        return []
    sample = re.search(rb"[^\n]*note %d:[^\n]*" % lost[0], old)
    shown = sample.group(0).decode("utf-8", "replace").strip() if sample else ""
    return [Violation(f"{what}: a comment was lost", f"{len(lost)} lost, first: {shown!r:.160}")]


def claims_node(text: str) -> yaml.SequenceNode | None:
    """The ``claims:`` list of a registry, as PyYAML's own parser composes it."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    found = next((v for k, v in root.value if k.value == "claims"), None)
    return found if isinstance(found, yaml.SequenceNode) else None


def claim_id_of(item: yaml.Node) -> str | None:
    if not isinstance(item, yaml.MappingNode):
        return None
    ids = [v.value for k, v in item.value if k.value == "id" and isinstance(v, yaml.ScalarNode)]
    return ids[0] if len(ids) == 1 else None


def claim_span(old: bytes, claim_id: str) -> tuple[int, int] | None:
    """The bytes of the claim's list item: from its line's start to the next item's (or the
    end of the list)."""
    bom = 3 if old.startswith(b"\xef\xbb\xbf") else 0
    text = old[bom:].decode("utf-8")
    claims = claims_node(text)
    if claims is None:
        return None
    items = claims.value
    for n, item in enumerate(items):
        if claim_id_of(item) != claim_id:
            continue
        if claims.flow_style:
            start, end = claims.start_mark.index, claims.end_mark.index
        else:
            start = text.rfind("\n", 0, item.start_mark.index) + 1
            after = items[n + 1].start_mark.index if n + 1 < len(items) else claims.end_mark.index
            end = text.rfind("\n", 0, after) + 1 if n + 1 < len(items) else after
        return bom + len(text[:start].encode()), bom + len(text[:end].encode())
    return None


def claim_is_block(data: bytes, claim_id: str) -> bool:
    """The claims list and the claim's mapping are block style (what the edits splice into);
    for a new claim (``""``), the list."""
    try:
        claims = claims_node(data.decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError:
        return False
    if claims is None or claims.flow_style:
        return False
    item = next((i for i in claims.value if claim_id_of(i) == claim_id), None)
    if item is None:
        return claim_id == ""
    return not item.flow_style


def registry_valid(data: bytes) -> bool:
    from guards.errors import GuardsError
    from guards.sources import registry

    try:
        registry.parse(unify_breaks(data.decode("utf-8").removeprefix("\ufeff")), "claims.yaml")
    except (GuardsError, UnicodeDecodeError):
        return False
    return True


# --- the properties -------------------------------------------------------------------------


def violations(ran: Ran) -> list[Violation]:
    case = ran.case
    found = contract(case.command, ran.first) + contract(case.command, ran.again, "second run")
    found += world(ran)
    found += idempotence(ran)
    found += links_refused(ran)
    if not case.links or case.command == "baseline":
        found += COMMAND_CHECKS[case.command](ran)
    return found


def contract(command: str, outcome: Outcome, label: str = "") -> list[Violation]:
    """Exit 0/1/2, each stderr line one bounded ``guards: error:`` line, exit 2 with one."""
    at = f"{command}{' (' + label + ')' if label else ''}"
    if outcome.code is None:
        return [Violation(f"{at}: hang", f"killed after {outcome.seconds:.1f} s")]
    if outcome.code == 3:
        kind = crash_kind_from_log(outcome.crash) if outcome.crash else "? (no crash log)"
        return [Violation(f"{at}: exit 3: {kind}", outcome.err.strip()[:300])]
    if outcome.code not in (0, 1, 2):
        return [Violation(f"{at}: exit {outcome.code}", outcome.err.strip()[:300])]
    lines = outcome.err.splitlines()
    found = []
    for line in lines:
        if not line.startswith(ERROR_PREFIX):
            found.append(Violation(f"{at}: stderr line without the error prefix", line[:200]))
        elif len(line) > LINE_MAX:
            found.append(Violation(f"{at}: error line too long", f"{len(line):,} characters"))
    if outcome.code == 2 and not lines:
        found.append(Violation(f"{at}: exit 2 without an error line"))
    if outcome.code == 2 and command in ONE_ERROR and len(lines) > 1:
        found.append(Violation(f"{at}: exit 2 with {len(lines)} error lines", outcome.err[:300]))
    if outcome.code in (0, 1) and lines and command != "retract":
        found.append(Violation(f"{at}: an error reported with exit {outcome.code}", lines[0][:200]))
    return found


def allowed_changes(ran: Ran) -> set[str]:
    """The paths the command means to write (created or changed)."""
    case = ran.case
    if "--check" in ran.args or "--diff" in ran.args:  # they print what would change
        return set()
    if case.command == "fix":  # its stale copies and citations are in composes and notes
        return {f"root/{n}" for n in case.files if n.startswith(("composes/", "learnings/"))}
    if case.command == "regen":
        return {f"root/{name}" for name in case.files if name.startswith("composes/")}
    if case.command == "baseline":
        return {f"root/{case.expect['target']}"} if not case.links else set()
    return {REGISTRY} if not case.links else set()


def world(ran: Ran) -> list[Violation]:
    """Outside the root nothing changed; inside, only the files meant, modes kept, nothing
    left behind; a run that stopped with exit 2 (a one-error command) changed nothing."""
    found = []
    allowed = allowed_changes(ran)
    if ran.case.command in ONE_FILE and ran.first.code == 2:
        allowed = set()
    for name in sorted(set(ran.before) | set(ran.after)):
        old, new = ran.before.get(name), ran.after.get(name)
        if old == new:
            continue
        if name.startswith("outside"):
            found.append(
                Violation("wrote outside the root", f"{name}: {_what(old)} -> {_what(new)}")
            )
        elif name.startswith("inputs"):
            found.append(Violation("changed a file named on the command line", name))
        elif name not in allowed:
            kind = "left a file in the estate" if old is None else "changed a file it does not edit"
            if old is None:
                name = re.sub(r"\.[^/]*\.\w{8}$", ".*", name)  # a temp file's random part
            found.append(Violation(f"{ran.case.command}: {kind}", name))
        elif old is not None and new is not None and old[:2] != new[:2]:
            found.append(Violation(f"{ran.case.command}: the file's mode or kind changed", name))
        elif new is None:
            found.append(Violation(f"{ran.case.command}: removed a file", name))
    return found


def _what(entry: tuple | None) -> str:
    if entry is None:
        return "absent"
    if entry[0] == "file":
        return f"file {oct(entry[1])} {len(entry[2])} bytes"
    return f"{entry[0]} {entry[1]}"


AGAIN_EXIT: dict[str, Callable[[WriteCase], tuple[int, ...]]] = {
    "add": lambda case: (2,),  # the id exists now
    "retract": lambda case: (0,) if case.expect["force"] else (2,),  # withdrawn now
    "confirm": lambda case: (0,),  # "already lists that passage"
    "dismiss": lambda case: (0, 2),  # the passage is no longer ranked
    "evidence": lambda case: (0, 2),
}


TWICE = "evidence: a second run added the same entry again"


def idempotence(ran: Ran) -> list[Violation]:
    """The second run changes nothing; after a success it says so (or that it is done)."""
    command = ran.case.command
    found = []
    if ran.last != ran.after:
        changed = sorted(
            n for n in set(ran.after) | set(ran.last) if ran.after.get(n) != ran.last.get(n)
        )
        kind = (
            TWICE if command == "evidence" else f"{command}: a second run changed the files again"
        )
        found.append(Violation(kind, ", ".join(changed)))
    if ran.first.code == 0 and command in AGAIN_EXIT:
        expected = AGAIN_EXIT[command](ran.case)
    elif ran.first.code == 1:  # what was left may be gone with what was replaced
        expected = (0, 1)
    else:
        expected = (ran.first.code,) if ran.first.code is not None else ()
    if ran.again.code not in expected and ran.again.code in (0, 1, 2):
        found.append(
            Violation(
                f"{command}: a second run exits {ran.again.code}, not {' or '.join(map(str, expected))}",
                ran.again.err.strip()[:200],
            )
        )
    return found


def links_refused(ran: Ran) -> list[Violation]:
    """A committed link out of the root is an error (exit 2), not a file to go through."""
    case = ran.case
    if not case.links or ran.first.code != 0:
        return []
    used = sorted(case.links)
    if case.command == "regen" and used == ["templates"] and not _regions(case):
        return []
    return [
        Violation(f"{case.command}: accepted a committed link out of the root", ", ".join(used))
    ]


def _regions(case: WriteCase) -> bool:
    return any(found.names for found in case.expect.get("regions", {}).values())


# --- the registry commands ------------------------------------------------------------------


def registry_change(ran: Ran, expected: Callable[[Any], Any], span: str | None) -> list[Violation]:
    """The registry edit: readers agree on the result, which is ``expected(old data)``; the
    bytes changed only inside the claim ``span`` (or, without one, only inserted); comments,
    the BOM and the line endings kept. A refusal changed nothing (``world``)."""
    case, what = ran.case, ran.case.command
    old, new = data_of(ran.before, REGISTRY), data_of(ran.after, REGISTRY)
    if old is None or new is None:
        return []
    fair, before = agreed(old)
    if ran.first.code != 0:
        plain = case.expect.get("plain") and fair and registry_valid(old)
        if plain and claim_is_block(old, span or ""):
            return [
                Violation(
                    f"{what}: refused a plain edit ({stem(_error(ran.first), 8)})",
                    _error(ran.first),
                )
            ]
        return []
    found = readers_violations(what, new) if fair else []
    found += layout_violations(what, old, new) + marks_violations(what, case.marks, old, new)
    start, old_end, _ = changed_window(old, new)
    if span is None and old_end > start:
        found.append(Violation(f"{what}: the old text is not kept whole around the new claim"))
    elif span is not None:
        where = claim_span(old, span)
        if where is not None and not kept_around(old, new, *where):
            shown = old[start : max(old_end, start + 60)].decode("utf-8", "replace")
            found.append(
                Violation(f"{what}: bytes changed outside the claim's mapping", repr(shown)[:160])
            )
    if fair and not found:
        after = agreed(new)[1]
        want = expected(before)
        if loose(after) != loose(want):
            found.append(
                Violation(
                    f"{what}: the data is not the old data with the change", difference(want, after)
                )
            )
    return found


def _error(outcome: Outcome) -> str:
    """The first error line, without its prefix."""
    if not outcome.err.strip():
        return f"exit {outcome.code}"
    return outcome.err.strip().splitlines()[0].removeprefix(ERROR_PREFIX)[:200]


def _claims(data: Any) -> list[dict]:
    return list(data.get("claims") or []) if isinstance(data, dict) else []


def _with_claim(data: Any, claim_id: str, change: Callable[[dict], dict]) -> Any:
    claims = [change(dict(c)) if c.get("id") == claim_id else c for c in _claims(data)]
    return {**data, "claims": claims}


def check_add(ran: Ran) -> list[Violation]:
    expect = ran.case.expect

    def added(data: Any) -> Any:
        text = read_as_guards_reads(ran.case.inputs["text.txt"])
        entry = {
            "id": expect["id"],
            "title": intended(expect["title"]),
            "status": "active",
            "asserted": DATE,
            "text": intended(text),
        }
        if expect["match"]:
            entry["match"] = [intended(m) for m in expect["match"]]
        return {**data, "claims": [*_claims(data), entry]}

    return registry_change(ran, added, None)


def check_retract(ran: Ran) -> list[Violation]:
    expect = ran.case.expect

    def retracted(claim: dict) -> dict:
        active = claim.get("status") not in ("retracted", "superseded")
        if claim.get("reason") and not claim.get("rationale") and active:
            claim["rationale"] = claim["reason"]
        claim["status"] = "retracted"
        claim["retracted"] = expect["date"]
        claim["reason"] = intended(expect["reason"])
        text = read_as_guards_reads(ran.case.inputs["replacement.txt"])
        claim["replacement"] = intended(text)
        return claim

    return registry_change(
        ran, lambda data: _with_claim(data, expect["id"], retracted), expect["id"]
    )


def check_find(ran: Ran) -> list[Violation]:
    expect, case = ran.case.expect, ran.case
    field = "variants" if case.command == "confirm" else "not_match"
    recorded: list[Any] = []

    def appended(data: Any) -> Any:
        def change(claim: dict) -> dict:
            claim[field] = [*as_list(claim.get(field)), *recorded]
            return claim

        return _with_claim(data, expect["id"], change)

    new = data_of(ran.after, REGISTRY)
    if ran.first.code == 0 and new is not None and agreed(new)[0]:
        claim = next((c for c in _claims(agreed(new)[1]) if c.get("id") == expect["id"]), {})
        recorded[:] = as_list(claim.get(field))[-1:]
    found = registry_change(ran, appended, expect["id"])
    if ran.first.code == 0 and recorded and ran.extra.get("lines"):
        found += _passage_violations(ran, str(recorded[0]))
    return found


def _passage_violations(ran: Ran, recorded: str) -> list[Violation]:
    """The recorded passage is the text at the place given: its words, in order."""
    path, first, last = ran.extra["lines"]
    source = data_of(ran.before, f"root/{path}") or b""
    lines = source.decode("utf-8", "replace").splitlines()[first - 1 : last]
    text, at = "\n".join(lines), 0
    for word in recorded.split():
        at = text.find(word, at)
        if at < 0:
            return [
                Violation(
                    f"{ran.case.command}: the passage recorded is not the one at the place given",
                    word,
                )
            ]
    return []


def check_evidence(ran: Ran) -> list[Violation]:
    from guards.run import evidence
    from guards.write.evidence_edit import summary

    expect, case = ran.case.expect, ran.case

    def entry() -> dict:
        folder = Path(tempfile.mkdtemp(prefix="guards-scrapes-"))
        paths = []
        for shown in expect["scrapes"]:
            (folder / Path(shown).name).write_bytes(case.inputs[Path(shown).name])
            paths.append(folder / Path(shown).name)
        first, last = evidence.load_pair(paths[0], paths[1] if len(paths) > 1 else None)
        found = evidence.figures(last, first, expect["model"])[0]
        for path in paths:
            path.unlink()
        folder.rmdir()
        window = "what changed between the scrapes" if len(paths) == 2 else "totals since start"
        values = {
            "source": f"vLLM /metrics {' -> '.join(expect['scrapes'])} ({window})",
            "measured": summary(found),
            "date": DATE,
            "engine": intended(expect["engine"]),
            "model": found.model or None,
            "figures": found.numbers(),
            "note": intended(expect["note"]) if expect["note"] and expect["note"].strip() else None,
        }
        return {k: v for k, v in values.items() if v not in (None, {})}

    def appended(data: Any) -> Any:
        def change(claim: dict) -> dict:
            claim["evidence"] = [*as_list(claim.get("evidence")), entry()]
            return claim

        return _with_claim(data, expect["id"], change)

    return registry_change(ran, appended, expect["id"])


# --- fix, regen, baseline -------------------------------------------------------------------

OPENING = re.compile(r"^[ \t]*# >>> guards:")
CLOSING = re.compile(r"^[ \t]*# <<< guards:")


def without_regions(lines: list[str]) -> tuple[list[str], list[str]]:
    """The lines outside the regions, and each region's text."""
    kept, regions, inside = [], [], None
    for line in lines:
        if inside is None and OPENING.match(line):
            inside = [line]
        elif inside is not None:
            inside.append(line)
            if CLOSING.match(line):
                regions.append("".join(inside))
                inside = None
        else:
            kept.append(line)
    return kept + (inside or []), regions


def text_lines(data: bytes) -> list[str]:
    return data.decode("utf-8").removeprefix("\ufeff").split("\n")


def check_fix(ran: Ran) -> list[Violation]:
    """Per compose: unchanged, or its whole-line copies (some of them) each replaced by a
    claim region and every other line, a hand-written one inside a copy included, kept."""
    found: list[Violation] = []
    errors = ran.first.err
    if "--diff" in ran.args:
        return found
    for name, copies in ran.case.expect["copies"].items():
        old, new = data_of(ran.before, f"root/{name}"), data_of(ran.after, f"root/{name}")
        if old is None or new is None:
            continue
        if old == new:
            scripted = any(not c.whole and len(c.lines) > 1 for c in copies)
            if any(c.plain for c in copies) and not scripted:
                found.append(_not_done("fix", name, errors, "a plain stale copy"))
            continue
        found += readers_violations("fix", new) if agreed(old)[0] else []
        found += layout_violations("fix", old, new)
        found += marks_violations("fix", ran.case.marks, old, new)
        if agreed(old)[0] and agreed(new)[0] and agreed(old)[1] != agreed(new)[1]:
            found.append(
                Violation("fix: the YAML data changed", difference(agreed(old)[1], agreed(new)[1]))
            )
        found += _copies_replaced(name, text_lines(old), text_lines(new), copies)
    return found


def _not_done(command: str, name: str, err: str, what: str) -> Violation:
    """A compose with nothing odd about it was left as it was: refused, or passed over."""
    error = next((line for line in err.splitlines() if name in line), None)
    if error is None:
        return Violation(f"{command}: left {what} in place", name)
    why = stem(error.removeprefix(ERROR_PREFIX), 8)
    return Violation(f"{command}: refused a plain compose ({why})", error[:200])


def _copies_replaced(name: str, old: list[str], new: list[str], copies: list) -> list[Violation]:
    """The lines outside the new regions are the old lines, in order, less some of the
    copies' lines (each copy may come out as one region or several); each region renders
    the retraction."""
    kept, regions = without_regions(new)
    replaceable = {n for copy in copies if copy.whole for n in copy.lines}
    dropped: list[int] = []
    at = 0
    for line in kept:
        while at < len(old) and old[at] != line:
            dropped.append(at)
            at += 1
        if at == len(old):
            return [
                Violation("fix: lines outside the stale copies changed", f"{name}: {line!r:.120}")
            ]
        at += 1
    dropped += range(at, len(old))
    outside = [old[n] for n in dropped if n not in replaceable]
    if any(HAND_LINE in line for line in outside):
        shown = next(line for line in outside if HAND_LINE in line)
        return [
            Violation(
                "fix: a hand-written line inside a stale copy was dropped", shown.strip()[:120]
            )
        ]
    if outside:
        return [
            Violation("fix: lines outside the stale copies changed", f"{name}: {outside[0]!r:.120}")
        ]
    if dropped and not regions:
        return [Violation("fix: a stale copy removed without a region", name)]
    if not all("RETRACTED" in region for region in regions):
        return [Violation("fix: a region does not render the retraction", name)]
    return []


def _copy_line(line: str) -> bool:
    return any(part.strip() and part.strip() in line for part in STALE_COPY.split("\n"))


REGION_SPAN = re.compile(
    r"^[ \t]*# >>> guards:.*?^[ \t]*# <<< guards:[^\r\n]*", re.MULTILINE | re.DOTALL
)


def check_regen(ran: Ran) -> list[Violation]:
    """Per compose: only the regions changed, the data did not; a plain compose was
    regenerated."""
    found: list[Violation] = []
    expect = ran.case.expect
    if "--check" in ran.args or "--diff" in ran.args:
        return found
    for name, regions in expect["regions"].items():
        old, new = data_of(ran.before, f"root/{name}"), data_of(ran.after, f"root/{name}")
        if old is None or new is None:
            continue
        if old == new:
            odd = "claim odd-title" in regions.names  # its title holds a line separator
            note = (
                any(n.startswith("note") for n in regions.names) and expect["templates"] != "inside"
            )
            refused = (regions.edited and not expect["force"]) or regions.script or odd or note
            if not refused:
                found.append(_not_done("regen", name, ran.first.err, "a stale region"))
            continue
        found += readers_violations("regen", new) if agreed(old)[0] else []
        found += layout_violations("regen", old, new)
        found += marks_violations("regen", ran.case.marks, old, new)
        if agreed(old)[0] and agreed(new)[0] and agreed(old)[1] != agreed(new)[1]:
            found.append(
                Violation(
                    "regen: the YAML data changed", difference(agreed(old)[1], agreed(new)[1])
                )
            )
        before_text, after_text = "\n".join(text_lines(old)), "\n".join(text_lines(new))
        if REGION_SPAN.split(before_text) != REGION_SPAN.split(after_text):
            found.append(Violation("regen: text outside the regions changed", name))
        if any("(checksum: " not in m for m in re.findall(r"# <<< guards:[^\r\n]*", after_text)):
            found.append(Violation("regen: a closing marker without its checksum", name))
    return found


def check_baseline(ran: Ran) -> list[Violation]:
    """The baseline holds the findings `check` reports (by fingerprint), and `check
    --baseline` with it reports none; where `check` reads everything, it is written."""
    case = ran.case
    target = f"root/{case.expect['target']}"
    if case.links:
        return []
    written = data_of(ran.after, target)
    if ran.first.code != 0:
        if ran.extra.get("check") in (0, 1):
            return [
                Violation(
                    f"baseline: refused an estate check reads ({stem(_error(ran.first), 8)})",
                    _error(ran.first),
                )
            ]
        return []
    if written is None:
        return [Violation("baseline: exit 0 and no baseline written", target)]
    try:
        entries = json.loads(written)["entries"]
    except (ValueError, KeyError, TypeError) as exc:
        return [Violation("baseline: the baseline is not JSON with entries", str(exc)[:120])]
    found = []
    if (
        "fingerprints" in ran.extra
        and sorted(e["fingerprint"] for e in entries) != ran.extra["fingerprints"]
    ):
        found.append(Violation("baseline: the entries are not the findings check reports"))
    replay = ran.extra.get("replay")
    if replay is not None and replay.code != 0:
        found.append(
            Violation(f"baseline: check --baseline with it exits {replay.code}", replay.out[-200:])
        )
    return found


COMMAND_CHECKS: dict[str, Callable[[Ran], list[Violation]]] = {
    "add": check_add,
    "retract": check_retract,
    "confirm": check_find,
    "dismiss": check_find,
    "evidence": check_evidence,
    "fix": check_fix,
    "regen": check_regen,
    "baseline": check_baseline,
}


def assert_clean(ran: Ran | None, found: list[Violation]) -> None:
    assert not found, "\n".join(map(str, found)) + (f"\n\n{ran.case.shown()}"[:4000] if ran else "")


# --- the tests ------------------------------------------------------------------------------


@settings(WRITE, max_examples=examples(60))
@given(CASES["add"]())
def test_claims_add_appends_only_the_new_claim(case):
    assert_clean(*run_case(case))


@settings(WRITE, max_examples=examples(60))
@given(CASES["retract"]())
def test_claims_retract_changes_only_that_claim(case):
    assert_clean(*run_case(case))


@settings(WRITE, max_examples=examples(30))
@given(CASES["find"]())
def test_claims_find_confirm_and_dismiss_append_only_the_passage(case):
    assert_clean(*run_case(case))


@settings(WRITE, max_examples=examples(40))
@given(CASES["evidence"]())
def test_claims_evidence_add_appends_only_the_entry(case):
    ran, found = run_case(case)
    assert_clean(ran, [v for v in found if v.kind != TWICE])  # tested on its own below


@settings(WRITE, max_examples=examples(5))
@given(CASES["evidence"]())
def test_claims_evidence_add_twice_records_the_measurement_once(case):
    """The same scrapes, engine, date and note again are no new evidence."""
    ran, found = run_case(case)
    assert_clean(ran, [v for v in found if v.kind == TWICE])


@settings(WRITE, max_examples=examples(40))
@given(CASES["fix"]())
def test_fix_replaces_only_the_stale_copies(case):
    assert_clean(*run_case(case))


@settings(WRITE, max_examples=examples(40))
@given(CASES["regen"]())
def test_regen_rewrites_only_the_regions(case):
    assert_clean(*run_case(case))


@settings(WRITE, max_examples=examples(20))
@given(CASES["baseline"]())
def test_baseline_writes_only_the_baseline(case):
    assert_clean(*run_case(case))


# --- the classes found so far, each on its own ---------------------------------------------

ONE_CLAIM = "claims:\n  - id: kv-bytes\n    title: KV bytes\n    status: active\n"


def assert_each_clean(*cases: WriteCase) -> None:
    """Every case run, then every broken property of any of them shown."""
    found = [(case, run_case(case)[1]) for case in cases]
    messages = [f"{v}\n  {case.shown()[:600]}" for case, broken in found for v in broken]
    assert not messages, "\n".join(messages)


def _marks(text: str) -> int:
    return max(map(int, re.findall(r"note (\d+):", text)), default=0)


def add_case(registry: str, title: str = "A new claim", matches: tuple[str, ...] = ()) -> WriteCase:
    wording = "Decode is flat with context.\n"
    args = ("claims", "add", "new-claim", f"--title={title}", "--text-file", "../inputs/text.txt")
    return WriteCase(
        "add",
        {"claims.yaml": registry.encode()},
        (*args, "--date", DATE, *(f"--match={m}" for m in matches)),
        inputs={"text.txt": wording.encode()},
        expect={"id": "new-claim", "title": title, "text": wording, "match": list(matches)}
        | {"plain": True},
        marks=_marks(registry),
    )


def retract_case(
    registry: str, reason: str = "Re-measured.", wording: str = "Flat.\n", force: bool = False
) -> WriteCase:
    args = ["claims", "retract", "kv-bytes", "--date", DATE, f"--reason={reason}"]
    args += ["--replacement-file", "../inputs/replacement.txt", *(["--force"] if force else [])]
    expect = {"id": "kv-bytes", "date": DATE, "reason": reason, "replacement": wording}
    return WriteCase(
        "retract",
        {"claims.yaml": registry.encode()},
        tuple(args),
        inputs={"replacement.txt": wording.encode()},
        expect={**expect, "force": force, "plain": True},
        marks=_marks(registry),
    )


def evidence_case(registry: str, engine: str = "v0.27.1", note: str | None = None) -> WriteCase:
    args = ["claims", "evidence", "add", "kv-bytes", "--scrape", "../inputs/slow-after.prom"]
    args += [f"--engine={engine}", "--date", DATE, *([f"--note={note}"] if note else [])]
    return WriteCase(
        "evidence",
        {"claims.yaml": registry.encode()},
        tuple(args),
        inputs={"slow-after.prom": (SCRAPES / "slow-after.prom").read_bytes()},
        expect={"id": "kv-bytes", "engine": engine, "note": note, "model": None}
        | {"scrapes": ["../inputs/slow-after.prom"], "plain": True},
        marks=_marks(registry),
    )


# Plain to YAML 1.1 (libyaml, PyYAML) and a number, a date or a merge key to YAML 1.2
# (ruamel), or the other way round: a value typed on the command line must come back as typed.
AMBIGUOUS = ("1e3", "6.02e23", "0o17", "0x1F", "1_000", "on", "12:30:45", "2026-01-01 10:00", "<<")


@pytest.mark.parametrize("value", AMBIGUOUS)
def test_a_value_yaml_1_1_and_1_2_read_differently_is_stored_as_typed(value):
    assert_each_clean(
        add_case(ONE_CLAIM, title=value, matches=(value,)),
        retract_case(ONE_CLAIM, reason=value),
        evidence_case(ONE_CLAIM, engine=value, note=value),
    )


@pytest.mark.parametrize("final_break", [True, False], ids=["final-break", "no-final-break"])
@pytest.mark.parametrize("separator", ["\u2028", "\x85", "\u2029"], ids=["LS", "NEL", "PS"])
def test_a_line_ending_in_a_line_separator_is_not_where_new_lines_go(separator, final_break):
    """YAML 1.1 readers (and guards) end a line at U+2028, U+0085, U+2029; YAML 1.2 readers do
    not: text spliced in right after one lands inside the comment for them."""
    last = f"    text: fp8 KV costs 32,768 bytes per token.  # note 1: measured{separator}"
    registry = ONE_CLAIM + last + ("\n" if final_break else "")
    assert_each_clean(add_case(registry), retract_case(registry), evidence_case(registry))


BLOCKS = """\
claims:
  - id: kv-bytes
    title: KV bytes
    status: {status}
    reason: |-  # note 1: why, in the maintainer's words
      Measured twice.
      Both agree.
    replacement: Flat.  # note 2: the wording before
"""


@pytest.mark.parametrize("status", ["active", "retracted"])
def test_a_comment_after_a_block_indicator_survives_the_edit_of_its_value(status):
    """The comment after ``|-`` is not part of the value: moving the reason to ``rationale``
    or replacing it (``--force``, twice) keeps it."""
    case = retract_case(BLOCKS.format(status=status), wording="Two\nlines.\n", force=True)
    assert_clean(*run_case(case))


@pytest.mark.parametrize("status", ["active", "retracted"])
def test_a_value_with_trailing_spaces_after_it_can_become_a_block(status):
    """The spaces after ``replacement: 'x'`` are not part of the value: a replacement of
    several lines takes its place (not refused because they would end its last line)."""
    registry = ONE_CLAIM.replace("active", status) + "    replacement: 'x'   \n"
    assert_each_clean(retract_case(registry, wording="Two\nlines.\n", force=True))


def test_fix_keeps_a_hand_written_line_inside_a_stale_copy():
    first, second = STALE_COPY.rstrip("\n").split("\n")
    compose = f"{first}\n# note 1: {HAND_LINE}, kept\n{second}\nservices: {{}}\n"
    registry = (
        "claims:\n  - id: old-cliff\n    title: Decode cliff\n    status: retracted\n"
        "    retracted: 2026-09-08\n    reason: A harness artefact.\n"
        "    text: Decode collapses once accumulated context passes ~21k on the spec tiers.\n"
        '    match: ["accumulated-context decode cliff"]\n    replacement: Flat.\n'
    )
    files = {
        "claims.yaml": registry,
        "composes/c.yml": compose,
        "guards.toml": 'composes = ["composes/*.yml"]\n',
    }
    case = WriteCase(
        "fix",
        {name: text.encode() for name, text in files.items()},
        ("fix",),
        expect={"copies": {"composes/c.yml": [Copy([0, 2], True, False)]}},
        marks=1,
    )
    assert_clean(*run_case(case))


# --- races ----------------------------------------------------------------------------------

# Each racer is a forked copy of this process (guards already imported), so it is ready at
# once; it says so and waits until every racer is: their read-verify-write spans then start
# within milliseconds of each other on every run.
RACE_CLAIMS = 400  # a registry this size takes about 0.1 s to verify: the spans overlap


def meet(folder: Path, count: int) -> None:
    """Wait (at most a minute) until ``count`` racers have arrived in ``folder``."""
    folder.mkdir(exist_ok=True)
    (folder / str(os.getpid())).touch()
    give_up = time.monotonic() + 60
    while len(os.listdir(folder)) < count and time.monotonic() < give_up:
        time.sleep(0.002)


def racer(
    root: Path, args: tuple[str, ...], barrier: Path, count: int, lock: bool
) -> subprocess.CompletedProcess:
    """One racer, in its own process: the command once every racer is ready (without the
    lock: the racers also meet where the lock would be taken, so their spans overlap)."""
    if not lock:
        import guards.sources.edit

        @contextlib.contextmanager
        def unlocked(*args, **kwargs):
            meet(barrier / "inside", count)
            yield

        guards.sources.edit.locked = unlocked  # in this racer's process only
    meet(barrier / "start", count)
    outcome = run_in_process(args, root, 120)
    return subprocess.CompletedProcess(args, outcome.code, outcome.out, outcome.err)


def race(
    root: Path, commands: list[tuple[str, ...]], lock: bool = True
) -> list[subprocess.CompletedProcess]:
    """Run ``commands`` in ``root`` at once, each in its own process (``lock=False``: with
    the write lock taken away, to show that the race is real)."""
    barrier = Path(tempfile.mkdtemp(prefix="barrier-", dir=root.parent))
    running = [
        forked(lambda args=args: racer(root, args, barrier, len(commands), lock))
        for args in commands
    ]
    return [wait() for wait in running]


def race_estate(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    tmp_path.mkdir(exist_ok=True)
    (root / "composes").mkdir(parents=True)
    (root / "claims.yaml").write_text(registry_for_races(RACE_CLAIMS), encoding="utf-8")
    (root / "guards.toml").write_text('composes = ["composes/*.yml"]\n', encoding="utf-8")
    (root / "composes" / "c.yml").write_text(STALE_COPY + "services: {}\n", encoding="utf-8")
    (tmp_path / "wording.txt").write_text("Decode is flat with context.\n", encoding="utf-8")
    return root


def add_args(claim_id: str) -> tuple[str, ...]:
    return (
        "claims",
        "add",
        claim_id,
        "--title",
        f"Raced {claim_id}",
        "--text-file",
        "../wording.txt",
        "--date",
        DATE,
    )


def race_violations(results: list[subprocess.CompletedProcess], landed: list[bool]) -> list[str]:
    """Each racer's change landed, or it exited non-zero with one error line and it did not."""
    found = []
    for result, present in zip(results, landed, strict=True):
        name = " ".join(result.args[:3])
        lines = result.stderr.splitlines()
        if result.returncode == 0 and not present:
            found.append(f"lost update: {name} exited 0 and its change is not in the file")
        if result.returncode != 0 and present:
            found.append(f"{name} exited {result.returncode} but its change is in the file")
        if result.returncode != 0 and (len(lines) != 1 or not lines[0].startswith(ERROR_PREFIX)):
            found.append(f"{name} exited {result.returncode} with stderr {result.stderr[:300]!r}")
        if result.returncode not in (0, 1, 2):
            found.append(f"{name} exited {result.returncode}")
    return found


def final_claims(root: Path) -> dict[str, dict] | None:
    """The registry's claims by id after a race; None when the readers do not agree on it."""
    fair, loaded = agreed((root / "claims.yaml").read_bytes())
    return {c["id"]: c for c in _claims(loaded)} if fair else None


def race_two_adds(folder: Path, lock: bool = True) -> list[str]:
    """Two `claims add` of distinct ids at once."""
    root = race_estate(folder)
    results = race(root, [add_args("raced-a"), add_args("raced-b")], lock)
    claims = final_claims(root)
    if claims is None:
        return ["the registry is not YAML the three readers agree on"]
    problems = race_violations(results, ["raced-a" in claims, "raced-b" in claims])
    if sum(c.startswith("seed-") for c in claims) != RACE_CLAIMS:
        problems.append("claims that were there before the race are gone")
    return problems


def race_retract_and_add(folder: Path) -> list[str]:
    """`claims retract` of one claim and `claims add` of another at once."""
    root = race_estate(folder)
    retract = (
        "claims",
        "retract",
        "seed-7",
        "--date",
        DATE,
        "--reason",
        "Raced.",
        "--replacement-file",
        "../wording.txt",
    )
    results = race(root, [retract, add_args("raced-a")])
    claims = final_claims(root)
    if claims is None:
        return ["the registry is not YAML the three readers agree on"]
    retracted = claims.get("seed-7", {}).get("status") == "retracted"
    return race_violations(results, [retracted, "raced-a" in claims])


def race_fix_and_add(folder: Path) -> list[str]:
    """`fix` (a compose) and `claims add` (the registry) of one folder at once: both land."""
    root = race_estate(folder)
    with (root / "claims.yaml").open("a", encoding="utf-8") as registry:
        registry.write(
            "  - id: old-cliff\n    title: Decode cliff\n    status: retracted\n"
            "    retracted: 2026-09-08\n    reason: A harness artefact.\n"
            "    text: Decode collapses once accumulated context passes ~21k on the spec tiers.\n"
            '    match: ["accumulated-context decode cliff"]\n    replacement: Flat.\n'
        )
    results = race(root, [("fix",), add_args("raced-a")])
    claims = final_claims(root) or {}
    fixed = "# >>> guards:claim old-cliff" in (root / "composes" / "c.yml").read_text("utf-8")
    problems = [
        f"{' '.join(r.args[:2])} exited {r.returncode}: {r.stderr[:200]!r}"
        for r in results
        if r.returncode != 0
    ]
    return problems + race_violations(results, [fixed, "raced-a" in claims])


RACES: dict[str, Callable[[Path], list[str]]] = {
    "two adds": race_two_adds,
    "retract and add": race_retract_and_add,
    "fix and add": race_fix_and_add,
}


@pytest.mark.parametrize("name", sorted(RACES))
def test_concurrent_write_commands_never_lose_an_update(tmp_path, name):
    problems = RACES[name](tmp_path)
    assert not problems, "\n".join(problems)


def test_the_races_overlap_without_the_lock_one_add_does_not_land(tmp_path):
    """The races are real: with the write lock taken away (in the racing processes only, where
    both wait for each other inside the span the lock would hold, so the spans always overlap),
    of two adds one is refused or lost."""
    root = race_estate(tmp_path)
    results = race(root, [add_args("raced-a"), add_args("raced-b")], lock=False)
    claims = final_claims(root) or {}
    both = [r.returncode for r in results] == [0, 0] and {"raced-a", "raced-b"} <= set(claims)
    assert not both


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
