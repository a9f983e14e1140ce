"""Settings are found as ruff finds them: the nearest folder at or above the current one (or
above the first file named) with a guards.toml or a pyproject.toml with [tool.guards]; that
folder is the estate."""

from pathlib import Path

from ..cli_helpers import run_guards

COMPOSE = "services:\n  app:\n    image: vllm/vllm-openai:v0.27.1\n"


def estate(base: Path, settings: str = 'composes = ["composes/*.yml"]\nnotes = []\n') -> Path:
    (base / "composes").mkdir(parents=True)
    (base / "composes" / "a.yml").write_text(COMPOSE, encoding="utf-8")
    (base / "guards.toml").write_text(settings, encoding="utf-8")
    return base


def test_a_run_from_a_subfolder_uses_the_estate_above(capsys, tmp_path):
    root = estate(tmp_path / "estate")
    result = run_guards(capsys, "check", "--format", "json", cwd=root / "composes")
    assert result.code == 0, result.err
    assert '"files": 1' in result.out


def test_a_named_file_uses_the_settings_nearest_to_it(capsys, tmp_path):
    root = estate(
        tmp_path / "estate", 'composes = ["composes/*.yml"]\nnotes = []\nselect = ["K"]\n'
    )
    result = run_guards(capsys, "check", "-v", "estate/composes/a.yml", cwd=tmp_path)
    assert result.code == 0, result.err
    assert "guard suite:" in result.out
    assert (root / "guards.toml").exists()


def test_a_pyproject_without_a_guards_table_is_passed_over(capsys, tmp_path):
    root = estate(tmp_path / "estate")
    (root / "composes" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 99\n")
    result = run_guards(capsys, "check", "--format", "json", cwd=root / "composes")
    assert result.code == 0 and '"files": 1' in result.out


def test_a_pyproject_with_a_guards_table_is_an_estate_of_its_own(capsys, tmp_path):
    root = estate(tmp_path / "estate")
    inner = root / "composes"
    (inner / "pyproject.toml").write_text('[tool.guards]\ncomposes = ["*.yml"]\nnotes = []\n')
    result = run_guards(capsys, "check", "--format", "json", cwd=inner)
    assert result.code == 0, result.err
    assert '"path": "a.yml"' in result.out or '"files": 1' in result.out


def test_without_settings_anywhere_the_current_folder_is_the_estate(capsys, tmp_path):
    (tmp_path / "a.yml").write_text(COMPOSE, encoding="utf-8")
    result = run_guards(capsys, "check", "--format", "json", cwd=tmp_path)
    assert result.code in (0, 1), result.err
    assert '"files": 1' in result.out


def test_root_and_config_keep_their_meaning(capsys, tmp_path):
    root = estate(tmp_path / "estate")
    named = run_guards(capsys, "check", "--root", str(root), "--format", "json", cwd=tmp_path)
    assert named.code == 0 and '"files": 1' in named.out
    (tmp_path / "other.toml").write_text('composes = ["estate/composes/*.yml"]\nnotes = []\n')
    configured = run_guards(
        capsys, "check", "--config", "other.toml", "--format", "json", cwd=tmp_path
    )
    assert configured.code == 0 and '"files": 1' in configured.out
