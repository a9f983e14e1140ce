"""``guards claims list | show | retract``."""

import pytest

from guards.sources.registry import load

from ..cli_helpers import run_guards, tree_digest
from ..conftest import FIXTURES

INCIDENT = FIXTURES / "estates" / "incident"


def test_list_counts_citations_and_stale_copies(capsys):
    result = run_guards(capsys, "claims", "list", "--root", str(INCIDENT))
    assert result.code == 0
    assert result.out.splitlines() == [
        "ID                 STATUS     ASSERTED    RETRACTED   CITED  STALE",
        "decode-cliff-1096  retracted  2026-08-25  2026-09-08      2     20",
        "spec-tax-35387     active     2026-09-08  -               2      0",
    ]


def test_show_lists_all_20_composes_and_the_note(capsys):
    result = run_guards(capsys, "claims", "show", "decode-cliff-1096", "--root", str(INCIDENT))
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == (
        "decode-cliff-1096: Accumulated-context decode cliff on the qwen3.8-27b spec-decode tiers"
    )
    assert "  status       retracted 2026-09-08 (asserted 2026-08-25)" in lines
    places = lines[lines.index("places (22):") + 1 :]
    stale = [p for p in places if p.endswith("stale copy")]
    assert len(stale) == 20 and all(p.startswith("  composes/qwen3.8-27b/vllm/") for p in stale)
    assert [p for p in places if "learnings/" in p] == [
        "  learnings/qwen3.8-27b.md:6:12  retracts",
        "  learnings/qwen3.8-27b.md:19:60  retracts",
    ]


def test_show_unknown_id_is_exit_2(capsys):
    result = run_guards(capsys, "claims", "show", "decode-cliff", "--root", str(INCIDENT))
    assert (result.code, result.out) == (2, "")
    assert result.err == "guards: error: claims.yaml: no claim with id 'decode-cliff'\n"


def write_replacement(
    tmp_path,
    text="A steady spec-decode tax (vllm#35387).\nDecode slows with context: attention cost.\n",
):
    path = tmp_path / "replacement.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_retract_edits_in_place_and_prints_what_still_asserts_it(capsys, incident, tmp_path):
    claims = incident / "claims.yaml"
    before = claims.read_text(encoding="utf-8")
    result = run_guards(
        capsys,
        "claims",
        "retract",
        "spec-tax-35387",
        "--date",
        "2026-11-29",
        "--reason",
        "Re-measured on v0.28: the tax is gone.",
        "--replacement-file",
        str(write_replacement(tmp_path)),
        "--root",
        str(incident),
    )
    assert result.code == 0, result.err
    assert result.out.splitlines()[0] == "claims.yaml: retracted spec-tax-35387 on 2026-11-29"
    assert result.out.splitlines()[1:] == [
        "still citing or asserting it: 3",
        "  learnings/qwen3.8-27b.md:5:10  cites",
        "  learnings/qwen3.8-27b.md:59:40  cites",
        "  learnings/qwen3.8-27b.md:62:1  stale copy",  # "What survives: the spec-decode tax"
    ]
    after = claims.read_text(encoding="utf-8")
    claim = load(claims, "claims.yaml").get("spec-tax-35387")
    assert (claim.status, str(claim.retracted)) == ("retracted", "2026-11-29")
    assert claim.reason == "Re-measured on v0.28: the tax is gone."
    # Why it was asserted is kept, moved from `reason` to `rationale`.
    assert claim.rationale.startswith("Spec decode on this GDN hybrid runs with PIECEWISE")
    assert (
        claim.rationale
        == load(INCIDENT / "claims.yaml", "claims.yaml").get("spec-tax-35387").reason
    )
    assert claim.replacement == (
        "A steady spec-decode tax (vllm#35387).\nDecode slows with context: attention cost."
    )
    # Only the edited claim's lines changed; the rest of the file is byte for byte the same.
    head = before.split("  - id: spec-tax-35387")[0]
    assert after.startswith(head)
    assert len(after.splitlines()) - len(before.splitlines()) <= 6


def test_retract_keeps_comments_and_order(capsys, tmp_path):
    root = tmp_path / "estate"
    root.mkdir()
    (root / "claims.yaml").write_text(
        "# registry\nversion: 1\nclaims:\n"
        "  - id: a  # the first\n    title: A\n    status: active   # was disputed\n"
        "    asserted: 2026-08-01\n\n    # the wording as published\n    text: |\n"
        "      old wording\n      # not a comment\n\n"
        "  - id: b\n    title: B\n    status: active\n",
        encoding="utf-8",
    )
    result = run_guards(
        capsys,
        "claims",
        "retract",
        "a",
        "--date",
        "2026-09-08",
        "--reason",
        "wrong",
        "--replacement-file",
        str(write_replacement(tmp_path, "new wording\n")),
        "--root",
        str(root),
    )
    assert result.code == 0, result.err
    assert (root / "claims.yaml").read_text(encoding="utf-8") == (
        "# registry\nversion: 1\nclaims:\n"
        "  - id: a  # the first\n    title: A\n    status: retracted   # was disputed\n"
        "    asserted: 2026-08-01\n    retracted: 2026-09-08\n    reason: wrong\n\n"
        "    # the wording as published\n    text: |\n"
        "      old wording\n      # not a comment\n    replacement: new wording\n\n"
        "  - id: b\n    title: B\n    status: active\n"
    )


def test_retract_replaces_existing_block_values_and_keeps_crlf(capsys, tmp_path):
    root = tmp_path / "estate"
    root.mkdir()
    text = (
        "claims:\n  - id: a\n    title: A\n    status: retracted\n    retracted: 2026-01-01\n"
        "    reason: >-\n      folded\n      reason\n    replacement: |\n      old\n"
    )
    (root / "claims.yaml").write_bytes(text.replace("\n", "\r\n").encode())
    result = run_guards(
        capsys,
        "claims",
        "retract",
        "a",
        "--date",
        "2026-09-08",
        "--reason",
        "new: reason",
        "--replacement-file",
        str(write_replacement(tmp_path, "line 1\nline 2\n")),
        "--root",
        str(root),
    )
    assert result.code == 2
    assert result.err == (
        "guards: error: claims.yaml:2: claim a is already retracted on 2026-01-01; use --force "
        "to retract it again\n"
    )
    assert (root / "claims.yaml").read_bytes() == text.replace("\n", "\r\n").encode()
    result = run_guards(
        capsys,
        "claims",
        "retract",
        "a",
        "--date",
        "2026-09-08",
        "--reason",
        "new: reason",
        "--replacement-file",
        str(write_replacement(tmp_path, "line 1\nline 2\n")),
        "--root",
        str(root),
        "--force",
    )
    assert result.code == 0, result.err
    assert (root / "claims.yaml").read_bytes().decode() == (
        "claims:\n  - id: a\n    title: A\n    status: retracted\n    retracted: 2026-09-08\n"
        '    reason: "new: reason"\n    replacement: |-\n      line 1\n      line 2\n'
    ).replace("\n", "\r\n")


@pytest.mark.parametrize(
    "args, error",
    [
        (["nope", "--date", "2026-09-08"], "claims.yaml: no claim with id 'nope'"),
        (
            ["spec-tax-35387", "--date", "2026-13-01"],
            "--date '2026-13-01' is not a date as YYYY-MM-DD",
        ),
        (
            ["spec-tax-35387", "--date", "08/09/2026"],
            "--date '08/09/2026' is not a date as YYYY-MM-DD",
        ),
    ],
)
def test_retract_refuses_bad_input_and_writes_nothing(capsys, incident, tmp_path, args, error):
    before = tree_digest(incident)
    result = run_guards(
        capsys,
        "claims",
        "retract",
        *args,
        "--reason",
        "r",
        "--replacement-file",
        str(write_replacement(tmp_path)),
        "--root",
        str(incident),
    )
    assert (result.code, result.out) == (2, "")
    assert result.err == f"guards: error: {error}\n"
    assert tree_digest(incident) == before


def test_retract_refuses_a_missing_replacement_file(capsys, incident, tmp_path):
    before = tree_digest(incident)
    result = run_guards(
        capsys,
        "claims",
        "retract",
        "spec-tax-35387",
        "--date",
        "2026-09-08",
        "--reason",
        "r",
        "--replacement-file",
        str(tmp_path / "nope.txt"),
        "--root",
        str(incident),
    )
    assert result.code == 2
    assert result.err == f"guards: error: {tmp_path / 'nope.txt'}: replacement file not found\n"
    assert tree_digest(incident) == before


def test_retract_keeps_the_file_mode(capsys, incident, tmp_path):
    claims = incident / "claims.yaml"
    claims.chmod(0o640)
    run_guards(
        capsys,
        "claims",
        "retract",
        "spec-tax-35387",
        "--date",
        "2026-09-08",
        "--reason",
        "r",
        "--replacement-file",
        str(write_replacement(tmp_path)),
        "--root",
        str(incident),
    )
    assert claims.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in incident.iterdir() if p.name.startswith(".claims")] == []


def test_retract_then_check_flags_the_remaining_citation(capsys, incident, tmp_path):
    run_guards(
        capsys,
        "claims",
        "retract",
        "spec-tax-35387",
        "--date",
        "2026-09-08",
        "--reason",
        "r",
        "--replacement-file",
        str(write_replacement(tmp_path)),
        "--root",
        str(incident),
    )
    result = run_guards(capsys, "check", "--root", str(incident), "--select", "C002")
    assert result.out.splitlines()[0] == (
        "learnings/qwen3.8-27b.md:5:10: C002 [*] cites claim spec-tax-35387 as current, but "
        "claims.yaml:57 lists it as retracted on 2026-09-08"
    )
