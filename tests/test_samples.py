"""The parser against the real sample composes in ../shared (skipped when absent).

Every expected value below was checked by hand against the files.
"""

import pytest

from guards.rules import all_rules
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.compose.compose import parse_compose
from guards.sources.configfile import load_config

from .conftest import SAMPLES

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared sample corpus absent")

KEYS = (
    "engine",
    "image",
    "tensor_parallel_size",
    "max_model_len",
    "gpu_memory_utilization",
    "max_num_seqs",
    "kv_cache_dtype",
    "attention_backend",
    "drafter_method",
    "drafter_depth",
    "tensor_split",
    "gpus",
)
VLLM = "vllm/vllm-openai:v0.27.1"
IK = (
    "ghcr.io/ikawrakow/ik-llama-cpp@sha256:"
    "5f914f1ccade922417af58c94bd1cbb558052c8852d86678ead3fe693eec0143"
)
CLUB = (
    "ghcr.io/noonghunna/llamacpp-club3090@sha256:"
    "17824d4483dbd60c297613bddf130f25e739d3edc7e633e4d973edc4e2165649"
)

EXPECTED = {
    "qwen3.8-27b/vllm/compose/dual/autoround-int4/dflash2.yml": (
        "vllm",
        VLLM,
        "2",
        "204800",
        "0.90",
        "1",
        "bfloat16",
        "FLASH_ATTN",
        "dflash",
        "7",
        None,
        "all",
    ),
    "qwen3.8-27b/vllm/compose/single/nvfp4/mtp.yml": (
        "vllm",
        VLLM,
        "1",
        "65536",
        "0.85",
        "1",
        "fp8_e4m3",
        None,
        "mtp",
        "3",
        None,
        "all",
    ),
    "gemma-4-31b/vllm/compose/multi4/google-qat-w4a16/base.yml": (
        "vllm",
        VLLM,
        "4",
        "262144",
        "0.91",
        "2",
        "auto",
        None,
        "draft_model",
        "2",
        None,
        "all",
    ),
    "qwen-agentworld-35b-a3b/vllm/compose/dual/cyankiwi-awq-int4/fp8.yml": (
        "vllm",
        VLLM,
        "2",
        "262144",
        "0.92",
        "4",
        "fp8",
        None,
        None,
        None,
        None,
        "all",
    ),
    "qwen3.6-27b/vllm/compose/single/autoround-int4/minimal.yml": (
        "vllm",
        VLLM,
        "1",
        "32768",
        "0.92",
        "1",
        "fp8_e4m3",
        None,
        None,
        None,
        None,
        "all",
    ),
    "qwen3.6-35b-a3b/llama-cpp/compose/dual/morikomorizz-q6kp/mtp.yml": (
        "llama.cpp",
        "ghcr.io/ggml-org/llama.cpp:server-cuda-b9570",
        None,
        "262144",
        None,
        "1",
        "q8_0",
        None,
        "draft-mtp",
        "3",
        "0.55,0.45",
        "all",
    ),
    "qwen3.6-27b/ik-llama/compose/single/ubergarm-iq4ks/mtp.yml": (
        "llama.cpp",
        IK,
        None,
        "200000",
        None,
        "1",
        "q4_0",
        None,
        "mtp",
        "2",
        None,
        "1",
    ),
    "deepseek-v4-flash-0731/llamacpp-club3090/compose/multi4/unsloth-q8-kxl/moecache.yml": (
        "llama.cpp",
        CLUB,
        None,
        "204800",
        None,
        "1",
        "f16",
        None,
        "draft-dspark",
        "5",
        "1,1,1,1",
        "4",
    ),
}

DEPTH_LINES = {  # where the effective drafter depth is set
    "qwen3.8-27b/vllm/compose/dual/autoround-int4/dflash2.yml": 171,
    "qwen3.8-27b/vllm/compose/single/nvfp4/mtp.yml": 173,
    "gemma-4-31b/vllm/compose/multi4/google-qat-w4a16/base.yml": 115,
    "qwen3.6-35b-a3b/llama-cpp/compose/dual/morikomorizz-q6kp/mtp.yml": 159,
    "qwen3.6-27b/ik-llama/compose/single/ubergarm-iq4ks/mtp.yml": 194,
    "deepseek-v4-flash-0731/llamacpp-club3090/compose/multi4/unsloth-q8-kxl/moecache.yml": 210,
}


def sample(relative):
    text = (SAMPLES / "models" / relative).read_text(encoding="utf-8")
    compose = parse_compose(text, relative)
    assert len(compose.services) == 1
    return compose, compose.services[0]


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_knob_values_of_every_sample(relative):
    _, service = sample(relative)
    got = tuple(service.engine if key == "engine" else service.value(key) for key in KEYS)
    assert dict(zip(KEYS, got, strict=False)) == dict(zip(KEYS, EXPECTED[relative], strict=False))


@pytest.mark.parametrize("relative", sorted(DEPTH_LINES))
def test_drafter_depth_source_line(relative):
    _, service = sample(relative)
    assert service.knob("drafter_depth").line == DEPTH_LINES[relative]


def test_gemma_nested_depth_default_and_nested_context():
    _, service = sample("gemma-4-31b/vllm/compose/multi4/google-qat-w4a16/base.yml")
    assert service.knob("drafter_depth").variables == ("SPEC_N", "SPEC_N_MAX")
    assert service.knob("max_model_len").variables == ("MAX_MODEL_LEN", "CTX")


def test_dflash2_header_fields_and_the_stale_comment():
    compose, _ = sample("qwen3.8-27b/vllm/compose/dual/autoround-int4/dflash2.yml")
    header = compose.header
    assert header.field("Drafter").first_value.startswith("DFlash2 EXTERNAL block-drafter n=7")
    assert header.field("Max ctx").value.split("\n")[1].startswith("(KV pool 212,977 tok")
    assert header.field("Status").first_value == "🧪 Experimental"
    stale = [c for c in compose.comments if "this compose defaults to 4" in c.text]
    assert [(c.line, c.where) for c in stale] == [(166, "script")]


def test_llamacpp_header_with_engine_profile_field_and_env_table():
    compose, _ = sample("qwen3.6-35b-a3b/llama-cpp/compose/dual/morikomorizz-q6kp/mtp.yml")
    assert compose.header.field("Engine-profile").value == "llama-cpp-local"
    assert compose.header.field("Caveats").line == 16
    table = [c for c in compose.comments if "(default: 3 — code-max" in c.text]
    assert [c.line for c in table] == [74]


def test_flat_lines_of_samples():
    compose, _ = sample("qwen-agentworld-35b-a3b/vllm/compose/dual/cyankiwi-awq-int4/fp8.yml")
    assert [(f.key, f.value) for f in compose.header.flat] == [
        ("Requires-min-vram-gb", "24"),
        ("Engine-profile", "vllm-stable"),
        ("Requires-min-gpu-count", "2"),
        ("Tensor-parallel", "2"),
        ("Requires-sm", "7.5+"),
    ]


def test_operator_overlay_on_a_real_sample():
    text = (SAMPLES / "models/qwen3.8-27b/vllm/compose/dual/autoround-int4/dflash2.yml").read_text(
        encoding="utf-8"
    )
    service = parse_compose(
        text, "x.yml", {"SPEC_N": "7", "MAX_NUM_SEQS": "3", "GPU_MEMORY_UTILIZATION": "0.95"}
    ).services[0]
    assert (
        service.value("drafter_depth"),
        service.value("max_num_seqs"),
        service.value("gpu_memory_utilization"),
    ) == ("7", "3", "0.95")


def test_every_finding_on_the_samples(tmp_path):
    """Two real drifts, both in the DFlash2 compose; nothing else (read by hand, each one).
    The sample has no settings: its header convention comes from a config file beside it."""
    (tmp_path / "guards.toml").write_text('[header]\npreset = "profile"\n', encoding="utf-8")
    estate = load_estate(load_config(SAMPLES, tmp_path / "guards.toml"))
    assert not estate.errors and len(estate.composes) == 8
    found = sorted(
        (f.rule, f.path.split("/compose/")[1], f.line, f.message)
        for r in run(estate, all_rules()).results
        for f in r.findings
    )
    assert found == [
        (
            "D002",
            "dual/autoround-int4/dflash2.yml",
            129,
            "comment says W4A8: SHIPS ON (line 129), but the compose sets `${W4A8:-0}` (line 130)",
        ),
        (
            "K003",
            "dual/autoround-int4/dflash2.yml",
            166,
            "comment says the compose defaults to 4 (line 166), but the default depth is 7 "
            "(entrypoint line 171: `$${SPEC_N:-7}`)",
        ),
    ]
