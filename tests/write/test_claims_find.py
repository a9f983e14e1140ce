"""`guards claims find` (triage by similarity, confirm, dismiss) and `guards claims add`."""

import pytest

from guards.sources.registry import load

from ..cli_helpers import run_guards, tree_digest
from ..conftest import FIXTURES

INCIDENT = FIXTURES / "estates" / "incident"
SUPERMAX = "composes/qwen3.8-27b/vllm/dual/supermax.yml"


def test_find_ranks_passages_and_says_why(capsys):
    result = run_guards(capsys, "claims", "find", "decode-cliff-1096", "--root", str(INCIDENT))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "decode-cliff-1096 (retracted 2026-09-08): 28 passages share its words"
    assert lines[1:4] == [
        " 1.00  stale       composes/qwen3.8-27b/vllm/dual/max.yml:18-24",
        "       words: supermax, mtp, tok, decode · numbers and ids: 20000, dflash2, 21000, "
        '12000 · repeats: "accumulated context decode cliff 1096 on the spec…"; '
        '"collapses 12000 to 4 6 tok s severity splits by h…"',
        "       > ⚠️ ACCUMULATED-CONTEXT DECODE CLIFF (#1096): on the spec-decode tiers decode "
        "collapses once accumul…",
    ]
    assert len(lines) == 1 + 3 * 20  # --limit defaults to 20
    statuses = {line.split()[1] for line in lines[1::3]}
    assert statuses <= {"stale", "correction", "candidate", "cites"}


def test_find_shows_uncited_copies_of_an_active_claim(capsys):
    result = run_guards(
        capsys, "claims", "find", "spec-tax-35387", "--root", str(INCIDENT), "--limit", "1"
    )
    assert result.out.splitlines()[:2] == [
        "spec-tax-35387 (active): 2 passages share its words",
        " 1.00  copy        learnings/qwen3.8-27b.md:61-65",
    ]


def test_dismiss_records_not_match_and_silences_the_passage(capsys, incident):
    where = f"{SUPERMAX}:26"
    before = run_guards(capsys, "check", "--root", str(incident), "--select", "C001")
    assert f"{SUPERMAX}:26:1: C001" in before.out
    result = run_guards(
        capsys, "claims", "find", "decode-cliff-1096", "--dismiss", where, "--root", str(incident)
    )
    assert (result.code, result.out) == (
        0,
        "claims.yaml: added the passage to decode-cliff-1096.not_match\n",
    )
    claim = load(incident / "claims.yaml", "claims.yaml").get("decode-cliff-1096")
    assert claim.not_match == [
        "⚠️ MTP n=3 (dual-max) falls off ~21k to 1.5–6 tok/s and DFlash2 n=7\n"
        "(dual-supermax) collapses ~12k to 4–6 tok/s."
    ]
    after = run_guards(capsys, "check", "--root", str(incident), "--select", "C001")
    assert f"{SUPERMAX}:26" not in after.out
    assert after.out.endswith("guard suite: 2 pass / 19 fail, 18 fixable with --fix\n")
    listed = run_guards(
        capsys, "claims", "find", "decode-cliff-1096", "--root", str(incident), "--limit", "99"
    )
    assert f"{SUPERMAX}:26" not in listed.out
    again = run_guards(
        capsys, "claims", "find", "decode-cliff-1096", "--dismiss", where, "--root", str(incident)
    )  # a dismissed passage is no longer ranked, so there is nothing to dismiss
    assert (again.code, again.err) == (
        2,
        f"guards: error: {where}: no ranked passage there (see `guards claims find ID`)\n",
    )


def test_confirm_records_a_variant_that_check_then_finds(capsys, estate):
    reworded = "Prose spec is net-negative on v0.3.0 for every tier we ship."
    note = estate / "learnings" / "prose.md"
    note.write_text(f"# Prose spec\n\n{reworded}\n", encoding="utf-8")
    claims = estate / "claims.yaml"
    claims.write_text(
        claims.read_text(encoding="utf-8")
        + "  - id: prose-spec-negative\n    title: prose speculative decoding loses\n"
        "    status: active\n    text: Prose speculative decoding costs more than it saves on"
        " v0.3.0.\n",
        encoding="utf-8",
    )
    result = run_guards(
        capsys,
        "claims", "find", "prose-spec-negative", "--confirm", "learnings/prose.md:3",
        "--root", str(estate),
    )  # fmt: skip
    assert result.code == 0, result.err
    claim = load(claims, "claims.yaml").get("prose-spec-negative")
    assert claim.variants == [reworded]
    again = run_guards(
        capsys,
        "claims", "find", "prose-spec-negative", "--confirm", "learnings/prose.md:3",
        "--root", str(estate),
    )  # fmt: skip
    assert again.out == "claims.yaml: prose-spec-negative already lists that passage in variants\n"


@pytest.mark.parametrize(
    "place, error",
    [
        ("nowhere", "guards: error: 'nowhere' is not PATH:LINE\n"),
        (
            "learnings/qwen3.8-27b.md:1",
            "guards: error: learnings/qwen3.8-27b.md:1: no ranked passage there (see `guards "
            "claims find ID`)\n",
        ),
    ],
)
def test_confirm_a_place_that_is_not_a_passage_is_exit_2(capsys, incident, place, error):
    before = tree_digest(incident)
    result = run_guards(
        capsys, "claims", "find", "decode-cliff-1096", "--confirm", place, "--root", str(incident)
    )
    assert (result.code, result.err) == (2, error)
    assert tree_digest(incident) == before


def test_add_from_a_passage(capsys, incident):
    result = run_guards(
        capsys,
        "claims", "add", "cliff-copy", "--title", "A copy", "--from", f"{SUPERMAX}:26-27",
        "--date", "2026-09-01", "--match", "falls off ~21k", "--root", str(incident),
    )  # fmt: skip
    assert (result.code, result.out) == (0, "claims.yaml: added cliff-copy\n"), result.err
    claim = load(incident / "claims.yaml", "claims.yaml").get("cliff-copy")
    assert (claim.status, str(claim.asserted), claim.match) == (
        "active", "2026-09-01", ["falls off ~21k"]
    )  # fmt: skip
    assert claim.text == (
        "⚠️ MTP n=3 (dual-max) falls off ~21k to 1.5–6 tok/s and DFlash2 n=7\n"
        "   (dual-supermax) collapses ~12k to 4–6 tok/s."
    )
    text = (incident / "claims.yaml").read_text(encoding="utf-8")
    assert text.endswith("  - id: cliff-copy\n    title: A copy\n    status: active\n"
                         "    asserted: 2026-09-01\n    text: |-\n"
                         "      ⚠️ MTP n=3 (dual-max) falls off ~21k to 1.5–6 tok/s and DFlash2 n=7\n"
                         "         (dual-supermax) collapses ~12k to 4–6 tok/s.\n"
                         "    match:\n      - falls off ~21k\n")  # fmt: skip


def test_add_from_a_text_file(capsys, incident, tmp_path):
    wording = tmp_path / "wording.txt"
    wording.write_text("Batched tokens are the lever.\n", encoding="utf-8")
    result = run_guards(
        capsys,
        "claims", "add", "batch-lever", "--title", "Batch lever", "--text-file", str(wording),
        "--root", str(incident),
    )  # fmt: skip
    assert result.code == 0, result.err
    claim = load(incident / "claims.yaml", "claims.yaml").get("batch-lever")
    assert claim.text == "Batched tokens are the lever." and claim.asserted is not None


@pytest.mark.parametrize(
    "args, error",
    [
        (["decode-cliff-1096", "--title", "x", "--from", f"{SUPERMAX}:26"],
         "claims.yaml: claim id 'decode-cliff-1096' already exists"),
        (["Bad_Id", "--title", "x", "--from", f"{SUPERMAX}:26"],
         "'Bad_Id' is not a kebab-case claim id"),
        (["new-id", "--title", "x"], "give the wording with exactly one of --text-file or --from"),
        (["new-id", "--title", "x", "--from", f"{SUPERMAX}:999"],
         f"{SUPERMAX}:999: lines 999-999 are not in the file"),
        (["new-id", "--title", "x", "--from", "missing.yml:1"], "missing.yml: no such file"),
        (["new-id", "--title", "x", "--from", f"{SUPERMAX}:26", "--date", "2026-02-30"],
         "--date '2026-02-30' is not a date as YYYY-MM-DD"),
    ],
)  # fmt: skip
def test_add_refusals_are_exit_2_and_write_nothing(capsys, incident, args, error):
    before = tree_digest(incident)
    result = run_guards(capsys, "claims", "add", *args, "--root", str(incident))
    assert (result.code, result.err) == (2, f"guards: error: {error}\n")
    assert tree_digest(incident) == before
