from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "club-3090-sample"


@pytest.fixture
def fixture_text():
    def read(relative: str) -> str:
        return (FIXTURES / relative).read_text(encoding="utf-8")
    return read
