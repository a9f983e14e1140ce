"""SARIF 2.1.0 output, validated against the official schema (OASIS, errata 01), kept here as
test data: tests/data/sarif-schema-2.1.0.json."""

import json
from pathlib import Path

import jsonschema
import pytest

from guards.report.sarif import reference_in, reference_url

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())
BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"


def sarif(capsys, root, *args):
    result = run_guards(capsys, "check", "--root", str(root), "--format", "sarif", *args)
    document = json.loads(result.out)
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return result, document


def test_the_schema_is_the_official_one():
    assert SCHEMA["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(SCHEMA)


def test_incident_fixture_validates_and_has_its_twenty_findings(capsys, incident):
    result, document = sarif(capsys, incident)
    assert result.code == 1
    [run] = document["runs"]
    driver = run["tool"]["driver"]
    assert (document["version"], driver["name"]) == ("2.1.0", "guards")
    assert len(run["results"]) == 20
    first = run["results"][0]
    assert first["ruleId"] == "C001"
    assert driver["rules"][first["ruleIndex"]]["id"] == "C001"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] <= region["endLine"]
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert set(first["partialFingerprints"]) == {"guards/v1"}
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]


def test_rules_carry_help_text_and_a_link_into_the_reference(capsys, incident):
    _, document = sarif(capsys, incident)
    rules = {rule["id"]: rule for rule in document["runs"][0]["tool"]["driver"]["rules"]}
    k002 = rules["K002"]
    assert k002["name"] == "max-num-seqs"
    assert k002["help"]["text"].startswith("K002 max-num-seqs: ")
    assert "**Bad:**" in k002["help"]["markdown"]
    assert k002["defaultConfiguration"] == {"level": "error"}
    # The link: docs/rules.md in the repository the installed package names, if it names one.
    reference = reference_url()
    if reference is None:
        assert all("helpUri" not in rule for rule in rules.values())
    else:
        assert k002["helpUri"] == f"{reference}#k002-max-num-seqs"
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "\n## K002 max-num-seqs\n" in text  # the anchor exists in the reference


@pytest.mark.parametrize(
    ("urls", "reference"),
    [
        (
            ["Homepage, https://example.org", "Repository, https://github.com/acme/guards"],
            "https://github.com/acme/guards/blob/HEAD/docs/rules.md",
        ),
        (
            ["Source, https://github.com/acme/guards.git/"],
            "https://github.com/acme/guards/blob/HEAD/docs/rules.md",
        ),
        (
            ["Repository, https://gitlab.com/acme/tools/guards"],
            "https://gitlab.com/acme/tools/guards/-/blob/HEAD/docs/rules.md",
        ),
        (["Repository, http://github.com/acme/guards"], None),  # not https
        (["Repository, https://example.org/acme/guards"], None),  # a forge whose pages are unknown
        (["Documentation, https://github.com/acme/guards"], None),  # not the repository
        (["Repository, https://github.com/acme"], None),  # an owner, not a repository
        ([], None),
    ],
)
def test_the_default_link_is_the_reference_in_the_projects_repository(urls, reference):
    assert reference_in(urls) == reference


def test_no_link_is_ever_a_path_into_the_installation(capsys, incident, monkeypatch):
    import guards.report.sarif as sarif_report

    monkeypatch.setattr(sarif_report, "reference_url", lambda: None)
    _, document = sarif(capsys, incident)
    assert all("helpUri" not in rule for rule in document["runs"][0]["tool"]["driver"]["rules"])
    assert "file://" not in json.dumps(document)


def test_rules_url_setting_moves_the_links(capsys, tmp_path):
    (tmp_path / "claims.yaml").write_text(WITHDRAWN_CLAIM, encoding="utf-8")
    (tmp_path / "c.yml").write_text(STALE_COPY + BODY, encoding="utf-8")
    (tmp_path / "guards.toml").write_text(
        'rules-url = "https://docs.example.org/guards/rules"\n', encoding="utf-8"
    )
    _, document = sarif(capsys, tmp_path, "--select", "C001")
    [rule] = document["runs"][0]["tool"]["driver"]["rules"]
    assert rule["helpUri"] == "https://docs.example.org/guards/rules#c001-stale-claim"


def test_suppressed_and_unreadable_inputs_are_described_the_sarif_way(capsys, tmp_path):
    (tmp_path / "claims.yaml").write_text(WITHDRAWN_CLAIM, encoding="utf-8")
    waived = "# guards: ignore[C001] quoted from the incident report\n" + STALE_COPY + BODY
    (tmp_path / "a b.yml").write_text(waived, encoding="utf-8")
    (tmp_path / "broken.yml").write_text("services: [\n", encoding="utf-8")
    result, document = sarif(capsys, tmp_path, "--select", "C001")
    assert result.code == 2
    [run] = document["runs"]
    [finding] = run["results"]
    assert finding["suppressions"] == [
        {
            "kind": "inSource",
            "justification": "quoted from the incident report",
            "location": {
                "physicalLocation": {
                    "artifactLocation": {"uri": "a%20b.yml", "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": 1},
                }
            },
        }
    ]
    assert finding["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a%20b.yml"
    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.yml"


@pytest.mark.parametrize("which", ["incident", "bundled"])
def test_sarif_results_equal_the_json_findings(capsys, incident, which):
    root = incident if which == "incident" else ROOT
    _, document = sarif(capsys, root)
    plain = json.loads(run_guards(capsys, "check", "--root", str(root), "--format", "json").out)
    results = document["runs"][0]["results"]
    assert [(r["ruleId"], r["partialFingerprints"]["guards/v1"]) for r in results] == [
        (f["rule"], f["fingerprint"]) for f in plain["findings"]
    ]


def test_a_fixable_finding_carries_its_fix_and_applying_it_is_what_check_fix_writes(
    capsys, tmp_path
):
    (tmp_path / "claims.yaml").write_text(WITHDRAWN_CLAIM, encoding="utf-8")
    compose = "# Head\n" + STALE_COPY + BODY
    (tmp_path / "c.yml").write_text(compose, encoding="utf-8")
    _, document = sarif(capsys, tmp_path, "--select", "C001")
    [result] = document["runs"][0]["results"]
    [fix] = result["fixes"]
    assert fix["description"] == {
        "text": "replace the stale copy of old-cliff with a guards:claim region"
    }
    [change] = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "c.yml", "uriBaseId": "%SRCROOT%"}
    [replacement] = change["replacements"]
    assert replacement["deletedRegion"] == {
        "startLine": 2,
        "startColumn": 1,
        "endLine": 4,
        "endColumn": 1,
    }
    # The copy's two lines (2-3) replaced by the region, as `guards check --fix` writes it.
    lines = compose.split("\n")
    applied = "\n".join(lines[:1]) + "\n" + replacement["insertedContent"]["text"]
    applied += "\n".join(lines[3:])
    assert run_guards(capsys, "check", "--root", str(tmp_path), "--fix").code == 0
    assert (tmp_path / "c.yml").read_text(encoding="utf-8") == applied
    # The stale copy's region ends where its last line does: a real end column.
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 2, "startColumn": 1, "endLine": 3, "endColumn": 55}


def test_a_region_whose_end_the_rule_does_not_know_has_no_end_column(capsys, tmp_path):
    header = "# Profile (at-a-glance):\n#   Model:\n"  # an empty value: a point at its end
    (tmp_path / "c.yml").write_text(
        header + "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
    )
    (tmp_path / "guards.toml").write_text('[header]\npreset = "profile"\n', encoding="utf-8")
    _, document = sarif(capsys, tmp_path, "--select", "S004")
    [result] = document["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2,
        "startColumn": 11,
        "endLine": 2,
    }
    assert "fixes" not in result


def test_a_finding_about_a_whole_line_spans_its_text(capsys, tmp_path):
    (tmp_path / "c.yml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n")
    (tmp_path / "guards.toml").write_text('[header]\npreset = "profile"\n', encoding="utf-8")
    _, document = sarif(capsys, tmp_path, "--select", "S001")
    [result] = document["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 1,
        "startColumn": 1,
        "endLine": 1,
        "endColumn": 10,  # just after "services:"
    }


def test_a_fix_of_a_file_of_crlf_lines_inserts_crlf_lines_as_check_fix_writes(capsys, tmp_path):
    (tmp_path / "claims.yaml").write_text(WITHDRAWN_CLAIM, encoding="utf-8")
    compose = ("# Head\n" + STALE_COPY + BODY).replace("\n", "\r\n")
    (tmp_path / "c.yml").write_bytes(compose.encode("utf-8"))
    _, document = sarif(capsys, tmp_path, "--select", "C001")
    [replacement] = document["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0][
        "replacements"
    ]
    inserted = replacement["insertedContent"]["text"]
    assert "\r\n" in inserted and "\n" not in inserted.replace("\r\n", "")
    lines = compose.split("\r\n")
    applied = "\r\n".join(lines[:1]) + "\r\n" + inserted + "\r\n".join(lines[3:])
    assert run_guards(capsys, "check", "--root", str(tmp_path), "--fix").code == 0
    assert (tmp_path / "c.yml").read_bytes().decode("utf-8") == applied
