"""The KV pool a vLLM service gets and the sequences it holds (guards/facts/capacity.py), as
pure functions of the compose, the registry and plain values. That the K002 rule and `guards
evidence read --compose` reach the same count from them is in tests/run/test_evidence.py."""

import pytest

from guards.facts.capacity import (
    Capacity,
    Planning,
    Search,
    capacity,
    kv_pool,
    kv_size,
    sequence_tokens,
    whole_number,
)
from guards.facts.kv import Pool
from guards.rules.max_num_seqs import Options
from guards.rules.options import RuleOptions
from guards.sources.compose.compose import parse_compose
from guards.sources.registry import empty, parse

REGISTRY = """\
claims:
  - id: kv-bytes
    title: KV bytes
    status: active
    applies_to: {model: qwen3.8-27b}
    facts: {kv_bytes_per_token: {bf16: 65536, fp8: 32768}, kv_heads: 4}
  - id: memory
    title: memory
    status: active
    applies_to: {model: qwen3.8-27b}
    facts: {gpu_memory_gib: 24, weights_gib: 18, reserved_gib: 2}
"""
MEASURED = """\
# Profile (at-a-glance):
#   Max ctx:   204800 (KV pool 212,977 tok)
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--max-model-len, "204800", --max-num-seqs, "3"]
"""
COMPUTED = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: >-
      --served-model-name qwen3.8-27b --tensor-parallel-size 2 --max-model-len 204800
      --gpu-memory-utilization 0.90 --kv-cache-dtype bfloat16 --max-num-seqs 2
"""


def service_of(text: str, path: str = "composes/c.yml"):
    compose = parse_compose(text, path, None)
    return compose, compose.services[0]


@pytest.mark.parametrize(
    "planned, length, expected",
    [
        (None, 204800, (204800, "the full context")),
        (1, 204800, (204800, "the full context")),
        (0.25, 204800, (51200, "tokens-per-sequence 0.25 × the context")),
        (1e-9, 1000, (1, "tokens-per-sequence 1e-09 × the context")),
        (32768, 204800, (32768, "tokens-per-sequence")),
        (300000, 204800, (204800, "the full context")),
    ],
)
def test_tokens_per_sequence(planned, length, expected):
    assert sequence_tokens(planned, length) == expected


def test_planning_takes_the_rule_s_option_values_or_the_defaults():
    options = Options.validate(
        {"tokens-per-sequence": 0.5, "kv-heads": 4, "kv-bytes-per-token": {"bf16": 2}}
    )
    assert Planning.of(options) == Planning(
        kv_heads=4, kv_bytes_per_token={"bf16": 2}, tokens_per_sequence=0.5
    )
    assert Planning.of(None) == Planning.of(RuleOptions()) == Planning.of(Options()) == Planning()


def test_a_measured_pool_and_the_count_it_holds():
    compose, service = service_of(MEASURED)
    found = capacity(compose, service, empty(), frozenset(), Planning())
    pool = Pool(212977, "measured", 2, "KV pool 212,977 tok")
    assert found == Capacity(3, 204800, Search(pool, True), 204800, "the full context")
    assert (found.pool, found.holds) == (pool, 1)


def test_a_pool_measured_elsewhere_is_left_out_with_why():
    compose, service = service_of(MEASURED.replace("(KV pool", "(TP=2 KV pool"))
    search = kv_pool(compose, service, empty(), frozenset(), Planning())
    assert (search.pool, search.quoted) == (None, True)
    assert search.left_out == (
        "KV pool 212,977 tok (line 2) was measured elsewhere (`TP=2`), and the compose ships TP=1",
    )


def test_a_pool_computed_from_registry_facts():
    compose, service = service_of(COMPUTED)
    registry = parse(REGISTRY, "claims.yaml")
    found = capacity(compose, service, registry, frozenset(), Planning())
    assert found is not None and found.pool is not None
    assert (found.pool.tokens, found.pool.source, found.holds) == (347340, "computed", 1)
    size = kv_size(compose, service, registry, Planning())
    assert size is not None
    assert (size.dtype, size.per_token, size.tp, size.card(204800)) == (
        "bf16",
        65536,
        2,
        6.25 * 2**30,
    )


def test_the_estate_s_figures_stand_in_for_a_silent_registry():
    compose, service = service_of(COMPUTED)
    planning = Planning(24, 18, 2, 4, {"bf16": 65536}, tokens_per_sequence=65536)
    found = capacity(compose, service, empty(), frozenset(), planning)
    assert found is not None and found.pool is not None
    assert (found.pool.tokens, found.per_sequence, found.holds) == (347340, 65536, 5)


def test_nothing_known_is_no_pool_and_no_knobs_is_no_capacity():
    compose, service = service_of(COMPUTED)
    found = capacity(compose, service, empty(), frozenset(), Planning())
    assert found is not None and (found.search, found.holds) == (Search(None), 0)
    compose, service = service_of(MEASURED.replace(', --max-num-seqs, "3"', ""))
    assert capacity(compose, service, empty(), frozenset(), Planning()) is None
    assert (whole_number(service, "max_num_seqs"), whole_number(service, "max_model_len")) == (
        None,
        204800,
    )
