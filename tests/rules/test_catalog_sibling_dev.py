"""D004 and D006 on the real estates of ../shared/corpus/estates-dev (skipped when that folder
is absent): no label of their classes exists there, so every finding is on a file the labels
call clean, on a lookalike or elsewhere. Printed, not asserted (`pytest -s`)."""

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


def near(finding, label: dict) -> bool:
    line = label.get("line")
    return finding.path == label["path"] and (line is None or abs(finding.line - line) <= 3)


def test_scores_on_the_dev_estates():
    rules = [find(all_rules(), "D004"), find(all_rules(), "D006")]
    for estate in sorted(p.parent for p in DEV.glob("*/LABELS.yaml")):
        labels = yaml.safe_load((estate / "LABELS.yaml").read_text(encoding="utf-8"))
        settings = DEV / "configs" / f"{estate.name}.toml"
        table = tomllib.loads(settings.read_text()) if settings.exists() else {}
        notes = tuple(table.get("notes", ("README.md", "docs/**/*.md")))
        found = run(load_estate(Config(root=estate, notes=notes)), rules, {}).findings
        clean = set(labels.get("clean") or [])
        on_clean = [f for f in found if f.path in clean]
        on_look = [f for f in found if any(near(f, e) for e in labels.get("lookalikes") or [])]
        print(
            f"[{estate.name}] D004/D006 findings {len(found)}: {len(on_clean)} on clean files, "
            f"{len(on_look)} on lookalikes"
        )
        for f in found:
            print(f"    {f.path}:{f.line}:{f.column} {f.rule} {f.message}")
