"""K006, K007 and K001 on the development corpus of real estates: their scores printed, not asserted
(the corpus lives outside the repository; the test skips without it).

Run with ``-s`` to read them: labels of the classes the rules cover found per estate, and
findings on files the labels call clean or on their lookalikes (both should stay 0). Flags
in documented commands count too: unknown-flag and unsafe-knob labels on notes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from guards.rules import all_rules

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "estates-dev"
WANTED = ("K006", "K007", "K001")
CLASSES = ("unknown-flag", "unsafe-knob")


def _near(finding: dict, entry: dict) -> bool:
    line = entry.get("line")
    return finding["path"] == entry["path"] and (line is None or abs(finding["line"] - line) <= 3)


def _score(estate: Path, tmp: Path) -> str:
    labels = yaml.safe_load((estate / "LABELS.yaml").read_text(encoding="utf-8"))
    root = tmp / estate.name
    shutil.copytree(estate, root)
    rules = ",".join(r.id for r in all_rules() if r.id in WANTED)
    command = [sys.executable, "-m", "guards", "check", "--root", str(root), "--select", rules]
    config = CORPUS / "configs" / f"{estate.name}.toml"
    if config.exists():
        shutil.copy(config, root / "guards.toml")
        command += ["--config", str(root / "guards.toml")]
    run = subprocess.run(
        [*command, "--format", "json", "--no-cache"], capture_output=True, text=True, check=False
    )
    assert run.returncode in (0, 1), run.stderr
    found = json.loads(run.stdout or "{}").get("findings", [])
    wanted = [e for e in labels.get("defects") or [] if e["class"] in CLASSES]
    hits = sum(any(_near(f, e) for f in found) for e in wanted)
    clean = [f for f in found if f["path"] in set(labels.get("clean") or [])]
    on_label = [f for f in found if any(_near(f, e) for e in labels.get("defects") or [])]
    looks = [
        f
        for f in found
        if f not in on_label and any(_near(f, e) for e in labels.get("lookalikes") or [])
    ]
    return (
        f"{estate.name}: {hits}/{len(wanted)} labels, {len(found)} findings, "
        f"{len(clean)} on clean files, {len(looks)} on lookalikes"
    )


@pytest.mark.skipif(
    not CORPUS.is_dir(), reason="the development corpus is not beside the repository"
)
def test_print_scores_on_the_development_corpus(tmp_path):
    estates = sorted(p for p in CORPUS.iterdir() if (p / "LABELS.yaml").exists())
    for estate in estates:
        print(_score(estate, tmp_path))
