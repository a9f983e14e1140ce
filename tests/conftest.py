import functools
import os
import shutil
from pathlib import Path

import pytest
import typer.main

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "club-3090-sample"


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    """Tests check fresh runs; tests/run/test_cache.py turns the cache back on where it is tested.
    (A run kept from another test could hide what a test changed in the code it runs.)
    ``GUARDS_TEST_CACHE=DIR`` runs every test with the cache on in DIR instead: a test that
    then fails and changes no code (monkeypatch) has found a stale result."""
    shared = os.environ.get("GUARDS_TEST_CACHE")
    if shared:
        monkeypatch.setenv("GUARDS_CACHE_DIR", shared)
    else:
        monkeypatch.setenv("GUARDS_NO_CACHE", "1")


@pytest.fixture(autouse=True, scope="session")
def cli_built_once():
    """Build the click command of the ``guards`` app once per test process. ``main()`` asks
    typer for it on every call, and typer rebuilds it from the commands' signatures each time
    (3 ms: once per run of the console script, but thousands of times over the in-process runs
    of the suite). Nothing changes the app after import, so each build is the same command."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(typer.main, "get_command", functools.cache(typer.main.get_command))
        yield


@pytest.fixture
def fixture_text():
    def read(relative: str) -> str:
        return (FIXTURES / relative).read_text(encoding="utf-8")

    return read


def writable_copy(tmp_path: Path, name: str) -> Path:
    """A copy of ``fixtures/estates/<name>`` that a test may change."""
    target = tmp_path / name
    shutil.copytree(FIXTURES / "estates" / name, target)
    return target


@pytest.fixture
def estate(tmp_path):
    return writable_copy(tmp_path, "clean")


@pytest.fixture
def incident(tmp_path):
    return writable_copy(tmp_path, "incident")
