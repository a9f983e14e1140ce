import contextlib
import hashlib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from guards.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_guards(capsys, *args: str, cwd: Path | None = None) -> Result:
    """Run the console entry point in-process, as a user would from ``cwd``."""
    capsys.readouterr()
    argv = sys.argv
    sys.argv = ["guards", *args]
    code = 0
    try:
        with contextlib.chdir(cwd or Path.cwd()):
            main()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.argv = argv
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def tree_digest(root: Path) -> dict[str, str]:
    """Content hash of every file under ``root`` (to prove a run wrote nothing)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def write(root: Path, files: dict[str, str]) -> Path:
    """Write each of ``files`` (path relative to ``root``: text) under ``root``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


# A withdrawn claim, and a stale copy of it in compose comments (lines 1-2), for the tests of
# the commands and formats that act on stale copies.
WITHDRAWN_CLAIM = """\
claims:
  - id: old-cliff
    title: Decode cliff
    status: retracted
    retracted: 2026-09-08
    reason: A harness artefact.
    text: Decode collapses once accumulated context passes ~21k on the spec tiers.
    match: ["accumulated-context decode cliff"]
    replacement: Decode is flat with context.
"""
STALE_COPY = (
    "# ⚠️ ACCUMULATED-CONTEXT DECODE CLIFF: decode collapses once\n"
    "#   accumulated context passes ~21K on the spec tiers.\n"
)


PROJECT = Path(__file__).resolve().parents[1]


def project_estate(root: Path) -> Path:
    """This repository's estate (its settings, registry, composes and notes) copied to
    ``root``: tests running beside a test write into the repository (tool caches), which
    changes its listing, and with it a run's cache key, between two runs of that test."""
    root.mkdir(parents=True)
    for name in ("pyproject.toml", "claims.yaml"):
        shutil.copy2(PROJECT / name, root / name)
    for name in ("composes", "learnings"):
        shutil.copytree(PROJECT / name, root / name)
    return root
