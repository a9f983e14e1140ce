"""Findings on the bundled estate, the incident fixture and the real sample, compared with a
copy stored before the package layout changed: a move of code must not change one byte of
what users see. (The sample lives outside the repository; only a digest of guards' output on
it is kept here.) When a change is meant to alter findings, regenerate the copies with
``python tests/test_findings_unchanged.py`` and say why in the commit."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
REPO = HERE.parent
STORED = HERE / "data" / "findings"
SAMPLE = REPO.parent / "shared" / "corpus" / "club-3090-sample"
ESTATES = {"bundled": REPO, "incident": HERE / "fixtures" / "estates" / "incident"}


def findings(root: Path) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "guards", "check", "--root", str(root)]
        + ["--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert run.returncode in (0, 1), run.stderr
    return run.stdout


@pytest.mark.parametrize("name", sorted(ESTATES))
def test_findings_are_the_stored_ones(name):
    assert findings(ESTATES[name]) == (STORED / f"{name}.json").read_text(encoding="utf-8")


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="the real sample is not beside the repository")
def test_findings_on_the_real_sample_are_the_stored_ones():
    digest = hashlib.sha256(findings(SAMPLE).encode("utf-8")).hexdigest()
    assert digest == (STORED / "club-3090-sample.sha256").read_text(encoding="utf-8").strip()


if __name__ == "__main__":
    for estate, root in ESTATES.items():
        (STORED / f"{estate}.json").write_text(findings(root), encoding="utf-8")
    if SAMPLE.is_dir():
        digest = hashlib.sha256(findings(SAMPLE).encode("utf-8")).hexdigest()
        (STORED / "club-3090-sample.sha256").write_text(digest + "\n", encoding="utf-8")
