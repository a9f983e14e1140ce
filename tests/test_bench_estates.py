"""bench/estates.py: the synthetic estates it times parse, load, and vary their names."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from guards.run.estate import load_estate
from guards.sources.compose.compose import parse_compose
from guards.sources.configfile import load_config

ROOT = Path(__file__).resolve().parents[1]
SIZE = 18  # one full copy of the bundled composes and part of a second


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_estates", ROOT / "bench" / "estates.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


@pytest.fixture(scope="module")
def estate(bench, tmp_path_factory):
    root = tmp_path_factory.mktemp("estate")
    bench.generate(root, SIZE)
    return root


def composes(root):
    return sorted((root / "models").rglob("*.yml"))


def test_the_estate_has_as_many_composes_and_notes_as_asked(estate):
    assert len(composes(estate)) == SIZE
    assert len(list((estate / "learnings").glob("*.md"))) == SIZE


def test_every_compose_parses_and_names_its_own_services_model_and_port(estate):
    services, models, ports = [], [], []
    for path in composes(estate):
        text = path.read_text(encoding="utf-8")
        assert "services" in yaml.safe_load(text)
        assert text.startswith("# ====")  # the header block is kept
        for service in parse_compose(text, path.relative_to(estate).as_posix()).services:
            services.append(service.name)
            models.append(service.value("served_model_name"))
            ports.append([mapping.published for mapping in service.ports])
    assert len(set(services)) == len(services) == SIZE
    assert None not in models and len(set(models)) == SIZE
    assert all(model.startswith("qwen3.8-27b-c") for model in models)  # claims still apply
    assert len({str(p) for p in ports}) == SIZE


def test_notes_get_their_own_titles(estate):
    titles = [
        path.read_text(encoding="utf-8").split("\ntitle: ", 1)[1].split("\n", 1)[0]
        for path in (estate / "learnings").glob("*.md")
    ]
    assert len(set(titles)) == SIZE


def test_guards_checks_the_estate_with_exit_0_or_1(estate):
    command = [sys.executable, "-m", "guards", "check"]
    result = subprocess.run(command, cwd=estate, capture_output=True, text=True, check=False)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "guard suite:" in result.stdout


@pytest.mark.parametrize(
    ("config", "counts"),
    [("guards-stress.toml", (SIZE, SIZE)), ("guards-notes.toml", (0, SIZE))],
)
def test_the_other_configs_load_without_errors(estate, config, counts):
    loaded = load_estate(load_config(estate, estate / config))
    assert loaded.errors == []
    assert (len(loaded.composes), len(loaded.notes)) == counts


def test_the_stress_registry_withdraws_every_claim(bench):
    registry = yaml.safe_load(bench.stress_registry((ROOT / "claims.yaml").read_text()))
    withdrawn = [c for c in registry["claims"] if c["id"].startswith("old-")]
    assert withdrawn and all(c["status"] in ("retracted", "superseded") for c in withdrawn)


def test_a_generated_estate_is_reused_until_its_sources_change(bench, tmp_path):
    first, built = bench.cached_estate(tmp_path, 3)
    again, reused = bench.cached_estate(tmp_path, 3)
    assert first == again and built is not None and reused is None
