"""Which rules run: `select`, `extend-select`, `ignore` and `extend-ignore`, in the settings and
on the command line, as ruff layers them (docs/settings.md, "Selecting rules")."""

import json

import pytest

from ..cli_helpers import run_guards
from ..conftest import writable_copy

EVERY = ["K003", "S001", "S002", "S003", "S004", "S005"]  # the rules that find something there


@pytest.fixture
def schema(tmp_path):
    return writable_copy(tmp_path, "schema")


def found(capsys, root, settings: str, *args: str) -> list[str]:
    """The rules with findings, with ``settings`` above the fixture's [header] table."""
    config = root / "guards.toml"
    config.write_text(settings + '[header]\npreset = "profile"\n', encoding="utf-8")
    result = run_guards(capsys, "check", "--root", str(root), "--format", "json", *args)
    assert result.err == ""
    return sorted({f["rule"] for f in json.loads(result.out)["findings"]})


@pytest.mark.parametrize(
    ("settings", "args", "rules"),
    [
        ("", [], EVERY),
        ('select = ["S"]\n', [], EVERY[1:]),
        ('select = ["S"]\nextend-select = ["K003"]\n', [], EVERY),
        ('extend-select = ["K003"]\n', [], EVERY),  # with no select: every rule already runs
        ('ignore = ["S"]\nextend-ignore = ["K"]\n', [], []),
        ('extend-ignore = ["K003"]\n', [], EVERY[1:]),
        # inside a layer a more specific selector wins, an ignore at the same specificity
        ('select = ["S001"]\nignore = ["S"]\n', [], ["S001"]),
        ('select = ["S"]\nignore = ["S"]\n', [], []),
        ('select = ["schema"]\nignore = ["S001"]\n', [], ["S002", "S003", "S004", "S005"]),
        ("", ["--select", "drafter-depth", "--ignore", "K"], ["K003"]),
        # the command line is a layer over the settings: its --select replaces theirs...
        ('select = ["K"]\n', ["--select", "S002"], ["S002"]),
        ('ignore = ["S00"]\n', ["--select", "S001"], ["S001"]),
        # ...and without one, it adds to what they pick and takes away from it
        ('ignore = ["S002"]\n', ["--extend-select", "S002"], EVERY),
        ('select = ["S"]\n', ["--ignore", "S003"], ["S001", "S002", "S004", "S005"]),
        ('select = ["S"]\n', ["--extend-select", "K003"], EVERY),
        ("", ["--select", "S", "--extend-ignore", "S005"], ["S001", "S002", "S003", "S004"]),
        ("", ["--select", "S001,S002", "--extend-select", "S003", "--extend-select", "K"],
         ["K003", "S001", "S002", "S003"]),
    ],
)  # fmt: skip
def test_selection_layers_as_ruff_does(capsys, schema, settings, args, rules):
    assert found(capsys, schema, settings, *args) == rules


@pytest.mark.parametrize(
    "args", [["--extend-select", "X999"], ["--extend-ignore", "X999"], ["--select", "X999"]]
)
def test_an_unknown_selector_on_the_command_line_is_the_same_error(capsys, schema, args):
    result = run_guards(capsys, "check", "--root", str(schema), *args)
    assert (result.code, result.out) == (2, "")
    assert result.err == "guards: error: unknown rule selector `X999` (see `guards rules`)\n"


@pytest.mark.parametrize("key", ["extend-select", "extend-ignore"])
def test_an_unknown_selector_in_the_settings_is_the_same_error(capsys, schema, key):
    (schema / "guards.toml").write_text(f'{key} = ["X999"]\n', encoding="utf-8")
    result = run_guards(capsys, "check", "--root", str(schema))
    assert (result.code, result.out) == (2, "")
    assert result.err == "guards: error: unknown rule selector `X999` (see `guards rules`)\n"


@pytest.mark.parametrize("key", ["extend-select", "extend-ignore"])
def test_a_selector_list_of_the_wrong_type_is_an_error_at_its_line(capsys, schema, key):
    (schema / "guards.toml").write_text(f"\n{key} = [1]\n", encoding="utf-8")
    result = run_guards(capsys, "check", "--root", str(schema))
    assert (result.code, result.out) == (2, "")
    assert result.err == f"guards: error: guards.toml:2: `{key}` must be a list of strings\n"


def test_extend_select_of_header_rules_without_a_convention_warns(capsys, schema):
    (schema / "guards.toml").write_text("", encoding="utf-8")
    result = run_guards(capsys, "check", "--root", str(schema), "--extend-select", "S001")
    assert result.err == (
        "guards: warning: `S001` selects header rules, but the settings declare no header "
        'convention; they are off -- set header.marker (or header.preset = "profile") to turn '
        "them on\n"
    )


def test_exit_zero_exits_0_when_checks_fail_but_not_on_an_error(capsys, schema):
    failing = run_guards(capsys, "check", "--root", str(schema), "--exit-zero")
    assert failing.code == 0
    assert failing.out.endswith("guard suite: 45 pass / 8 fail\n")
    (schema / "composes" / "broken.yml").write_text("services: [\n", encoding="utf-8")
    broken = run_guards(capsys, "check", "--root", str(schema), "--exit-zero")
    assert broken.code == 2
    assert broken.err.startswith("guards: error: composes/broken.yml:2:1: YAML error: ")
