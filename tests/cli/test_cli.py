import json
import os
import re
from pathlib import Path

import pytest

from ..cli_helpers import run_guards, tree_digest
from ..conftest import FIXTURES

CLEAN = FIXTURES / "estates" / "clean"
SCHEMA = FIXTURES / "estates" / "schema"

SCHEMA_OUTPUT = """\
composes/bare-warning.yml:6:16: S002 Status '⚠ Production w/ caveats' starts with U+26A0 \
without the U+FE0F variation selector, so it maps to no status
composes/missing-fields.yml:2:1: S003 profile block has no Caveats field (Status is 👁️)
composes/missing-fields.yml:2:1: S003 profile block has no KV field
composes/missing-fields.yml:5:13: S004 profile field Drafter has no value
composes/missing-fields.yml:8:1: S005 profile field MAX ctx repeats the one on line 7
composes/no-header.yml:1:1: S001 no header: the file does not open with a comment block
composes/no-profile.yml:1:1: S001 header has no `# Profile (at-a-glance):` block
composes/unknown-status.yml:6:16: S002 Status 'Production' does not start with a known \
status emoji
guard suite: 10 pass / 7 fail
"""


def test_clean_estate_passes(capsys):
    result = run_guards(capsys, "check", "--root", str(CLEAN))
    assert (result.code, result.out, result.err) == (0, "guard suite: 36 pass / 0 fail\n", "")


def test_failures_print_one_line_each_and_the_total(capsys):
    result = run_guards(capsys, "check", "--root", str(SCHEMA), "--select", "schema")
    assert result.code == 1
    assert result.out == SCHEMA_OUTPUT
    assert result.err == ""


def test_json_output_follows_the_contract(capsys):
    result = run_guards(
        capsys, "check", "--root", str(SCHEMA), "--format", "json", "--select", "schema"
    )
    document = json.loads(result.out)
    assert result.code == 1
    assert document["version"] == 1
    assert document["summary"] == {
        "pass": 10, "fail": 7, "files": 5, "findings": 8, "warnings": 0,
        "suppressed": 0, "baselined": 0,
    }  # fmt: skip
    first = document["findings"][0]
    assert first == {
        "rule": "S002",
        "severity": "error",
        "path": "composes/bare-warning.yml",
        "line": 6,
        "column": 16,
        "end_line": 6,
        "end_column": 39,  # just after the value: 16 + len("⚠ Production w/ caveats")
        "message": "Status '⚠ Production w/ caveats' starts with U+26A0 without the U+FE0F "
        "variation selector, so it maps to no status",
        "hint": "write ⚠️ (with U+FE0F)",
        "claim": None,
        "knob": None,
        "fingerprint": first["fingerprint"],
        "env": None,
        "fix": None,  # added with `check --fix`: keys are only ever added
    }
    assert re.fullmatch(r"[0-9a-f]{16}", first["fingerprint"])
    assert all(set(f) == set(first) for f in document["findings"])
    assert document["errors"] == []


def test_select_and_ignore(capsys):
    result = run_guards(capsys, "check", "--root", str(SCHEMA), "--select", "S001,status-enum")
    assert result.out.splitlines()[-1] == "guard suite: 4 pass / 4 fail"
    result = run_guards(
        capsys, "check", "--root", str(SCHEMA), "--select", "schema", "--ignore", "S00"
    )
    assert result.out == "guard suite: 0 pass / 0 fail\n"


def test_unknown_selector_is_a_usage_error(capsys):
    result = run_guards(capsys, "check", "--root", str(SCHEMA), "--select", "X999")
    assert result.code == 2
    assert result.err == "guards: error: unknown rule selector `X999` (see `guards rules`)\n"
    assert result.out == ""


def test_explicit_paths_check_only_those_files(capsys):
    result = run_guards(capsys, "check", "composes/no-header.yml", "--select", "S", cwd=SCHEMA)
    assert result.out.splitlines() == [
        "composes/no-header.yml:1:1: S001 no header: the file does not open with a comment block",
        "guard suite: 0 pass / 1 fail",
    ]


def test_verbose_says_when_there_is_no_registry(capsys):
    result = run_guards(capsys, "check", "--root", str(SCHEMA), "--verbose")
    assert "guards: no claims.yaml: claim guards run against an empty registry" in result.err
    assert "    hint: write ⚠️ (with U+FE0F)" in result.out


def test_rules_and_explain(capsys):
    listing = run_guards(capsys, "rules").out.splitlines()
    assert listing[0].startswith("S001  header-present")
    explained = run_guards(capsys, "explain", "status-enum")
    assert explained.code == 0 and "Why:" in explained.out and "Bad:" in explained.out
    missing = run_guards(capsys, "explain", "nope")
    assert (missing.code, missing.err) == (
        2,
        "guards: error: unknown rule `nope` (see `guards rules`)\n",
    )


# -- bad input: one line on stderr naming file and line, the rest still checked, exit 2 -----


def write(path, content):
    path.write_bytes(content if isinstance(content, bytes) else content.encode())


@pytest.mark.parametrize(
    "name, content, error",
    [
        (
            "broken.yml",
            "services:\n  s:\n    image: [a\n  t: b\n",
            "composes/broken.yml:4:4: YAML error: did not find expected ',' or ']'",
        ),
        (
            "no-services.yml",
            "# Profile (at-a-glance):\nversion: '3'\n",
            "composes/no-services.yml:2: no top-level `services:` mapping",
        ),
        ("empty.yml", "", "composes/empty.yml:1: empty compose file: no YAML content"),
        (
            "latin1.yml",
            b"# Mod\xe8le\nservices: {}\n",
            "composes/latin1.yml:1:6: not valid UTF-8 (byte 0xe8)",
        ),
        (
            "bad-template.yml",
            "services:\n  s:\n    command: ['${TP:-2']\n",
            "composes/bad-template.yml:3:16: interpolation: unclosed `${`",
        ),
    ],
)
def test_bad_compose_is_reported_and_the_rest_still_checked(capsys, estate, name, content, error):
    write(estate / "composes" / name, content)
    before = tree_digest(estate)
    result = run_guards(capsys, "check", "--root", str(estate))
    assert result.code == 2
    assert result.err == f"guards: error: {error}\n"
    assert result.out == "guard suite: 36 pass / 0 fail\n"
    assert tree_digest(estate) == before


def test_unreadable_compose_is_reported(capsys, estate):
    os.symlink(estate / "missing-target.yml", estate / "composes" / "dangling.yml")
    result = run_guards(capsys, "check", "--root", str(estate))
    assert result.code == 2
    assert result.err == "guards: error: composes/dangling.yml: no such file\n"
    assert result.out == "guard suite: 36 pass / 0 fail\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_is_reported(capsys, estate):
    target = estate / "composes" / "dual-fast.yml"
    target.chmod(0)
    result = run_guards(capsys, "check", "--root", str(estate))
    assert result.code == 2
    assert result.err.startswith("guards: error: composes/dual-fast.yml: cannot read:")


def test_missing_explicit_path_is_reported(capsys):
    result = run_guards(
        capsys, "check", "composes/nope.yml", "composes/no-header.yml", "--select", "S", cwd=SCHEMA
    )
    assert result.code == 2
    assert result.err == "guards: error: composes/nope.yml: no such file or directory\n"
    assert result.out.endswith("guard suite: 0 pass / 1 fail\n")


def test_bad_note_front_matter_is_reported(capsys, estate):
    write(estate / "learnings" / "bad.md", "---\ntitle: [unclosed\n---\nbody\n")
    result = run_guards(capsys, "check", "--root", str(estate))
    assert result.code == 2
    assert result.err.startswith("guards: error: learnings/bad.md:3:1: YAML error:")


# -- errors that stop the run ---------------------------------------------------------------


@pytest.mark.parametrize(
    "content, error",
    [
        (
            "claims:\n  - id: a\n    title: t\n    status: activ\n",
            "claims.yaml:4: claims[0].status: got 'activ', expected 'active', 'retracted', "
            "'superseded' or 'disputed'",
        ),
        (
            "claims:\n  - id: Bad_Id\n    title: t\n    status: active\n",
            "claims.yaml:2: claims[0].id: must be kebab-case (lowercase letters, digits, single "
            "hyphens)",
        ),
        (
            "claims:\n  - id: a\n    status: active\n",
            "claims.yaml:2: claims[0].title: required field is missing",
        ),
        (
            "claims:\n  - id: a\n    title: t\n    status: active\n    asserted: 2026-13-01\n",
            "claims.yaml:5: claims[0].asserted: got '2026-13-01', expected a date as YYYY-MM-DD",
        ),
        (
            "claims:\n  - id: a\n    title: t\n    status: active\n    facts:\n      ceiling: 0.9\n",
            "claims.yaml:6: claims[0].facts.ceiling: unknown field",
        ),
        ("claims: [\n", "claims.yaml:2:1: YAML error: did not find expected node content"),
        ("- a\n", "claims.yaml:1: registry must be a mapping with a `claims:` list"),
    ],
)
def test_invalid_registry_stops_the_run(capsys, estate, content, error):
    write(estate / "claims.yaml", content)
    result = run_guards(capsys, "check", "--root", str(estate))
    assert (result.code, result.out) == (2, "")
    assert result.err == f"guards: error: {error}\n"


def test_duplicate_claim_id_stops_the_run(capsys, estate):
    text = "claims:\n" + "  - id: a\n    title: t\n    status: active\n" * 2
    write(estate / "claims.yaml", text)
    result = run_guards(capsys, "check", "--root", str(estate))
    assert result.err == (
        "guards: error: claims.yaml:5: claims[1].id: duplicate id 'a' (first defined at line 2)\n"
    )


@pytest.mark.parametrize(
    "config, error",
    [
        (
            'composes = ["composes/*.yml"]\nnotse = []\n',
            "guards.toml:2: unknown setting `notse` (known: by-status, claims, composes, engine-versions, env-files, exclude, extend-ignore, extend-select, header, history, ignore, "
            "max-file-mb, notes, per-path-ignores, rules, rules-url, select, stacks, templates)",
        ),
        ("composes = [\n", "guards.toml:2: invalid TOML: Invalid value at the end of the file"),
        (
            "a = 1\n[x\n",
            "guards.toml:2:3: invalid TOML: Expected ']' at the end of a table declaration",
        ),
        ("composes = 3\n", "guards.toml:1: `composes` must be a list of strings"),
        (
            'claims = "registry/claims.yaml"\n',
            "registry/claims.yaml: claims registry named by guards.toml does not exist",
        ),
    ],
)
def test_invalid_config_stops_the_run(capsys, estate, config, error):
    write(estate / "guards.toml", config)
    result = run_guards(capsys, "check", "--root", str(estate))
    assert (result.code, result.out) == (2, "")
    assert result.err == f"guards: error: {error}\n"


def test_config_flag_reads_a_separate_file(capsys, estate, tmp_path):
    other = tmp_path / "other.toml"
    write(other, 'composes = ["composes/single-*.yml"]\n[header]\npreset = "profile"\n')
    result = run_guards(capsys, "check", "--root", str(estate), "--config", str(other))
    assert result.out == "guard suite: 18 pass / 0 fail\n"
    missing = run_guards(capsys, "check", "--root", str(estate), "--config", "nope.toml")
    assert (missing.code, missing.err) == (2, "guards: error: nope.toml: config file not found\n")


def test_bad_env_file_stops_the_run(capsys, estate, tmp_path):
    env = tmp_path / "my.env"
    write(env, "# operator overlay\nMAX_NUM_SEQS=3\nMODEL='never closed\n")
    result = run_guards(capsys, "check", "--root", str(estate), "--env-file", str(env))
    assert result.code == 2
    assert result.err == f"guards: error: {env}:3: unterminated ' quote\n"


def test_root_must_be_a_directory(capsys, tmp_path):
    result = run_guards(capsys, "check", "--root", str(tmp_path / "nope"))
    assert result.code == 2
    assert result.err.endswith("nope: --root is not a directory\n")


def test_unexpected_errors_exit_3_with_a_log(capsys, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("guards.run.suite.run", boom)
    result = run_guards(capsys, "check", "--root", str(CLEAN))
    assert result.code == 3
    assert result.err.startswith("guards: internal error: RuntimeError('boom') (details in ")
    log = result.err.rsplit("details in ", 1)[1].rstrip(")\n")
    assert "Traceback" in Path(log).read_text()
    os.unlink(log)


def test_bad_rule_option_names_the_config_line(capsys, estate):
    write(
        estate / "guards.toml",
        'composes = ["composes/*.yml"]\n\n[rules.required-fields]\ncaveats-unless = ["prod"]\n',
    )
    result = run_guards(capsys, "check", "--root", str(estate))
    assert result.code == 2
    assert result.err.startswith(
        "guards: error: guards.toml:4: rules.required-fields.caveats-unless: unknown status 'prod'"
    )
