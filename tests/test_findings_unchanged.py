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
SAMPLE_SETTINGS = '[header]\npreset = "profile"\n'


def findings(root: Path, *config: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "guards", "check", "--root", str(root), *config]
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


def sample_findings(folder: Path) -> str:
    """The sample's findings with the header convention its composes are written in: the
    sample has no settings of its own, so they come from a config file beside it."""
    config = folder / "guards.toml"
    config.write_text(SAMPLE_SETTINGS, encoding="utf-8")
    return findings(SAMPLE, "--config", str(config))


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="the real sample is not beside the repository")
def test_findings_on_the_real_sample_are_the_stored_ones(tmp_path):
    digest = hashlib.sha256(sample_findings(tmp_path).encode("utf-8")).hexdigest()
    assert digest == (STORED / "club-3090-sample.sha256").read_text(encoding="utf-8").strip()


if __name__ == "__main__":
    import tempfile

    for estate, root in ESTATES.items():
        (STORED / f"{estate}.json").write_text(findings(root), encoding="utf-8")
    if SAMPLE.is_dir():
        with tempfile.TemporaryDirectory() as folder:
            found = sample_findings(Path(folder))
        digest = hashlib.sha256(found.encode("utf-8")).hexdigest()
        (STORED / "club-3090-sample.sha256").write_text(digest + "\n", encoding="utf-8")
