"""`guards check PATH...` with no option (the pre-commit hook's command line) runs without
typer (guards.cli.plain_check, guards.cli.checking.run_check): it must be the command typer
runs, with typer's defaults."""

import inspect
from pathlib import Path

import pytest
import typer.main

from guards.cli import app, checking, plain_check

from ..cli_helpers import run_guards, tree_digest, write
from ..conftest import writable_copy


@pytest.mark.parametrize(
    ("argv", "paths"),
    [
        (["check"], []),
        (["check", "a.yml", "notes/b.md"], [Path("a.yml"), Path("notes/b.md")]),
        (["check", "-v", "a.yml"], None),
        (["check", "a.yml", "--format", "json"], None),
        (["check", "-"], None),  # standard input needs --stdin-filename: typer says so
        (["check", "--", "a.yml"], None),
        (["regen", "a.yml"], None),
        (["--version"], None),
        ([], None),
    ],
)
def test_only_check_with_paths_alone_is_plain(argv, paths):
    assert plain_check(argv) == paths


def test_the_plain_path_has_the_defaults_of_the_command():
    command = typer.main.get_command(app.app).commands["check"]
    declared = {param.name: param.default for param in command.params}
    keywords = {
        name: parameter.default
        for name, parameter in inspect.signature(checking.run_check).parameters.items()
    }
    assert keywords == declared


COMPOSE = "services:\n  x:\n    image: y\n"
WRITTEN = {  # estates written for the test: their files
    "broken": {"composes/a.yml": "services: [\n", "composes/b.yml": COMPOSE},
    "bad settings": {"guards.toml": "composes = [\n", "composes/a.yml": COMPOSE},
}
ESTATES = {  # name: (fixture estate or None for a written one, the paths named)
    "incident": ("incident", ["composes"]),
    "clean": ("clean", []),
    "broken": (None, ["composes/a.yml", "composes/b.yml"]),
    "bad settings": (None, ["composes/a.yml"]),
    "missing path": ("clean", ["nothere.yml"]),
}


def _estate(tmp_path, name):
    fixture, paths = ESTATES[name]
    root = writable_copy(tmp_path, fixture) if fixture else write(tmp_path / "e", WRITTEN[name])
    return root, paths


EXPECTED_CODE = {"incident": 1, "clean": 0, "broken": 2, "bad settings": 2, "missing path": 2}


@pytest.mark.parametrize("name", list(EXPECTED_CODE))
def test_plain_and_typer_print_the_same(capsys, monkeypatch, tmp_path, name):
    root, paths = _estate(tmp_path, name)
    before = tree_digest(root)
    through_typer = run_guards(capsys, "check", "--color", "auto", *paths, cwd=root)

    def no_typer():
        raise AssertionError("`check PATH...` went through typer")

    monkeypatch.setattr(app, "run", no_typer)
    plain = run_guards(capsys, "check", *paths, cwd=root)
    assert plain == through_typer
    assert plain.code == EXPECTED_CODE[name]
    assert tree_digest(root) == before  # nothing written, an error or not
    if plain.code == 2:  # one line for each input that could not be read, naming it
        lines = plain.err.splitlines()
        assert lines and all(line.startswith("guards: error: ") for line in lines)


def test_bad_input_on_the_plain_path_is_one_line_naming_file_and_line(capsys, tmp_path):
    root, paths = _estate(tmp_path, "bad settings")
    result = run_guards(capsys, "check", *paths, cwd=root)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "guards: error: guards.toml:2: invalid TOML: Invalid value at the end of the file\n"
    )
