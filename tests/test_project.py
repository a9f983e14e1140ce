"""The project's own promises: README commands, CI and the bundled estate."""

import re
from pathlib import Path

from guards.report.text import TextReporter
from guards.rules import all_rules
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.configfile import load_config

ROOT = Path(__file__).resolve().parents[1]


def readme_commands():
    return re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"))


def test_ci_runs_the_readme_test_command():
    check, test = readme_commands()[:2]
    assert "guards check" in check and "pytest" in test
    assert test in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_bundled_estate_passes_every_check():
    estate = load_estate(load_config(ROOT))
    assert estate.errors == []
    assert (len(estate.composes), len(estate.notes)) == (16, 4)
    result = run(estate, all_rules())
    assert result.findings == []
    assert TextReporter().render(result) == "guard suite: 413 pass / 0 fail\n"


def test_bundled_registry_carries_the_retraction_and_the_facts():
    estate = load_estate(load_config(ROOT))
    cliff = estate.registry.get("decode-cliff-1096")
    assert cliff.status == "retracted" and str(cliff.retracted) == "2026-09-08"
    assert cliff.refs == ["#1096", "#1218", "#1232"]
    assert "Interim: MTP tier (higher cliff) or SPEC_N=0 for sustained >~20k" in cliff.text
    kv = estate.registry.get("qwen38-27b-kv-bytes").facts.kv_bytes_per_token
    assert kv == {"bf16": 65536, "fp8": 32768}
    assert estate.registry.get("qwen38-27b-util-ceiling").facts.gpu_memory_utilization_max == 0.90
