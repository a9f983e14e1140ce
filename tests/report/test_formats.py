"""The `github` and `gitlab` output formats and `--output FILE`: the same findings as JSON."""

import json

import pytest

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, tree_digest

CLAIMS = WITHDRAWN_CLAIM
COMPOSE = STALE_COPY + ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n")


@pytest.fixture
def small(tmp_path):
    (tmp_path / "claims.yaml").write_text(CLAIMS, encoding="utf-8")
    (tmp_path / "composes").mkdir()
    (tmp_path / "composes" / "a,b:c%.yml").write_text(COMPOSE, encoding="utf-8")
    (tmp_path / "guards.toml").write_text('[header]\npreset = "profile"\n', encoding="utf-8")
    return tmp_path


def test_github_annotations_escape_what_the_runner_reads(capsys, small):
    result = run_guards(capsys, "check", "--format", "github", "--select", "C001", cwd=small)
    assert result.code == 1
    assert result.out == (
        "::error file=composes/a%2Cb%3Ac%25.yml,line=1,col=1,endLine=2,endColumn=55,"
        "title=C001 [*] stale-claim::repeats withdrawn claim old-cliff (lines 1-2), retracted "
        "2026-09-08: A harness artefact.\n"
        "guard suite: 0 pass / 1 fail, 1 fixable with --fix\n"
    )


def test_github_step_summary_is_appended_when_the_runner_asks(capsys, small, monkeypatch):
    summary = small / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run_guards(capsys, "check", "--format", "github", "--select", "C001", cwd=small)
    assert summary.read_text(encoding="utf-8") == (
        "earlier step\n## guards\n\n**guard suite: 0 pass / 1 fail, 1 fixable with --fix**\n\n"
        "| Rule | Findings |\n| --- | ---: |\n| C001 stale-claim | 1 |\n"
    )


def test_gitlab_code_quality_keeps_fingerprints_across_line_shifts(capsys, small):
    def gitlab():
        return json.loads(
            run_guards(capsys, "check", "--format", "gitlab", "--select", "C001", cwd=small).out
        )

    first = gitlab()
    assert first == [
        {
            "description": "C001 [*] repeats withdrawn claim old-cliff (lines 1-2), retracted "
            "2026-09-08: A harness artefact.",
            "check_name": "C001",
            "fingerprint": first[0]["fingerprint"],
            "severity": "major",
            "location": {"path": "composes/a,b:c%.yml", "lines": {"begin": 1, "end": 2}},
        }
    ]
    path = small / "composes" / "a,b:c%.yml"
    path.write_text("# A new first line.\n" + COMPOSE, encoding="utf-8")
    shifted = gitlab()
    assert [f["fingerprint"] for f in shifted] == [f["fingerprint"] for f in first]
    assert shifted[0]["location"]["lines"] == {"begin": 2, "end": 3}


def test_every_format_carries_the_same_findings(capsys, incident):
    def out(fmt):
        return run_guards(capsys, "check", "--root", str(incident), "--format", fmt).out

    text, document = out("text"), json.loads(out("json"))
    gitlab, github = json.loads(out("gitlab")), out("github")
    total = document["summary"]["findings"]
    assert total == 20 == len(document["findings"]) == len(gitlab)
    assert github.count("::error ") == total
    assert text.endswith("guard suite: 405 pass / 20 fail, 19 fixable with --fix\n")
    assert github.endswith("guard suite: 405 pass / 20 fail, 19 fixable with --fix\n")
    assert text.count(" C001 [*] ") == 19 == github.count("title=C001 [*] stale-claim::")
    assert sum(f["fix"] is not None for f in document["findings"]) == 19
    assert [f["fingerprint"] for f in gitlab] == [f["fingerprint"] for f in document["findings"]]


def test_output_writes_the_report_to_a_file(capsys, small):
    report = small / "report.json"
    result = run_guards(capsys, "check", "--format", "json", "--output", str(report), cwd=small)
    assert (result.code, result.out) == (1, "")
    document = json.loads(report.read_text(encoding="utf-8"))
    assert [f["rule"] for f in document["findings"]] == ["C001", "S001"]


def test_an_output_file_that_cannot_be_written_is_exit_2(capsys, small):
    before = tree_digest(small)
    result = run_guards(
        capsys, "check", "--output", str(small / "no" / "such" / "r.txt"), cwd=small
    )
    assert result.code == 2
    assert result.err == (
        f"guards: error: {small / 'no' / 'such' / 'r.txt'}: cannot write: "
        "No such file or directory; nothing written\n"
    )
    assert tree_digest(small) == before


@pytest.mark.parametrize("which", ["incident", "bundled"])
def test_junit_has_one_testcase_per_check_and_the_text_totals(capsys, incident, tmp_path, which):
    from pathlib import Path

    from junitparser import Failure, JUnitXml

    root = incident if which == "incident" else Path(__file__).resolve().parents[2]
    text = run_guards(capsys, "check", "--root", str(root)).out.splitlines()[-1]
    report = tmp_path / "junit.xml"
    report.write_text(
        run_guards(capsys, "check", "--root", str(root), "--format", "junit").out,
        encoding="utf-8",
    )
    suite = next(iter(JUnitXml.fromfile(str(report))))
    failed = sum(1 for case in suite if any(isinstance(r, Failure) for r in case.result))
    assert text.partition(", ")[0] == f"guard suite: {suite.tests - failed} pass / {failed} fail"
    assert suite.failures == failed


def test_statistics_count_findings_per_rule(capsys, tmp_path):
    (tmp_path / "claims.yaml").write_text(CLAIMS, encoding="utf-8")
    (tmp_path / "guards.toml").write_text('[header]\npreset = "profile"\n', encoding="utf-8")
    (tmp_path / "composes").mkdir()
    for name in ("a", "b"):
        (tmp_path / "composes" / f"{name}.yml").write_text(COMPOSE, encoding="utf-8")
    result = run_guards(capsys, "check", "--statistics", cwd=tmp_path)
    assert (result.code, result.out) == (
        1,
        "2  C001  [*] stale-claim\n2  S001  [ ] header-present\n"
        "guard suite: 17 pass / 4 fail, 2 fixable with --fix\n",
    )


def test_statistics_with_another_format_is_a_usage_error(capsys, small):
    result = run_guards(capsys, "check", "--statistics", "--format", "json", cwd=small)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        "guards: error: --statistics is a text view; it cannot go with --format json\n",
    )


def test_colour_when_asked_marks_path_rule_and_summary(capsys, small):
    result = run_guards(capsys, "check", "--select", "C001", "--color", "always", cwd=small)
    assert result.out == (
        "\x1b[1mcomposes/a,b:c%.yml\x1b[0m\x1b[2m:1:1:\x1b[0m \x1b[31;1mC001\x1b[0m "
        "\x1b[31m[*] \x1b[0mrepeats withdrawn claim old-cliff (lines 1-2), retracted "
        "2026-09-08: A harness artefact.\n"
        "\x1b[31;1mguard suite: 0 pass / 1 fail, 1 fixable with --fix\x1b[0m\n"
    )
    plain = run_guards(capsys, "check", "--select", "C001", "--color", "never", cwd=small)
    assert "\x1b" not in plain.out


def test_colour_bad_value_is_a_usage_error(capsys, small):
    result = run_guards(capsys, "check", "--color", "sometimes", cwd=small)
    assert result.code == 2
    assert result.err.startswith("guards: error: Invalid value for '--color': 'sometimes' is not")


def on_a_terminal(root, env_extra):
    """``guards check`` with its standard output on a pseudo-terminal, as a user runs it."""
    import os
    import pty
    import subprocess
    import sys

    main, child = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env.update(env_extra)
    process = subprocess.run(
        [sys.executable, "-m", "guards", "check", "--select", "C001"],
        cwd=root,
        stdout=child,
        stderr=subprocess.PIPE,
        env=env,
        check=False,
    )
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.returncode == 1, process.stderr
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_unless_no_color(small):
    assert "\x1b[31;1mC001" in on_a_terminal(small, {})
    assert "\x1b[" not in on_a_terminal(small, {"NO_COLOR": "1"})
    assert "\x1b[" not in on_a_terminal(small, {"TERM": "dumb"})


def test_no_colour_when_the_report_goes_to_a_file_or_a_pipe(capsys, small):
    run_guards(capsys, "check", "--output", "r.txt", cwd=small)
    assert "\x1b" not in (small / "r.txt").read_text(encoding="utf-8")
    assert "\x1b" not in run_guards(capsys, "check", cwd=small).out


def test_github_shows_suppressed_findings_as_notices(capsys, small):
    path = small / "composes" / "a,b:c%.yml"
    path.write_text("# guards: ignore[C001] the incident exhibit\n" + COMPOSE, encoding="utf-8")
    args = ("check", "--format", "github", "--select", "C001")
    assert (
        run_guards(capsys, *args, cwd=small).out == "guard suite: 1 pass / 0 fail, 1 suppressed\n"
    )
    result = run_guards(capsys, *args, "--show-suppressed", cwd=small)
    assert result.out == (
        "::notice file=composes/a%2Cb%3Ac%25.yml,line=2,col=1,endLine=3,endColumn=55,"
        "title=C001 stale-claim::[suppressed: the incident exhibit] repeats withdrawn claim old-cliff "
        "(lines 2-3), retracted 2026-09-08: A harness artefact.\n"
        "guard suite: 1 pass / 0 fail, 1 suppressed\n"
    )
