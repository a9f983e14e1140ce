"""`guards fix`: the one-command repair of the founding incident, and what it leaves alone."""

import re

from .cli_helpers import run_guards, tree_digest

REGION = re.compile(r"^# >>> guards:claim .*?^# <<< guards:claim[^\n]*\n", re.MULTILINE | re.DOTALL)
CLAIMS = """\
claims:
  - id: old-cliff
    title: Decode cliff
    status: retracted
    retracted: 2026-09-08
    reason: A harness artefact.
    text: Decode collapses once accumulated context passes ~21k on the spec tiers.
    match: ["accumulated-context decode cliff"]
    replacement: Decode is flat with context.
"""
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
