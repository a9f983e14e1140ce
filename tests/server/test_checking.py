"""The editor's check, in this process: which estate a document is in, buffers read in place of
files, and fixes that are the edits ``guards fix`` and ``guards regen`` write."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pygls.workspace.position_codec import PositionCodec

from guards.server.checking import check, estate_root, fixes, shown
from guards.server.convert import text_edits

from ..cli_helpers import tree_digest
from .editor import applied

FAST = Path("composes/qwen3.8-27b/vllm/dual/fast.yml")
NOTE = Path("learnings/extra.md")
CITING = "# Extra\n\nThe tiers slow down, see claim:decode-cliff-1096 for the numbers.\n"


def guards(root: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "guards", *args], cwd=root, check=True, capture_output=True
    )


def fixed_buffer(checked, finding, text: str) -> str:
    [fix] = fixes(checked, [finding], {})
    lines = text.split("\n")
    return applied(text, text_edits(fix.replacements, lines, "\n", PositionCodec()))


def test_a_document_is_in_the_estate_of_the_nearest_settings_above_it(tmp_path):
    (tmp_path / "estate" / "composes").mkdir(parents=True)
    (tmp_path / "estate" / "guards.toml").write_text("", encoding="utf-8")
    (tmp_path / "plain" / "inner").mkdir(parents=True)
    compose = tmp_path / "estate" / "composes" / "a.yml"
    inner = tmp_path / "plain" / "inner" / "b.yml"
    elsewhere = tmp_path / "elsewhere" / "c.yml"
    folders = [tmp_path / "plain", tmp_path / "plain" / "inner"]
    assert estate_root(compose, folders) == tmp_path / "estate"
    assert estate_root(inner, folders) == tmp_path / "plain" / "inner"  # the innermost folder
    assert estate_root(elsewhere, folders) == tmp_path / "plain"  # outside it, as the check says
    assert estate_root(elsewhere, []) == tmp_path / "elsewhere"


def test_a_buffer_is_read_in_place_of_its_file_and_the_rest_from_disk(incident):
    other = FAST.with_name("max.yml")
    lines = (incident / FAST).read_text(encoding="utf-8").split("\n")
    buffer = "\n".join(lines[:28] + lines[32:])
    before = tree_digest(incident)
    checked = check(incident, [incident / FAST, incident / other], {str(incident / FAST): buffer})
    assert checked.stopped is None
    assert checked.findings_in(FAST.as_posix()) == []
    assert [(f.rule, f.line) for f in checked.findings_in(other.as_posix())] == [("C001", 18)]
    assert tree_digest(incident) == before
    again = check(incident, [incident / FAST], {})  # nothing is left in place after a check
    assert [(f.rule, f.line) for f in again.findings_in(FAST.as_posix())] == [("C001", 29)]


def test_a_lone_surrogate_in_a_buffer_is_an_error_at_its_place(incident):
    text = (incident / FAST).read_text(encoding="utf-8").replace("services:", "services: \ud800", 1)
    checked = check(incident, [incident / FAST], {str(incident / FAST): text})
    assert [str(e) for e in checked.errors_in(FAST.as_posix())] == [
        f"{FAST.as_posix()}:43:11: not valid UTF-8 (byte 0xed)"
    ]


def test_shown_names_a_file_as_findings_do(tmp_path):
    assert shown(tmp_path, tmp_path / "composes" / "a.yml") == "composes/a.yml"
    assert shown(tmp_path / "estate", tmp_path / "b.yml") == os.fspath(tmp_path / "b.yml")


def test_the_fix_of_a_citation_is_the_mark_guards_fix_writes(incident, tmp_path):
    (incident / NOTE).write_text(CITING, encoding="utf-8")
    by_cli = tmp_path / "by-cli"
    shutil.copytree(incident, by_cli)
    guards(by_cli, "fix", str(NOTE))
    checked = check(incident, [incident / NOTE], {})
    [finding] = [f for f in checked.findings_in(NOTE.as_posix()) if f.rule == "C002"]
    assert fixed_buffer(checked, finding, CITING) == (by_cli / NOTE).read_text(encoding="utf-8")
    [fix] = fixes(checked, [finding], {})
    assert fix.message == "cite claim:decode-cliff-1096 as withdrawn"


def test_the_fix_of_a_region_out_of_date_is_what_guards_regen_writes(incident, tmp_path):
    guards(incident, "fix", str(FAST))  # the stale copy becomes a claim region
    registry = incident / "claims.yaml"
    registry.write_text(
        registry.read_text(encoding="utf-8").replace(
            "There is no context-triggered cliff.", "There is no cliff at all."
        ),
        encoding="utf-8",
    )
    by_cli = tmp_path / "by-cli"
    shutil.copytree(incident, by_cli)
    guards(by_cli, "regen", str(FAST))
    checked = check(incident, [incident / FAST], {})
    [finding] = checked.findings_in(FAST.as_posix())
    assert finding.rule == "G001"
    text = (incident / FAST).read_text(encoding="utf-8")
    assert fixed_buffer(checked, finding, text) == (by_cli / FAST).read_text(encoding="utf-8")


def test_a_finding_without_a_fix_has_none(incident):
    (incident / NOTE).write_text(CITING, encoding="utf-8")
    checked = check(incident, [incident / NOTE], {})
    stopped = check(incident / "missing", [], {})
    assert fixes(checked, checked.findings_in("claims.yaml"), {}) == [None] * len(
        checked.findings_in("claims.yaml")
    )
    assert fixes(stopped, checked.findings_in(NOTE.as_posix()), {}) == [None] * len(
        checked.findings_in(NOTE.as_posix())
    )
