"""A check a rule cannot decide is neither a pass nor a failure: the summary counts it as not
judged, ``-v`` says why, and every format carries it in its own way.

The class: a KV pool measured at the shipped utilisation judges ``--max-num-seqs``; an
operator's env file that raises the utilisation by 0.01 leaves no pool to judge it against
(rescaling needs the GPU's memory and the KV bytes per token, which this estate does not give),
and that used to read as a silent ``0 pass / 0 fail``."""

import json

import jsonschema
import pytest

from ..cli_helpers import run_guards, write
from .test_sarif import SCHEMA

COMPOSE = """\
# Profile (at-a-glance):
#   Max ctx:   65536 — MEASURED @0.90 util (KV pool 70,000 tok)
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command:
      - --max-model-len
      - "65536"
      - --gpu-memory-utilization
      - "${GPU_MEMORY_UTILIZATION:-0.90}"
      - --max-num-seqs
      - "1"
"""
WHY = (
    "service vllm: no measured KV pool that applies in its comments and no registry facts to "
    "compute one; max-num-seqs not checked"
)


@pytest.fixture
def estate(tmp_path):
    return write(
        tmp_path,
        {
            "composes/c.yml": COMPOSE,
            "operator.env": "GPU_MEMORY_UTILIZATION=0.91\n",
            "guards.toml": '[header]\npreset = "profile"\n',
        },
    )


def check(capsys, estate, *args):
    return run_guards(
        capsys, "check", "--select", "K002", "--env-file", "operator.env", *args, cwd=estate
    )


def test_the_shipped_compose_is_judged(capsys, estate):
    result = run_guards(capsys, "check", "--select", "K002", cwd=estate)
    assert (result.code, result.out) == (0, "guard suite: 1 pass / 0 fail\n")


def test_the_raised_utilisation_is_not_judged_and_verbose_says_why(capsys, estate):
    result = check(capsys, estate, "-v")
    assert (result.code, result.out) == (0, "guard suite: 0 pass / 0 fail, 1 not judged\n")
    assert (
        "guards: K002 composes/c.yml: service vllm: KV pool 70,000 tok (line 2) was measured at "
        "util 0.9 and the service runs 0.91; without the GPU's memory and KV bytes per token it "
        "is not comparable; not used\n"
        f"guards: K002 composes/c.yml: {WHY}\n"
    ) in result.err


def test_json_counts_and_lists_the_checks_not_judged(capsys, estate):
    assert json.loads(check(capsys, estate, "--format", "json").out) == {
        "version": 1,
        "summary": {
            "pass": 0,
            "fail": 0,
            "files": 1,
            "findings": 0,
            "warnings": 0,
            "suppressed": 0,
            "baselined": 0,
            "not_judged": 1,
        },
        "findings": [],
        "errors": [],
        "not_judged": [{"rule": "K002", "target": "composes/c.yml", "why": [WHY]}],
    }


def test_junit_skips_the_testcase_with_why(capsys, estate):
    assert check(capsys, estate, "--format", "junit").out == (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<testsuites name="guards" tests="1" failures="0" errors="0" skipped="1">\n'
        '  <testsuite name="guards" tests="1" failures="0" errors="0" skipped="1">\n'
        '    <testcase classname="K002 max-num-seqs" name="composes/c.yml">\n'
        f'      <skipped message="not judged: {WHY}" />\n'
        "    </testcase>\n"
        "  </testsuite>\n"
        "</testsuites>\n"
    )


def test_sarif_notes_it_as_a_tool_notification(capsys, estate):
    document = json.loads(check(capsys, estate, "--format", "sarif").out)
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    assert [e.message for e in validator.iter_errors(document)] == []
    [run] = document["runs"]
    assert run["results"] == []
    assert run["invocations"] == [
        {
            "executionSuccessful": True,
            "exitCode": 0,
            "toolExecutionNotifications": [
                {
                    "level": "note",
                    "message": {"text": f"K002 not judged: {WHY}"},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {
                                    "uri": "composes/c.yml",
                                    "uriBaseId": "%SRCROOT%",
                                }
                            }
                        }
                    ],
                    "associatedRule": {"id": "K002", "index": 0},
                }
            ],
        }
    ]


def test_github_and_gitlab_say_it(capsys, estate):
    assert check(capsys, estate, "--format", "github").out == (
        "guard suite: 0 pass / 0 fail, 1 not judged\n"
    )
    [issue] = json.loads(check(capsys, estate, "--format", "gitlab").out)
    assert issue == {
        "description": f"K002 not judged: {WHY}",
        "check_name": "K002",
        "fingerprint": issue["fingerprint"],
        "severity": "info",
        "location": {"path": "composes/c.yml", "lines": {"begin": 1, "end": 1}},
    }


def test_a_failure_beside_an_undecided_service_fails(capsys, estate):
    """A finding is certain even where another service could not be decided."""
    second = COMPOSE.replace("  vllm:", "  other:").split("services:\n")[1]
    second = second.replace('"1"', '"2"').replace("${GPU_MEMORY_UTILIZATION:-0.90}", "0.90")
    (estate / "composes" / "c.yml").write_text(COMPOSE + second, encoding="utf-8")
    result = check(capsys, estate)
    assert result.code == 1
    assert result.out.endswith("guard suite: 0 pass / 1 fail\n")
