"""Which findings a write command repairs is the rule's to say, in ``Finding.fixable``: C001
(a stale copy), C002 (a withdrawn claim cited as current) and G001 (a region out of date) set
it, and nothing reads it off a message. So a message worded otherwise is fixed all the same,
and a finding its rule does not mark gets no fix, whatever it says."""

from dataclasses import replace

from guards.findings import Finding
from guards.rules import registry_drift
from guards.run.pipeline import Asked, check

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, write

BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
NOTE = "# N\n\nSee claim:old-cliff for the numbers.\n"
UNRECORDED = "# N\n\n## Retracted 2026-09-08: the cliff (claim:kept-claim)\n\nIt was us.\n"
KEPT_CLAIM = """\
  - id: kept-claim
    title: Still held
    status: active
    text: The pool holds 45,875 tokens at 32K.
"""
STALE_REGION = (
    "# Title\n# >>> guards:profile\n# <<< guards:profile\n"
    "x-guards:\n  model: Qwen3.8-27B (INT4)\n  status: ✅ Production\n"
    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
)
BROKEN_REGION = "# Title\n# >>> guards:nowhere\n# <<< guards:nowhere\n" + BODY


def estate(tmp_path):
    return write(
        tmp_path,
        {
            "claims.yaml": WITHDRAWN_CLAIM + KEPT_CLAIM,
            "composes/copy.yml": STALE_COPY + BODY,
            "composes/region.yml": STALE_REGION,
            "composes/broken.yml": BROKEN_REGION,
            "learnings/cites.md": NOTE,
            "learnings/unrecorded.md": UNRECORDED,
        },
    )


def marks(root) -> list[tuple[str, str, bool]]:
    done = check(Asked(root=root, select=["C001", "C002", "G001"]))
    return [(f.rule, f.path, f.fixable) for f in done.run.findings]


def test_the_rules_mark_what_a_write_command_repairs_and_nothing_else(tmp_path):
    assert marks(estate(tmp_path)) == [
        ("G001", "composes/broken.yml", False),  # a region that cannot be rendered
        ("C001", "composes/copy.yml", True),
        ("G001", "composes/region.yml", True),
        ("C002", "learnings/cites.md", True),
        ("C002", "learnings/unrecorded.md", False),  # a retraction the registry lacks
    ]


def test_a_c002_message_worded_otherwise_is_still_fixed(capsys, tmp_path, monkeypatch):
    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "learnings/cites.md": NOTE})
    cited = registry_drift._still_cited

    def reworded(*args) -> Finding:
        return replace(cited(*args), message="still leans on a withdrawn claim")

    monkeypatch.setattr(registry_drift, "_still_cited", reworded)
    found = run_guards(capsys, "check", "--root", str(root), "--select", "C002")
    assert found.out == (
        "learnings/cites.md:3:5: C002 [*] still leans on a withdrawn claim\n"
        "guard suite: 0 pass / 1 fail, 1 fixable with --fix\n"
    )
    diff = run_guards(capsys, "check", "--root", str(root), "--select", "C002", "--diff")
    assert diff.code == 1
    assert "+See claim:old-cliff (retracted 2026-09-08) for the numbers." in diff.out


def test_a_finding_its_rule_does_not_mark_gets_no_fix(capsys, tmp_path, monkeypatch):
    root = write(
        tmp_path,
        {
            "claims.yaml": WITHDRAWN_CLAIM,
            "learnings/cites.md": NOTE,
            "composes/a.yml": STALE_COPY + BODY,
        },
    )
    monkeypatch.setattr(Finding, "as_fixable", lambda finding: finding)  # no rule marks any
    found = run_guards(capsys, "check", "--root", str(root), "--select", "C")
    assert "[*]" not in found.out and "fixable" not in found.out
    assert found.out.count(" C00") == 2  # the same findings, the same messages
    diff = run_guards(capsys, "check", "--root", str(root), "--select", "C", "--diff")
    assert (diff.code, diff.out) == (0, "")


def test_a_file_with_several_fixes_is_read_once_for_its_line_ending(capsys, tmp_path, monkeypatch):
    from guards.write import fixes

    note = "# N\n\nSee claim:old-cliff for the numbers.\n\nAnd claim:old-cliff again.\n"
    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "learnings/cites.md": note})
    reads = []
    real = fixes._source
    monkeypatch.setattr(fixes, "_source", lambda e, t: reads.append(t.path) or real(e, t))
    done = run_guards(capsys, "check", "--root", str(root), "--select", "C002")
    assert done.code == 1 and done.out.count("[*]") == 2
    assert reads == ["learnings/cites.md"]


def test_a_file_that_cannot_be_read_again_for_its_fix_gets_no_fix(capsys, tmp_path, monkeypatch):
    from guards.errors import GuardsError
    from guards.write import fixes

    root = write(tmp_path, {"claims.yaml": WITHDRAWN_CLAIM, "learnings/cites.md": NOTE})

    def gone(estate, target):
        raise GuardsError("no such file", target.path)

    monkeypatch.setattr(fixes, "_source", gone)
    done = run_guards(capsys, "check", "--root", str(root), "--select", "C002")
    assert done.code == 1 and " C002 " in done.out and "[*]" not in done.out
    assert "Traceback" not in done.err
