"""`guards fix`: the one-command repair of the founding incident, and what it leaves alone."""

import re

from .cli_helpers import WITHDRAWN_CLAIM, run_guards, tree_digest

REGION = re.compile(r"^# >>> guards:claim .*?^# <<< guards:claim[^\n]*\n", re.MULTILINE | re.DOTALL)
CLAIMS = WITHDRAWN_CLAIM
BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"


def write(root, files):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_fix_turns_the_twenty_stale_copies_into_claim_regions(capsys, incident):
    check = run_guards(capsys, "check", "--root", str(incident), "--format", "json")
    import json

    copies = json.loads(check.out)["findings"]
    assert len(copies) == 20 and {f["rule"] for f in copies} == {"C001"}
    before = {f["path"]: (incident / f["path"]).read_text(encoding="utf-8") for f in copies}

    fixed = run_guards(capsys, "fix", "--root", str(incident))
    assert (fixed.code, fixed.err) == (0, "")
    assert fixed.out.endswith("guards fix: replaced 20 stale copies, 0 left\n")
    for copy in copies:
        old = before[copy["path"]].split("\n")
        new = (incident / copy["path"]).read_text(encoding="utf-8")
        # Every byte outside the copy (before) and the region (after) is unchanged.
        rest = "\n".join(old[: copy["line"] - 1] + old[copy["end_line"] :])
        assert REGION.sub("", new) == rest
        region = REGION.search(new).group(0)
        assert region.startswith("# >>> guards:claim decode-cliff-1096\n# ⚠️ RETRACTED 2026-09-08")
        assert "#   Instead: There is no context-triggered cliff." in region
    regen = run_guards(capsys, "regen", "--check", "--root", str(incident))
    assert (regen.code, regen.out) == (0, "guards regen: 0 files would change\n")
    green = run_guards(capsys, "check", "--root", str(incident))
    assert green.code == 0 and green.out.endswith(" / 0 fail\n")
    again = run_guards(capsys, "fix", "--root", str(incident))
    assert (again.code, again.out) == (0, "guards fix: replaced 0 stale copies, 0 left\n")


def test_fix_diff_shows_the_change_and_writes_nothing(capsys, incident):
    before = tree_digest(incident)
    result = run_guards(capsys, "fix", "--diff", "--root", str(incident))
    assert result.code == 0
    assert result.out.count("+# >>> guards:claim decode-cliff-1096\n") == 20
    assert result.out.endswith("guards fix: would replace 20 stale copies, 0 left\n")
    assert tree_digest(incident) == before


def test_a_copy_in_a_note_or_a_trailing_comment_is_left_and_said(capsys, tmp_path):
    root = write(
        tmp_path,
        {
            "claims.yaml": CLAIMS,
            "learnings/n.md": "# Notes\n\nThe accumulated-context decode cliff: decode collapses "
            "past ~21k on the spec tiers.\n",
            "composes/a.yml": "# Head\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1"
            "  # accumulated-context decode cliff: decode collapses past 21k on spec tiers\n",
        },
    )
    before = tree_digest(root)
    result = run_guards(capsys, "fix", "--root", str(root))
    assert result.code == 1
    assert result.out == (
        "left: composes/a.yml:4: stale copy of old-cliff (not whole comment lines)\n"
        "left: learnings/n.md:3: stale copy of old-cliff in a note\n"
        "guards fix: replaced 0 stale copies, 2 left\n"
    )
    assert tree_digest(root) == before


def test_a_copy_inside_a_script_is_refused_and_nothing_written(capsys, tmp_path):
    compose = (
        "# Head\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n    entrypoint:\n"
        "      - bash\n      - -c\n      - |\n"
        "        # accumulated-context decode cliff: decode collapses past 21k on spec tiers\n"
        "        exec vllm serve\n"
    )
    root = write(tmp_path, {"claims.yaml": CLAIMS, "composes/a.yml": compose})
    before = tree_digest(root)
    result = run_guards(capsys, "fix", "--root", str(root))
    assert result.code == 2
    assert result.err == (
        "guards: error: composes/a.yml: refusing to write: regenerating would change more than "
        "the regions' comment lines (is a marker inside a block scalar?); nothing written\n"
    )
    assert tree_digest(root) == before


PROFILED = """\
# ===========================================================================
# Profile (at-a-glance):
#   Model:     Qwen3.8-27B (AutoRound INT4 — sym, group 128, ~18 GiB, ~9.0 GiB/card
#              at TP=2; bf16 lm_head + mtp.* head)
#   Topology:  Dual 3090 PCIe (TP=2, no NVLink)
#   Drafter:   none
#   KV:        fp8_e4m3 — default attention backend
#   Max ctx:   {ctx} (the native window) — MEASURED on 2×3090
#   Default ctx: 131072
#   Status:    ✅ Production
#   Caveats:   MTP is exposed to vllm#50021;
#                SPEC_N=0 mitigates.
# ===========================================================================
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--tensor-parallel-size, "2", --max-model-len, "262144", --kv-cache-dtype, fp8_e4m3]
"""
MARKERS = re.compile(r"^# (>>> guards:profile|<<< guards:profile.*)\n", re.MULTILINE)
X_GUARDS = re.compile(r"^x-guards:\n(?:  .*\n)+", re.MULTILINE)


def test_adopting_a_profile_that_agrees_with_the_body_keeps_every_line(capsys, tmp_path):
    original = PROFILED.format(ctx="262144")
    root = write(tmp_path, {"claims.yaml": CLAIMS, "composes/a.yml": original})
    result = run_guards(capsys, "fix", "--adopt-profile", "--root", str(root))
    assert (result.code, result.out) == (
        0,
        "composes/a.yml:2: profile block -> guards:profile region\n"
        "guards fix: adopted 1 profile block, 0 left\n",
    )
    text = (root / "composes/a.yml").read_text(encoding="utf-8")
    assert X_GUARDS.sub("", MARKERS.sub("", text)) == original
    assert '    Max ctx: "{max_model_len} (the native window) — MEASURED on 2×3090"\n' in text
    assert "    Topology: Dual 3090 PCIe (TP={tensor_parallel_size}, no NVLink)\n" in text
    assert '    KV: "{kv_cache_dtype} — default attention backend"\n' in text
    assert (
        "    Caveats: |-\n      MTP is exposed to vllm#50021;\n        SPEC_N=0 mitigates.\n"
        in text
    )
    assert run_guards(capsys, "regen", "--check", "--root", str(root)).code == 0
    assert run_guards(capsys, "check", "--root", str(root)).code == 0
    # From now on the body decides: a new --max-model-len puts the region out of date.
    (root / "composes/a.yml").write_text(text.replace('"262144"', '"131072"'), encoding="utf-8")
    stale = run_guards(capsys, "check", "--root", str(root), "--select", "G001")
    assert "G001 region guards:profile is out of date" in stale.out
    run_guards(capsys, "regen", "--root", str(root))
    assert "#   Max ctx:   131072 (the native window)" in (root / "composes/a.yml").read_text(
        encoding="utf-8"
    )


def test_adopting_a_profile_that_disagrees_takes_the_body_s_value_and_shows_it(capsys, tmp_path):
    root = write(tmp_path, {"claims.yaml": CLAIMS, "composes/a.yml": PROFILED.format(ctx="65536")})
    drift = run_guards(capsys, "check", "--root", str(root), "--select", "D001")
    assert drift.out.startswith("composes/a.yml:8:")
    result = run_guards(capsys, "fix", "--adopt-profile", "--root", str(root))
    assert result.code == 0
    assert "-#   Max ctx:   65536 (the native window) — MEASURED on 2×3090\n" in result.out
    assert "+#   Max ctx:   262144 (the native window) — MEASURED on 2×3090\n" in result.out
    assert result.out.endswith(
        "composes/a.yml:2: profile block -> guards:profile region (the body's values replace "
        "the header's: diff above)\nguards fix: adopted 1 profile block, 0 left\n"
    )
    assert run_guards(capsys, "check", "--root", str(root)).code == 0


def test_a_block_the_template_lays_out_differently_is_left_unless_forced(capsys, tmp_path):
    odd = PROFILED.format(ctx="262144").replace("#   Status:    ✅", "#   Status:  ✅")
    root = write(tmp_path, {"claims.yaml": CLAIMS, "composes/a.yml": odd})
    before = tree_digest(root)
    left = run_guards(capsys, "fix", "--adopt-profile", "--root", str(root))
    assert left.code == 1
    assert "-#   Status:  ✅ Production\n+#   Status:    ✅ Production\n" in left.out
    assert left.out.endswith(
        "left: composes/a.yml:2: the profile template lays this block out differently (diff "
        "above); --force adopts it anyway\nguards fix: adopted 0 profile blocks, 1 left\n"
    )
    assert tree_digest(root) == before
    forced = run_guards(capsys, "fix", "--adopt-profile", "--force", "--root", str(root))
    assert forced.code == 0 and tree_digest(root) != before


def test_the_bundled_estate_is_generated_from_templates(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    result = run_guards(capsys, "regen", "--check", "--root", str(root))
    assert (result.code, result.out) == (0, "guards regen: 0 files would change\n")
    for compose in sorted((root / "composes").rglob("*.yml")):
        assert "# >>> guards:profile\n" in compose.read_text(encoding="utf-8"), compose


def test_adopt_on_the_real_samples_changes_no_header_line_and_writes_nothing(capsys):
    from pathlib import Path

    import pytest

    sample = Path(__file__).resolve().parents[2] / "shared/corpus/club-3090-sample"
    if not sample.is_dir():
        pytest.skip("no shared corpus")
    before = tree_digest(sample)
    drift = run_guards(capsys, "check", "--root", str(sample), "--select", "D001")
    assert drift.out.endswith("/ 0 fail\n")  # no disagreement, so adopting may change no line
    result = run_guards(capsys, "fix", "--adopt-profile", "--diff", "--root", str(sample))
    diffs = re.split(r"(?m)^--- a/", result.out)[1:]
    adopted = [d for d in diffs if "\nleft: " not in d and " -> guards:profile region" in d]
    assert len(adopted) == 7
    for diff in adopted:
        removed = [line for line in diff.splitlines()[1:] if line.startswith("-")]
        assert removed == [], diff.splitlines()[0]
    assert result.out.endswith("guards fix: would adopt 7 profile blocks, 1 left\n")
    assert tree_digest(sample) == before


def test_a_block_with_lines_that_are_not_rows_is_left(capsys, tmp_path):
    odd = PROFILED.format(ctx="262144").replace("#   Status:", "#   just words here\n#   Status:")
    root = write(tmp_path, {"claims.yaml": CLAIMS, "composes/a.yml": odd})
    before = tree_digest(root)
    result = run_guards(capsys, "fix", "--adopt-profile", "--root", str(root))
    assert (result.code, result.out) == (
        1,
        "left: composes/a.yml:2: the block has lines that are not `Key: value` rows\n"
        "guards fix: adopted 0 profile blocks, 1 left\n",
    )
    assert tree_digest(root) == before
