"""SARIF 2.1.0 output, validated against the official schema (OASIS, errata 01), kept here as
test data: tests/data/sarif-schema-2.1.0.json."""

import json
from pathlib import Path

import jsonschema
import pytest

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
    reference, _, anchor = k002["helpUri"].partition("#")
    assert anchor == "k002-max-num-seqs"
    text = Path(reference.removeprefix("file://")).read_text(encoding="utf-8")
    assert "\n## K002 max-num-seqs\n" in text  # the anchor exists in the shipped reference
    assert k002["defaultConfiguration"] == {"level": "error"}


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
