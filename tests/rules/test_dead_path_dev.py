"""D011 on the real estates of ../shared/corpus/estates-dev (skipped when that folder is
absent): the path-mismatch labels it finds, and its findings on the files the labels call clean
and on the lookalikes. Printed, not asserted (`pytest -s`): the corpus holds a part of each
repository, so a file it leaves out reads as missing."""

import tomllib
from pathlib import Path

import pytest
import yaml

from guards.rules import all_rules, find
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.config import Config

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "estates-dev"

pytestmark = pytest.mark.skipif(not DEV.is_dir(), reason="../shared/corpus/estates-dev is absent")


def findings(estate: Path) -> list:
    settings = DEV / "configs" / f"{estate.name}.toml"
    table = tomllib.loads(settings.read_text()) if settings.exists() else {}
    config = Config(root=estate, notes=tuple(table.get("notes", ("README.md", "docs/**/*.md"))))
    rule = find(all_rules(), "D011")
    return run(load_estate(config), [rule], {}).findings


def near(finding, label: dict) -> bool:
    line = label.get("line")
    return finding.path == label["path"] and (line is None or abs(finding.line - line) <= 3)


def test_scores_on_the_dev_estates():
    for estate in sorted(p.parent for p in DEV.glob("*/LABELS.yaml")):
        labels = yaml.safe_load((estate / "LABELS.yaml").read_text(encoding="utf-8"))
        found = findings(estate)
        paths = [e for e in labels.get("defects") or [] if e["class"] == "path-mismatch"]
        clean = set(labels.get("clean") or [])
        hit = sum(any(near(f, e) for f in found) for e in paths)
        on_clean = [f for f in found if f.path in clean]
        on_look = [f for f in found if any(near(f, e) for e in labels.get("lookalikes") or [])]
        print(
            f"[{estate.name}] path-mismatch {hit}/{len(paths)}; findings {len(found)}: "
            f"{len(on_clean)} on clean files, {len(on_look)} on lookalikes"
        )
        for f in found:
            print(f"    {f.path}:{f.line}:{f.column} {f.message}")
