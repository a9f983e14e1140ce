"""`guards claims init` starts a registry; `claims add` works on a missing or empty one."""

import pytest

from guards.sources.registry import load

from ..cli_helpers import run_guards

COMPOSE = "# Decode: fast at depth: 110 tok/s.\nservices:\n  s:\n    image: x\n"


@pytest.fixture
def estate(tmp_path):
    (tmp_path / "composes").mkdir()
    (tmp_path / "composes" / "a.yml").write_text(COMPOSE, encoding="utf-8")
    (tmp_path / "guards.toml").write_text('composes = ["composes/*.yml"]\n', encoding="utf-8")
    return tmp_path


def test_init_creates_an_empty_registry_once(capsys, estate):
    assert run_guards(capsys, "claims", "init", cwd=estate).code == 0
    assert (estate / "claims.yaml").read_text(encoding="utf-8") == "version: 1\nclaims: []\n"
    again = run_guards(capsys, "claims", "init", cwd=estate)
    assert again.code == 0 and "already there" in again.out


@pytest.mark.parametrize("before", [None, "", "version: 1\n", "version: 1\nclaims: []\n"])
def test_add_to_a_missing_or_empty_registry(capsys, estate, before):
    if before is not None:
        (estate / "claims.yaml").write_text(before, encoding="utf-8")
    for claim_id in ("fast-at-depth", "second-one"):
        result = run_guards(
            capsys,
            "claims",
            "add",
            claim_id,
            "--title",
            "T",
            "--from",
            "composes/a.yml:1",
            cwd=estate,
        )
        assert result.code == 0, result.err
    claims = load(estate / "claims.yaml", "claims.yaml").claims
    assert [c.id for c in claims] == ["fast-at-depth", "second-one"]
    assert claims[0].text == "Decode: fast at depth: 110 tok/s."
