"""K001-K004 through the command line, on this repository's own estate (the rule cases are in
tests/rules/K00*.yml)."""

from ..cli_helpers import run_guards
from ..conftest import FIXTURES

ROOT = FIXTURES.parent.parent


# -- the operator's view: the configuration from the thread -----------------------------------


def test_operator_env_reproduces_the_three_findings_from_the_thread(capsys):
    result = run_guards(
        capsys,
        "check",
        "--env-file",
        "tests/fixtures/operator/my.env",
        "composes/qwen3.8-27b/vllm/dual/ultrafast.yml",
        cwd=ROOT,
    )
    assert result.code == 1
    path = "composes/qwen3.8-27b/vllm/dual/ultrafast.yml"
    tag = "[from tests/fixtures/operator/my.env]"
    assert result.out.splitlines() == [
        f"{path}:179:9: K003 {tag} drafter depth 7 (from SPEC_N in the environment) exceeds the "
        "deepest validated dflash depth on dual, n=6 (claim spec-tax-35387, claims.yaml:78); "
        "the spec-decode tax grows with depth",
        f"{path}:227:9: K001 {tag} gpu-memory-utilization 0.95 (from GPU_MEMORY_UTILIZATION in the "
        "environment) is above the ceiling 0.90 (claim qwen38-27b-util-ceiling, "
        "claims.yaml:156: The knob is a ceiling on what vLLM claims, not a target. Higher means "
        "a bigger KV pool and less slack for the transient prefill peaks that chunked prefill, "
        "the drafter and cudagraph capture produce…)",
        f"{path}:231:9: K002 {tag} max-num-seqs 3 (from MAX_NUM_SEQS in the environment) > 1: bf16 "
        "KV 65,536 B/token × 204,800 = 12.5 GiB (6.25 GiB/card at TP=2); the KV pool of "
        "252,298 tokens (KV pool 212,977 tok, line 17, rescaled from util 0.9 to 0.95: "
        "+0.05 × 24 GiB (3090, line 7), at 32,768 B/token/card) holds 1 sequence of 204,800 "
        "tokens (the full context); max-num-seqs 3 invites preemption and recompute — watch "
        "vllm:num_preemptions",
        "guard suite: 22 pass / 3 fail",
    ]


def test_same_compose_as_shipped_passes(capsys):
    result = run_guards(capsys, "check", "composes/qwen3.8-27b/vllm/dual/ultrafast.yml", cwd=ROOT)
    assert (result.code, result.out) == (0, "guard suite: 25 pass / 0 fail\n")
