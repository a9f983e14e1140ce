import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "club-3090-sample"


@pytest.fixture
def fixture_text():
    def read(relative: str) -> str:
        return (FIXTURES / relative).read_text(encoding="utf-8")

    return read


def writable_copy(tmp_path: Path, name: str) -> Path:
    """A copy of ``fixtures/estates/<name>`` that a test may change."""
    target = tmp_path / name
    shutil.copytree(FIXTURES / "estates" / name, target)
    return target


@pytest.fixture
def estate(tmp_path):
    return writable_copy(tmp_path, "clean")


@pytest.fixture
def incident(tmp_path):
    return writable_copy(tmp_path, "incident")
