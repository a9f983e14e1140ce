"""What a compose's own YAML says as written (guards/sources/compose/written.py): read once from
the parser's node tree, and the only reading of it (no check composes a compose twice)."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

from guards.sources import yamlsrc
from guards.sources.compose.compose import parse_compose
from guards.sources.compose.written import Scalar, Written, env_file_entries, read_written

from ...cli_helpers import run_guards

ROOT = Path(__file__).resolve().parents[3]

TEXT = """\
x-env: &shared
  - A=1
  - A=2
services:
  one:
    image: vllm/vllm-openai:v0.27.1
    env_file: one.env
    environment: *shared
    command: --tp ${TP:-1} --port "$PORT"
  two:
    image: vllm/vllm-openai:v0.27.1
    env_file: [two.env, {path: opt.env, required: false}, null, {required: true}]
    environment: *shared
  three:
    image: vllm/vllm-openai:v0.27.1
    environment:
      - &b B=$${SHELL_ONLY}
      - *b
      - ${KEY_IS_NOT_READ}: no
    labels: {"${LABEL_KEY}": x}
"""


def written(text: str) -> Written:
    return read_written(yamlsrc.compose(text))


def test_env_files_environment_lists_and_dollar_values_as_written():
    found = written(TEXT)
    assert found.env_files == ("one.env", "two.env", "opt.env")
    shared = (Scalar("A=1", 1, 1, 5, 8), Scalar("A=2", 2, 2, 5, 8))
    b = Scalar("B=$${SHELL_ONLY}", 16, 16, 9, 28)  # libyaml starts an anchored node at its `&`
    assert found.environments == (("one", shared), ("three", (b, b)))
    _, items = found.environments[1]
    assert items[0] is items[1]  # an alias is the node it names: one Scalar
    assert found.interpolating == (
        Scalar('--tp ${TP:-1} --port "$PORT"', 8, 8, 14, 42),
        b,
    )


def test_a_compose_keeps_what_its_yaml_says_and_pickles():
    compose = parse_compose(TEXT, "c.yml")
    assert compose.written == written(TEXT)
    assert pickle.loads(pickle.dumps(compose.written)) == compose.written
    assert compose.written.interpolating[0].line == 9


def test_nothing_written_without_services_or_values():
    assert written("services: {}\n") == Written()
    assert read_written(None) == Written()


def test_a_check_composes_each_compose_once(capsys, tmp_path, monkeypatch):
    """The readers of a compose's YAML share the parser's tree: one composition per compose
    text (the registry and the settings are read by their own parsers)."""
    estate = tmp_path / "estate"
    for part in ("composes", "learnings"):
        shutil.copytree(ROOT / part, estate / part)
    shutil.copy(ROOT / "claims.yaml", estate / "claims.yaml")
    composed: list[str] = []
    original = yamlsrc._compose

    def counted(text: str):
        composed.append(text)
        return original(text)

    monkeypatch.setattr(yamlsrc, "_compose", counted)
    result = run_guards(capsys, "check", "--root", str(estate), "-j", "1")
    assert result.code == 0, result.out + result.err
    composes = sorted((estate / "composes").rglob("*.yml"))
    texts = [p.read_text(encoding="utf-8") for p in composes]
    assert len(composes) >= 10
    assert all(composed.count(text) == 1 for text in texts), [
        p.name for p, t in zip(composes, texts, strict=True) if composed.count(t) != 1
    ]


def test_env_file_entries_name_files_only():
    text = (
        "services:\n  a:\n    env_file: &self [*self, {path: [x]}, {path: ~}, 7, y.env]\n"
        "  b: {env_file: {path: z.env, required: false}}\n  c: {}\n"
    )
    services = {
        name: node
        for name, _, node in yamlsrc.items(yamlsrc.get(yamlsrc.compose(text), "services"))
    }
    assert [p.value for _, p in env_file_entries(services["a"])] == ["7", "y.env"]
    [(item, path)] = env_file_entries(services["b"])
    assert (path.value, yamlsrc.line_of(item)) == ("z.env", 4)
    assert env_file_entries(services["c"]) == []
    assert written(text).env_files == ("7", "y.env", "z.env")
