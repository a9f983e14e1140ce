"""Suppressions through the command line: the summary count, --show-suppressed in text and
JSON, per-path ignores in the config (a reason required), and their errors."""

import json

import pytest

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, tree_digest

BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
WAIVED_COPY = "# guards: ignore[C001] quoted from the 2026-08 incident report, kept on purpose\n"


@pytest.fixture
def estate(tmp_path):
    (tmp_path / "claims.yaml").write_text(WITHDRAWN_CLAIM, encoding="utf-8")
    (tmp_path / "composes").mkdir()
    (tmp_path / "composes" / "a.yml").write_text(WAIVED_COPY + STALE_COPY + BODY, encoding="utf-8")
    (tmp_path / "composes" / "b.yml").write_text(STALE_COPY + BODY, encoding="utf-8")
    (tmp_path / "guards.toml").write_text(
        'composes = ["composes/*.yml"]\nselect = ["C001", "X"]\n', encoding="utf-8"
    )
    return tmp_path


def test_a_suppressed_finding_is_counted_not_listed(capsys, estate):
    result = run_guards(capsys, "check", cwd=estate)
    assert result.code == 1
    assert result.out == (
        "composes/b.yml:1:1: C001 [*] repeats withdrawn claim old-cliff (lines 1-2), retracted "
        "2026-09-08: A harness artefact.\n"
        "guard suite: 4 pass / 1 fail, 1 suppressed, 1 fixable with --fix\n"
    )


def test_show_suppressed_lists_it_with_its_reason(capsys, estate):
    result = run_guards(capsys, "check", "--show-suppressed", "--select", "C001", cwd=estate)
    assert result.out == (
        "composes/a.yml:2:1: C001 [suppressed] repeats withdrawn claim old-cliff (lines 2-3), "
        "retracted 2026-09-08: A harness artefact.\n"
        "    suppressed at composes/a.yml:1: quoted from the 2026-08 incident report, kept on "
        "purpose\n"
        "composes/b.yml:1:1: C001 [*] repeats withdrawn claim old-cliff (lines 1-2), retracted "
        "2026-09-08: A harness artefact.\n"
        "guard suite: 1 pass / 1 fail, 1 suppressed, 1 fixable with --fix\n"
    )


def test_json_counts_suppressed_and_lists_them_when_asked(capsys, estate):
    plain = json.loads(run_guards(capsys, "check", "--format", "json", cwd=estate).out)
    assert plain["summary"]["suppressed"] == 1
    assert "waived" not in plain
    shown = json.loads(
        run_guards(capsys, "check", "--format", "json", "--show-suppressed", cwd=estate).out
    )
    [waived] = shown["waived"]
    assert (waived["rule"], waived["path"], waived["line"]) == ("C001", "composes/a.yml", 2)
    assert waived["waiver"] == {
        "kind": "inline",
        "reason": "quoted from the 2026-08 incident report, kept on purpose",
        "path": "composes/a.yml",
        "line": 1,
    }
    assert shown["findings"] == plain["findings"]


PER_PATH = """\
composes = ["composes/*.yml"]
select = ["C001", "X"]

[per-path-ignores."composes/b.yml"]
rules = ["stale-claim"]
reason = "b.yml is the incident exhibit"
"""


def test_a_per_path_ignore_waives_the_rule_in_the_files_it_matches(capsys, estate):
    (estate / "guards.toml").write_text(PER_PATH, encoding="utf-8")
    result = run_guards(capsys, "check", "--show-suppressed", cwd=estate)
    assert result.code == 0
    assert result.out.splitlines()[2:] == [
        "composes/b.yml:1:1: C001 [suppressed] repeats withdrawn claim old-cliff (lines 1-2), "
        "retracted 2026-09-08: A harness artefact.",
        "    suppressed at guards.toml:4: b.yml is the incident exhibit",
        "guard suite: 5 pass / 0 fail, 2 suppressed",
    ]


def test_an_expired_per_path_ignore_is_a_finding_at_the_config_line(capsys, estate):
    (estate / "guards.toml").write_text(PER_PATH + "until = 2001-01-31\n", encoding="utf-8")
    result = run_guards(capsys, "check", cwd=estate)
    assert result.code == 1
    assert result.out == (
        "composes/b.yml:1:1: C001 [*] repeats withdrawn claim old-cliff (lines 1-2), retracted "
        "2026-09-08: A harness artefact.\n"
        "guards.toml:4:1: X004 per-path ignore of C001 for 'composes/b.yml' expired on "
        "2001-01-31; its findings are reported again\n"
        "guard suite: 4 pass / 2 fail, 1 suppressed, 1 fixable with --fix\n"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            'rules = ["C001"]\n',
            'a reason is required: `reason = "why these findings are accepted here"`',
        ),
        (
            'rules = ["C001"]\nreason = "  "\n',
            'a reason is required: `reason = "why these findings are accepted here"`',
        ),
        ('rules = ["C0011"]\nreason = "x"\n', "unknown rule `C0011` (see `guards rules`)"),
        ('rules = []\nreason = "x"\n', "`rules` must be a non-empty list of rule ids or names"),
        (
            'rules = ["C001"]\nreason = "x"\nwhy = 1\n',
            "unknown key `why` (known: rules, reason, until)",
        ),
        ('rules = ["C001"]\nreason = "x"\nuntil = "soon"\n', "`until` must be a date, YYYY-MM-DD"),
        (
            'rules = ["C001"]\nreason = "x"\nuntil = 2027-01-01T10:00:00\n',
            "`until` must be a date, YYYY-MM-DD",
        ),
    ],
)
def test_a_per_path_ignore_needs_known_rules_and_a_reason(capsys, estate, entry, message):
    config = 'composes = ["composes/*.yml"]\n\n[per-path-ignores."composes/b.yml"]\n' + entry
    (estate / "guards.toml").write_text(config, encoding="utf-8")
    before = tree_digest(estate)
    result = run_guards(capsys, "check", cwd=estate)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"guards: error: guards.toml:3: per-path-ignores 'composes/b.yml': {message}\n"
    )
    assert tree_digest(estate) == before


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            'per-path-ignores = ["composes/b.yml"]\n',
            "`per-path-ignores` must be a table of glob = {rules, reason}",
        ),
        (
            '[per-path-ignores]\n"../b.yml" = {rules = ["C001"], reason = "x"}\n',
            "per-path-ignores '../b.yml': the pattern reaches outside the root; patterns are relative to it",
        ),
        (
            '[per-path-ignores]\n"b.yml" = "C001"\n',
            "per-path-ignores 'b.yml': must be a table with `rules` and `reason`",
        ),
    ],
)
def test_a_malformed_per_path_table_is_exit_2(capsys, estate, config, message):
    (estate / "guards.toml").write_text(config, encoding="utf-8")
    result = run_guards(capsys, "check", cwd=estate)
    assert (result.code, result.out) == (2, "")
    line = 2 if config.startswith("[") else 1
    assert result.err == f"guards: error: guards.toml:{line}: {message}\n"


def test_a_markdown_directive_waives_a_note_finding(capsys, estate):
    (estate / "learnings").mkdir()
    (estate / "learnings" / "n.md").write_text(
        "# The decode cliff\n\n"
        "<!-- guards: ignore[C001] the operator's words, quoted in the incident timeline -->\n"
        "> Accumulated-context decode cliff: decode collapses once accumulated context passes "
        "~21K on the spec tiers.\n",
        encoding="utf-8",
    )
    (estate / "guards.toml").write_text(
        'composes = ["composes/*.yml"]\nnotes = ["learnings/*.md"]\nselect = ["C001", "X"]\n',
        encoding="utf-8",
    )
    result = run_guards(capsys, "check", "--show-suppressed", cwd=estate)
    assert "learnings/n.md:4:1: C001 [suppressed]" in result.out
    assert (
        "    suppressed at learnings/n.md:3: the operator's words, quoted in the incident timeline\n"
        in result.out
    )
    assert result.out.endswith("guard suite: 8 pass / 1 fail, 2 suppressed, 1 fixable with --fix\n")
