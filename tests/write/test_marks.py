"""`guards fix` for citations of a withdrawn claim (C002), and the retraction loop the README
describes, run to the end on a copy of the bundled estate."""

import re
import shutil
from pathlib import Path

import pytest

from ..cli_helpers import WITHDRAWN_CLAIM, run_guards, tree_digest, write

REPO = Path(__file__).resolve().parents[2]
BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"


def test_a_citation_written_as_current_is_marked_withdrawn(capsys, tmp_path):
    root = write(
        tmp_path,
        {
            "claims.yaml": WITHDRAWN_CLAIM,
            "composes/a.yml": "# Head\n# The decode story (claim:old-cliff) in short.\n" + BODY,
            "learnings/n.md": "---\nclaims: [old-cliff, other-one]\n---\n\n# N\n\n"
            "See claim:old-cliff for the numbers.\n",
        },
    )
    result = run_guards(capsys, "fix", "--root", str(root))
    assert (result.code, result.err) == (0, "")
    assert result.out.endswith("guards fix: replaced 0 stale copies, marked 3 citations, 0 left\n")
    compose = (root / "composes/a.yml").read_text(encoding="utf-8")
    assert "# The decode story (claim:old-cliff, retracted 2026-09-08) in short.\n" in compose
    note = (root / "learnings/n.md").read_text(encoding="utf-8")
    assert note.startswith("---\nclaims: [other-one]\nretracts: [old-cliff]\n---\n")
    assert "See claim:old-cliff (retracted 2026-09-08) for the numbers.\n" in note
    check = run_guards(capsys, "check", "--root", str(root), "--select", "C002")
    assert check.code == 0
    digest = tree_digest(root)
    again = run_guards(capsys, "fix", "--root", str(root))
    assert (again.code, again.out) == (0, "guards fix: replaced 0 stale copies, 0 left\n")
    assert tree_digest(root) == digest


@pytest.mark.parametrize(
    ("note", "said"),
    [
        (
            "# N\n\nRun `grep claim:old-cliff` to find it.\n",
            "left: learnings/n.md:3:11: citation of withdrawn claim old-cliff (inside a code "
            "span); edit by hand: replace `claim:old-cliff` with `claim:old-cliff (retracted "
            "2026-09-08)`\n",
        ),
        (
            "---\nclaims:\n  - old-cliff\n---\n\n# N\n",
            "left: learnings/n.md:3:5: citation of withdrawn claim old-cliff (front matter not a "
            "one-line `claims: [...]` list); edit by hand: move old-cliff from `claims:` to "
            "`retracts:`\n",
        ),
    ],
)
def test_a_citation_it_cannot_mark_safely_is_left_with_the_edit(capsys, tmp_path, note, said):
    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "learnings/n.md": note})
    before = tree_digest(root)
    result = run_guards(capsys, "fix", "--root", str(root))
    assert (result.code, result.out) == (1, said + "guards fix: replaced 0 stale copies, 1 left\n")
    assert tree_digest(root) == before


# -- the loop ---------------------------------------------------------------------------------

EDIT = re.compile(r"^  edit (\S+?):(\d+)(?:-\d+)?: replace$")


def apply_printed_edits(root: Path, out: str) -> int:
    """Make the edits ``fix`` printed for what it left, exactly as printed: the maintainer's
    hand edit. Each one must find the lines it names."""
    lines, edits, at = out.split("\n"), [], 0
    while at < len(lines):
        found = EDIT.match(lines[at])
        at += 1
        if not found:
            continue
        old, new = [], []
        while lines[at].startswith("  - "):
            old.append(lines[at][4:])
            at += 1
        assert lines[at] == "  with"
        at += 1
        while lines[at].startswith("  + "):
            new.append(lines[at][4:])
            at += 1
        edits.append((found.group(1), int(found.group(2)), old, new))
    for path, line, old, new in sorted(edits, key=lambda e: (e[0], -e[1])):
        text = (root / path).read_text(encoding="utf-8").split("\n")
        assert text[line - 1 : line - 1 + len(old)] == old, (path, line)
        text[line - 1 : line - 1 + len(old)] = new
        (root / path).write_text("\n".join(text), encoding="utf-8")
    return len(edits)


def bundled_copy(tmp_path: Path) -> Path:
    root = tmp_path / "estate"
    for name in ("composes", "learnings"):
        shutil.copytree(REPO / name, root / name)
    shutil.copy(REPO / "claims.yaml", root / "claims.yaml")
    settings = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    block = settings[settings.index("[tool.guards]") :]
    (root / "guards.toml").write_text(block[: block.index("[tool.ruff]")], encoding="utf-8")
    return root


# Restated in composes and notes (vllm-50021-...), in composes and cited by notes (spec-tax-...).
@pytest.mark.parametrize("claim", ["vllm-50021-gdn-spec-exposure", "spec-tax-35387"])
def test_the_retraction_loop_ends_green(capsys, tmp_path, claim):
    root = bundled_copy(tmp_path)
    (tmp_path / "r.md").write_text("Flat with depth.\n", encoding="utf-8")
    assert run_guards(capsys, "check", "--root", str(root)).code == 0
    retract = run_guards(
        capsys,
        "claims",
        "retract",
        claim,
        "--root",
        str(root),
        "--date",
        "2026-11-01",
        "--reason",
        "A harness artefact.",
        "--replacement-file",
        str(tmp_path / "r.md"),
    )
    assert retract.code == 0
    stale = run_guards(capsys, "check", "--root", str(root), "--select", "C001,C002")
    assert stale.code == 1 and " C001 " in stale.out
    fixed = run_guards(capsys, "fix", "--root", str(root))
    assert fixed.code in (0, 1) and fixed.err == ""
    left = fixed.out.count("\nleft: ") + fixed.out.startswith("left: ")
    assert apply_printed_edits(root, fixed.out) == left  # every copy left has its edit
    assert run_guards(capsys, "regen", "--root", str(root)).code == 0
    green = run_guards(capsys, "check", "--root", str(root))
    assert green.code == 0 and green.out.splitlines()[-1].endswith(" pass / 0 fail")
    again = run_guards(capsys, "fix", "--root", str(root))
    assert (again.code, again.out) == (0, "guards fix: replaced 0 stale copies, 0 left\n")
