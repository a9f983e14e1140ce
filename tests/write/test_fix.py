"""`guards fix`: the one-command repair of the founding incident, and what it leaves alone."""

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.sources.edit import Edit, apply
from guards.write.fix import composed

from ..cli_helpers import WITHDRAWN_CLAIM, run_guards, tree_digest, write
from ..examples import examples
from ..fuzz_props import best_time

REGION = re.compile(r"^# >>> guards:claim .*?^# <<< guards:claim[^\n]*\n", re.MULTILINE | re.DOTALL)
CLAIMS = WITHDRAWN_CLAIM
BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"


NCCL_COMPOSE = "composes/qwen3.8-27b/vllm/dual/max.yml"  # its copy has a note inside (line 21)
NCCL_NOTE = "# (NCCL_P2P_DISABLE=1 below is required on this board: PCIe only, no NVLink.)\n"
LEFT_NCCL = (
    f"left: {NCCL_COMPOSE}:18: stale copy of decode-cliff-1096 (hand-written text inside the "
    "copy)\n"
)


def said(out):
    """The output without the edits printed for copies left (each line indented)."""
    return "".join(line + "\n" for line in out.splitlines() if not line.startswith("  "))


def _incident_copies(capsys, root):
    check = run_guards(capsys, "check", "--root", str(root), "--format", "json")
    copies = json.loads(check.out)["findings"]
    assert len(copies) == 20 and {f["rule"] for f in copies} == {"C001"}
    return copies


def _fix_lines(copies, left_path):
    return "".join(
        LEFT_NCCL
        if c["path"] == left_path
        else f"{c['path']}:{c['line']}: stale copy of decode-cliff-1096 -> guards:claim region\n"
        for c in copies
    )


def test_fix_replaces_the_copies_and_leaves_the_one_with_a_note_inside(capsys, incident):
    copies = _incident_copies(capsys, incident)
    before = {f["path"]: (incident / f["path"]).read_text(encoding="utf-8") for f in copies}
    nccl_before = (incident / NCCL_COMPOSE).read_bytes()

    fixed = run_guards(capsys, "fix", "--root", str(incident))
    assert (fixed.code, fixed.err) == (1, "")
    assert said(fixed.out) == _fix_lines(copies, NCCL_COMPOSE) + (
        "guards fix: replaced 19 stale copies, 1 left\n"
    )
    assert (incident / NCCL_COMPOSE).read_bytes() == nccl_before  # the note and its copy kept
    for copy in copies:
        if copy["path"] == NCCL_COMPOSE:
            continue
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
    digest = tree_digest(incident)
    again = run_guards(capsys, "fix", "--root", str(incident))
    assert (again.code, said(again.out)) == (
        1,
        LEFT_NCCL + "guards fix: replaced 0 stale copies, 1 left\n",
    )
    assert tree_digest(incident) == digest


def test_once_the_note_is_moved_out_the_copy_is_replaced_and_the_note_kept(capsys, incident):
    path = incident / NCCL_COMPOSE
    text = path.read_text(encoding="utf-8")
    copy_start = "# ⚠️ ACCUMULATED-CONTEXT DECODE CLIFF (#1096)"
    path.write_text(text.replace(NCCL_NOTE, "").replace(copy_start, NCCL_NOTE + copy_start))
    run_guards(capsys, "fix", "--root", str(incident))
    fixed = path.read_text(encoding="utf-8")
    assert fixed.count(NCCL_NOTE) == 1
    assert fixed.index(NCCL_NOTE) < fixed.index("# >>> guards:claim decode-cliff-1096\n")
    green = run_guards(capsys, "check", "--root", str(incident))
    assert green.code == 0 and green.out.endswith(" / 0 fail\n")
    again = run_guards(capsys, "fix", "--root", str(incident))
    assert (again.code, again.out) == (0, "guards fix: replaced 0 stale copies, 0 left\n")


def test_fix_diff_shows_the_change_and_writes_nothing(capsys, incident):
    copies = _incident_copies(capsys, incident)
    before = tree_digest(incident)
    result = run_guards(capsys, "fix", "--diff", "--root", str(incident))
    assert result.code == 1
    assert result.out.count("+# >>> guards:claim decode-cliff-1096\n") == 19
    assert f"--- a/{NCCL_COMPOSE}" not in result.out
    said = "".join(line + "\n" for line in result.out.splitlines() if line[:1] not in "-+ @")
    assert said == _fix_lines(copies, NCCL_COMPOSE) + (
        "guards fix: would replace 19 stale copies, 1 left\n"
    )
    assert tree_digest(incident) == before


def test_a_copy_in_a_trailing_comment_is_left_and_said(capsys, tmp_path):
    root = write(
        tmp_path,
        {
            "claims.yaml": CLAIMS,
            "composes/a.yml": "# Head\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1"
            "  # accumulated-context decode cliff: decode collapses past 21k on spec tiers\n",
        },
    )
    before = tree_digest(root)
    result = run_guards(capsys, "fix", "--root", str(root))
    assert result.code == 1
    assert result.out == (
        "left: composes/a.yml:4: stale copy of old-cliff (not whole comment lines)\n"
        "guards fix: replaced 0 stale copies, 1 left\n"
    )
    assert tree_digest(root) == before


NOTE_REGION = (
    "<!-- >>> guards:claim old-cliff -->\n"
    "⚠️ RETRACTED 2026-09-08 (claim:old-cliff): Decode cliff\n"
    "  Why: A harness artefact.\n"
    "  Instead: Decode is flat with context.\n"
    "<!-- <<< guards:claim -->\n"
)


def test_a_copy_in_a_note_of_nothing_but_the_wording_becomes_a_note_region(capsys, tmp_path):
    note = "# Notes\n\nAccumulated-context decode cliff: decode collapses once accumulated\n"
    note += "context passes ~21K on the spec tiers.\n\nThe rest.\n"
    root = write(tmp_path, {"claims.yaml": CLAIMS, "learnings/n.md": note})
    result = run_guards(capsys, "fix", "--root", str(root))
    assert (result.code, result.out) == (
        0,
        "learnings/n.md:3: stale copy of old-cliff -> guards:claim region\n"
        "guards fix: replaced 1 stale copy, 0 left\n",
    )
    fixed = (root / "learnings/n.md").read_text(encoding="utf-8")
    assert fixed == "# Notes\n\n" + NOTE_REGION + "\nThe rest.\n"
    check = run_guards(capsys, "check", "--root", str(root))
    assert (check.code, check.out.splitlines()[-1]) == (0, "guard suite: 5 pass / 0 fail")
    again = run_guards(capsys, "fix", "--root", str(root))
    assert (again.code, again.out) == (0, "guards fix: replaced 0 stale copies, 0 left\n")


def test_a_copy_in_a_note_with_words_of_its_own_is_left_with_the_exact_edit(capsys, tmp_path):
    note = "# Notes\n\nThe accumulated-context decode cliff: decode collapses past ~21k on the "
    note += "spec tiers.\n"
    root = write(tmp_path, {"claims.yaml": CLAIMS, "learnings/n.md": note})
    before = tree_digest(root)
    result = run_guards(capsys, "fix", "--root", str(root))
    assert (result.code, result.out) == (
        1,
        "left: learnings/n.md:3: stale copy of old-cliff (hand-written text inside the copy)\n"
        "  edit learnings/n.md:3: replace\n"
        "  - The accumulated-context decode cliff: decode collapses past ~21k on the spec "
        "tiers.\n"
        "  with\n"
        + "".join(f"  + {line}\n" for line in NOTE_REGION.splitlines())
        + "guards fix: replaced 0 stale copies, 1 left\n",
    )
    assert tree_digest(root) == before


def test_a_copy_inside_a_script_is_refused_and_nothing_written(capsys, tmp_path):
    compose = (
        "# Head\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n    entrypoint:\n"
        "      - bash\n      - -c\n      - |\n"
        "        # accumulated-context decode cliff: decode collapses once accumulated context\n"
        "        # passes ~21k on the spec tiers\n"
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
    assert "G001 [*] region guards:profile is out of date" in stale.out
    run_guards(capsys, "regen", "--root", str(root))
    assert "#   Max ctx:   131072 (the native window)" in (root / "composes/a.yml").read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize("diff", [False, True])
def test_adopting_a_profile_in_a_file_edited_after_the_check_writes_nothing(
    capsys, tmp_path, monkeypatch, diff
):
    import guards.run.suite

    root = write(tmp_path, {"claims.yaml": CLAIMS, "composes/a.yml": PROFILED.format(ctx="65536")})
    path = root / "composes/a.yml"
    edited = "# a line added by another editor\n" + path.read_text(encoding="utf-8")
    checked = guards.run.suite.run

    def edited_after_the_check(estate, rules):
        found = checked(estate, rules)
        path.write_text(edited, encoding="utf-8")
        return found

    monkeypatch.setattr(guards.run.suite, "run", edited_after_the_check)
    options = ["--diff"] if diff else []
    result = run_guards(capsys, "fix", "--adopt-profile", *options, "--root", str(root))
    verb = "would adopt" if diff else "adopted"
    assert (result.code, result.out, result.err) == (
        2,
        f"guards fix: {verb} 0 profile blocks, 0 left\n",
        "guards: error: composes/a.yml: changed since it was checked; rerun guards fix\n",
    )
    assert path.read_text(encoding="utf-8") == edited


def test_adopting_a_profile_that_disagrees_takes_the_body_s_value_and_shows_it(capsys, tmp_path):
    files = {"claims.yaml": CLAIMS, "composes/a.yml": PROFILED.format(ctx="65536")}
    root = write(tmp_path, {**files, "guards.toml": '[header]\npreset = "profile"\n'})
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
    root = Path(__file__).resolve().parents[2]
    result = run_guards(capsys, "regen", "--check", "--root", str(root))
    assert (result.code, result.out) == (0, "guards regen: 0 files would change\n")
    for compose in sorted((root / "composes").rglob("*.yml")):
        assert "# >>> guards:profile\n" in compose.read_text(encoding="utf-8"), compose


def test_adopt_on_the_real_samples_changes_no_header_line_and_writes_nothing(capsys):
    sample = Path(__file__).resolve().parents[3] / "shared/corpus/club-3090-sample"
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


# -- what is the copy, and what a person wrote beside it ------------------------------------

HEAD = "# Head\n"
OPENING = "# ⚠️ ACCUMULATED-CONTEXT DECODE CLIFF: decode collapses once\n"
CLOSING = "#   accumulated context passes ~21K on the spec tiers.\n"
RENDERED = (
    "# >>> guards:claim old-cliff\n"
    "# ⚠️ RETRACTED 2026-09-08 (claim:old-cliff): Decode cliff\n"
    "#   Why: A harness artefact.\n"
    "#   Instead: Decode is flat with context.\n"
    "# <<< guards:claim (checksum: c36a6dfc)\n"
)
LEFT_ONE = (
    "left: composes/a.yml:2: stale copy of old-cliff (hand-written text inside the copy)\n"
    "guards fix: replaced 0 stale copies, 1 left\n"
)
REPLACED_ONE = (
    "composes/a.yml:2: stale copy of old-cliff -> guards:claim region\n"
    "guards fix: replaced 1 stale copy, 0 left\n"
)
# Each copy has text beside it that is not the claim's wording: the fix would delete it.
HAND_WRITTEN = {
    "a note between its lines": OPENING + "# (ask ops before you change SPEC_N here)\n" + CLOSING,
    "a note in another script between them": OPENING + "# 先问运维再改\n" + CLOSING,
    "a rule between them": OPENING + "# ----------\n" + CLOSING,
    "words before it on its first line": "# Pin the image first. " + OPENING[2:] + CLOSING,
    "a sign before it on its first line": "# ==> " + OPENING[2:] + CLOSING,
    "words after it on its last line": OPENING + CLOSING[:-1] + " Pin the image first.\n",
    "a sign after it on its last line": OPENING + CLOSING[:-1] + " <==\n",
    "two words inside it": OPENING + CLOSING.replace("context", "context (see NCCL)"),
    "a changed word at its end": OPENING + CLOSING.replace("the spec", "all spec"),
}
# Each copy is the claim's wording, re-wrapped or lightly edited: nothing else is lost.
THE_COPY = {
    "as written": OPENING + CLOSING,
    "one word changed": OPENING + CLOSING.replace("passes", "exceeds"),
    "a bullet, re-wrapped": "#  - ⚠️ ACCUMULATED-CONTEXT DECODE CLIFF: decode collapses\n"
    "#    once accumulated context passes ~21K on the spec tiers.\n",
    "a bare # line inside it": OPENING + "#\n" + CLOSING,
    "lower case, other dashes": OPENING.lower().replace("-", "‑") + CLOSING,
}


def _compose(root, text):
    return write(root, {"claims.yaml": CLAIMS, "composes/a.yml": text})


@pytest.mark.parametrize("copy", sorted(HAND_WRITTEN))
def test_a_copy_with_hand_written_text_beside_it_is_left_as_it_is(capsys, tmp_path, copy):
    root = _compose(tmp_path, HEAD + HAND_WRITTEN[copy] + BODY)
    found = run_guards(capsys, "check", "--root", str(root), "--select", "C001")
    assert found.out.startswith("composes/a.yml:2:1: C001 repeats withdrawn claim old-cliff")
    before = tree_digest(root)
    for args in (["--diff"], []):
        result = run_guards(capsys, "fix", *args, "--root", str(root))
        assert (result.code, result.err) == (1, "")
        assert said(result.out) == LEFT_ONE.replace(
            "replaced", "would replace" if args else "replaced"
        )
        assert tree_digest(root) == before


@pytest.mark.parametrize("copy", sorted(THE_COPY))
def test_a_copy_of_nothing_but_the_wording_becomes_the_region(capsys, tmp_path, copy):
    root = _compose(tmp_path, HEAD + THE_COPY[copy] + BODY)
    result = run_guards(capsys, "fix", "--root", str(root))
    assert (result.code, result.out, result.err) == (0, REPLACED_ONE, "")
    assert (root / "composes/a.yml").read_text(encoding="utf-8") == HEAD + RENDERED + BODY
    digest = tree_digest(root)
    again = run_guards(capsys, "fix", "--root", str(root))
    assert (again.code, again.out) == (0, "guards fix: replaced 0 stale copies, 0 left\n")
    assert tree_digest(root) == digest


def test_one_copy_is_left_and_another_in_the_same_file_replaced(capsys, tmp_path):
    kept = HEAD + HAND_WRITTEN["a note between its lines"]
    inner = "    # accumulated-context decode cliff: decode collapses once accumulated context\n"
    inner += "    # passes ~21k on the spec tiers.\n"
    body = "services:\n  vllm:\n" + inner + "    image: vllm/vllm-openai:v0.27.1\n"
    root = _compose(tmp_path, kept + body)
    result = run_guards(capsys, "fix", "--root", str(root))
    assert (result.code, said(result.out)) == (
        1,
        "composes/a.yml:7: stale copy of old-cliff -> guards:claim region\n"
        "left: composes/a.yml:2: stale copy of old-cliff (hand-written text inside the copy)\n"
        "guards fix: replaced 1 stale copy, 1 left\n",
    )
    region = "".join("    " + line + "\n" for line in RENDERED.splitlines())
    region = region.replace("c36a6dfc", "5d1de50a")  # the indented body's checksum
    assert (root / "composes/a.yml").read_text(encoding="utf-8") == (
        kept + "services:\n  vllm:\n" + region + "    image: vllm/vllm-openai:v0.27.1\n"
    )


def test_crlf_and_a_bom_are_kept_and_the_region_takes_the_file_s_line_ending(capsys, tmp_path):
    root = tmp_path
    (root / "claims.yaml").write_text(CLAIMS, encoding="utf-8")
    (root / "composes").mkdir()
    text = HEAD + OPENING + CLOSING + BODY
    (root / "composes/a.yml").write_bytes(("\ufeff" + text.replace("\n", "\r\n")).encode())
    result = run_guards(capsys, "fix", "--root", str(root))
    assert (result.code, result.out) == (0, REPLACED_ONE)
    fixed = HEAD + RENDERED + BODY
    assert (root / "composes/a.yml").read_bytes() == (
        "\ufeff" + fixed.replace("\n", "\r\n")
    ).encode()


# -- the file it writes is the file it checked ----------------------------------------------

EDITS_MEANWHILE = {
    "a line added above the copy": lambda text: "# New first line\n" + text,
    "a line of the copy removed": lambda text: text.replace(CLOSING, ""),
    "the copy edited": lambda text: text.replace("passes", "exceeds"),
    "a line added at the end": lambda text: text + "# trailer\n",
}


@pytest.mark.parametrize("change", sorted(EDITS_MEANWHILE))
@pytest.mark.parametrize("diff", [False, True])
def test_a_file_edited_after_it_was_checked_is_not_written(
    capsys, tmp_path, monkeypatch, change, diff
):
    import guards.write.fix

    root = _compose(tmp_path, HEAD + OPENING + CLOSING + BODY)
    path = root / "composes/a.yml"
    edited = EDITS_MEANWHILE[change](path.read_text(encoding="utf-8"))
    found = guards.write.fix.targets

    def edited_after_the_check(estate, findings):
        files = found(estate, findings)
        path.write_text(edited, encoding="utf-8")  # another editor, after the check
        return files

    monkeypatch.setattr(guards.write.fix, "targets", edited_after_the_check)
    result = run_guards(capsys, "fix", *(["--diff"] if diff else []), "--root", str(root))
    verb = "would replace" if diff else "replaced"
    assert (result.code, result.out, result.err) == (
        2,
        f"guards fix: {verb} 0 stale copies, 0 left\n",
        "guards: error: composes/a.yml: changed since it was checked; rerun guards fix\n",
    )
    assert path.read_text(encoding="utf-8") == edited


def test_the_file_is_read_and_written_under_the_write_lock(capsys, tmp_path, monkeypatch):
    from contextlib import contextmanager

    from guards.sources import edit

    root = _compose(tmp_path, HEAD + OPENING + CLOSING + BODY)
    held: list[str] = []
    seen: list[tuple[str, str, bool]] = []
    locked, read, written = edit.locked, edit.read, edit.write

    @contextmanager
    def recorded_lock(path, shown, wait=None):
        with locked(path, shown, wait):
            held.append(shown)
            yield
            held.remove(shown)

    def recorded_read(path, shown, limit=edit.MAX_BYTES):
        seen.append(("read", shown, shown in held))
        return read(path, shown, limit)

    def recorded_write(source, new_raw):
        seen.append(("write", source.shown, source.shown in held))
        return written(source, new_raw)

    monkeypatch.setattr(edit, "locked", recorded_lock)
    monkeypatch.setattr(edit, "read", recorded_read)
    monkeypatch.setattr(edit, "write", recorded_write)
    result = run_guards(capsys, "fix", "--root", str(root))
    assert (result.code, result.out) == (0, REPLACED_ONE)
    # Loading reads it unlocked; the read the fix splices at, and the write, hold the lock.
    assert [s for s in seen if s[1] == "composes/a.yml"][-2:] == [
        ("read", "composes/a.yml", True),
        ("write", "composes/a.yml", True),
    ]


NAMED_TWICE = {  # PATHS naming composes/a.yml twice; composes/b.yml is a link to it
    "a.yml ./a.yml": lambda root: ["composes/a.yml", "./composes/a.yml"],
    "relative and absolute": lambda root: ["composes/a.yml", str(root / "composes/a.yml")],
    "a link and its target": lambda root: ["composes/a.yml", "composes/b.yml"],
    "the folder, holding both": lambda root: ["composes"],
}


@pytest.mark.parametrize("named", sorted(NAMED_TWICE))
def test_a_file_named_twice_is_fixed_once(capsys, tmp_path, named):
    root = _compose(tmp_path, HEAD + OPENING + CLOSING + BODY)
    (root / "composes/b.yml").symlink_to("a.yml")
    result = run_guards(capsys, "fix", *NAMED_TWICE[named](root), "--root", str(root), cwd=root)
    assert (result.code, result.out, result.err) == (0, REPLACED_ONE, "")
    assert (root / "composes/a.yml").read_text(encoding="utf-8") == HEAD + RENDERED + BODY
    assert (root / "composes/b.yml").is_symlink()


# -- time: linear in the file ----------------------------------------------------------------

FLOOR = 0.25  # seconds of noise on a loaded 2-core machine (as in test_fuzz)


def _bare_lines_fix_time(capsys, root, lines: int, repeat: int, enough: float = 0.0) -> float:
    """:func:`best_time` of ``fix`` on a copy above ``lines`` bare ``#`` lines, each fix
    checked and the copy put back for the next."""
    text = HEAD + OPENING + CLOSING + "#\n" * lines + BODY
    path = root / "composes/a.yml"

    def fix() -> None:
        result = run_guards(capsys, "fix", "--root", str(root))
        assert (result.code, result.out) == (0, REPLACED_ONE)
        assert path.read_text(encoding="utf-8") == HEAD + RENDERED + "#\n" * lines + BODY
        path.write_text(text, encoding="utf-8")

    path.write_text(text, encoding="utf-8")
    return best_time(fix, repeat, enough)


def test_time_grows_linearly_with_bare_comment_lines(capsys, tmp_path):
    """A 40 KB compose of bare ``#`` lines (20,000 of them, a diff of equal lines is quadratic)
    takes less than 8 times as long as a quarter of it."""
    root = _compose(tmp_path, BODY)
    small = _bare_lines_fix_time(capsys, root, 5_000, 3)
    bound = 8 * small + FLOOR
    large = _bare_lines_fix_time(capsys, root, 20_000, 2, enough=bound)
    assert large < bound, f"5,000 lines: {small:.3f} s, 20,000: {large:.3f} s"


# -- the edits, composed ---------------------------------------------------------------------


@st.composite
def _edits(draw, text):
    """Edits of ``text`` that do not overlap (inserts, deletions, replacements)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    pairs = list(zip(cuts[::2], cuts[1::2], strict=False))
    news = st.text(alphabet="ab\n#", max_size=5)
    return [Edit(start, end, draw(news)) for start, end in pairs]


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data(), text=st.text(alphabet="xy\n#", max_size=40))
def test_composed_edits_take_the_text_straight_to_the_final_one(data, text):
    first = data.draw(_edits(text))
    staged = apply(text, first)
    second = data.draw(_edits(staged))
    final = apply(staged, second)
    assert apply(text, composed(first, second, final)) == final
