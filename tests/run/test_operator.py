"""The operator's view: findings the env file causes are marked, `--env-only` keeps only those,
and their hints name the line of the env file to change."""

import pytest

from ..cli_helpers import run_guards

COMPOSE = """\
# Profile (at-a-glance):
#   Model:     Qwen3.8-27B
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command:
      - --gpu-memory-utilization
      - "${GPU_MEMORY_UTILIZATION:-0.90}"
  sidecar:
    image: vllm/vllm-openai:v0.27.1
    command: [--gpu-memory-utilization, "0.97"]
"""
K001 = "composes/c.yml:{line}:{col}: K001 {tag}gpu-memory-utilization {value} is above the ceiling 0.94 (the default ceiling 0.94; no registry claim sets one for this model)"


@pytest.fixture
def estate(tmp_path):
    (tmp_path / "composes").mkdir()
    (tmp_path / "composes" / "c.yml").write_text(COMPOSE, encoding="utf-8")
    (tmp_path / "guards.toml").write_text('select = ["K001"]\n', encoding="utf-8")
    (tmp_path / "my.env").write_text("GPU_MEMORY_UTILIZATION=0.96\n", encoding="utf-8")
    return tmp_path


def test_findings_the_env_file_causes_are_marked_with_an_operator_hint(capsys, estate):
    result = run_guards(capsys, "check", "-v", "--env-file", "my.env", cwd=estate)
    assert result.code == 1
    assert result.out.splitlines() == [
        K001.format(
            line=8,
            col=9,
            tag="[from my.env] ",
            value="0.96 (from GPU_MEMORY_UTILIZATION in the environment)",
        ),
        "    hint: GPU_MEMORY_UTILIZATION=0.96 in my.env causes this: change or remove it "
        "(the compose ships 0.90)",
        K001.format(line=11, col=41, tag="", value="0.97"),
        "    hint: ship 0.94 or lower; a bigger KV pool is not worth prefill OOMs",
        "guard suite: 0 pass / 1 fail",
    ]


def test_env_only_leaves_out_what_the_compose_does_by_itself(capsys, estate):
    result = run_guards(capsys, "check", "--env-only", "--env-file", "my.env", cwd=estate)
    assert result.out.splitlines() == [
        K001.format(
            line=8,
            col=9,
            tag="[from my.env] ",
            value="0.96 (from GPU_MEMORY_UTILIZATION in the environment)",
        ),
        "guard suite: 0 pass / 1 fail",
    ]


def test_an_env_file_that_changes_nothing_marks_nothing(capsys, estate):
    (estate / "my.env").write_text("UNRELATED=1\n", encoding="utf-8")
    result = run_guards(capsys, "check", "--env-only", "--env-file", "my.env", cwd=estate)
    assert (result.code, result.out) == (0, "guard suite: 1 pass / 0 fail\n")


def test_env_only_needs_an_env_file(capsys, estate):
    result = run_guards(capsys, "check", "--env-only", cwd=estate)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        "guards: error: --env-only needs --env-file FILE\n",
    )


def test_json_carries_the_env_file_of_each_finding(capsys, estate):
    import json

    result = run_guards(capsys, "check", "--format", "json", "--env-file", "my.env", cwd=estate)
    assert [f["env"] for f in json.loads(result.out)["findings"]] == ["my.env", None]
