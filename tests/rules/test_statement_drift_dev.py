"""D008 on the real estates of ../shared/corpus/estates-dev: its findings against the labels
of the value-drift, port-mismatch and gpu-topology-mismatch classes, and on the files labelled clean or lookalike.
A printed report (`pytest -s`), not a gate; skipped when the corpus is absent."""

import shutil
from pathlib import Path

import pytest
import yaml

from guards.rules import all_rules, find
from guards.rules.options import load_options
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.configfile import load_config

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "corpus" / "estates-dev"
CLASSES = ("value-drift", "port-mismatch", "gpu-topology-mismatch")

pytestmark = pytest.mark.skipif(not DEV.is_dir(), reason="../shared/corpus/estates-dev is absent")


def findings(estate: Path, tmp: Path) -> list:
    copy = tmp / estate.name
    shutil.copytree(estate, copy)
    settings = DEV / "configs" / f"{estate.name}.toml"
    if settings.exists():
        shutil.copy(settings, copy / "guards.toml")
    config = load_config(copy, copy / "guards.toml" if settings.exists() else None)
    rules = [find(all_rules(), "D008")]
    loaded = load_estate(config)
    return [f for r in run(loaded, rules, load_options(config, rules)).results for f in r.findings]


def near(finding, label) -> bool:
    return finding.path == label["path"] and abs(finding.line - int(label.get("line") or 0)) <= 3


def test_print_scores(tmp_path):
    for estate in sorted(p for p in DEV.iterdir() if (p / "LABELS.yaml").exists()):
        labels = yaml.safe_load((estate / "LABELS.yaml").read_text(encoding="utf-8"))
        found = findings(estate, tmp_path)
        wanted = [e for e in labels.get("defects") or [] if e["class"] in CLASSES]
        hit = [e for e in wanted if any(near(f, e) for f in found)]
        clean = [f for f in found if f.path in set(labels.get("clean") or [])]
        looks = [f for f in found if any(near(f, e) for e in labels.get("lookalikes") or [])]
        print(
            f"\n[{estate.name}] D008 {len(hit)}/{len(wanted)} of {', '.join(CLASSES)}; "
            f"{len(found)} findings, {len(clean)} on clean files, {len(looks)} on lookalikes"
        )
        for f in found:
            print(f"    {f.path}:{f.line}:{f.column} {f.message}")
