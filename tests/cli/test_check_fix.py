"""`guards check --fix`, `--diff` and `--show-fixes`: what `guards fix` and `guards regen` repair,
made in the run that finds it, through the same write layer; the findings marked fixable."""

import json
import shutil

import pytest

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, tree_digest, write

BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
CITING = "# Head\n# The decode story (claim:old-cliff) in short.\n" + STALE_COPY + BODY
NOTE = "---\nclaims: [old-cliff]\n---\n\n# N\n\nSee claim:old-cliff for the numbers.\n"
REGION_BODY = (
    "x-guards:\n  model: Qwen3.8-27B (INT4)\n  status: ✅ Production\n  caveats: [slow]\n"
    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
    '    command: [--tensor-parallel-size, "2", --max-model-len, "131072", '
    "--kv-cache-dtype, fp8_e4m3]\n"
)
STALE_REGION = "# Title\n# >>> guards:profile\n# <<< guards:profile\n" + REGION_BODY
COPY_FIX = "replace the stale copy of old-cliff with a guards:claim region"
LEFT_IN_INCIDENT = (
    "composes/qwen3.8-27b/vllm/dual/max.yml:18:1: C001 repeats withdrawn claim "
    "decode-cliff-1096 (lines 18-24), retracted 2026-09-08: A harness artefact, not an engine "
    "property.\n"
)


def citing(tmp_path):
    return write(
        tmp_path,
        {"claims.yaml": WITHDRAWN_CLAIM, "composes/a.yml": CITING, "learnings/n.md": NOTE},
    )


def stale_region(tmp_path):
    files = {"composes/a.yml": STALE_REGION, "guards.toml": 'composes = ["composes/*.yml"]\n'}
    return write(tmp_path, files)


def twin(root, tmp_path):
    """A copy of the estate at ``root``, for the stand-alone commands to repair."""
    return shutil.copytree(root, tmp_path / "twin")


def texts(root) -> dict[str, str]:
    return {  # as written: read_text would turn a lone CR into a line break
        p.relative_to(root).as_posix(): p.read_bytes().decode("utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".yml", ".md")
    }


# -- the incident: one command, what `guards fix` does -------------------------------------------


def test_fix_repairs_the_incident_as_guards_fix_does_and_reports_what_remains(
    capsys, incident, tmp_path
):
    other = twin(incident, tmp_path)
    fixed = run_guards(capsys, "check", "--root", str(incident), "--fix")
    assert (fixed.code, fixed.out, fixed.err) == (
        1,
        LEFT_IN_INCIDENT + "guard suite: 481 pass / 1 fail\n",
        "guards: fixed 19 findings in 19 files\n",
    )
    assert run_guards(capsys, "fix", "--root", str(other)).code == 1
    assert texts(incident) == texts(other)
    digest = tree_digest(incident)
    again = run_guards(capsys, "check", "--root", str(incident), "--fix")
    assert (again.code, again.out, again.err) == (
        1,
        LEFT_IN_INCIDENT + "guard suite: 481 pass / 1 fail\n",
        "",
    )
    assert tree_digest(incident) == digest


def test_diff_shows_what_fix_writes_and_writes_nothing(capsys, incident, tmp_path):
    other = twin(incident, tmp_path)
    before = tree_digest(incident)
    shown = run_guards(capsys, "check", "--root", str(incident), "--diff")
    assert (shown.code, shown.err) == (1, "guards: would fix 19 findings in 19 files\n")
    assert tree_digest(incident) == before
    assert shown.out.count("\n--- a/composes/") + shown.out.startswith("--- a/") == 19
    run_guards(capsys, "check", "--root", str(other), "--fix")
    from guards.errors import printable_lines
    from guards.facts.regions import unified_diff

    old, new = texts(incident), texts(other)
    expected = "".join(unified_diff(p, old[p], new[p]) for p in sorted(old) if old[p] != new[p])
    assert shown.out == printable_lines(expected)  # as `guards fix --diff` prints text too


def test_diff_of_an_estate_with_nothing_to_fix_is_empty_and_exit_0(capsys, estate):
    shown = run_guards(capsys, "check", "--root", str(estate), "--diff")
    assert (shown.code, shown.out, shown.err) == (0, "", "")


def test_diff_with_exit_zero_exits_0(capsys, incident):
    shown = run_guards(capsys, "check", "--root", str(incident), "--diff", "--exit-zero")
    assert shown.code == 0 and shown.out.startswith("--- a/composes/")


# -- citations, copies and regions: the three fixes ----------------------------------------------


def test_marks_then_copies_in_one_run_as_guards_fix_makes_them(capsys, tmp_path):
    root = citing(tmp_path / "one")
    other = twin(root, tmp_path)
    found = run_guards(capsys, "check", "--root", str(root))
    assert found.out == (
        "composes/a.yml:2:21: C002 [*] cites claim old-cliff as current, but claims.yaml:2 lists "
        "it as retracted on 2026-09-08\n"
        "composes/a.yml:3:1: C001 [*] repeats withdrawn claim old-cliff (lines 3-4), retracted "
        "2026-09-08: A harness artefact.\n"
        "learnings/n.md:2:10: C002 [*] cites claim old-cliff as current, but claims.yaml:2 lists "
        "it as retracted on 2026-09-08\n"
        "learnings/n.md:7:5: C002 [*] cites claim old-cliff as current, but claims.yaml:2 lists "
        "it as retracted on 2026-09-08\n"
        "guard suite: 11 pass / 3 fail, 4 fixable with --fix\n"
    )
    fixed = run_guards(capsys, "check", "--root", str(root), "--fix", "--show-fixes")
    assert (fixed.code, fixed.out) == (0, "guard suite: 17 pass / 0 fail\n")
    assert fixed.err == (
        "guards: fixed composes/a.yml:2:21: C002 cite claim:old-cliff as withdrawn\n"
        f"guards: fixed composes/a.yml:3:1: C001 {COPY_FIX}\n"
        "guards: fixed learnings/n.md:2:10: C002 cite claim:old-cliff as withdrawn\n"
        "guards: fixed learnings/n.md:7:5: C002 cite claim:old-cliff as withdrawn\n"
        "guards: fixed 4 findings in 2 files\n"
    )
    assert run_guards(capsys, "fix", "--root", str(other)).code == 0
    assert texts(root) == texts(other)
    assert (
        "(claim:old-cliff, retracted 2026-09-08) in short.\n# >>> guards:claim old-cliff\n"
        in (texts(root)["composes/a.yml"])
    )


def test_a_region_out_of_date_is_rendered_as_guards_regen_renders_it(capsys, tmp_path):
    root = stale_region(tmp_path / "one")
    other = twin(root, tmp_path)
    found = run_guards(capsys, "check", "--root", str(root))
    assert found.out == (
        "composes/a.yml:2:1: G001 [*] region guards:profile is out of date: it renders "
        "differently now\n"
        "guard suite: 7 pass / 1 fail, 1 fixable with --fix\n"
    )
    fixed = run_guards(capsys, "check", "--root", str(root), "--fix", "--show-fixes")
    assert (fixed.code, fixed.out) == (0, "guard suite: 9 pass / 0 fail\n")
    assert fixed.err == (
        "guards: fixed composes/a.yml:2:1: G001 render region guards:profile from its template\n"
        "guards: fixed 1 finding in 1 file\n"
    )
    assert run_guards(capsys, "regen", "--root", str(other)).code == 0
    assert texts(root) == texts(other)


def test_a_file_with_a_region_edited_by_hand_is_not_fixed_and_says_why(capsys, tmp_path):
    root = stale_region(tmp_path)
    assert run_guards(capsys, "check", "--root", str(root), "--fix").code == 0
    path = root / "composes" / "a.yml"
    edited = path.read_text(encoding="utf-8").replace("Caveat:    slow", "Caveat:    fast")
    claim = "# >>> guards:claim old-cliff\n# <<< guards:claim\n"
    path.write_text(claim + edited, encoding="utf-8")
    (root / "claims.yaml").write_text(WITHDRAWN_CLAIM, encoding="utf-8")
    before = tree_digest(root)
    fixed = run_guards(capsys, "check", "--root", str(root), "--fix", "--select", "G")
    assert (fixed.code, fixed.out) == (
        1,
        "composes/a.yml:1:1: G001 region guards:claim old-cliff is out of date: it renders "
        "differently now\n"
        "composes/a.yml:4:1: G002 region guards:profile was edited by hand: its text no longer "
        "matches the checksum 4a3d18ea its closing marker (line 14) recorded\n"
        "guard suite: 1 pass / 2 fail\n",
    )
    assert fixed.err == (
        "guards: not fixed: composes/a.yml:4: region guards:profile was edited by hand since it "
        "was generated (its checksum does not match); move the edit into the template or the "
        "data, or rerun with --force to overwrite it\n"
    )
    assert tree_digest(root) == before


def test_a_copy_with_hand_written_text_is_not_marked_fixable(capsys, tmp_path):
    copy = STALE_COPY.replace("# ⚠️ ", "# Our own note. ⚠️ ")
    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "composes/a.yml": copy + BODY})
    found = run_guards(capsys, "check", "--root", str(root), "--format", "json")
    [finding] = json.loads(found.out)["findings"]
    assert (finding["rule"], finding["fix"]) == ("C001", None)
    assert run_guards(capsys, "check", "--root", str(root), "--diff").code == 0


def test_json_carries_each_fix(capsys, tmp_path):
    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "composes/a.yml": CITING})
    found = run_guards(capsys, "check", "--root", str(root), "--format", "json")
    document = json.loads(found.out)
    assert document["summary"]["fixable"] == 2
    assert [f["fix"] for f in document["findings"]] == [
        {
            "applicability": "safe",
            "message": "cite claim:old-cliff as withdrawn",
            "edits": [
                {
                    "line": 2,
                    "column": 36,
                    "end_line": 2,
                    "end_column": 36,
                    "content": ", retracted 2026-09-08",
                }
            ],
        },
        {
            "applicability": "safe",
            "message": COPY_FIX,
            "edits": [
                {
                    "line": 3,
                    "column": 1,
                    "end_line": 5,
                    "end_column": 1,
                    "content": "# >>> guards:claim old-cliff\n"
                    "# ⚠️ RETRACTED 2026-09-08 (claim:old-cliff): Decode cliff\n"
                    "#   Why: A harness artefact.\n"
                    "#   Instead: Decode is flat with context.\n"
                    "# <<< guards:claim (checksum: c36a6dfc)\n",
                }
            ],
        },
    ]


def test_statistics_has_a_fixable_column_and_counts_after_fixing(capsys, tmp_path):
    root = citing(tmp_path)
    (root / "composes" / "b.yml").write_text("# Profile (at-a-glance):\n" + BODY, encoding="utf-8")
    (root / "guards.toml").write_text('[header]\npreset = "profile"\n', encoding="utf-8")
    counted = run_guards(capsys, "check", "--root", str(root), "--statistics")
    assert counted.out == (
        "5  S003  [ ] required-fields\n"
        "3  C002  [*] registry-drift\n"
        "1  C001  [*] stale-claim\n"
        "1  S001  [ ] header-present\n"
        "guard suite: 24 pass / 5 fail, 4 fixable with --fix\n"
    )
    fixed = run_guards(capsys, "check", "--root", str(root), "--statistics", "--fix")
    assert fixed.out == (
        "5  S003  required-fields\n1  S001  header-present\nguard suite: 30 pass / 2 fail\n"
    )
    assert fixed.err == "guards: fixed 4 findings in 2 files\n"


# -- what is not fixed ---------------------------------------------------------------------------


def test_a_suppressed_copy_is_not_fixed(capsys, tmp_path):
    waived = "# guards: ignore[C001] quoted from the incident report\n" + STALE_COPY + BODY
    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "composes/a.yml": waived})
    before = tree_digest(root)
    fixed = run_guards(capsys, "check", "--root", str(root), "--fix")
    assert (fixed.code, fixed.err) == (0, "")
    assert fixed.out == "guard suite: 13 pass / 0 fail, 1 suppressed\n"
    assert tree_digest(root) == before


def test_a_baselined_copy_is_not_fixed(capsys, tmp_path):
    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "composes/a.yml": STALE_COPY + BODY})
    assert run_guards(capsys, "baseline", "--root", str(root)).code == 0
    before = tree_digest(root)
    baseline = str(root / ".guards-baseline.json")
    fixed = run_guards(capsys, "check", "--root", str(root), "--fix", "--baseline", baseline)
    assert (fixed.code, fixed.err, fixed.out) == (
        0,
        "",
        "guard suite: 10 pass / 0 fail, 1 baselined\n",
    )
    assert tree_digest(root) == before
    args = ("--baseline", baseline, "--format", "json", "--show-suppressed")
    document = json.loads(run_guards(capsys, "check", "--root", str(root), *args).out)
    assert [(f["rule"], f["fix"]) for f in document["waived"]] == [("C001", None)]
    assert "fixable" not in document["summary"]


def test_a_file_that_cannot_be_written_is_an_error_and_the_rest_is_fixed(capsys, tmp_path):
    root = write(
        tmp_path,
        {
            "claims.yaml": WITHDRAWN_CLAIM,
            "composes/a.yml": STALE_COPY + BODY,
            "composes/b.yml": STALE_COPY + BODY,
        },
    )
    locked = root / "composes" / "a.yml"
    locked.chmod(0o444)
    try:
        fixed = run_guards(capsys, "check", "--root", str(root), "--fix")
    finally:
        locked.chmod(0o644)
    assert fixed.code == 2
    assert fixed.err == (
        "guards: error: composes/a.yml: file is read-only; nothing written\n"
        "guards: fixed 1 finding in 1 file\n"
    )
    assert fixed.out.startswith("composes/a.yml:1:1: C001 [*] repeats withdrawn claim old-cliff")
    assert locked.read_text(encoding="utf-8") == STALE_COPY + BODY
    assert "# >>> guards:claim old-cliff\n" in (root / "composes" / "b.yml").read_text()


def test_a_kept_run_is_marked_and_fixed_as_a_fresh_one(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    root = write(tmp_path / "e", {"claims.yaml": WITHDRAWN_CLAIM, "composes/a.yml": CITING})
    first = run_guards(capsys, "check", "--root", str(root))
    kept = run_guards(capsys, "check", "--root", str(root))
    assert kept.out == first.out and kept.out.endswith(", 2 fixable with --fix\n")
    fixed = run_guards(capsys, "check", "--root", str(root), "--fix")
    assert (fixed.code, fixed.err) == (0, "guards: fixed 2 findings in 1 file\n")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--fix", "--env-file", "x.env"], "--fix fixes the estate as shipped; it cannot go with --env-file"),
        (["--diff", "--env-file", "x.env"], "--diff fixes the estate as shipped; it cannot go with --env-file"),
        (["--diff", "--format", "json"], "--diff prints a diff; it cannot go with --format json"),
        (["--diff", "--statistics"], "--diff prints a diff; it cannot go with --statistics"),
        (["--diff", "--output", "r.txt"], "--diff prints a diff; it cannot go with --output"),
        (["--show-fixes"], "--show-fixes lists what --fix or --diff fixes; it needs one of them"),
    ],
)  # fmt: skip
def test_fix_options_that_cannot_go_together_are_one_line_errors(capsys, tmp_path, args, error):
    root = write(
        tmp_path,
        {"claims.yaml": WITHDRAWN_CLAIM, "composes/a.yml": STALE_COPY + BODY, "x.env": "A=1\n"},
    )
    before = tree_digest(root)
    result = run_guards(capsys, "check", *args, cwd=root)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")
    assert tree_digest(root) == before


def test_a_kept_run_keeps_each_fix_and_refuses_a_damaged_one(capsys, tmp_path):
    from guards.findings import from_json, to_json
    from guards.rules import all_rules
    from guards.run.estate import load_estate
    from guards.run.suite import run
    from guards.sources.configfile import load_config
    from guards.write.fixes import with_fixes

    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "composes/a.yml": CITING})
    estate = load_estate(load_config(root))
    found = run(estate, all_rules())
    fixed = found.with_fixes(with_fixes(estate, found.findings))
    kept = from_json(json.loads(json.dumps(to_json(fixed))))
    assert [f.fix for f in kept.findings] == [f.fix for f in fixed.findings]
    assert sum(f.fix is not None for f in kept.findings) == 2
    data = to_json(fixed)
    first = next(d for d in data["results"]["details"] if d[1] and d[1][0]["fix"])
    first[1][0]["fix"][1] = "unsafe"
    with pytest.raises(ValueError, match="not a fix"):
        from_json(data)
