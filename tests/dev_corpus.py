"""The development corpus of real estates (../shared/corpus/estates-dev, beside the repository)
for the tests that print a rule's scores on it: where it is, each estate's labels, the ways a
test runs its rules there, and what the findings hit. Tests that use it skip when it is absent
(``needs_dev``); each test prints its own line."""

import json
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from guards.sources.config import Config

from .yamldata import read_yaml

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEV = SHARED / "corpus" / "estates-dev"

needs_dev = pytest.mark.skipif(not DEV.is_dir(), reason="../shared/corpus/estates-dev is absent")


def estates() -> list[Path]:
    """The corpus's estates: the folders that hold a LABELS.yaml, by name."""
    return sorted(p.parent for p in DEV.glob("*/LABELS.yaml"))


def labels(estate: Path) -> dict:
    return read_yaml(estate / "LABELS.yaml")


def settings(estate: Path) -> Path | None:
    """The corpus's settings for ``estate`` (``configs/NAME.toml``), when it has some."""
    path = DEV / "configs" / f"{estate.name}.toml"
    return path if path.exists() else None


def notes_config(estate: Path) -> Config:
    """The estate read in place, with only the ``notes`` globs of its settings."""
    path = settings(estate)
    table = tomllib.loads(path.read_text()) if path else {}
    return Config(root=estate, notes=tuple(table.get("notes", ("README.md", "docs/**/*.md"))))


def copied(estate: Path, tmp: Path) -> tuple[Path, Path | None]:
    """A copy of ``estate`` under ``tmp`` with its settings as guards.toml, as the corpus's
    ``score_dev.py`` checks it; and that guards.toml, when there is one."""
    copy = tmp / estate.name
    shutil.copytree(estate, copy)
    path = settings(estate)
    if path is None:
        return copy, None
    shutil.copy(path, copy / "guards.toml")
    return copy, copy / "guards.toml"


def check_json(estate: Path, tmp: Path, rules: str) -> list[dict]:
    """The findings (JSON objects) of ``guards check --select RULES`` on a copy of ``estate``."""
    copy, config = copied(estate, tmp)
    command = [sys.executable, "-m", "guards", "check", "--root", str(copy), "--select", rules]
    if config is not None:
        command += ["--config", str(config)]
    done = subprocess.run(
        [*command, "--format", "json", "--no-cache"], capture_output=True, text=True, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout or "{}").get("findings", [])


def _place(finding: Any) -> tuple[str, int]:
    if isinstance(finding, dict):
        return finding["path"], finding["line"]
    return finding.path, finding.line


def near(finding: Any, label: dict) -> bool:
    """A finding (a Finding or its JSON object) matches a label on the same path within 3
    lines, or anywhere in it when the label names no line."""
    path, line = _place(finding)
    return path == label["path"] and (label.get("line") is None or abs(line - label["line"]) <= 3)


@dataclass
class Score:
    """What a rule's findings on one estate hit: the labels of its classes found and missed,
    the findings on files the labels call clean, and those near a lookalike."""

    found: list
    wanted: list[dict]
    hit: list[dict]
    missed: list[dict]
    on_clean: list
    on_look: list


def score(marks: dict, found: list, classes: tuple[str, ...] = ()) -> Score:
    wanted = [e for e in marks.get("defects") or [] if e["class"] in classes]
    hit = [e for e in wanted if any(near(f, e) for f in found)]
    clean = set(marks.get("clean") or [])
    return Score(
        found,
        wanted,
        hit,
        [e for e in wanted if e not in hit],
        [f for f in found if _place(f)[0] in clean],
        [f for f in found if any(near(f, e) for e in marks.get("lookalikes") or [])],
    )
