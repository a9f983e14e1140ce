"""The baseline: written by `guards baseline`, read by `check --baseline`, robust to line shifts
and unrelated edits, listing what no longer matches; and on a real-sized estate, the adoption
scenario the baseline exists for (numbers printed with `pytest -s`)."""

import itertools
import json
import re
from pathlib import Path

import pytest

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, tree_digest

ROOT = Path(__file__).resolve().parents[2]
BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
C001 = "C001 repeats withdrawn claim old-cliff"


@pytest.fixture
def small(tmp_path):
    (tmp_path / "claims.yaml").write_text(WITHDRAWN_CLAIM, encoding="utf-8")
    (tmp_path / "composes").mkdir()
    for name in ("a", "b"):
        (tmp_path / "composes" / f"{name}.yml").write_text(STALE_COPY + BODY, encoding="utf-8")
    (tmp_path / "guards.toml").write_text(
        'composes = ["composes/*.yml"]\nselect = ["C001"]\nheader = { preset = "profile" }\n',
        encoding="utf-8",
    )
    return tmp_path


def baseline(capsys, root, *args):
    return run_guards(capsys, "baseline", *args, cwd=root)


def test_baseline_records_every_finding_one_entry_per_line(capsys, small):
    result = baseline(capsys, small)
    assert (result.code, result.out) == (
        0,
        "guards: 2 findings recorded in .guards-baseline.json\n",
    )
    text = (small / ".guards-baseline.json").read_text(encoding="utf-8")
    document = json.loads(text)
    assert (document["version"], document["tool"]) == (1, "guards")
    assert [(e["rule"], e["path"], e["line"]) for e in document["entries"]] == [
        ("C001", "composes/a.yml", 1),
        ("C001", "composes/b.yml", 1),
    ]
    assert text.count("\n") == 8  # one line per entry, so a diff shows which came and went


def test_check_with_the_baseline_reports_nothing_old(capsys, small):
    baseline(capsys, small)
    result = run_guards(capsys, "check", "--baseline", ".guards-baseline.json", cwd=small)
    assert (result.code, result.out) == (0, "guard suite: 2 pass / 0 fail, 2 baselined\n")


def test_line_shifts_and_unrelated_edits_keep_the_match(capsys, small):
    baseline(capsys, small)
    path = small / "composes" / "a.yml"
    path.write_text(
        "# a new first line\n#\n" + STALE_COPY + BODY + "x-note: edited\n", encoding="utf-8"
    )
    result = run_guards(capsys, "check", "--baseline", ".guards-baseline.json", cwd=small)
    assert (result.code, result.out) == (0, "guard suite: 2 pass / 0 fail, 2 baselined\n")


def test_a_new_finding_is_reported_and_a_fixed_one_listed_as_stale(capsys, small):
    baseline(capsys, small)
    (small / "composes" / "a.yml").write_text(BODY, encoding="utf-8")
    (small / "composes" / "c.yml").write_text(STALE_COPY + BODY, encoding="utf-8")
    result = run_guards(capsys, "check", "--baseline", ".guards-baseline.json", cwd=small)
    assert result.code == 1
    assert result.out == (
        f"composes/c.yml:1:1: {C001[:5]}[*] {C001[5:]} (lines 1-2), retracted 2026-09-08: A "
        "harness artefact.\n"
        ".guards-baseline.json: 1 entry no longer match a finding; rewrite it with "
        "`guards baseline`\n"
        f"  composes/a.yml:1: {C001} (lines 1-2), retracted 2026-09-08: A harness artefact.\n"
        "guard suite: 2 pass / 1 fail, 1 baselined, 1 fixable with --fix\n"
    )


def test_strict_baseline_fails_while_it_holds_stale_entries(capsys, small):
    baseline(capsys, small)
    (small / "composes" / "a.yml").write_text(BODY, encoding="utf-8")
    args = ("check", "--baseline", ".guards-baseline.json")
    assert run_guards(capsys, *args, cwd=small).code == 0
    strict = run_guards(capsys, *args, "--strict-baseline", cwd=small)
    assert strict.code == 1
    assert "1 entry no longer match a finding, failing the run (--strict-baseline)" in strict.out
    baseline(capsys, small)  # rewriting it drops the entry
    assert run_guards(capsys, *args, "--strict-baseline", cwd=small).code == 0


def test_entries_of_files_not_checked_in_this_run_are_not_stale(capsys, small):
    baseline(capsys, small)
    (small / "composes" / "a.yml").write_text(BODY, encoding="utf-8")
    result = run_guards(
        capsys,
        "check",
        "composes/b.yml",
        "--baseline",
        ".guards-baseline.json",
        "--strict-baseline",
        cwd=small,
    )
    assert (result.code, result.out) == (0, "guard suite: 1 pass / 0 fail, 1 baselined\n")
    other_rule = run_guards(
        capsys,
        "check",
        "--select",
        "S001",
        "--baseline",
        ".guards-baseline.json",
        "--strict-baseline",
        cwd=small,
    )
    assert other_rule.code == 1  # S001 fails (no header), but no C001 entry is judged
    assert "no longer match" not in other_rule.out


def test_json_carries_the_baseline_and_its_stale_entries(capsys, small):
    baseline(capsys, small, "--output", "accepted.json")
    (small / "composes" / "a.yml").write_text(BODY, encoding="utf-8")
    result = run_guards(
        capsys, "check", "--format", "json", "--baseline", "accepted.json", cwd=small
    )
    document = json.loads(result.out)
    assert document["summary"]["baselined"] == 1
    assert document["baseline"]["path"] == "accepted.json"
    assert [(e["rule"], e["path"]) for e in document["baseline"]["stale"]] == [
        ("C001", "composes/a.yml")
    ]


def test_show_suppressed_lists_baselined_findings(capsys, small):
    baseline(capsys, small)
    result = run_guards(
        capsys, "check", "--baseline", ".guards-baseline.json", "--show-suppressed", cwd=small
    )
    assert result.out.splitlines()[:2] == [
        f"composes/a.yml:1:1: C001 [baselined] {C001[5:]} (lines 1-2), retracted 2026-09-08: "
        "A harness artefact.",
        "    in the baseline .guards-baseline.json",
    ]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "{",
            "1:2: not a baseline: invalid JSON: Expecting property name enclosed in double quotes",
        ),
        ("[]", '1: not a baseline: expected an object with an "entries" list'),
        (
            '{"version": 2, "entries": []}',
            "1: baseline version 2 is not 1; rewrite it with `guards baseline`",
        ),
        (
            '{"version": 1,\n "entries": [\n  {"fingerprint": "ab", "rule": "C001", "path": "a", "line": 1, "message": "m"},\n  {"rule": "C001"}\n]}',
            "4: baseline entry has no valid `fingerprint`",
        ),
        ('{"version": 1, "entries": [\n 7]}', "2: baseline entry is not an object"),
        (
            '{"version": 1, "entries": [{"fingerprint": "ab", "rule": "C001", "path": "a", "line": "1", "message": "m"}]}',
            "1: baseline entry has no valid `line`",
        ),
    ],
)
def test_a_malformed_baseline_is_exit_2_naming_file_and_line(capsys, small, text, error):
    (small / "bad.json").write_text(text, encoding="utf-8")
    before = tree_digest(small)
    result = run_guards(capsys, "check", "--baseline", "bad.json", cwd=small)
    assert (result.code, result.out) == (2, "")
    assert result.err == f"guards: error: bad.json:{error}\n"
    assert tree_digest(small) == before


def test_baseline_usage_errors(capsys, small):
    missing = run_guards(capsys, "check", "--baseline", "none.json", cwd=small)
    assert (missing.code, missing.err) == (
        2,
        "guards: error: none.json: baseline file not found; write one with `guards baseline`\n",
    )
    strict = run_guards(capsys, "check", "--strict-baseline", cwd=small)
    assert (strict.code, strict.err) == (
        2,
        "guards: error: --strict-baseline needs --baseline FILE\n",
    )
    before = tree_digest(small)
    unwritable = baseline(capsys, small, "--output", "no/such/dir/b.json")
    assert unwritable.code == 2
    assert unwritable.err == (
        "guards: error: no/such/dir/b.json: cannot write: No such file or directory; "
        "nothing written\n"
    )
    assert tree_digest(small) == before


def test_no_baseline_is_written_when_an_input_cannot_be_read(capsys, small):
    (small / "composes" / "broken.yml").write_text("services: [\n", encoding="utf-8")
    result = baseline(capsys, small)
    assert result.code == 2
    assert result.err.endswith(
        "guards: error: inputs could not be read (above); no baseline written\n"
    )
    assert not (small / ".guards-baseline.json").exists()


# -- adoption on a real-sized estate -------------------------------------------------------

STALE = (
    "# ⚠️ ACCUMULATED-CONTEXT DECODE CLIFF: decode collapses once accumulated\n"
    "#   context passes ~21K on the spec tiers; keep multi-turn sessions short.\n"
)
UTIL = "${GPU_MEMORY_UTILIZATION:-0.90}"
COMPOSES = 100  # club-3090, the estate this scenario comes from, has 101


def build_estate(target: Path) -> list[Path]:
    """COMPOSES composes cycled from the bundled estate, with the bundled registry: every fourth
    ships an unsafe utilisation, every fourth after it a stale copy of the withdrawn claim,
    and one in four both."""
    (target / "claims.yaml").write_text((ROOT / "claims.yaml").read_text(encoding="utf-8"))
    sources = sorted((ROOT / "composes").rglob("*.yml"))
    paths = []
    for index, source in zip(range(COMPOSES), itertools.cycle(sources), strict=False):
        text = source.read_text(encoding="utf-8")
        if index % 4 in (0, 2):
            text = text.replace(UTIL, UTIL.replace("0.90", "0.97"))
        if index % 4 in (1, 2):
            text = insert_after_profile(text, STALE)
        path = target / "composes" / f"c{index:03d}" / source.name
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def insert_after_profile(text: str, block: str) -> str:
    lines = text.splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if "<<< guards:profile" in line) + 2
    return "".join(lines[:at]) + block + "".join(lines[at:])


def drift(path: Path) -> None:
    """What maintainers do to a compose between two runs without touching its defects: new
    lines at the top, the stale block moved to the end of the header, the utilisation pair
    moved above the context pair, prose reworded."""
    text = "# Reviewed 2026-11-30.\n#\n" + path.read_text(encoding="utf-8")
    if STALE in text:  # to the end of the header
        text = re.sub(r"(?m)^(?!#)", lambda m: STALE, text.replace(STALE, ""), count=1)
    pair = r'(      - --max-model-len\n      - "[^"\n]*"\n)(      - --gpu-memory-utilization\n.*\n)'
    text = re.sub(pair, r"\2\1", text, count=1)  # the utilisation pair moved up one
    text = text.replace("⭐ WHY", "⭐ Why").replace("deliberate", "on purpose")
    path.write_text(text, encoding="utf-8")


def findings(capsys, root, *args):
    result = run_guards(capsys, "check", "--format", "json", *args, cwd=root)
    return json.loads(result.out)


def test_adoption_on_100_composes_survives_drift_and_catches_one_new_defect(capsys, tmp_path):
    paths = build_estate(tmp_path)
    recorded = findings(capsys, tmp_path)["summary"]["findings"]
    assert recorded >= 70
    baseline(capsys, tmp_path)
    drifted = [p for p in paths if STALE in p.read_text(encoding="utf-8")][:5]
    drifted += [p for p in paths if "0.97}" in p.read_text(encoding="utf-8") and p not in drifted][
        :5
    ]
    before = {p: p.read_text(encoding="utf-8") for p in drifted}
    for path in drifted:
        drift(path)
    assert all(before[p] != p.read_text(encoding="utf-8") for p in drifted)
    after_drift = findings(capsys, tmp_path, "--baseline", ".guards-baseline.json")
    clean = next(p for p in paths if STALE not in p.read_text(encoding="utf-8"))
    clean.write_text(
        insert_after_profile(clean.read_text(encoding="utf-8"), STALE), encoding="utf-8"
    )
    after_defect = findings(capsys, tmp_path, "--baseline", ".guards-baseline.json")
    print(
        f"\nbaseline scenario: {COMPOSES} composes, {recorded} findings recorded; after drift in "
        f"{len(drifted)} composes: {after_drift['summary']['findings']} new, "
        f"{len(after_drift['baseline']['stale'])} stale; after one new defect: "
        f"{after_defect['summary']['findings']} new"
    )
    assert len(drifted) == 10
    assert after_drift["errors"] == after_defect["errors"] == []
    assert (after_drift["findings"], after_drift["baseline"]["stale"]) == ([], [])
    assert after_drift["summary"]["baselined"] == recorded
    [new] = after_defect["findings"]
    assert (new["rule"], new["path"]) == ("C001", clean.relative_to(tmp_path).as_posix())
