import compileall
import functools
import os
import shutil
from pathlib import Path

import hypothesis
import pytest
import typer.main

from .examples import examples

FIXTURES = Path(__file__).parent / "fixtures"
PACKAGE = Path(__file__).resolve().parents[1] / "guards"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "club-3090-sample"

# A property that names no count draws a share of Hypothesis's default (tests/examples.py).
hypothesis.settings.register_profile("guards", max_examples=examples(100))
hypothesis.settings.load_profile("guards")


def pytest_configure(config):
    """Compile the package to bytecode once, before the workers start (0.3 s). The suite starts
    guards in many processes (the console script, the editor server, the action's steps);
    where PYTHONDONTWRITEBYTECODE is set no import writes the bytecode, so in a fresh checkout
    each of them compiled every module it imports again: 0.1-0.2 s a process, a fifth of the
    CPU time of tests/server and the start-up tests. The bench scripts compile first for the
    same reason. (A tree that cannot be written runs as before.)"""
    if not hasattr(config, "workerinput"):  # the main process, with or without xdist
        compileall.compile_dir(PACKAGE, quiet=2)


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
