"""The stale-claim guard: the founding incident, and precision/recall on labelled snippets."""

import shutil
import textwrap
from pathlib import Path

import yaml

from guards.rules import all_rules, find
from guards.run.estate import Estate, load_estate
from guards.run.suite import run
from guards.sources.compose.compose import parse_compose
from guards.sources.config import Config
from guards.sources.configfile import load_config
from guards.sources.notes.notes import parse_note
from guards.sources.registry import load

from ..cli_helpers import run_guards
from ..conftest import FIXTURES
from ..yamldata import read_yaml

INCIDENT = FIXTURES / "estates" / "incident"
REGISTRY = load(INCIDENT / "claims.yaml", "claims.yaml")
STALE = find(all_rules(), "stale-claim")
SNIPPETS = read_yaml(FIXTURES / "claims" / "snippets.yaml")
BODY = "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n"


def findings(estate, rule):
    return [f for r in run(estate, [rule]).results for f in r.findings]


def snippet_target(snippet):
    text = snippet["text"]
    if snippet["kind"] == "note":
        return parse_note(text, "learnings/snippet.md")
    if snippet["kind"] == "compose-header":
        return parse_compose(text + BODY, "composes/snippet.yml")
    script = textwrap.indent(text + 'exec vllm serve "$$@"\n', " " * 8)
    return parse_compose(
        BODY + "    entrypoint:\n      - bash\n      - -c\n      - |\n" + script,
        "composes/snippet.yml",
    )


def predicted_stale(snippet):
    target = snippet_target(snippet)
    estate = Estate(Path("."), Config(root=Path(".")), REGISTRY)
    (estate.notes if snippet["kind"] == "note" else estate.composes).append(target)
    return bool(findings(estate, STALE))


def test_snippet_set_is_large_and_balanced():
    labels = [s["label"] for s in SNIPPETS]
    assert len(SNIPPETS) >= 40
    assert labels.count("stale") >= 20 and labels.count("clean") >= 20


def test_precision_and_recall_on_labelled_snippets():
    outcome = {"tp": [], "fp": [], "fn": [], "tn": []}
    for snippet in SNIPPETS:
        stale, said = snippet["label"] == "stale", predicted_stale(snippet)
        key = ("t" if stale == said else "f") + ("p" if said else "n")
        outcome[key].append(snippet["id"])
    tp, fp, fn = len(outcome["tp"]), len(outcome["fp"]), len(outcome["fn"])
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    print(
        f"\nstale-claim on {len(SNIPPETS)} snippets: precision {precision:.3f}, "
        f"recall {recall:.3f}; false positives {outcome['fp']}, misses {outcome['fn']}"
    )
    assert outcome["fp"] == [] and outcome["fn"] == []


# -- the incident ---------------------------------------------------------------------------


def test_incident_gives_exactly_20_stale_findings_and_none_for_the_note():
    estate = load_estate(load_config(INCIDENT))
    assert len(estate.composes) == 20 and estate.errors == []
    found = [f for r in run(estate, all_rules()).results for f in r.findings]
    assert {f.rule for f in found} == {"C001"}
    assert len(found) == 20
    assert sorted({f.path for f in found}) == sorted(c.path for c in estate.composes)
    assert all(f.claim == "decode-cliff-1096" for f in found)
    assert not [f for f in found if f.path.startswith("learnings/")]


FIRST_LINES = {  # where each copy starts, read off the fixture by hand
    "single/fast": 12,
    "single/max": 21,
    "single/superfast": 25,
    "single/ultrafast": 12,
    "dual/fast": 29,
    "dual/max": 18,  # dual/max: split by an unrelated line
    "dual/superfast": 22,
    "dual/ultrafast": 31,
    "dual/supermax": 26,  # the two-line excerpt
    "dual/ultramax": 25,  # after a bullet that ends "SPEC_N=0 mitigates."
    "multi4/fast": 12,
    "multi4/max": 22,
    "multi4/ultrafast": 29,
    "multi4/supermax": 12,
    "multi4/ultramax": 18,
    "multi8/fast": 31,
    "multi8/max": 22,
    "multi8/ultrafast": 12,
    "multi8/supermax": 29,
    "multi8/ultramax": 25,
}


def test_incident_findings_point_at_the_first_line_of_each_copy():
    estate = load_estate(load_config(INCIDENT))
    lines = {f.path.split("vllm/")[1][:-4]: f.line for f in findings(estate, STALE)}
    assert lines == FIRST_LINES


def test_incident_message_carries_date_reason_and_replacement(capsys):
    result = run_guards(
        capsys, "check", "--root", str(INCIDENT), "--select", "C001", "--format", "json"
    )
    first = yaml.safe_load(result.out)["findings"][0]
    assert first["message"] == (
        "repeats withdrawn claim decode-cliff-1096 (lines 29-32), "
        "retracted 2026-09-08: A harness artefact, not an engine "
        "property."
    )
    assert first["hint"].startswith("say instead: There is no context-triggered cliff.")
    assert first["claim"] == "decode-cliff-1096"


def test_registry_still_active_while_the_note_retracts_it(incident):
    claims = incident / "claims.yaml"
    text = claims.read_text(encoding="utf-8")
    claims.write_text(text.replace("status: retracted", "status: active", 1), encoding="utf-8")
    found = [
        f for r in run(load_estate(load_config(incident)), all_rules()).results for f in r.findings
    ]
    # Both places that retract it: the front matter's `retracts:` and the dated heading.
    assert [(f.rule, f.path, f.line, f.column) for f in found] == [
        ("C002", "learnings/qwen3.8-27b.md", 6, 12),
        ("C002", "learnings/qwen3.8-27b.md", 19, 60),
    ]
    assert {f.message for f in found} == {
        "retracts claim decode-cliff-1096, but claims.yaml:5 lists it as active"
    }


def test_old_claim_quoted_inside_a_retracted_callout_is_not_stale(incident):
    shutil.copy(
        FIXTURES / "composes" / "retracted-callout.yml", incident / "composes" / "callout.yml"
    )
    estate = load_estate(load_config(incident))
    paths = {f.path for f in findings(estate, STALE)}
    assert "composes/callout.yml" not in paths and len(paths) == 20


def test_same_wording_outside_the_callout_is_stale(incident):
    """The callout's wording, once it is neither marked nor explained away, is a stale copy."""
    callout = (FIXTURES / "composes" / "retracted-callout.yml").read_text(encoding="utf-8")
    marker = "# ⚠️ RETRACTED 2026-09-08 (claim:decode-cliff-1096). This header previously said:"
    explanation = callout[callout.index("#   That was a harness") : callout.index("#\n# ⚠️ SPEC")]
    assert marker in callout and explanation.count("\n") == 6
    known = callout.replace(marker, "# ⚠️ Known issue (claim:decode-cliff-1096):")
    (incident / "composes" / "callout.yml").write_text(
        known.replace(explanation, ""), encoding="utf-8"
    )
    estate = load_estate(load_config(incident))
    found = [f for f in findings(estate, STALE) if f.path == "composes/callout.yml"]
    assert [(f.line, f.end_line) for f in found] == [(21, 26)]


def test_unrelated_decode_prose_is_not_flagged():
    note = parse_note(
        "# Decode\n\nDecode gets slower as context grows — attention cost, "
        "expected.\nPrefill of a 90K prompt takes ~25 s.\n",
        "learnings/x.md",
    )
    estate = Estate(Path("."), Config(root=Path(".")), REGISTRY, notes=[note])
    assert findings(estate, STALE) == []
