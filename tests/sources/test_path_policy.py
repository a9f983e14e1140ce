"""The path policy (guards.sources.paths): every file the estate names resolves inside --root, else a
one-line error, exit 2, nothing read or written; a path the user types may point anywhere, but
a write goes through a symlink only when the link is not one the estate holds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from guards.errors import GuardsError
from guards.sources.paths import estate_file, inside, is_inside, writable
from tests.cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards

COMPOSE = "services:\n  llm:\n    image: vllm/vllm-openai:v0.20.0\n"
SECRET = "claims:\n  - id: secret\n    title: SECRET-TOKEN\n    status: active\n    text: t.\n"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """An estate (root/) and a folder beside it (outside/) that nothing may read or change."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "composes").mkdir(parents=True)
    outside.mkdir()
    (root / "guards.toml").write_text('composes = ["composes/*.yml"]\n')
    (root / "claims.yaml").write_text(WITHDRAWN_CLAIM)
    (root / "composes" / "a.yml").write_text(COMPOSE)
    (outside / "claims.yaml").write_text(SECRET)
    (outside / "target.txt").write_text("keep me\n")
    return root, outside


def snapshot(folder: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry under ``folder``: bytes (or link text) and mode, links not followed."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            found[str(path)] = (os.readlink(path), info.st_mode)
        elif path.is_file():
            found[str(path)] = (path.read_bytes(), info.st_mode)
        else:
            found[str(path)] = (b"", info.st_mode)
    return found


# -- the policy itself ----------------------------------------------------------------------


def test_inside_follows_every_link(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "in").write_text("")
    (tmp_path / "root" / "out").symlink_to(tmp_path)
    (tmp_path / "root" / "dangling").symlink_to(tmp_path / "nowhere")
    root = tmp_path / "root"
    assert is_inside(root, root / "in")
    assert not is_inside(root, root / "out" / "x")
    assert not is_inside(root, root / "dangling")  # where it would be created
    assert not is_inside(root, root / ".." / "rootx")  # a sibling sharing the prefix
    with pytest.raises(GuardsError) as raised:
        inside(root, root / "out" / "x", "out/x", 3)
    assert str(raised.value) == (
        "out/x:3: out is a link that leads outside the estate root; not read or written"
    )


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", "a/../../x", "C:/x", "\\\\srv\\x", ""])
def test_a_setting_names_a_relative_path(tmp_path, name):
    with pytest.raises(GuardsError) as raised:
        estate_file(tmp_path, name, "claims", "guards.toml", 2)
    assert str(raised.value) == (
        f"guards.toml:2: `claims` {name!r} must be a path relative to the root, without '..'"
    )


def test_writable_refuses_only_a_committed_link_out(tmp_path):
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / "report.json").symlink_to(elsewhere / "x")
    (elsewhere / "mine.json").symlink_to(tmp_path / "y")  # the user's own link
    (root / "local.json").symlink_to(root / "real.json")
    with pytest.raises(GuardsError) as raised:
        writable(root, root / "report.json", "report.json")
    assert "is a link inside the estate that leads outside it" in str(raised.value)
    assert writable(root, elsewhere / "mine.json", "mine") == elsewhere / "mine.json"
    assert writable(root, root / "local.json", "local") == root / "local.json"


# -- every setting that names a file --------------------------------------------------------


@pytest.mark.parametrize(
    "setting, line",
    [('claims = "../outside/claims.yaml"', 1), ('claims = "/tmp/claims.yaml"', 1)],
)
def test_registry_setting_outside_is_exit_2(capsys, world, setting, line):
    root, outside = world
    (root / "guards.toml").write_text(setting + '\ncomposes = ["composes/*.yml"]\n')
    before = snapshot(outside)
    retract = ["claims", "retract", "secret", "--date", "2026-01-01", "--reason", "r"]
    (root / "instead.txt").write_text("Say this.\n")
    retract += ["--replacement-file", str(root / "instead.txt")]
    for command in (["check"], ["claims", "list"], retract):
        result = run_guards(capsys, *command, "--root", str(root))
        assert result.code == 2, command
        assert result.err.startswith(f"guards: error: guards.toml:{line}: `claims` "), command
        assert "must be a path relative to the root" in result.err
        assert "SECRET" not in result.out + result.err
    assert snapshot(outside) == before


def test_registry_link_out_is_not_edited(capsys, world):
    root, outside = world
    (root / "claims.yaml").unlink()
    (root / "claims.yaml").symlink_to(outside / "claims.yaml")
    before = snapshot(outside)
    (root / "wording.txt").write_text("A new claim.\n")
    commands = [
        ["claims", "add", "new-one", "--title", "New", "--text-file", str(root / "wording.txt")],
        ["claims", "retract", "secret", "--date", "2026-01-01", "--reason", "r"]
        + ["--replacement-file", str(root / "wording.txt")],
        ["claims", "list"],
        ["check"],
    ]
    for command in commands:
        result = run_guards(capsys, *command, "--root", str(root))
        assert result.code == 2, command
        assert result.err.splitlines()[-1] == (
            "guards: error: claims.yaml: `claims` 'claims.yaml': claims.yaml is a link that "
            "leads outside the estate root; not read or written"
        ), command
        assert "SECRET" not in result.out + result.err
    assert snapshot(outside) == before


def test_templates_folder_linked_out_is_refused(capsys, world):
    root, outside = world
    (outside / "templates").mkdir()
    (outside / "templates" / "claim.j2").write_text("SECRET {{ args }}\n")
    (root / "templates").symlink_to(outside / "templates")
    compose = root / "composes" / "a.yml"
    compose.write_text("# >>> guards:claim old-cliff\n# <<< guards:claim\n" + COMPOSE)
    before = snapshot(outside)
    for command in (["check"], ["regen"], ["regen", "--check"]):
        result = run_guards(capsys, *command, "--root", str(root))
        assert result.code in (1, 2), command
        assert "SECRET" not in result.out + result.err, command
        assert "templates is a link that leads outside the estate root" in result.out + result.err
    assert "SECRET" not in compose.read_text()
    assert snapshot(outside) == before


@pytest.mark.parametrize(
    "rule, option", [("header-drift", "statuses"), ("catalog-drift", "catalogs")]
)
@pytest.mark.parametrize("name", ["../outside/c.yaml", "/etc/c.yaml"])
def test_rule_option_files_outside_are_exit_2(capsys, world, rule, option, name):
    root, _ = world
    value = f'["{name}"]' if option == "catalogs" else f'"{name}"'
    (root / "guards.toml").write_text(
        f'composes = ["composes/*.yml"]\n\n[rules.{rule}]\n{option} = {value}\n'
    )
    result = run_guards(capsys, "check", "--root", str(root))
    assert (result.code, result.out) == (2, "")
    assert result.err.strip() == (
        f"guards: error: guards.toml:4: `rules.{rule}.{option}` {name!r} must be a path "
        "relative to the root, without '..'"
    )


@pytest.mark.parametrize(
    "rule, option", [("header-drift", "statuses"), ("catalog-drift", "catalogs")]
)
def test_rule_option_file_linked_out_is_exit_2(capsys, world, rule, option):
    root, outside = world
    (root / "catalog.yaml").symlink_to(outside / "target.txt")
    value = '["catalog.yaml"]' if option == "catalogs" else '"catalog.yaml"'
    (root / "guards.toml").write_text(
        f'composes = ["composes/*.yml"]\n\n[rules.{rule}]\n{option} = {value}\n'
    )
    result = run_guards(capsys, "check", "--root", str(root))
    assert (result.code, result.out) == (2, "")
    assert result.err.strip() == (
        f"guards: error: guards.toml:4: `rules.{rule}.{option}` 'catalog.yaml': catalog.yaml "
        "is a link that leads outside the estate root; not read or written"
    )


def test_discovered_compose_linked_out_is_not_read(capsys, world):
    root, outside = world
    (outside / "x.yml").write_text("services:\n  SECRET:\n    image: x\n")
    (root / "composes" / "b.yml").symlink_to(outside / "x.yml")
    before = snapshot(outside)
    result = run_guards(capsys, "check", "--root", str(root))
    assert result.code == 2
    assert (
        "guards: error: composes/b.yml: composes/b.yml is a link that leads outside the estate "
        "root; not read or written"
    ) in result.err.splitlines()
    assert "SECRET" not in result.out + result.err
    run_guards(capsys, "regen", "--root", str(root))
    run_guards(capsys, "fix", "--root", str(root))
    assert snapshot(outside) == before


# -- writes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dangling", [False, True])
def test_baseline_linked_out_is_not_written(capsys, world, dangling):
    root, outside = world
    target = outside / ("absent.json" if dangling else "target.txt")
    (root / ".guards-baseline.json").symlink_to(target)
    before = snapshot(outside)
    result = run_guards(capsys, "baseline", "--root", str(root))
    assert result.code == 2
    assert result.err.strip() == (
        "guards: error: .guards-baseline.json: .guards-baseline.json is a link that leads "
        "outside the estate root; not read or written"
    )
    assert snapshot(outside) == before


def test_output_through_a_committed_link_out_is_refused(capsys, world):
    root, outside = world
    (root / "report.sarif").symlink_to(outside / "target.txt")
    before = snapshot(outside)
    report = str(root / "report.sarif")
    result = run_guards(capsys, "check", "--root", str(root), "--output", report)
    assert result.code == 2
    assert result.err.strip() == (
        f"guards: error: {report}: is a link inside the estate that leads outside it; not "
        "written through (name its target to write there)"
    )
    assert snapshot(outside) == before
    named = run_guards(capsys, "check", "--root", str(root), "--output", str(outside / "r.txt"))
    assert named.code in (0, 1)  # the user named a place outside: written there
    assert "guard suite:" in (outside / "r.txt").read_text()


def test_fix_leaves_a_compose_linked_out(capsys, world):
    root, outside = world
    shutil.copy(root / "composes" / "a.yml", outside / "c.yml")
    (outside / "c.yml").write_text(STALE_COPY + COMPOSE)
    (root / "composes" / "c.yml").symlink_to(outside / "c.yml")
    before = snapshot(outside)
    for command in (["fix"], ["regen"], ["baseline"]):
        result = run_guards(capsys, *command, "--root", str(root))
        assert result.code == 2, command
    assert snapshot(outside) == before
