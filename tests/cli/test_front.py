"""`guards check PATH...` with no option (the pre-commit hook's command line) runs without
typer (guards.cli.plain_check, guards.cli.checking.run_check): it must be the command typer
runs, with typer's defaults."""

import inspect
from pathlib import Path

import pytest
import typer.main

from guards.cli import app, checking, plain_check

from ..cli_helpers import run_guards, write
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


def _estates(tmp_path):
    broken = write(
        tmp_path / "broken",
        {"composes/a.yml": "services: [\n", "composes/b.yml": "services:\n  x:\n    image: y\n"},
    )
    return {
        "incident": (writable_copy(tmp_path, "incident"), ["composes"]),
        "clean": (writable_copy(tmp_path, "clean"), []),
        "broken": (broken, ["composes/a.yml", "composes/b.yml"]),
    }


@pytest.mark.parametrize("name", ["incident", "clean", "broken"])
def test_plain_and_typer_print_the_same(capsys, monkeypatch, tmp_path, name):
    root, paths = _estates(tmp_path)[name]
    through_typer = run_guards(capsys, "check", "--color", "auto", *paths, cwd=root)

    def no_typer():
        raise AssertionError("`check PATH...` went through typer")

    monkeypatch.setattr(app, "run", no_typer)
    plain = run_guards(capsys, "check", *paths, cwd=root)
    assert plain == through_typer
    assert plain.code == {"incident": 1, "clean": 0, "broken": 2}[name]
