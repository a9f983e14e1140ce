"""The persistent cache (guards/cache.py): a kept run is reused only when nothing it depends
on changed, so a warm run always prints what a cold run prints."""

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from guards import cache
from tests.cli_helpers import WITHDRAWN_CLAIM, run_guards, tree_digest

PROJECT = Path(__file__).resolve().parents[1]
CONFIG = """\
composes = ["composes/**/*.yml"]
notes = ["learnings/**/*.md"]
claims = "claims.yaml"
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

    monkeypatch.setattr("guards.suite.run", fresh)


def test_a_warm_run_is_taken_from_the_cache_and_prints_the_same(capsys, estate, monkeypatch):
    cold = check(capsys, estate)
    assert cold[0] == 0 and '"fail": 0' in cold[1]
    no_fresh_runs(monkeypatch)
    assert check(capsys, estate) == cold
    text = run_guards(capsys, "check", "--root", str(estate))
    assert text.out.endswith("guard suite: 321 pass / 0 fail\n")


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
    monkeypatch.setattr("guards.cli.dt", SimpleNamespace(date=Tomorrow))
    with pytest.raises(AssertionError, match="not taken from the cache"):
        run_guards_raising(estate)


def run_guards_raising(root: Path) -> None:
    """Call the check in-process without the entry point's error handling."""
    from guards.cli import _run

    _run(None, root, None, None, None, None, use_cache=True)


def test_the_code_is_part_of_the_key():
    parts = cache.environment()
    assert any(part.startswith("cache.py:") for part in parts)
    assert any(part.startswith("rules/stale_claim.py:") for part in parts)
    assert any(".dist-info" in part for part in parts)


def test_a_damaged_or_foreign_entry_is_a_miss(capsys, estate, tmp_path):
    cold = check(capsys, estate)
    for entry in (tmp_path / "cache").glob("*/runs/*"):
        entry.write_bytes(b"not a pickle")
    assert check(capsys, estate) == cold
    for entry in (tmp_path / "cache").glob("*/runs/*"):
        entry.write_bytes(b"")
    assert check(capsys, estate) == cold


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
    cache.prune(folder, entries=4, limit=10_000)
    assert sorted(p.name for p in folder.iterdir()) == ["entry6", "entry7", "entry8", "entry9"]
    cache.prune(folder, entries=4, limit=250)
    assert sorted(p.name for p in folder.iterdir()) == ["entry8", "entry9"]


def test_concurrent_runs_each_print_the_cold_result(capsys, estate, tmp_path):
    cold = check(capsys, estate, "--no-cache")[1]
    env = {**os.environ, "GUARDS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GUARDS_NO_CACHE", None)
    command = [
        sys.executable,
        "-m",
        "guards.cli",
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
