"""The pre-commit hooks, end to end with the real pre-commit in a temporary git repository that
uses this checkout as its hook repository; and what `guards check` does with the files
pre-commit passes."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, write
from ..once import run_folder

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = WITHDRAWN_CLAIM
COMPOSE = """\
# Profile (at-a-glance):
#   Model:     Qwen3.8-27B (INT4)
#   Topology:  single 3090
#   Drafter:   none
#   KV:        fp8_e4m3
#   Status:    ✅ Production
{extra}services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--max-model-len, "131072", --kv-cache-dtype, fp8_e4m3]
"""
STALE = STALE_COPY


def test_a_named_registry_settings_file_template_or_env_file_rechecks_the_estate(capsys, tmp_path):
    root = write(
        tmp_path,
        {
            "claims.yaml": CLAIMS,
            "guards.toml": 'composes = ["composes/*.yml"]\nheader = { preset = "profile" }\n',
            "composes/a.yml": COMPOSE.format(extra=STALE),
            "composes/b.yml": COMPOSE.format(extra=""),
        },
    )
    one = run_guards(capsys, "check", "composes/b.yml", cwd=root)
    assert (one.code, one.out) == (0, "guard suite: 17 pass / 0 fail\n")
    (root / "composes" / ".env").write_text("UNUSED=1\n", encoding="utf-8")
    for name in ("claims.yaml", "guards.toml", "templates/claim.j2", "composes/.env"):
        whole = run_guards(capsys, "check", name, cwd=root)
        assert whole.code == 1, name
        assert whole.out.startswith(
            "composes/a.yml:7:1: C001 [*] repeats withdrawn claim old-cliff"
        )


def test_a_named_file_outside_the_globs_is_skipped(capsys, tmp_path):
    root = write(
        tmp_path,
        {
            "claims.yaml": CLAIMS,
            "README.md": "# Estate\n\n" + STALE.replace("# ", ""),
            "ci.yml": "jobs: {}\n",
        },
    )
    result = run_guards(capsys, "check", "README.md", "ci.yml", cwd=root)
    assert (result.code, result.out) == (0, "guard suite: 1 pass / 0 fail\n")


ENV = {  # pre-commit's cache goes to a temporary folder (set by the fixture)
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _run(repo: Path, args: list[str], check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        args,
        cwd=repo,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        check=check,
        timeout=900,
    )


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return _run(repo, ["git", *args], check)


@pytest.fixture(scope="module")
def hooked(tmp_path_factory):
    """An estate in its own git repository with this checkout's hooks installed."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if head.returncode != 0:
        pytest.skip("this checkout is not a git repository")
    repo = tmp_path_factory.mktemp("estate")
    # One pre-commit store for the run's workers: pre-commit locks it while it installs, so
    # the hook environment is built once and the other workers' `install-hooks` find it.
    home = run_folder(tmp_path_factory) / "pre-commit-home"
    home.mkdir(exist_ok=True)
    ENV["PRE_COMMIT_HOME"] = str(home)
    write(
        repo,
        {
            "claims.yaml": CLAIMS,
            "guards.toml": 'composes = ["composes/*.yml"]\n',
            "composes/a.yml": COMPOSE.format(extra=""),
            ".pre-commit-config.yaml": (
                f"repos:\n  - repo: {ROOT}\n    rev: {head.stdout.strip()}\n"
                "    hooks: [{id: guards-check}, {id: guards-regen}]\n"
            ),
        },
    )
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "start", "--no-verify")
    precommit = [sys.executable, "-m", "pre_commit"]
    _run(repo, [*precommit, "install"])
    _run(repo, [*precommit, "install-hooks"])
    return repo


def commit(repo: Path, files: dict[str, str], message: str) -> subprocess.CompletedProcess:
    write(repo, files)
    _git(repo, "add", ".")
    return _git(repo, "commit", "-m", message, check=False)


def test_a_commit_that_adds_a_stale_claim_is_refused(hooked):
    result = commit(hooked, {"composes/b.yml": COMPOSE.format(extra=STALE)}, "stale")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "guards check" in output and "Failed" in output
    # the hook runs the committed guards (HEAD), which may predate the `[*]` of a fixable one
    assert re.search(
        r"^composes/b\.yml:7:1: C001 (\[\*\] )?repeats withdrawn claim old-cliff \(lines 7-8\)",
        output,
        re.MULTILINE,
    )
    _git(hooked, "reset", "-q", "--hard")
    (hooked / "composes/b.yml").unlink(missing_ok=True)  # reset dropped it


def test_a_clean_commit_passes(hooked):
    result = commit(hooked, {"composes/c.yml": COMPOSE.format(extra="# A tier note.\n")}, "ok")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_commit_of_the_registry_alone_rechecks_the_estate(hooked):
    # An estate file that passes today but repeats a claim the new registry withdraws.
    text = COMPOSE.format(extra="# Speculative decoding is free on this model.\n")
    assert commit(hooked, {"composes/d.yml": text}, "d").returncode == 0
    withdrawn = CLAIMS + (
        "  - id: free-spec\n    title: Free spec decode\n    status: retracted\n"
        "    retracted: 2026-10-01\n    reason: Measured a tax.\n"
        "    text: Speculative decoding is free on this model.\n"
        '    match: ["Speculative decoding is free on this model"]\n'
    )
    result = commit(hooked, {"claims.yaml": withdrawn}, "retract")
    assert result.returncode != 0
    assert re.search(
        r"^composes/d\.yml:7:1: C001 (\[\*\] )?repeats withdrawn claim free-spec",
        result.stdout + result.stderr,
        re.MULTILINE,
    )
