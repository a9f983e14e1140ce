"""K008 on the real estates of ../shared/corpus/estates-dev (skipped when that folder is
absent): the healthcheck-ineffective labels it finds, and its findings on the files the labels
call clean and on the lookalikes. Each estate is checked as the corpus's ``score_dev.py`` checks
it (a copy, with its ``configs/`` settings as guards.toml). Printed, not asserted (`pytest -s`)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "estates-dev"
CLASS = "healthcheck-ineffective"

pytestmark = pytest.mark.skipif(not DEV.is_dir(), reason="../shared/corpus/estates-dev is absent")


def findings(estate: Path, tmp: Path) -> list[dict]:
    copy = tmp / estate.name
    shutil.copytree(estate, copy)
    command = [sys.executable, "-m", "guards", "check", "--root", str(copy), "--select", "K008"]
    settings = DEV / "configs" / f"{estate.name}.toml"
    if settings.exists():
        shutil.copy(settings, copy / "guards.toml")
        command += ["--config", str(copy / "guards.toml")]
    done = subprocess.run(command + ["--format", "json", "--no-cache"], capture_output=True)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["findings"]


def near(finding: dict, label: dict) -> bool:
    line = label.get("line")
    return finding["path"] == label["path"] and (line is None or abs(finding["line"] - line) <= 3)


def test_scores_on_the_dev_estates(tmp_path):
    for estate in sorted(p.parent for p in DEV.glob("*/LABELS.yaml")):
        labels = yaml.safe_load((estate / "LABELS.yaml").read_text(encoding="utf-8"))
        found = findings(estate, tmp_path)
        wanted = [e for e in labels.get("defects") or [] if e["class"] == CLASS]
        clean = set(labels.get("clean") or [])
        hit = sum(any(near(f, e) for f in found) for e in wanted)
        on_clean = [f for f in found if f["path"] in clean]
        on_look = [f for f in found if any(near(f, e) for e in labels.get("lookalikes") or [])]
        print(
            f"[{estate.name}] {CLASS} {hit}/{len(wanted)}; findings {len(found)}: "
            f"{len(on_clean)} on clean files, {len(on_look)} on lookalikes"
        )
        for f in found:
            print(f"    {f['path']}:{f['line']}:{f['column']} {f['message']}")
