"""`guards check - --stdin-filename FILE`: the text on standard input checked as FILE of the
estate (its settings, rules and suppressions; every other file as on disk), nothing written."""

import io
import subprocess
import sys
from pathlib import Path

import pytest

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, tree_digest, write

BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
FOUND = (
    "composes/a.yml:1:1: C001 [*] repeats withdrawn claim old-cliff (lines 1-2), retracted "
    "2026-09-08: A harness artefact.\n"
)


@pytest.fixture
def root(tmp_path):
    return write(
        tmp_path / "estate",
        {
            "claims.yaml": WITHDRAWN_CLAIM,
            "guards.toml": 'composes = ["composes/*.yml"]\n',
            "composes/a.yml": BODY,
            "composes/b.yml": BODY,
        },
    )


def piped(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_the_text_on_standard_input_is_checked_in_place_of_the_file(capsys, root, monkeypatch):
    before = tree_digest(root)
    piped(monkeypatch, (STALE_COPY + BODY).encode())
    result = run_guards(capsys, "check", "-", "--stdin-filename", "composes/a.yml", cwd=root)
    assert (result.code, result.err) == (1, "")
    assert result.out == FOUND + "guard suite: 9 pass / 1 fail, 1 fixable with --fix\n"
    assert tree_digest(root) == before


def test_the_file_on_disk_does_not_count_only_the_text_given(capsys, root, monkeypatch):
    (root / "composes" / "a.yml").write_text(STALE_COPY + BODY, encoding="utf-8")
    piped(monkeypatch, BODY.encode())
    result = run_guards(capsys, "check", "-", "--stdin-filename", "composes/a.yml", cwd=root)
    assert (result.code, result.out) == (0, "guard suite: 10 pass / 0 fail\n")


def test_the_settings_and_suppressions_are_those_of_the_path(capsys, root, monkeypatch):
    (root / "guards.toml").write_text(
        'composes = ["composes/*.yml"]\nignore = ["C001"]\n', encoding="utf-8"
    )
    piped(monkeypatch, (STALE_COPY + BODY).encode())
    ignored = run_guards(capsys, "check", "-", "--stdin-filename", "composes/a.yml", cwd=root)
    assert (ignored.code, ignored.out) == (0, "guard suite: 9 pass / 0 fail\n")
    (root / "guards.toml").write_text('composes = ["composes/*.yml"]\n', encoding="utf-8")
    waived = "# guards: ignore[C001] quoted from the report\n" + STALE_COPY + BODY
    piped(monkeypatch, waived.encode())
    suppressed = run_guards(capsys, "check", "-", "--stdin-filename", "composes/a.yml", cwd=root)
    assert (suppressed.code, suppressed.out) == (
        0,
        "guard suite: 13 pass / 0 fail, 1 suppressed\n",
    )


def test_the_estate_is_found_from_the_path_as_for_a_named_file(capsys, root, monkeypatch):
    piped(monkeypatch, (STALE_COPY + BODY).encode())
    named = str(root / "composes" / "a.yml")
    result = run_guards(capsys, "check", "-", "--stdin-filename", named, cwd=root.parent)
    assert result.code == 1 and result.out.startswith(FOUND)


def test_a_registry_on_standard_input_rechecks_the_estate(capsys, root, monkeypatch):
    (root / "composes" / "b.yml").write_text(STALE_COPY + BODY, encoding="utf-8")
    (root / "claims.yaml").write_text("claims: []\n", encoding="utf-8")
    assert run_guards(capsys, "check", cwd=root).code == 0  # nothing withdrawn on disk
    piped(monkeypatch, WITHDRAWN_CLAIM.encode())
    result = run_guards(capsys, "check", "-", "--stdin-filename", "claims.yaml", cwd=root)
    assert result.code == 1
    assert result.out.startswith(FOUND.replace("composes/a.yml", "composes/b.yml"))


def test_diff_shows_the_fixes_of_the_text_given_and_writes_nothing(capsys, root, monkeypatch):
    before = tree_digest(root)
    piped(monkeypatch, (STALE_COPY + BODY).encode())
    args = ("check", "-", "--stdin-filename", "composes/a.yml", "--diff")
    result = run_guards(capsys, *args, cwd=root)
    assert result.code == 1
    assert result.out == (
        "--- a/composes/a.yml\n+++ b/composes/a.yml\n@@ -1,5 +1,8 @@\n"
        + "".join(f"-{line}\n" for line in STALE_COPY.splitlines())
        + "+# >>> guards:claim old-cliff\n"
        "+# ⚠️ RETRACTED 2026-09-08 (claim:old-cliff): Decode cliff\n"
        "+#   Why: A harness artefact.\n"
        "+#   Instead: Decode is flat with context.\n"
        "+# <<< guards:claim (checksum: c36a6dfc)\n"
        + "".join(f" {line}\n" for line in BODY.splitlines())
    )
    assert result.err == "guards: would fix 1 finding in 1 file\n"
    assert tree_digest(root) == before


def test_a_kept_run_is_neither_used_for_nor_made_from_standard_input(
    capsys, root, monkeypatch, tmp_path
):
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    clean = run_guards(capsys, "check", cwd=root)
    assert clean.out == "guard suite: 19 pass / 0 fail\n"
    piped(monkeypatch, (STALE_COPY + BODY).encode())
    given = run_guards(capsys, "check", "-", "--stdin-filename", "composes/a.yml", cwd=root)
    assert given.out.startswith(FOUND)
    assert run_guards(capsys, "check", cwd=root).out == clean.out
    assert run_guards(capsys, "check", "composes/a.yml", cwd=root).out == (
        "guard suite: 10 pass / 0 fail\n"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["-"], "`-` reads standard input: --stdin-filename FILE says which file it is"),
        (["--stdin-filename", "composes/a.yml"],
         "--stdin-filename names the file `-` (standard input) stands for"),
        (["-", "composes/b.yml", "--stdin-filename", "composes/a.yml"],
         "`-` (standard input) is the only path when it is given"),
        (["-", "--stdin-filename", "composes/new.yml"],
         "composes/new.yml: --stdin-filename names no file of the estate; not checked"),
        (["-", "--stdin-filename", "composes/a.yml", "--fix"],
         "--fix cannot write standard input back; --diff shows its fixes"),
    ],
)  # fmt: skip
def test_standard_input_used_wrongly_is_a_one_line_error(capsys, root, monkeypatch, args, error):
    piped(monkeypatch, (STALE_COPY + BODY).encode())
    before = tree_digest(root)
    result = run_guards(capsys, "check", *args, cwd=root)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")
    assert tree_digest(root) == before


def test_a_path_outside_the_estate_is_a_one_line_error(capsys, root, monkeypatch):
    (root.parent / "elsewhere.yml").write_text(BODY, encoding="utf-8")
    piped(monkeypatch, BODY.encode())
    result = run_guards(
        capsys, "check", "--root", ".", "-", "--stdin-filename", "../elsewhere.yml", cwd=root
    )
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "guards: error: ../elsewhere.yml: --stdin-filename is outside the estate (.); not checked\n"
    )


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"services:\n  a: \xff\n", "composes/a.yml:2:6: not valid UTF-8 (byte 0xff)"),
        (b"x" * 1_000_001, "composes/a.yml: is larger than 1 MB (setting max-file-mb)"),
    ],
)
def test_standard_input_that_cannot_be_read_as_the_file_is_a_one_line_error(
    capsys, root, monkeypatch, data, error
):
    (root / "guards.toml").write_text(
        'composes = ["composes/*.yml"]\nmax-file-mb = 1\n', encoding="utf-8"
    )
    piped(monkeypatch, data)
    result = run_guards(capsys, "check", "-", "--stdin-filename", "composes/a.yml", cwd=root)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")


def test_a_real_pipe_is_read(root):
    project = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "guards", "check", "-", "--stdin-filename", "composes/a.yml"],
        input=(STALE_COPY + BODY).encode(),
        cwd=root,
        capture_output=True,
        env={"PYTHONPATH": str(project), "GUARDS_NO_CACHE": "1", "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (1, b"")
    assert done.stdout.decode() == FOUND + "guard suite: 9 pass / 1 fail, 1 fixable with --fix\n"
