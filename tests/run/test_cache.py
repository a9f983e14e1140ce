"""The persistent cache (guards/cache.py): a kept run is reused only when nothing it depends
on changed, so a warm run always prints what a cold run prints."""

import datetime as dt
import json
import os
import pickle
import random
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from guards.claims import vocabulary
from guards.facts import regions
from guards.findings import CheckResult, Finding, Run, Severity, Waiver, from_json, to_json
from guards.run import cache
from guards.sources import reads
from tests.cli_helpers import WITHDRAWN_CLAIM, project_estate, run_guards, tree_digest

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT / "bench"))
import estates as bench  # noqa: E402  (bench/estates.py generates estates)

CONFIG = """\
composes = ["composes/**/*.yml"]
notes = ["learnings/**/*.md"]
claims = "claims.yaml"
header = { preset = "profile" }
"""


@pytest.fixture
def estate(tmp_path, monkeypatch):
    """A copy of the bundled estate, with the cache on in a folder of its own."""
    root = tmp_path / "estate"
    for part in ("composes", "learnings"):
        shutil.copytree(PROJECT / part, root / part)
    shutil.copy(PROJECT / "claims.yaml", root / "claims.yaml")
    (root / "guards.toml").write_text(CONFIG)
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    return root


def check(capsys, root: Path, *args: str) -> tuple[int, str, str]:
    result = run_guards(capsys, "check", "--root", str(root), "--format", "json", *args)
    return result.code, result.out, result.err


def no_fresh_runs(monkeypatch):
    """From here on, a run that is not taken from the cache fails the test."""

    def fresh(*args, **kwargs):
        raise AssertionError("the run was computed, not taken from the cache")

    monkeypatch.setattr("guards.run.suite.run", fresh)


def test_a_warm_run_is_taken_from_the_cache_and_prints_the_same(capsys, estate, monkeypatch):
    cold = check(capsys, estate)
    assert cold[0] == 0 and '"fail": 0' in cold[1]
    no_fresh_runs(monkeypatch)
    assert check(capsys, estate) == cold
    text = run_guards(capsys, "check", "--root", str(estate))
    assert text.out.endswith("guard suite: 413 pass / 0 fail\n")


def test_the_cache_lives_outside_the_estate(capsys, estate, tmp_path):
    before = tree_digest(estate)
    check(capsys, estate)
    assert tree_digest(estate) == before
    assert list((tmp_path / "cache").glob("*/runs/*"))


def first_compose(root: Path) -> Path:
    return sorted((root / "composes").rglob("*.yml"))[0]


def edit_compose(root: Path) -> None:
    """A status no reader knows (S002)."""
    path = first_compose(root)
    path.write_text(path.read_text().replace("Status:    🧪", "Status:    maybe", 1))


def edit_note(root: Path) -> None:
    """The bundled registry's withdrawn claim, asserted again (C001)."""
    path = root / "learnings" / "kv-cache-math.md"
    stale = "\nBeware the accumulated-context decode cliff: severity splits by hardware.\n"
    path.write_text(path.read_text() + stale)


def withdraw_claim(root: Path) -> None:
    (root / "claims.yaml").write_text(WITHDRAWN_CLAIM)


def edit_config(root: Path) -> None:
    (root / "guards.toml").write_text(CONFIG + 'ignore = ["S001"]\n')


def add_compose(root: Path) -> None:
    shutil.copy(first_compose(root), root / "composes" / "copy.yml")


def remove_note(root: Path) -> None:
    (root / "learnings" / "kv-cache-math.md").unlink()


def add_template(root: Path) -> None:
    """The estate's own profile template, before the built-in one (G001 on every region)."""
    (root / "templates").mkdir()
    (root / "templates" / "profile.j2").write_text("# Profile (at-a-glance): see the README\n")


def add_catalog(root: Path) -> None:
    """A catalog D004 reads for itself: its first read is part of the run's inputs."""
    compose = first_compose(root).relative_to(root).as_posix()
    (root / "guards.toml").write_text(
        CONFIG + '\n[rules.catalog-drift]\ncatalogs = ["profiles.yaml"]\n'
    )
    (root / "profiles.yaml").write_text(
        f"entries:\n  a:\n    compose_path: {compose}\n    status: production\n"
    )


def edit_catalog(root: Path) -> None:
    path = root / "profiles.yaml"
    path.write_text(path.read_text().replace("production", "deprecated"))


CHANGES = [
    edit_compose,
    edit_note,
    withdraw_claim,
    edit_config,
    add_compose,
    remove_note,
    add_template,
    add_catalog,
]


@pytest.mark.parametrize("change", CHANGES, ids=lambda change: change.__name__)
def test_a_changed_input_gives_the_cold_result(capsys, estate, change):
    kept = check(capsys, estate)
    change(estate)
    warm = check(capsys, estate)
    cold = check(capsys, estate, "--no-cache")
    assert warm == cold
    assert warm != kept or change is add_catalog  # which changes no finding by itself


def test_a_file_a_rule_read_for_itself_is_an_input_too(capsys, estate):
    add_catalog(estate)
    check(capsys, estate)
    edit_catalog(estate)  # no compose, note, registry or setting changed
    warm = check(capsys, estate)
    assert warm == check(capsys, estate, "--no-cache")
    assert "D004" in warm[1]


def test_the_rules_chosen_and_the_day_are_part_of_the_key(capsys, estate, monkeypatch):
    everything = check(capsys, estate)
    only = check(capsys, estate, "--select", "K002")
    assert only != everything and only == check(capsys, estate, "--select", "K002", "--no-cache")

    class Tomorrow(dt.date):
        @classmethod
        def today(cls):
            return dt.date(2999, 1, 1)

    no_fresh_runs(monkeypatch)
    monkeypatch.setattr("guards.run.pipeline.dt", SimpleNamespace(date=Tomorrow))
    with pytest.raises(AssertionError, match="not taken from the cache"):
        run_guards_raising(estate)


def run_guards_raising(root: Path) -> None:
    """Call the check in-process without the entry point's error handling."""
    from guards.run.pipeline import Asked, check

    check(Asked(root=root, cache=True))


def test_the_code_is_part_of_the_key():
    parts = cache.environment()
    assert any(part.startswith("run/cache.py:") for part in parts)
    assert any(part.startswith("rules/stale_claim.py:") for part in parts)
    assert any(".dist-info" in part for part in parts)


def test_the_code_files_are_every_code_file_of_a_tree_with_its_size_and_time(tmp_path):
    (tmp_path / "run" / "__pycache__").mkdir(parents=True)
    (tmp_path / "facts" / "templates").mkdir(parents=True)
    for name, text in {
        "__init__.py": "",
        "run/cache.py": "x = 1\n",
        "run/__pycache__/cache.cpython-311.pyc": "kept out",
        "facts/templates/claim.j2": "{{ x }}",
        "run/config.schema.json": "{}",
        "notes.txt": "kept out",
    }.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    os.utime(tmp_path / "run/cache.py", ns=(1, 2))
    (tmp_path / "linked").symlink_to(tmp_path / "run")  # a link to a folder is not walked
    assert sorted(cache.code_files(str(tmp_path))) == [
        "__init__.py:0:" + str((tmp_path / "__init__.py").stat().st_mtime_ns),
        "facts/templates/claim.j2:7:"
        + str((tmp_path / "facts/templates/claim.j2").stat().st_mtime_ns),
        "run/cache.py:6:2",
        "run/config.schema.json:2:" + str((tmp_path / "run/config.schema.json").stat().st_mtime_ns),
    ]


def test_a_damaged_or_foreign_entry_is_a_miss(capsys, estate, tmp_path):
    cold = check(capsys, estate)
    marker = tmp_path / "marker"
    for data in (b"not JSON", b"", pickle.dumps(Payload(marker))):
        for entry in (tmp_path / "cache").glob("*/runs/*"):
            entry.write_bytes(data)
        assert check(capsys, estate) == cold
    assert not marker.exists()


def test_a_cache_that_cannot_be_written_is_no_cache(capsys, estate, tmp_path, monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(blocked))
    code, out, err = check(capsys, estate)
    assert (code, err) == (0, "")
    assert check(capsys, estate) == (code, out, err)


def test_a_run_with_errors_is_not_kept(capsys, estate, tmp_path):
    first_compose(estate).write_text("services: [\n")
    code, _, err = check(capsys, estate)
    assert code == 2 and err.startswith("guards: error: composes/")
    assert not list((tmp_path / "cache").glob("*/runs/*"))


def test_no_cache_by_flag_or_variable(capsys, estate, tmp_path, monkeypatch):
    check(capsys, estate, "--no-cache")
    assert not list((tmp_path / "cache").glob("*/runs/*"))
    monkeypatch.setenv("GUARDS_NO_CACHE", "1")
    check(capsys, estate)
    assert not list((tmp_path / "cache").glob("*/runs/*"))


def test_the_folder_is_kept_small(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    for index in range(10):
        entry = folder / f"entry{index}"
        entry.write_bytes(b"x" * 100)
        os.utime(entry, ns=(index * 10**9, index * 10**9))
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        cache.prune(handle, entries=4, limit=10_000)
        assert sorted(p.name for p in folder.iterdir()) == ["entry6", "entry7", "entry8", "entry9"]
        cache.prune(handle, entries=4, limit=250)
        assert sorted(p.name for p in folder.iterdir()) == ["entry8", "entry9"]
    finally:
        os.close(handle)


def test_concurrent_runs_each_print_the_cold_result(capsys, estate, tmp_path):
    cold = check(capsys, estate, "--no-cache")[1]
    env = {**os.environ, "GUARDS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GUARDS_NO_CACHE", None)
    command = [
        sys.executable,
        "-m",
        "guards",
        "check",
        "--root",
        str(estate),
        "--format",
        "json",
    ]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE) for _ in range(4)]
    outputs = [run.communicate(timeout=120)[0].decode() for run in runs]
    assert outputs == [cold] * 4
    assert subprocess.run(command, env=env, capture_output=True, text=True).stdout == cold


def test_a_warm_run_does_not_load_the_word_frequencies(estate, tmp_path):
    """Word rarities are kept too: a run computed again, whose claims use known words, does
    without the word-frequency data."""
    env = {**os.environ, "GUARDS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GUARDS_NO_CACHE", None)
    probe = (
        "import sys; sys.argv = ['guards', 'check', '--root', sys.argv[1]]\n"
        "from guards.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('wordfreq' in sys.modules, file=sys.stderr)\n"
    )
    command = [sys.executable, "-c", probe, str(estate)]
    first = subprocess.run(command, env=env, capture_output=True, text=True)
    with first_compose(estate).open("a") as compose:
        compose.write("# the kept run no longer applies\n")
    second = subprocess.run(command, env=env, capture_output=True, text=True)
    assert (first.stderr, second.stderr) == ("True\n", "False\n")
    assert second.stdout == first.stdout


def test_a_named_file_is_keyed_by_where_it_is(capsys, estate):
    """The same relative name from two folders names two files: two runs, not one kept."""
    single = estate / "composes" / "qwen3.8-27b" / "vllm" / "single"
    dual = estate / "composes" / "qwen3.8-27b" / "vllm" / "dual"
    broken = (dual / "max.yml").read_text().replace("Status:    ", "Status:    maybe ", 1)
    (dual / "max.yml").write_text(broken)
    here = run_guards(capsys, "check", "--root", str(estate), "max.yml", cwd=single)
    there = run_guards(capsys, "check", "--root", str(estate), "max.yml", cwd=dual)
    assert here.code == 0 and there.code == 1 and " S002 " in there.out


def test_a_file_swapped_for_a_fifo_since_is_an_error_not_a_hang(capsys, estate):
    kept = check(capsys, estate)
    path = first_compose(estate)
    path.unlink()
    os.mkfifo(path)
    code, _, err = check(capsys, estate)
    assert code == 2 and kept[0] == 0
    assert err.endswith("is not a regular file (a FIFO, socket or device); not read\n")


# -- a kept run is data: the warm run prints what the cold one does -------------------------


def generated(root: Path) -> Path:
    """An estate made by bench/estates.py, with failing checks, findings waived inline and
    by the settings, and text that is not ASCII."""
    bench.generate(root, 12)
    composes = sorted((root / "models").rglob("*.yml"))
    for index in (0, 5):
        text = composes[index].read_text().replace("Status:    ", "Status:    maybe ", 1)
        composes[index].write_text(text)
    note = sorted((root / "learnings").glob("*.md"))[0]
    with note.open("a") as out:
        out.write(
            "\n<!-- guards: ignore[C001] quoted in the incident timeline — «as said» -->\n"
            "Beware the accumulated-context decode cliff: severity splits by hardware.\n"
        )
    folder = composes[0].relative_to(root).parent.as_posix()
    with (root / "guards.toml").open("a") as config:
        config.write('\n[header]\npreset = "profile"\n')
        config.write(f'\n[per-path-ignores."{folder}/**"]\nrules = ["S002"]\nreason = "frozen"\n')
    return root


ESTATES = {
    "bundled": lambda tmp: project_estate(tmp / "bundled"),
    "clean": lambda tmp: PROJECT / "tests" / "fixtures" / "estates" / "clean",
    "incident": lambda tmp: PROJECT / "tests" / "fixtures" / "estates" / "incident",
    "schema": lambda tmp: PROJECT / "tests" / "fixtures" / "estates" / "schema",
    "generated": lambda tmp: generated(tmp / "generated"),
}


@pytest.mark.parametrize("name", ESTATES)
def test_a_warm_run_prints_the_cold_run_byte_for_byte(capsys, tmp_path, monkeypatch, name):
    root = ESTATES[name](tmp_path)
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    formats = [("--format", "text"), ("--format", "json")]

    def outputs(*extra: str) -> list[tuple[int, str, str]]:
        runs = [
            run_guards(capsys, "check", "--root", str(root), "--show-suppressed", *f, *extra)
            for f in formats
        ]
        return [(r.code, r.out, r.err) for r in runs]

    cold = outputs("--no-cache")
    assert outputs() == cold  # computed, and kept
    assert list((tmp_path / "cache").glob("*/runs/*"))
    no_fresh_runs(monkeypatch)
    assert outputs() == cold
    if name == "generated":
        assert '"kind": "config"' in cold[1][1] and '"kind": "inline"' in cold[1][1]


def every_field() -> Run:
    """A run with every field of every object set, in text no encoding makes easy."""
    waiver = Waiver("inline", "quoted — «as said»", "learnings/ä.md", 3)
    finding = Finding(
        rule="C001",
        severity=Severity.WARNING,
        path="composes/\udcff-odd.yml",  # a name that is not UTF-8 (surrogateescape)
        line=2,
        column=3,
        message="repeats 🧪 a withdrawn claim\nacross lines",
        hint="drop it",
        claim="old-cliff",
        knob="max_num_seqs",
        end_line=4,
        end_column=9,
        fingerprint="0123456789abcdef-2",
        env=".env",
        fixable=True,
    )
    waived = replace(finding, waiver=waiver)
    result = CheckResult("C001", "composes/x.yml", (finding,), ("not checked: x",), (waived,))
    return Run(
        (
            result,
            CheckResult("S001", "composes/y.yml"),
            CheckResult(
                "K002", "composes/y.yml", remarks=("K002 y: no pool",), not_judged=("no pool",)
            ),
        ),
        (),
        ("C001", "S001"),
        7,
        ("a remark",),
        frozenset({"composes/x.yml", "composes/y.yml"}),
        rules_url="https://example.org/rules",
    )


def test_a_run_comes_back_from_its_json_equal():
    run = every_field()
    assert from_json(json.loads(json.dumps(to_json(run)))) == run


def test_a_kept_finding_keeps_whether_a_fix_repairs_it_and_nothing_else_passes():
    data = json.loads(json.dumps(to_json(every_field())))
    [finding] = data["results"]["details"][0][1]
    assert finding["fixable"] is True
    for odd in (1, "true", None):
        finding["fixable"] = odd
        with pytest.raises(ValueError):
            from_json(data)


def test_only_a_run_as_the_suite_makes_it_is_kept():
    from guards.errors import GuardsError

    for odd in (
        {"errors": (GuardsError("bad"),)},
        {"baseline": "b.json"},
        {"strict_baseline": True},
    ):
        with pytest.raises(ValueError):
            to_json(Run((), **odd))


# -- an entry that is not one of ours is a miss ---------------------------------------------

KEY = "0" * 32


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """A store with ``every_field()`` kept under KEY (read from one input), and the path of
    its entry."""
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    store = cache.open_store(tmp_path / "estate")
    source = tmp_path / "estate" / "input.yml"
    source.parent.mkdir()
    source.write_text("services: {}\n")
    recorded = reads.Reads({str(source): reads.state_of(str(source))})
    store.put(KEY, recorded, every_field())
    [entry] = (tmp_path / "cache").glob(f"*/runs/{KEY}")
    assert store.get(KEY) == every_field()  # the entry as written is a hit
    return store, entry


def wrong_types(value: object) -> list[object]:
    """Values of a type the field holding ``value`` never has (None is right for some)."""
    others: list[object] = [True, 1.5, "1", 7, [], {}]
    return [o for o in others if type(o) is not type(value)]


def mutations(data: object) -> list[object]:
    """Copies of ``data`` each with one thing wrong: every field of every object in turn of
    a wrong type, missing or joined by a field it does not have; every item of every list
    of a wrong type. The reads (a mapping, not an object) are only given wrong types."""
    found: list[object] = []
    if isinstance(data, dict):
        record = any(name in data for name in ("format", "rule", "results", "rule_names"))
        for name, value in data.items():
            found += [{**data, name: wrong} for wrong in wrong_types(value)]
            found += [{**data, name: inner} for inner in mutations(value)]
            if record:
                found.append({k: v for k, v in data.items() if k != name})
        if record:
            found.append({**data, "extra": None})
    elif isinstance(data, list):
        for index, value in enumerate(data):
            for wrong in [*wrong_types(value), *mutations(value)]:
                found.append([*data[:index], wrong, *data[index + 1 :]])
    return found


def results(entry: dict) -> dict:
    return entry["run"]["results"]


def first(entry: dict, where: int) -> dict:
    """The first finding (``where`` 1) or waived finding (3) of the first check result."""
    return results(entry)["details"][0][where][0]


ODD = {  # wrong in a way only the field's own meaning tells
    "another format": lambda e: e.update(format=2),
    "the format as a float": lambda e: e.update(format=3.0),
    "another key": lambda e: e.update(key="1" * 32),
    "a relative path read": lambda e: e.update(reads={"input.yml": "absent"}),
    "a state not recorded": lambda e: e.update(reads=dict.fromkeys(e["reads"], "12:34")),
    "a rule index below": lambda e: results(e)["rule"].__setitem__(0, -1),
    "a target index past": lambda e: results(e)["target"].__setitem__(1, 2),
    "columns of two lengths": lambda e: results(e)["rule"].append(0),
    "details past the results": lambda e: results(e)["details"][0].__setitem__(0, 2),
    "details twice": lambda e: results(e)["details"].append(results(e)["details"][0]),
    "details of 3": lambda e: results(e)["details"][0].pop(),
    "details of 5": lambda e: results(e)["details"][0].append([]),
    "an unknown severity": lambda e: first(e, 1).update(severity="fatal"),
    "an unknown waiver kind": lambda e: first(e, 3)["waiver"].__setitem__(0, "forgotten"),
    "a waiver of 3": lambda e: first(e, 3)["waiver"].pop(),
    "a waiver of 5": lambda e: first(e, 3)["waiver"].append(None),
}


def test_an_entry_of_another_shape_is_a_miss(kept):
    store, entry = kept
    good = json.loads(entry.read_bytes())
    wrong = {f"mutation {number}": data for number, data in enumerate(mutations(good))}
    for name, change in ODD.items():
        wrong[name] = json.loads(json.dumps(good))
        change(wrong[name])
    assert len(wrong) > 300
    for name, data in wrong.items():
        entry.write_text(json.dumps(data))
        assert store.get(KEY) is None, (name, data)


def test_a_damaged_entry_is_a_miss(kept):
    store, entry = kept
    good = entry.read_bytes()
    text = good.decode()
    damaged = [good[:size] for size in range(0, len(good), 7)]  # truncated
    damaged += [random.Random(seed).randbytes(len(good)) for seed in range(50)]
    damaged += [
        text.encode("utf-16"),  # json.loads would take it: not UTF-8 is a miss too
        b"\xef\xbb\xbf" + good,  # a byte-order mark
        good.replace(b'"a remark"', b'"a \xff remark"'),  # a byte that is not UTF-8
        b"[" * 100_000 + b"]" * 100_000,  # nested past what the decoder recurses
        good.replace(b'"files":7', b'"files":' + b"9" * 5000),  # a number too long to read
        json.dumps([json.loads(good)]).encode(),
    ]
    for data in damaged:
        entry.write_bytes(data)
        assert store.get(KEY) is None, data[:80]


def test_a_huge_entry_is_a_miss(kept, monkeypatch):
    store, entry = kept
    monkeypatch.setattr(cache, "MAX_ENTRY", entry.stat().st_size - 1)
    assert store.get(KEY) is None
    monkeypatch.undo()
    with entry.open("r+b") as handle:
        handle.truncate(cache.MAX_ENTRY + 1)  # sparse: read in full, it would take a while
    assert store.get(KEY) is None


class Payload:
    """What a pickle can do when it is loaded: here, create a file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_a_pickle_is_never_loaded(kept, tmp_path):
    store, entry = kept
    proof = tmp_path / "proof"
    pickle.loads(pickle.dumps(Payload(proof))).close()
    assert proof.exists()  # the payload does what it says when unpickled
    marker = tmp_path / "marker"
    entry.write_bytes(pickle.dumps(Payload(marker), protocol=0))
    assert store.get(KEY) is None
    entry.write_bytes(pickle.dumps(Payload(marker)))
    assert store.get(KEY) is None
    assert not marker.exists()


def test_an_entry_that_is_not_a_regular_file_of_ours_is_a_miss(kept, tmp_path):
    store, entry = kept
    elsewhere = tmp_path / "elsewhere"
    shutil.copy(entry, elsewhere)  # a whole, valid entry: only the link to it is wrong
    os.mkfifo(tmp_path / "fifo")
    kinds = {
        "a link to a valid entry": lambda: entry.symlink_to(elsewhere),
        "a link to a FIFO": lambda: entry.symlink_to(tmp_path / "fifo"),
        "a FIFO": lambda: os.mkfifo(entry),
        "a folder": lambda: entry.mkdir(),
    }
    for kind, make in kinds.items():
        if entry.is_dir() and not entry.is_symlink():
            entry.rmdir()
        else:
            entry.unlink()
        make()
        assert store.get(KEY) is None, kind
    store.put(KEY, reads.Reads(), every_field())  # over the folder: not kept, and no error
    assert entry.is_dir() and store.get(KEY) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away takes root")
def test_an_entry_of_another_user_is_a_miss(kept):
    store, entry = kept
    os.chown(entry, 65534, 65534)
    assert store.get(KEY) is None


def test_a_kept_entry_is_plain_json_of_this_format_readable_only_by_its_user(kept, tmp_path):
    _, entry = kept
    data = json.loads(entry.read_bytes())
    assert (data["format"], data["key"]) == (cache.FORMAT, KEY)
    assert from_json(data["run"]) == every_field()
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "cache").rglob("*")}
    modes[tmp_path / "cache"] = stat.S_IMODE((tmp_path / "cache").stat().st_mode)
    assert {p.name: m for p, m in modes.items() if p.is_dir()} == dict.fromkeys(
        ["cache", entry.parent.parent.name, "runs"], 0o700
    )
    assert {m for p, m in modes.items() if p.is_file()} == {0o600}


def test_no_module_loads_a_pickle():
    """Nothing guards reads from disk is unpickled (or otherwise turned back into code)."""
    loaders = re.compile(
        r"\b(import (pickle|marshal|shelve|dill)|from (pickle|marshal|shelve) |pickle\.|Unpickler)"
    )
    for path in (PROJECT / "guards").rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not loaders.search(line), f"{path.relative_to(PROJECT)}:{number}: {line}"


# -- the cache is used only in folders no one else can write --------------------------------


@pytest.fixture
def small(tmp_path, monkeypatch):
    """A copy of the clean fixture estate, with the cache on in tmp_path/cache."""
    root = tmp_path / "estate"
    shutil.copytree(PROJECT / "tests" / "fixtures" / "estates" / "clean", root)
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    return root


def forge(base: Path, word: str) -> None:
    """Every kept run made to report nothing, and ``word`` planted among the word rarities:
    a run that reads either says so."""
    for entry in [*base.glob("*/runs/*"), *base.glob("runs/*")]:
        data = json.loads(entry.read_bytes())
        data["run"]["results"] = {name: [] for name in data["run"]["results"]}
        entry.write_text(json.dumps(data))
    [folder] = [base] if (base / "runs").is_dir() else [p for p in base.iterdir() if p.is_dir()]
    rarities = folder / f"rarity-{cache.key_of(cache.distributions())}.json"
    kept = json.loads(rarities.read_bytes()) if rarities.exists() else {"format": cache.FORMAT}
    kept["rarities"] = {**kept.get("rarities", {}), word: 0.5}
    rarities.write_text(json.dumps(kept))


def snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file and folder under ``folder``: mode, modification time, bytes."""
    return {
        str(p): (p.lstat().st_mode, p.lstat().st_mtime_ns, b"" if p.is_dir() else p.read_bytes())
        for p in sorted(folder.rglob("*"))
    }


def test_a_forged_entry_in_a_folder_of_ours_is_used(capsys, small, tmp_path):
    """The control for the tests below: where the folders are sound, the forged run is what
    the next run prints and the planted rarity is loaded."""
    check(capsys, small)
    forge(tmp_path / "cache", "planted-control")
    assert '"pass": 0,' in check(capsys, small)[1]
    assert "planted-control" in vocabulary._known


UNSAFE = {
    "writable by others": (lambda p: p.chmod(0o777), "is writable by others (mode 777)"),
    "writable by its group": (lambda p: p.chmod(0o720), "is writable by others (mode 720)"),
    "owned by another user": (
        lambda p: os.chown(p, 65534, 65534),
        "is owned by another user (uid 65534)",
    ),
}


@pytest.mark.parametrize("how", UNSAFE)
@pytest.mark.parametrize("which", ["base", "estate's", "runs"])
def test_a_folder_others_can_write_is_no_cache(capsys, small, tmp_path, which, how):
    if how == "owned by another user" and os.geteuid() != 0:
        pytest.skip("giving a folder away takes root")
    cold = check(capsys, small)
    base = tmp_path / "cache"
    word = f"planted-{which}-{how}".replace(" ", "-").replace("'", "")
    forge(base, word)
    folder = {"base": base, "estate's": next(base.iterdir()), "runs": next(base.glob("*/runs"))}
    make, problem = UNSAFE[how]
    make(folder[which])
    before = snapshot(base)
    assert check(capsys, small) == cold
    assert snapshot(base) == before  # nothing read (an entry read is touched), nothing written
    assert (word in vocabulary._known) == (which == "runs")  # rarities beside runs/ are sound
    verbose = run_guards(capsys, "check", "--root", str(small), "-v")
    assert verbose.err.splitlines()[-1] == f"guards: cache off: {folder[which]} {problem}"


def test_a_linked_cache_folder_is_judged_where_it_leads(capsys, small, tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (tmp_path / "link").symlink_to(shared)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "link"))
    cold = check(capsys, small, "--no-cache")
    assert check(capsys, small) == cold
    assert check(capsys, small) == cold
    assert list(shared.iterdir()) == []
    verbose = run_guards(capsys, "check", "--root", str(small), "-v")
    assert verbose.err.splitlines()[-1] == (
        f"guards: cache off: {tmp_path / 'link'} is writable by others (mode 777)"
    )


def test_a_link_below_the_base_folder_is_not_followed(capsys, small, tmp_path):
    check(capsys, small)
    base = tmp_path / "cache"
    [folder] = list(base.iterdir())
    folder.rename(tmp_path / "moved")
    folder.symlink_to(tmp_path / "moved")  # a sound folder, but reached through a link
    forge(tmp_path / "moved", "planted-through-a-link")
    assert '"pass": 36,' in check(capsys, small)[1]
    assert "planted-through-a-link" not in vocabulary._known
    verbose = run_guards(capsys, "check", "--root", str(small), "-v")
    assert verbose.err.splitlines()[-1] == f"guards: cache off: {folder} is a link"


INSIDE = {
    "GUARDS_CACHE_DIR in the estate": ("GUARDS_CACHE_DIR", ".cache", ".cache"),
    "XDG_CACHE_HOME in the estate": ("XDG_CACHE_HOME", ".xdg", ".xdg/guards"),
    "a link out of the estate leading in": ("GUARDS_CACHE_DIR", "../link", "../link"),
}


@pytest.mark.parametrize("case", INSIDE)
def test_a_cache_folder_inside_the_estate_is_refused(capsys, small, monkeypatch, case):
    variable, value, shown = INSIDE[case]
    monkeypatch.delenv("GUARDS_CACHE_DIR")
    monkeypatch.setenv(variable, os.path.normpath(small / value))
    if value == "../link":
        (small.parent / "link").symlink_to(small / "kept")
    before = sorted(small.rglob("*"))
    cold = check(capsys, small, "--no-cache")
    assert check(capsys, small) == cold
    assert sorted(small.rglob("*")) == before  # nothing made in the estate
    verbose = run_guards(capsys, "check", "--root", str(small), "-v")
    where = os.path.normpath(small / shown)
    assert verbose.err.splitlines()[-1] == f"guards: cache off: {where} is inside the estate"


def test_a_relative_cache_dir_is_refused(capsys, small, monkeypatch):
    monkeypatch.setenv("GUARDS_CACHE_DIR", "cache")
    before = sorted(small.rglob("*"))
    for _ in range(2):
        run = run_guards(capsys, "check", "--root", ".", cwd=small)
        assert (run.code, run.err) == (0, "")
    assert sorted(small.rglob("*")) == before
    verbose = run_guards(capsys, "check", "--root", ".", "-v", cwd=small)
    assert verbose.err.splitlines()[-1] == (
        "guards: cache off: GUARDS_CACHE_DIR is a relative path (cache)"
    )


def test_a_relative_xdg_cache_home_is_ignored(capsys, small, tmp_path, monkeypatch):
    """The XDG base directory spec: a relative path there is invalid, and ignored."""
    monkeypatch.delenv("GUARDS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "xdg")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    before = sorted(small.rglob("*"))
    cold = run_guards(capsys, "check", "--root", ".", cwd=small)
    assert sorted(small.rglob("*")) == before
    assert list((tmp_path / "home" / ".cache" / "guards").glob("*/runs/*"))
    no_fresh_runs(monkeypatch)
    assert run_guards(capsys, "check", "--root", ".", cwd=small) == cold


# -- a region's render is kept: used while its data, the registry and what it read are the same --


RENDER_CLAIMS = """\
claims:
  - id: a
    title: First title
    status: active
"""
RENDERED_COMPOSE = """\
# >>> guards:t
# <<< guards:t (checksum: e3b0c442)
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: ["--max-model-len", "{ctx}"]
"""


@pytest.fixture
def rendered(tmp_path, monkeypatch):
    """An estate whose compose's region renders a template that includes another and shows a
    claim's title, with the cache on; the compose is written up to date."""
    root = tmp_path / "rendered"
    (root / "templates").mkdir(parents=True)
    (root / "templates" / "t.j2").write_text(
        "{% include 'part.j2' %} {{ claim('a').title }} at {{ compose.knobs.max_model_len }}\n"
    )
    (root / "templates" / "part.j2").write_text("Part one:")
    (root / "claims.yaml").write_text(RENDER_CLAIMS)
    (root / "guards.toml").write_text('composes = ["*.yml"]\nclaims = "claims.yaml"\n')
    (root / "c.yml").write_text(RENDERED_COMPOSE.replace("{ctx}", "4096"))
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(regions, "_rendered", False)  # each run here as a fresh process
    return root


def regenerated(capsys, root: Path) -> None:
    result = run_guards(capsys, "regen", "--root", str(root))
    assert result.code == 0, result.err


def check_fresh(capsys, root: Path, *args: str) -> tuple[int, str, str]:
    """``check`` as in a process that has rendered nothing yet."""
    regions._rendered = False
    return check(capsys, root, *args)


def edit_part(root: Path) -> None:
    (root / "templates" / "part.j2").write_text("Part two:")


def retitle_claim(root: Path) -> None:
    (root / "claims.yaml").write_text(RENDER_CLAIMS.replace("First title", "Second title"))


def change_knob(root: Path) -> None:
    path = root / "c.yml"
    path.write_text(path.read_text().replace('"4096"', '"8192"'))


def remove_part(root: Path) -> None:
    """The included template is gone: the render fails where it rendered before."""
    (root / "templates" / "part.j2").unlink()


@pytest.mark.parametrize(
    "change", [edit_part, retitle_claim, change_knob, remove_part], ids=lambda c: c.__name__
)
def test_a_kept_render_is_used_only_while_its_inputs_are_the_same(capsys, rendered, change):
    regenerated(capsys, rendered)
    up_to_date = check_fresh(capsys, rendered)
    assert up_to_date[0] == 0, up_to_date
    assert list((rendered.parent / "cache").glob("*/renders/*"))
    change(rendered)
    with (rendered / "c.yml").open("a") as compose:
        compose.write("# an edit: the kept run cannot be used\n")
    warm = check_fresh(capsys, rendered)
    assert warm == check_fresh(capsys, rendered, "--no-cache")
    assert warm[0] != 0  # the region no longer renders as written (G001), or cannot (G001)


def test_an_edit_outside_the_region_uses_the_kept_render(capsys, rendered, monkeypatch):
    regenerated(capsys, rendered)
    cold = check_fresh(capsys, rendered)
    with (rendered / "c.yml").open("a") as compose:
        compose.write("# an edit: the kept run cannot be used\n")

    def fail(*args):
        raise AssertionError("rendered again")

    monkeypatch.setattr("guards.facts.regions._render", fail)
    assert check_fresh(capsys, rendered) == cold


@pytest.mark.parametrize(
    "damage",
    [
        lambda kept: {**kept, "text": 7},
        lambda kept: {**kept, "reads": {"relative/path": "absent"}},
        lambda kept: {**kept, "reads": {"/x": "not a state"}},
        lambda kept: {"text": kept["text"]},
        lambda kept: [kept],
    ],
)
def test_a_damaged_kept_render_is_rendered_again(capsys, rendered, damage):
    regenerated(capsys, rendered)
    cold = check_fresh(capsys, rendered)
    (entry,) = (rendered.parent / "cache").glob("*/renders/*")
    entry.write_text(json.dumps(damage(json.loads(entry.read_text()))))
    with (rendered / "c.yml").open("a") as compose:
        compose.write("# an edit: the kept run cannot be used\n")
    assert check_fresh(capsys, rendered) == cold


def test_only_a_process_that_has_rendered_nothing_reads_kept_renders(capsys, rendered):
    regenerated(capsys, rendered)
    cold = check_fresh(capsys, rendered)
    (entry,) = (rendered.parent / "cache").glob("*/renders/*")
    forged = json.loads(entry.read_text())
    entry.write_text(json.dumps({**forged, "text": "Forged text"}))
    with (rendered / "c.yml").open("a") as compose:
        compose.write("# an edit: the kept run cannot be used\n")
    regions._rendered = True  # jinja2 loaded, the template compiled: rendering is cheaper
    assert check(capsys, rendered) == cold  # and the render kept again
    entry.write_text(json.dumps({**forged, "text": "Forged text"}))
    with (rendered / "c.yml").open("a") as compose:
        compose.write("# another edit\n")
    code, out, _ = check_fresh(capsys, rendered)  # a fresh process takes the kept render
    assert code == 1 and '"G001"' in out
