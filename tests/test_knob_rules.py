"""K001-K004 on small composes written in the estate's real syntax."""

import pytest

from .cli_helpers import run_guards
from .conftest import FIXTURES
from .estate_helpers import build, findings

ROOT = FIXTURES.parent.parent

CEILING = """\
claims:
  - id: util-ceiling
    title: 0.90 ceiling
    status: {status}
    reason: The knob is a ceiling on what vLLM claims, not a target.
    applies_to: {{model: qwen3.8-27b}}
    facts: {{gpu_memory_utilization_max: 0.90}}
"""
KV = """\
  - id: kv-bytes
    title: KV bytes
    status: active
    applies_to: {model: qwen3.8-27b}
    facts: {kv_bytes_per_token: {bf16: 65536, fp8: 32768}, kv_heads: 4}
"""
MEMORY = """\
  - id: memory
    title: memory
    status: active
    applies_to: {model: qwen3.8-27b}
    facts: {gpu_memory_gib: 24, weights_gib: 18, reserved_gib: 2}
"""
DEPTHS = """\
  - id: depths
    title: validated depths
    status: active
    applies_to: {model: qwen3.8-27b}
    facts:
      drafter_depth_max:
        - {method: dflash, depth: 6, topology: dual}
        - {method: mtp, depth: 3}
"""


def vllm(command, header="", environment="", entrypoint=""):
    return (
        f"{header}services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
        f"{environment}{entrypoint}    command:\n"
        + "".join(f"      - {item}\n" for item in command)
    )


MODEL = ["--served-model-name", "qwen3.8-27b"]


# -- K001 utilisation-ceiling -----------------------------------------------------------------


@pytest.mark.parametrize(
    "value, failed",
    [
        ("0.90", False),
        ("0.9", False),
        ("0.91", True),
        ('"${GPU_MEMORY_UTILIZATION:-${GMU:-0.95}}"', True),
    ],
)
def test_ceiling_from_the_registry(tmp_path, value, failed):
    build(
        tmp_path,
        {
            "claims.yaml": CEILING.format(status="active"),
            "composes/c.yml": vllm(MODEL + ["--gpu-memory-utilization", value]),
        },
    )
    found = findings(tmp_path, "K001")
    assert bool(found) == failed
    if failed:
        assert found[0][2].endswith(
            "is above the ceiling 0.90 (claim util-ceiling, "
            "claims.yaml:2: The knob is a ceiling on what vLLM claims, "
            "not a target.)"
        )


def test_retracted_ceiling_claim_stops_applying(tmp_path):
    build(
        tmp_path,
        {
            "claims.yaml": CEILING.format(status="retracted"),
            "composes/c.yml": vllm(MODEL + ["--gpu-memory-utilization", "0.92"]),
        },
    )
    assert findings(tmp_path, "K001") == []


@pytest.mark.parametrize("value, failed", [("0.94", False), ("0.95", True), ("0.98", True)])
def test_default_ceiling_without_a_claim(tmp_path, value, failed):
    build(tmp_path, {"composes/c.yml": vllm(["--gpu-memory-utilization=" + value])})
    assert bool(findings(tmp_path, "K001")) == failed


def test_default_ceiling_is_configurable_and_env_overlay_applies(tmp_path):
    build(
        tmp_path,
        {"composes/c.yml": vllm(["--gpu-memory-utilization", '"${GPU_MEMORY_UTILIZATION:-0.85}"'])},
    )
    options = {"utilisation-ceiling": {"default-ceiling": 0.8}}
    assert [m for *_, m in findings(tmp_path, "K001", options=options)] == [
        "gpu-memory-utilization 0.85 is above the ceiling 0.80 (the default ceiling 0.8; no "
        "registry claim sets one for this model)"
    ]
    found = findings(tmp_path, "K001", env={"GPU_MEMORY_UTILIZATION": "0.97"})
    assert "0.97 (from GPU_MEMORY_UTILIZATION in the environment)" in found[0][2]


# -- K002 max-num-seqs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header, pool",
    [
        ("#   Max ctx:   204800 (KV pool 212,977 tok)\n", "212,977"),
        ("#   Max ctx:   204800 (KV pool ~310K tok)\n", "310,000"),
        ("# Boot log: GPU KV cache size: 405,504 tokens\n", "405,504"),
        ("#   Max ctx:   204800 (2.03× concurrency)\n", "415,744"),
        (
            "#   KV:        fp8 — 1,795,289-token\n#              pool, enough for 8 sequences\n",
            "1,795,289",
        ),
    ],
)
def test_measured_pool_forms(tmp_path, header, pool):
    build(
        tmp_path,
        {
            "composes/c.yml": vllm(
                ["--max-model-len", "204800", "--max-num-seqs", "64"],
                header="# Profile (at-a-glance):\n" + header,
            )
        },
    )
    found = findings(tmp_path, "K002")
    assert len(found) == 1 and f"the KV pool of {pool} tokens" in found[0][2]


def test_pool_within_limits_passes(tmp_path):
    build(
        tmp_path,
        {
            "composes/c.yml": vllm(
                ["--max-model-len", "204800", "--max-num-seqs", "2"],
                header="# KV pool 415,744 tok\n",
            )
        },
    )
    assert findings(tmp_path, "K002") == []


def test_pool_computed_from_registry_facts(tmp_path):
    build(
        tmp_path,
        {
            "claims.yaml": "claims:\n" + KV + MEMORY,
            "composes/c.yml": vllm(
                MODEL
                + [
                    "--tensor-parallel-size",
                    "2",
                    "--max-model-len",
                    "204800",
                    "--gpu-memory-utilization",
                    "0.90",
                    "--kv-cache-dtype",
                    "bfloat16",
                    "--max-num-seqs",
                    "2",
                ]
            ),
        },
    )
    ((_rule, _line, message),) = findings(tmp_path, "K002")
    assert message == (
        "max-num-seqs 2 > 1: bf16 KV 65,536 B/token × 204,800 = 12.5 GiB (6.25 GiB/card at "
        "TP=2); the KV pool of 347,340 tokens (computed: 24 GiB × 0.9 − 18 GiB weights / TP 2 "
        "− 2 GiB reserved, at 32,768 B/token/card, computed) holds 1 full-length sequence of "
        "204,800; max-num-seqs 2 invites preemption and recompute — watch vllm:num_preemptions"
    )


def test_tp8_divides_kv_by_the_head_count_not_tp(tmp_path):
    build(
        tmp_path,
        {
            "claims.yaml": "claims:\n" + KV + MEMORY,
            "composes/c.yml": vllm(
                MODEL
                + [
                    "--tensor-parallel-size",
                    "8",
                    "--max-model-len",
                    "262144",
                    "--gpu-memory-utilization",
                    "0.90",
                    "--kv-cache-dtype",
                    "fp8",
                    "--max-num-seqs",
                    "64",
                ]
            ),
        },
    )
    message = findings(tmp_path, "K002")[0][2]
    assert "fp8_e4m3 KV 32,768 B/token × 262,144 = 8 GiB (2 GiB/card at TP=8)" in message
    assert "at 8,192 B/token/card" in message


def test_unknown_pool_is_a_remark_not_a_guess(tmp_path):
    build(tmp_path, {"composes/c.yml": vllm(["--max-model-len", "204800", "--max-num-seqs", "8"])})
    remarks = []
    assert findings(tmp_path, "K002", remarks=remarks) == []
    assert [r for r in remarks if r.startswith("K002")] == [
        "K002 composes/c.yml: service vllm: no measured KV pool in its comments and no registry "
        "facts to compute one; max-num-seqs not checked"
    ]


LLAMA = """\
# Profile (at-a-glance):
#   Max ctx:   262144 (native)
services:
  llama:
    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b9570
    command: >-
      -m /models/${{GGUF_FILE:-q.gguf}}
      -c ${{CTX_SIZE:-{ctx}}}
      -np ${{NP:-{np}}}
"""


@pytest.mark.parametrize(
    "ctx, np, failed", [(262144, 1, False), (262144, 4, True), (1048576, 4, False)]
)
def test_llamacpp_slots_split_the_context(tmp_path, ctx, np, failed):
    build(tmp_path, {"composes/c.yml": LLAMA.format(ctx=ctx, np=np)})
    found = findings(tmp_path, "K002")
    assert bool(found) == failed
    if failed:
        assert found[0][1:] == (
            9,
            "-np 4 splits -c 262,144 into 4 slots of 65,536 tokens, "
            "but the header's Max ctx (line 2) promises 262,144 per request",
        )


# -- K003 drafter-depth -------------------------------------------------------------------------

ENTRYPOINT = """\
    environment:
      - SPEC_N=${{SPEC_N:-}}
      - SPEC=${{SPEC:-}}
    entrypoint:
      - bash
      - -c
      - |
        #   SPEC_N=<n>  drafter depth (this compose defaults to {said}); SPEC_N=0 disables
        #   the dual sibling defaults to 7 (not this one)
        _spec_n="$${{SPEC_N:-$${{SPEC_N_MAX:-{depth}}}}}"
        case "$${{SPEC:-}}" in off|OFF|0) _spec_n=0 ;; esac
        exec vllm serve "$$@" --speculative-config "{{\\"method\\":\\"dflash\\",\\"num_speculative_tokens\\":$$_spec_n}}"
      - --
"""


def dflash(header_n, said, depth):
    header = (
        f"# Profile (at-a-glance):\n#   Drafter:   DFlash2 EXTERNAL block-drafter n={header_n}\n"
    )
    return vllm(
        MODEL + ["--tensor-parallel-size", "2"],
        header=header,
        entrypoint=ENTRYPOINT.format(said=said, depth=depth),
    )


def test_depth_agrees_everywhere(tmp_path):
    build(tmp_path, {"claims.yaml": "claims:\n" + DEPTHS, "composes/c.yml": dflash(5, 5, 5)})
    assert findings(tmp_path, "K003") == []


def test_header_and_comment_disagreeing_with_the_nested_default(tmp_path):
    build(tmp_path, {"composes/c.yml": dflash(5, 4, 6)})
    assert findings(tmp_path, "K003") == [
        (
            "K003",
            2,
            "header Drafter says n=5 (line 2), but the compose defaults to depth 6 "
            "(entrypoint line 15: `$${SPEC_N:-$${SPEC_N_MAX:-6}}`)",
        ),
        (
            "K003",
            13,
            "comment says the compose defaults to 4 (line 13), but the default depth is "
            "6 (entrypoint line 15: `$${SPEC_N:-$${SPEC_N_MAX:-6}}`)",
        ),
    ]


def test_deeper_than_validated_only_with_the_overlay(tmp_path):
    build(tmp_path, {"claims.yaml": "claims:\n" + DEPTHS, "composes/c.yml": dflash(6, 6, 6)})
    assert findings(tmp_path, "K003") == []
    assert findings(tmp_path, "K003", env={"SPEC": "off", "SPEC_N": "9"}) == []
    assert findings(tmp_path, "K003", env={"SPEC_N": "7"}) == [
        (
            "K003",
            15,
            "drafter depth 7 (from SPEC_N in the environment) exceeds the deepest "
            "validated dflash depth on dual, n=6 (claim depths, claims.yaml:2); the "
            "spec-decode tax grows with depth",
        )
    ]


def test_header_none_but_body_drafts(tmp_path):
    text = dflash(5, 5, 5).replace("DFlash2 EXTERNAL block-drafter n=5", "none")
    build(tmp_path, {"composes/c.yml": text})
    assert [m for *_, m in findings(tmp_path, "K003")] == [
        "header Drafter says none (line 2), but the compose defaults to depth 5 (entrypoint "
        "line 15: `$${SPEC_N:-$${SPEC_N_MAX:-5}}`)"
    ]


def test_llamacpp_switch_is_not_the_depth(tmp_path):
    text = (
        "# Profile (at-a-glance):\n#   Drafter:   MTP n=3 (--spec-type draft-mtp)\n"
        "services:\n  llama:\n    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b9570\n"
        "    environment: ['SPEC_N=${SPEC_N:-}']\n"
        "    entrypoint:\n      - /bin/bash\n      - -c\n      - |\n"
        '        _spec_n="$${SPEC_N:-1}"\n        exec /app/llama-server "$$@"\n'
        "      - --\n    command: >-\n      -c 131072\n      --spec-type draft-mtp\n"
        "      --spec-draft-n-max ${SPEC_N:-${MTP_DRAFT_N_MAX:-3}}\n"
    )
    build(
        tmp_path,
        {"claims.yaml": "claims:\n" + DEPTHS.replace("qwen3.8-27b", "q"), "composes/c.yml": text},
    )
    assert findings(tmp_path, "K003") == []
    assert findings(tmp_path, "K003", env={"MTP_DRAFT_N_MAX": "2"}) == []


def test_literal_json_in_command_with_interpolated_depth(tmp_path):
    header = "# Profile (at-a-glance):\n#   Drafter:   MTP n=3 built-in\n"
    text = vllm(
        MODEL
        + ["--speculative-config", """'{"method":"mtp","num_speculative_tokens":${SPEC_N:-4}}'"""],
        header=header,
    )
    build(tmp_path, {"claims.yaml": "claims:\n" + DEPTHS, "composes/c.yml": text})
    assert [m for *_, m in findings(tmp_path, "K003")] == [
        "header Drafter says n=3 (line 2), but the compose defaults to depth 4 (command line "
        """10: `{"method":"mtp","num_speculative_tokens":${SPEC_N:-4}}`)""",
        "drafter depth 4 exceeds the deepest validated mtp depth on single, n=3 (claim depths, "
        "claims.yaml:2); the spec-decode tax grows with depth",
    ]


# -- K004 gpu-accounting ------------------------------------------------------------------------


def two(first, second, util=("0.60", "0.50")):
    service = (
        "  {name}:\n    image: vllm/vllm-openai:v0.27.1\n{devices}"
        '    command: [--gpu-memory-utilization, "{util}"]\n'
    )
    return (
        "services:\n"
        + service.format(name="chat", devices=first, util=util[0])
        + service.format(name="embed", devices=second, util=util[1])
    )


def ids(*cards):
    listed = ", ".join(f"'{c}'" for c in cards)
    return (
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        f"            - driver: nvidia\n              device_ids: [{listed}]\n"
        "              capabilities: [gpu]\n"
    )


@pytest.mark.parametrize(
    "first, second, failed",
    [
        (ids("0"), ids("0"), True),
        (ids("0"), ids("1"), False),
        (ids("0", "1"), ids("1"), True),
        ("", ids("3"), True),  # no reservation: every card
        (
            "    environment: [NVIDIA_VISIBLE_DEVICES=0]\n",
            "    environment: [NVIDIA_VISIBLE_DEVICES=1]\n",
            False,
        ),
    ],
)
def test_services_sharing_cards(tmp_path, first, second, failed):
    build(tmp_path, {"composes/c.yml": two(first, second)})
    found = [m for r, _, m in findings(tmp_path, "K004") if "sharing" in m]
    assert bool(found) == failed
    if failed:
        assert found == ["services sharing GPUs ask for chat 0.6 + embed 0.5 = 1.10 of a card"]


def test_tensor_parallel_matches_reserved_devices(tmp_path):
    text = vllm(["--tensor-parallel-size", '"${TP:-4}"']).replace(
        "    command:", ids("0", "1", "2") + "    command:"
    )
    build(tmp_path, {"composes/c.yml": text})
    assert [m for *_, m in findings(tmp_path, "K004")] == [
        "service vllm runs TP=4 on 4 GPUs but reserves 3 (0,1,2)"
    ]
    assert findings(tmp_path, "K004", env={"TP": "3"}) == []


# -- the operator's view: the configuration from the thread -----------------------------------


def test_operator_env_reproduces_the_three_findings_from_the_thread(capsys):
    result = run_guards(
        capsys,
        "check",
        "--env-file",
        str(FIXTURES / "operator" / "my.env"),
        "composes/qwen3.8-27b/vllm/dual/ultrafast.yml",
        cwd=ROOT,
    )
    assert result.code == 1
    path = "composes/qwen3.8-27b/vllm/dual/ultrafast.yml"
    assert result.out.splitlines() == [
        f"{path}:153:9: K003 drafter depth 7 (from SPEC_N in the environment) exceeds the "
        "deepest validated dflash depth on dual, n=6 (claim spec-tax-35387, claims.yaml:78); "
        "the spec-decode tax grows with depth",
        f"{path}:201:9: K001 gpu-memory-utilization 0.95 (from GPU_MEMORY_UTILIZATION in the "
        "environment) is above the ceiling 0.90 (claim qwen38-27b-util-ceiling, "
        "claims.yaml:156: The knob is a ceiling on what vLLM claims, not a target. Higher means "
        "a bigger KV pool and less slack for the transient prefill peaks that chunked prefill, "
        "the drafter and cudagraph capture produce…)",
        f"{path}:205:9: K002 max-num-seqs 3 (from MAX_NUM_SEQS in the environment) > 1: bf16 "
        "KV 65,536 B/token × 204,800 = 12.5 GiB (6.25 GiB/card at TP=2); the KV pool of "
        "212,977 tokens (KV pool 212,977 tok, line 16) holds 1 full-length sequence of "
        "204,800; max-num-seqs 3 invites preemption and recompute — watch "
        "vllm:num_preemptions",
        "guard suite: 13 pass / 3 fail",
    ]


def test_same_compose_as_shipped_passes(capsys):
    result = run_guards(capsys, "check", "composes/qwen3.8-27b/vllm/dual/ultrafast.yml", cwd=ROOT)
    assert (result.code, result.out) == (0, "guard suite: 16 pass / 0 fail\n")


def test_context_larger_than_the_pool_cannot_start(tmp_path):
    build(
        tmp_path,
        {
            "composes/c.yml": vllm(
                ["--max-model-len", "65536", "--max-num-seqs", "1"],
                header="# (KV pool 13,107 tok at 0.85)\n",
            )
        },
    )
    assert findings(tmp_path, "K002") == [
        (
            "K002",
            7,
            "max-model-len 65,536 does not fit: the KV pool of 13,107 tokens (KV pool "
            "13,107 tok, line 1) is smaller than one full-length sequence; vLLM refuses "
            "to start",
        )
    ]
