"""The stale-claim guard on real text written by others: precision and recall on the labelled
development passages in ../shared/corpus/claims-dev (skipped when that folder is absent).

Every passage becomes one file of an estate, exactly as the corpus's own ``score_dev.py`` places
them: a compose-header passage opens a compose, a compose-script passage sits in a bash
entrypoint, a note passage is a note. The estate is scored twice: the passages alone (the
vocabulary the guard learns is only theirs), and the passages inside the bundled estate
(composes, notes and the registry of this repository). This is a report with a regression floor
at the target of the set (precision 0.95 on all passages, recall 0.9 on the explicit stale ones),
not a gate on a perfect score; every number is printed (`pytest -s`).
"""

import shutil
import textwrap
from pathlib import Path

import pytest

from guards.rules import all_rules, find
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.config import Config

from ..yamldata import read_yaml

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "corpus" / "claims-dev"
BODY = "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n"

pytestmark = pytest.mark.skipif(not DEV.is_dir(), reason="../shared/corpus/claims-dev is absent")


def snippets():
    return read_yaml(DEV / "snippets.yaml")


def place(estate: Path, snippet: dict) -> str:
    if snippet["kind"] == "note":
        path, text = f"learnings/dev/{snippet['id']}.md", snippet["text"]
    elif snippet["kind"] == "compose-header":
        path, text = f"composes/dev/{snippet['id']}.yml", snippet["text"] + BODY
    else:
        script = textwrap.indent(snippet["text"] + 'exec vllm serve "$$@"\n', " " * 8)
        entrypoint = "    entrypoint:\n      - bash\n      - -c\n      - |\n" + script
        path, text = f"composes/dev/{snippet['id']}.yml", BODY + entrypoint
    (estate / path).parent.mkdir(parents=True, exist_ok=True)
    (estate / path).write_text(text, encoding="utf-8")
    return path


def dev_claims() -> str:
    text = (DEV / "claims.yaml").read_text(encoding="utf-8")
    return text[text.index("claims:\n") + len("claims:\n") :]


def score(estate: Path, registry: str) -> dict[str, dict[str, list[str]]]:
    (estate / "claims.yaml").write_text(registry, encoding="utf-8")
    paths = {s["id"]: place(estate, s) for s in snippets()}
    config = Config(root=estate, composes=("composes/**/*.yml",), notes=("learnings/**/*.md",))
    loaded = load_estate(config)
    assert loaded.errors == []
    found = run(loaded, [find(all_rules(), "C001")]).findings
    flagged = {(f.path, f.claim) for f in found}
    outcome: dict[str, dict[str, list[str]]] = {}
    for name, keep in (("all", lambda s: True), ("unambiguous", lambda s: not s.get("ambiguous"))):
        out: dict[str, list[str]] = {"tp": [], "fp": [], "fn": [], "tn": []}
        for s in filter(keep, snippets()):
            said, stale = (paths[s["id"]], s["claim"]) in flagged, s["label"] == "stale"
            out[("t" if said == stale else "f") + ("p" if said else "n")].append(s["id"])
        outcome[name] = out
    for name, source in (("explicit", "all"), ("explicit-unambiguous", "unambiguous")):
        explicit = {s["id"] for s in snippets() if s.get("stale_kind") == "explicit"}
        outcome[name] = {k: [i for i in v if i in explicit] for k, v in outcome[source].items()}
    return outcome


def report(label: str, outcome: dict[str, dict[str, list[str]]]) -> tuple[float, float]:
    for name, out in outcome.items():
        tp, fp, fn = len(out["tp"]), len(out["fp"]), len(out["fn"])
        precision = tp / (tp + fp) if tp + fp else float("nan")
        recall = tp / (tp + fn) if tp + fn else float("nan")
        print(
            f"\n[{label}/{name}] C001: precision {precision:.2f}, recall {recall:.2f} "
            f"(tp {tp}, fp {fp}, fn {fn}, tn {len(out['tn'])}); false positives {out['fp']}; "
            f"misses {out['fn']}"
        )
    out = outcome["all"]
    precision = len(out["tp"]) / max(1, len(out["tp"]) + len(out["fp"]))
    explicit = outcome["explicit"]
    recall = len(explicit["tp"]) / max(1, len(explicit["tp"]) + len(explicit["fn"]))
    return precision, recall


def test_dev_passages_alone(tmp_path):
    precision, recall = report("alone", score(tmp_path, "version: 1\nclaims:\n" + dev_claims()))
    assert precision >= 0.95 and recall >= 0.9


def test_dev_passages_inside_the_bundled_estate(tmp_path):
    for folder in ("composes", "learnings"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    registry = (ROOT / "claims.yaml").read_text(encoding="utf-8").rstrip("\n") + "\n"
    precision, recall = report("in estate", score(tmp_path, registry + dev_claims()))
    assert precision >= 0.95 and recall >= 0.9
