"""D001-D003: header fields, comments and flat lines against what the body sets."""

import pytest

from .estate_helpers import build, findings


def vllm(header, command, environment=""):
    return (
        header
        + "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
        + environment
        + "    command:\n"
        + "".join(f"      - {item}\n" for item in command)
    )


PROFILE = "# Profile (at-a-glance):\n"


# -- D001 header-drift --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stated, actual, failed",
    [
        ("262144", "262144", False),
        ("262K (native)", "262144", False),
        ("256K", "262144", False),
        ("~200K → higher at TP≥4", "204800", False),
        ("204800 (~200K) — MEASURED", '"${MAX_MODEL_LEN:-${CTX:-204800}}"', False),
        ("200K", "262144", True),
        ("131072", "262144", True),
    ],
)
def test_max_ctx(tmp_path, stated, actual, failed):
    build(
        tmp_path,
        {
            "composes/c.yml": vllm(
                PROFILE + f"#   Max ctx:   {stated}\n", ["--max-model-len", actual]
            )
        },
    )
    found = findings(tmp_path, "D001")
    assert bool(found) == failed
    if failed:
        assert found[0][2].startswith("header Max ctx says ")
        assert found[0][2].endswith("(line 2), but --max-model-len is 262144 (command line 8)")


def test_default_ctx_is_preferred_and_overlay_is_not_drift(tmp_path):
    header = PROFILE + "#   Default ctx: 131072\n#   MAX ctx:   262144 (native ceiling)\n"
    build(
        tmp_path,
        {"composes/c.yml": vllm(header, ["--max-model-len", '"${MAX_MODEL_LEN:-131072}"'])},
    )
    assert findings(tmp_path, "D001") == []
    assert findings(tmp_path, "D001", env={"MAX_MODEL_LEN": "65536"}) == []


@pytest.mark.parametrize(
    "stated, command, failed",
    [
        ("bf16 — MANDATORY here", ["--kv-cache-dtype", "bfloat16"], False),
        ("fp8 -> e4m3", ["--kv-cache-dtype", "fp8_e4m3"], False),
        ("fp8_e4m3", ["--kv-cache-dtype", "fp8"], False),
        ("bf16 (follows --dtype)", ["--dtype", "bfloat16", "--kv-cache-dtype", "auto"], False),
        ("fp16", ["--dtype", "float16", "--kv-cache-dtype", "auto"], False),
        ("bf16 (engine default)", ["--kv-cache-dtype", "auto"], False),
        ("fp8_e4m3", ["--kv-cache-dtype", "bfloat16"], True),
        ("bf16", ["--dtype", "bfloat16", "--kv-cache-dtype", "fp8"], True),
    ],
)
def test_kv_vllm(tmp_path, stated, command, failed):
    build(tmp_path, {"composes/c.yml": vllm(PROFILE + f"#   KV:        {stated}\n", command)})
    assert bool(findings(tmp_path, "D001")) == failed


LLAMA = """\
# Profile (at-a-glance):
#   Topology:  Dual 3090 (layer-split -ts {said})
#   KV:        {kv}
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b9570
    command: >-
      -c ${{CTX_SIZE:-131072}}
      -ts ${{TENSOR_SPLIT:-0.55,0.45}}
      -ctk ${{KV_K:-q8_0}}
      -ctv ${{KV_V:-q4_0}}
"""


def test_llamacpp_kv_pair_and_split(tmp_path):
    build(tmp_path, {"composes/c.yml": LLAMA.format(said="0.55,0.45", kv="q8_0 K + q4_0 V")})
    assert findings(tmp_path, "D001") == []
    build(tmp_path, {"composes/c.yml": LLAMA.format(said="1,1", kv="q8_0 K + q8_0 V")})
    assert [m for *_, m in findings(tmp_path, "D001")] == [
        "header Topology says -ts 1,1 (line 2), but -ts is 0.55,0.45 (command line 9)",
        "header KV says q8_0 (line 3), but -ctk is q8_0/q4_0 (command line 10)",
    ]


def test_topology_tp(tmp_path):
    header = PROFILE + "#   Topology:  Quad 3090 (TP=4; NVLink auto-detected)\n"
    build(tmp_path, {"composes/c.yml": vllm(header, ["--tensor-parallel-size", '"${TP:-2}"'])})
    assert [m for *_, m in findings(tmp_path, "D001")] == [
        "header Topology says TP=4 (line 2), but --tensor-parallel-size is 2 (command line 8)"
    ]


def test_status_against_a_statuses_file(tmp_path):
    header = PROFILE + "#   Status:    ✅ Production\n"
    build(
        tmp_path,
        {
            "composes/c.yml": vllm(header, ["--port", "8000"]),
            "catalog.yaml": "composes/c.yml: 🧪 Experimental\n",
        },
    )
    options = {"header-drift": {"statuses": "catalog.yaml"}}
    assert [m for *_, m in findings(tmp_path, "D001", options=options)] == [
        "header Status says '✅ Production' (line 2), but catalog.yaml lists this compose as "
        "'🧪 Experimental'"
    ]
    (tmp_path / "catalog.yaml").write_text("composes/c.yml: production\n", encoding="utf-8")
    assert findings(tmp_path, "D001", options=options) == []


# -- D002 comment-default -----------------------------------------------------------------------

TABLE = """\
# Override defaults via .env or shell:
#   GGUF_FILE          path under /models   (default: …mtp-gguf/Q6_K_P.gguf)
#   CTX_SIZE           KV pool size         (default: {ctx} — native)
#   BATCH_SIZE / UBATCH_SIZE  -b / -ub      (default: 4096 / {ub})
#   KV_TYPE            K and V quant type   (default: q8_0 = max-ctx; q4_0 = lean)
#   NP                 parallel slots       (default: 1-4 depending on the card)
#   PORT               host port            (default: 8073)
#   LLAMACPP_IMAGE     engine image         (default: pinned b9570)
services:
  llama:
    image: ${{LLAMACPP_IMAGE:-ghcr.io/ggml-org/llama.cpp:server-cuda-b9570}}
    ports: ["${{ESTATE_PORT:-${{PORT:-8073}}}}:8080"]
    command: >-
      -m /models/${{GGUF_FILE:-qwen3.8-27b-mtp-gguf/Q6_K_P.gguf}}
      -c ${{CTX_SIZE:-262144}}
      -b ${{BATCH_SIZE:-4096}}
      -ub ${{UBATCH_SIZE:-512}}
      -ctk ${{KV_TYPE:-q8_0}}
      -np ${{NP:-1}}
"""


def test_env_table_rows(tmp_path):
    build(tmp_path, {"composes/c.yml": TABLE.format(ctx=262144, ub=512)})
    assert findings(tmp_path, "D002") == []
    build(tmp_path, {"composes/c.yml": TABLE.format(ctx=131072, ub=1024)})
    assert [(line, m) for _, line, m in findings(tmp_path, "D002")] == [
        (
            3,
            "comment says CTX_SIZE: the default is 131072 (line 3), but the compose sets "
            "`${CTX_SIZE:-262144}` (line 15)",
        ),
        (
            4,
            "comment says UBATCH_SIZE: the default is 1024 (line 4), but the compose sets "
            "`${UBATCH_SIZE:-512}` (line 17)",
        ),
    ]


ENTRY = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    environment:
      # ⭐ W4A8 (int8 activations) SHIPS {ships} — set W4A8=0 for the W4A16 path.
      - W4A8=${{W4A8:-{w4a8}}}
      - ENABLE_THINKING=${{ENABLE_THINKING:-false}}
    entrypoint:
      - bash
      - -c
      - |
        if [ "$${{W4A8:-1}}" != "0" ]; then export VLLM_MARLIN_INPUT_DTYPE=int8; fi
        exec vllm serve "$$@"
      - --
    command:
      - --max-num-seqs
      # ⚠️ INERT at max_num_seqs={seqs} (the shipped default); INERT while enable_thinking
      # is false (the shipped default). MAX_NUM_SEQS default {seqs}; lower if OOM.
      - "${{MAX_NUM_SEQS:-1}}"
"""


def test_ships_on_over_a_zero_default_and_shipped_default_notes(tmp_path):
    build(tmp_path, {"composes/c.yml": ENTRY.format(ships="OFF", w4a8=0, seqs=1)})
    assert findings(tmp_path, "D002") == []
    build(tmp_path, {"composes/c.yml": ENTRY.format(ships="ON", w4a8=0, seqs=2)})
    assert [(line, m) for _, line, m in findings(tmp_path, "D002")] == [
        (5, "comment says W4A8: SHIPS ON (line 5), but the compose sets `${W4A8:-0}` (line 6)"),
        (
            17,
            "comment says max_num_seqs: the default is 2 (line 17), but the compose sets 1 "
            "(command line 19)",
        ),
        (
            18,
            "comment says MAX_NUM_SEQS: the default is 2 (line 18), but the compose sets "
            "`${MAX_NUM_SEQS:-1}` (line 19)",
        ),
    ]


def test_bash_default_of_a_forwarded_variable_is_what_the_container_sees(tmp_path):
    # The entrypoint's $${W4A8:-1} never applies: compose forwards W4A8=0.
    build(tmp_path, {"composes/c.yml": ENTRY.format(ships="ON", w4a8=1, seqs=1)})
    assert findings(tmp_path, "D002") == []


# -- D003 flat-drift ----------------------------------------------------------------------------


def test_flat_lines(tmp_path):
    header = "# Requires-min-gpu-count: 2\n# Tensor-parallel: 2\n"
    build(tmp_path, {"composes/c.yml": vllm(header, ["--tensor-parallel-size", "2"])})
    assert findings(tmp_path, "D003") == []
    build(tmp_path, {"composes/c.yml": vllm(header, ["--tensor-parallel-size", "4"])})
    assert [m for *_, m in findings(tmp_path, "D003")] == [
        "flat line Requires-min-gpu-count: 2 (line 1) disagrees with the body: 4 "
        "(--tensor-parallel-size, line 8)",
        "flat line Tensor-parallel: 2 (line 2) disagrees with the body: 4 "
        "(--tensor-parallel-size, line 8)",
    ]


def test_flat_gpu_count_follows_pipeline_parallel(tmp_path):
    header = "# Requires-min-gpu-count: 4\n# Tensor-parallel: 2\n"
    build(
        tmp_path,
        {
            "composes/c.yml": vllm(
                header, ["--tensor-parallel-size", "2", "--pipeline-parallel-size", "2"]
            )
        },
    )
    assert findings(tmp_path, "D003") == []
