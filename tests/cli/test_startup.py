"""Start-up: what a `guards check` of one compose imports in a fresh process.

Each run is a fresh interpreter that runs the console entry point in-process and then prints
which of the watched modules it imported. No timing here: bench/startup.py measures; these
tests keep the structural wins from regressing."""

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from guards.sources.patterns import lazy

from ..cli_helpers import project_estate

PROJECT = Path(__file__).resolve().parents[2]
COMPOSE = "composes/qwen3.8-27b/ik-llama/single/mtp.yml"  # has a generated region
WATCHED = (
    "typer",
    "pydantic",
    "jinja2",
    "markdown_it",
    "yaml",
    "guards.sources.compose.header",
    "guards.sources.notes.body",  # the markdown readers
    "guards.rules",
    "guards.write.fixes",
    "multiprocessing",
    "guards.sources.settings",  # the settings' schema
    "guards.sources.registry_schema",  # the registry's
)
RUN = """
import json, sys
from guards.cli import main
sys.argv = ["guards", *sys.argv[1:]]
try:
    main()
except SystemExit as done:
    code = done.code
print(json.dumps({"code": code, "loaded": [m for m in WATCHED if m in sys.modules]}))
"""


def imported(*args: str, cwd: Path = PROJECT, env: dict[str, str] | None = None) -> dict:
    """The exit code of ``guards ARGS`` run in a fresh process, and the watched modules it
    imported."""
    script = f"WATCHED = {WATCHED!r}\n{RUN}"
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture
def cache_env(tmp_path, monkeypatch):
    """The environment of a process with the run cache on, in a folder of the test's own."""
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    return dict(os.environ)


def test_a_kept_check_imports_neither_pydantic_nor_the_parsers(cache_env, tmp_path):
    root = project_estate(tmp_path / "estate")
    assert imported("check", COMPOSE, cwd=root, env=cache_env)["code"] == 0  # computed, kept
    kept = imported("check", COMPOSE, cwd=root, env=cache_env)
    # `check PATH` with no option runs without typer; settings without `by-status` are read
    # without the header parser; a kept run loads no compose, note, registry or rule
    assert kept == {"code": 0, "loaded": []}


def test_an_edited_compose_reads_the_kept_settings_and_registry_without_their_schemas(
    cache_env, tmp_path
):
    root = project_estate(tmp_path / "estate")
    assert "[tool.guards" in (root / "pyproject.toml").read_text()  # settings to validate
    first = imported("check", COMPOSE, cwd=root, env=cache_env)
    assert {"guards.sources.settings", "guards.sources.registry_schema"} <= set(first["loaded"])
    with (root / COMPOSE).open("a") as compose:
        compose.write("# one more line\n")  # the run is computed again: settings, claims kept
    edited = imported("check", COMPOSE, cwd=root, env=cache_env)
    assert edited["code"] == 0 and "guards.rules" in edited["loaded"]
    assert "pydantic" not in edited["loaded"]  # nor the rule options' models: no [rules.*]
    assert "jinja2" not in edited["loaded"]  # its region is rendered as the run before did
    assert "guards.sources.settings" not in edited["loaded"]
    assert "guards.sources.registry_schema" not in edited["loaded"]


def test_rule_options_kept_from_the_run_before_are_read_without_pydantic(cache_env, tmp_path):
    root = project_estate(tmp_path / "estate")
    with (root / "pyproject.toml").open("a") as settings:
        settings.write('\n[tool.guards.rules.K001]\ndefault-ceiling = 0.95\nseverity = "warning"\n')
    first = imported("check", COMPOSE, cwd=root, env=cache_env)
    assert first["code"] == 0 and "pydantic" in first["loaded"]  # the table is validated
    with (root / COMPOSE).open("a") as compose:
        compose.write("# one more line\n")
    edited = imported("check", COMPOSE, cwd=root, env=cache_env)
    assert edited["code"] == 0 and "pydantic" not in edited["loaded"]


def test_only_a_command_line_with_options_imports_typer(cache_env, tmp_path):
    root = project_estate(tmp_path / "estate")
    assert imported("check", COMPOSE, cwd=root, env=cache_env)["code"] == 0
    with_option = imported("check", "--format", "text", COMPOSE, cwd=root, env=cache_env)
    assert with_option == {"code": 0, "loaded": ["typer"]}  # the same run, kept: parsed only


def test_version_and_usage_errors_import_no_pydantic():
    # typer < 0.29 parses options without pydantic
    assert imported("--version") == {"code": 0, "loaded": ["typer"]}
    assert imported("check", "--format", "xml", COMPOSE) == {"code": 2, "loaded": ["typer"]}


def test_a_compose_without_regions_or_notes_needs_no_jinja2_or_markdown_reader(tmp_path):
    (tmp_path / "c.yml").write_text(
        "# Profile (at-a-glance):\n#   Status:    ✅ Production\n"
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
    )
    (tmp_path / "notes.md").write_text("# Notes\n\nNothing withdrawn here.\n")
    (tmp_path / "guards.toml").write_text('[header]\npreset = "profile"\n')
    found = imported("check", "--no-cache", "c.yml", cwd=tmp_path)
    assert found["code"] == 1  # S003: the profile lacks required fields
    assert "jinja2" not in found["loaded"] and "markdown_it" not in found["loaded"]
    assert "guards.sources.notes.body" not in found["loaded"]
    assert "yaml" in found["loaded"] and "guards.rules" in found["loaded"]
    (tmp_path / "learnings").mkdir()
    (tmp_path / "learnings" / "n.md").write_text("# A note\n\nNothing withdrawn here.\n")
    note = imported("check", "--no-cache", "learnings/n.md", cwd=tmp_path)
    assert note["code"] == 0 and "guards.sources.notes.body" in note["loaded"]


def test_a_compose_with_a_generated_region_renders_it_with_jinja2():
    found = imported("check", "--no-cache", COMPOSE)
    assert found["code"] == 0 and "jinja2" in found["loaded"]
    assert "markdown_it" not in found["loaded"]  # the notes are not part of this run
    assert "multiprocessing" not in found["loaded"]  # one file is never split among workers


def test_a_computed_check_imports_the_fixes_only_for_a_finding_its_rule_marks_fixable(tmp_path):
    found = imported("check", "--no-cache", COMPOSE)  # no finding at all
    assert found["code"] == 0 and "guards.write.fixes" not in found["loaded"]
    (tmp_path / "claims.yaml").write_text(
        "claims:\n  - id: old-cliff\n    title: Decode cliff\n    status: retracted\n"
        "    retracted: 2026-09-08\n    reason: A harness artefact.\n"
        "    text: Decode collapses once accumulated context passes ~21k on the spec tiers.\n"
    )
    body = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
    (tmp_path / "a.yml").write_text("# Gone: claim:old-cliff is fine.\n" + body)
    (tmp_path / "b.yml").write_text("# Fine.\n" + body)
    (tmp_path / "guards.toml").write_text('select = ["C"]\n')
    cited = imported("check", "--no-cache", "a.yml", cwd=tmp_path)
    assert cited["code"] == 1 and "guards.write.fixes" in cited["loaded"]  # the [*] mark
    unmarked = imported("check", "--no-cache", "--select", "C003", "b.yml", cwd=tmp_path)
    assert unmarked["code"] == 0 and "guards.write.fixes" not in unmarked["loaded"]


LAZY = """
import sys, guards.cli
from guards.rules import all_rules
from guards.facts import figures, kv
from guards.sources import markers
from guards.sources.notes import mdfast, mdinline
all_rules()
lazy = [value for module in (figures, kv, markers, mdfast, mdinline)
        for value in vars(module).values() if type(value).__name__ == "_Lazy"]
print(len(lazy), sum("search" in vars(p) for p in lazy))
"""


def test_importing_every_rule_compiles_none_of_the_lazy_patterns():
    done = subprocess.run(
        [sys.executable, "-c", LAZY], cwd=PROJECT, capture_output=True, text=True, timeout=120
    )
    count, compiled = map(int, done.stdout.split())
    assert count >= 25 and compiled == 0


def test_a_lazy_pattern_compiles_on_first_use_and_behaves_as_the_compiled_one():
    pattern = lazy(r"(?P<n>[0-9]+)\s*x", re.IGNORECASE)
    assert pattern.pattern == r"(?P<n>[0-9]+)\s*x" and "search" not in vars(pattern)
    assert pattern.search("tp 4 X").group("n") == "4"
    assert "search" in vars(pattern)  # kept: later calls go straight to the compiled pattern
    assert pattern.groupindex == {"n": 1} and pattern.flags & re.IGNORECASE
    assert pattern.sub("#", "2x 3X") == "# #"
    again = pickle.loads(pickle.dumps(pattern))
    assert again.findall("1x 22x") == ["1", "22"]
    with pytest.raises(AttributeError):
        pattern.no_such_method  # noqa: B018
