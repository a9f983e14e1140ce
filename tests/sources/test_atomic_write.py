"""The one atomic write (guards/sources/edit.py ``replace_atomically``): edited files and the
run cache's entries go through it, and what the cache needs of it (a folder descriptor, mode
0o600, no link followed, no temporary file left) holds."""

import ast
import os
import stat
from pathlib import Path

import pytest

from guards.errors import GuardsError
from guards.run import cache
from guards.sources import edit
from guards.sources.edit import replace_atomically

from ..package_source import syntax

PACKAGE = Path(edit.__file__).resolve().parents[1]
RENAMES = {("os", "replace"), ("os", "rename"), ("tempfile", "mkstemp")}


@pytest.fixture
def folder(tmp_path):
    handle = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield handle
    os.close(handle)


@pytest.fixture
def permissive_umask():
    old = os.umask(0)
    yield
    os.umask(old)


def test_a_file_is_replaced_relative_to_a_folder_descriptor_with_the_mode_given(
    tmp_path, folder, permissive_umask
):
    (tmp_path / "entry.json").write_bytes(b"old")
    replace_atomically("entry.json", b"new", 0o600, folder=folder, prefix=".tmp-")
    assert (tmp_path / "entry.json").read_bytes() == b"new"
    assert stat.S_IMODE((tmp_path / "entry.json").stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["entry.json"]


def test_a_link_in_its_place_is_replaced_not_followed(tmp_path, folder):
    outside = tmp_path / "outside"
    outside.write_bytes(b"theirs")
    (tmp_path / "entry.json").symlink_to(outside)
    cache.write_entry(folder, "entry.json", b"ours")
    assert outside.read_bytes() == b"theirs"
    assert not (tmp_path / "entry.json").is_symlink()
    assert (tmp_path / "entry.json").read_bytes() == b"ours"


def test_the_temporary_file_is_this_user_s_and_named_by_the_prefix_until_the_rename(
    tmp_path, folder, permissive_umask
):
    seen = []

    def check():
        (name,) = [n for n in os.listdir(tmp_path) if n != "entry.json"]
        seen.append((name, stat.S_IMODE(os.stat(name, dir_fd=folder).st_mode)))

    replace_atomically("entry.json", b"data", 0o600, folder=folder, prefix=".tmp-", check=check)
    ((name, mode),) = seen
    assert name.startswith(f".tmp-{os.getpid()}-") and mode == 0o600  # prune passes .tmp-


def test_a_refusal_before_the_rename_leaves_the_file_and_no_temporary(tmp_path):
    target = tmp_path / "f.yaml"
    target.write_bytes(b"a: 1\n")

    def refuse():
        raise GuardsError("changed since it was read; nothing written", "f.yaml")

    with pytest.raises(GuardsError):
        replace_atomically(target, b"a: 2\n", 0o644, check=refuse)
    assert target.read_bytes() == b"a: 1\n"
    assert os.listdir(tmp_path) == ["f.yaml"]


def test_an_edited_file_keeps_its_mode_and_its_temporary_is_named_after_it(tmp_path):
    target = tmp_path / "f.yaml"
    target.write_bytes(b"a: 1\n")
    target.chmod(0o640)
    seen = []
    replace_atomically(target, b"a: 2\n", 0o640, check=lambda: seen.extend(os.listdir(tmp_path)))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_bytes() == b"a: 2\n"
    assert any(name.startswith(".f.yaml.") for name in seen)


def _renames(path: Path) -> list[str]:
    """The functions of ``path`` that rename a file into place or make a temporary one."""
    found = []
    for node in ast.walk(syntax(path)):
        if isinstance(node, ast.FunctionDef):
            calls = (c for c in ast.walk(node) if isinstance(c, ast.Call))
            attributes = (c.func for c in calls if isinstance(c.func, ast.Attribute))
            named = (a for a in attributes if isinstance(a.value, ast.Name))
            if any((a.value.id, a.attr) in RENAMES for a in named):
                found.append(node.name)
    return found


def test_one_function_of_the_package_renames_a_file_into_place():
    """A second atomic write (the cache's own, say) would appear here."""
    renames = {
        f"{path.relative_to(PACKAGE)}:{name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name in _renames(path)
    }
    assert renames == {"sources/edit.py:replace_atomically"}
    assert cache.replace_atomically is edit.replace_atomically
