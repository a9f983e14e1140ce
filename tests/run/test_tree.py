"""The listing of every file under the root (guards/run/discovery.py ``list_tree``), which D011
judges document paths against: what it lists, what it keeps closed, and that a kept run is
not reused once a file is added or removed."""

import os
import shutil
from pathlib import Path

import pytest

from guards.run import cache
from guards.run.discovery import discover, list_tree
from guards.run.estate import load_estate
from guards.sources.config import Config
from tests.cli_helpers import run_guards, write


def test_the_listing_holds_every_file_and_folder_and_closes_what_it_does_not_walk(tmp_path):
    write(
        tmp_path,
        {
            "deploy/compose/nims.yaml": "services: {}\n",
            "README.md": "# r\n",
            ".git/config": "",
            "node_modules/x/y.js": "",
            "archive/old/a.yml": "",
        },
    )
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "linked")
    tree = list_tree(Config(root=tmp_path, exclude=("archive/",)))
    assert tree.complete
    assert tree.files == {"deploy/compose/nims.yaml", "README.md"}
    assert tree.folders == {"deploy", "deploy/compose", "elsewhere"}
    assert tree.closed == {".git", "archive", "linked"}  # node_modules: tools make it, unlisted


def test_a_listing_past_its_limit_is_incomplete(tmp_path, monkeypatch):
    write(tmp_path, {f"f{i}.md": "" for i in range(5)})
    monkeypatch.setattr("guards.run.discovery.MAX_TREE", 3)
    assert not list_tree(Config(root=tmp_path)).complete


def test_named_paths_still_list_the_whole_root(tmp_path):
    write(tmp_path, {"learnings/a.md": "# a\n", "deploy/compose/nims.yaml": "services: {}\n"})
    config = Config(root=tmp_path)
    found = discover(config, [tmp_path / "learnings" / "a.md"])
    assert found.named and "deploy/compose/nims.yaml" in found.tree.files
    assert load_estate(config, found=found).tree == found.tree


NOTE = "# Deploy\n\nEdit `deploy/nims.yaml` and restart.\n"


@pytest.fixture
def estate(tmp_path, monkeypatch):
    root = tmp_path / "estate"
    write(
        root,
        {
            "guards.toml": 'notes = ["learnings/**/*.md"]\n',
            "learnings/deploy.md": NOTE,
            "deploy/compose/nims.yaml": "services:\n  nim:\n    image: nvcr.io/nim/x:1\n",
        },
    )
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    return root


def check(capsys, root: Path, *args: str) -> str:
    return run_guards(capsys, "check", "--root", str(root), "--select", "D011", *args).out


def test_adding_or_removing_a_file_gives_the_cold_result(capsys, estate):
    assert "D011" in check(capsys, estate)
    shutil.copy(estate / "deploy/compose/nims.yaml", estate / "deploy/nims.yaml")
    warm = check(capsys, estate)
    assert warm == check(capsys, estate, "--no-cache") and "D011" not in warm
    (estate / "deploy/nims.yaml").unlink()
    warm = check(capsys, estate)
    assert warm == check(capsys, estate, "--no-cache") and "D011" in warm


def test_the_listing_is_part_of_the_key(estate):
    config = Config(root=estate)
    store = cache.Store(estate.parent / "cache", "x", ["environment"])
    before = cache.run_key(store, config, ((), ()), discover(config), {}, cache.date.today())
    (estate / "new.txt").write_text("")
    after = cache.run_key(store, config, ((), ()), discover(config), {}, cache.date.today())
    assert before != after


@pytest.mark.parametrize("made", [".mypy_cache", ".ruff_cache", ".hypothesis", "node_modules"])
def test_a_folder_a_tool_makes_leaves_the_key_as_it_was(estate, made):
    config = Config(root=estate)
    store = cache.Store(estate.parent / "cache", "x", ["environment"])
    before = cache.run_key(store, config, ((), ()), discover(config), {}, cache.date.today())
    (estate / made / "3.11").mkdir(parents=True)
    (estate / made / "3.11" / "x.json").write_text("{}")
    (estate / "deploy" / made).mkdir()  # at any depth
    after = cache.run_key(store, config, ((), ()), discover(config), {}, cache.date.today())
    assert before == after


def test_a_path_in_a_folder_tools_make_is_unknown_not_dead(capsys, estate):
    (estate / "learnings/deploy.md").write_text(
        "# Deploy\n\nRun `.venv/bin/guards` or `node_modules/.bin/x`; see `deploy/nims.yaml`.\n",
        encoding="utf-8",
    )
    found = check(capsys, estate, "--no-cache")
    assert found.startswith("learnings/deploy.md:3:") and found.count("D011") == 1, found
    assert "deploy/nims.yaml" in found
