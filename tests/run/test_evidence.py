"""Evidence from the engine: `guards evidence read` on vLLM /metrics scrapes, the K002 verdict
beside a compose, `guards claims evidence add` splicing an entry into claims.yaml, and every
malformed scrape refused with one located line."""

import contextlib
import json
import os
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.errors import GuardsError
from guards.rules import all_rules
from guards.rules.options import load_options
from guards.run import evidence
from guards.run.estate import load_estate
from guards.sources import metrics
from guards.sources.compose.engines import VLLM
from guards.sources.config import Config
from guards.sources.edit import apply
from guards.sources.registry import load
from guards.write.evidence_edit import evidence_edits

from ..cli_helpers import run_guards, tree_digest
from ..conftest import FIXTURES
from ..examples import examples
from ..rule_cases import check, load_cases

SCRAPES = FIXTURES / "scrapes"
SLOW = """\
slow-before.prom -> slow-after.prom: what changed between the two scrapes
model qwen3.8-27b
  decode          10.0 tok/s (18,492 tokens in 1,849.2 s of decode, 6 requests finished; engine-side)
  generated       19,230 tokens
  preemptions     14
  KV cache usage  98.7% (vllm:kv_cache_usage_perc, at the second scrape)
  requests        1 running, 2 waiting (at the second scrape)
  spec decode     45.0% of 28,000 draft tokens accepted; mean accepted length 4.15
  KV pool         15,768 blocks × 16 = 252,288 tokens (vllm:cache_config_info)
  the KV pool is the limit: 98.7% of it in use with 2 requests waiting
"""
COMPOSE = """\
# Profile (at-a-glance):
#   Max ctx:   204800 (~200K) — MEASURED (KV pool 212,977 tok)
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command:
      - --served-model-name
      - qwen3.8-27b
      - --max-model-len
      - "204800"
      - --max-num-seqs
      - "${MAX_NUM_SEQS:-1}"
"""


def read(capsys, *args, cwd=SCRAPES):
    return run_guards(capsys, "evidence", "read", *args, cwd=cwd)


def estate(tmp_path, compose=COMPOSE):
    """A small estate with one dual compose, and the scrapes beside it."""
    root = tmp_path / "estate"
    (root / "composes").mkdir(parents=True)
    (root / "composes" / "dual.yml").write_text(compose, encoding="utf-8")
    for scrape in SCRAPES.iterdir():
        shutil.copy(scrape, root / scrape.name)
    return root


# -- reading ----------------------------------------------------------------------------------


def test_a_pair_gives_decode_tok_s_and_the_preemption_delta(capsys):
    result = read(capsys, "slow-before.prom", "slow-after.prom")
    assert (result.code, result.err) == (0, "")
    assert result.out == SLOW


def test_one_scrape_gives_totals_since_start(capsys):
    result = read(capsys, "slow-after.prom")
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "slow-after.prom: one scrape: counters are totals since the server started\n"
        "model qwen3.8-27b\n"
        "  decode          22.3 tok/s since start (59,492 tokens in 2,669.2 s of decode, "
        "26 requests finished; engine-side)\n"
        "  generated       62,747 tokens since start\n"
        "  preemptions     16 since start\n"
        "  KV cache usage  98.7% (vllm:kv_cache_usage_perc)\n"
        "  requests        1 running, 2 waiting\n"
        "  spec decode     50.4% of 91,000 draft tokens accepted since start; "
        "mean accepted length 4.53\n"
        "  KV pool         15,768 blocks × 16 = 252,288 tokens (vllm:cache_config_info)\n"
        "  the KV pool is the limit: 98.7% of it in use with 2 requests waiting\n"
    )


def test_a_window_in_which_no_request_finished_says_so(capsys):
    result = read(capsys, "slow-after.prom", "slow-after.prom")
    assert result.code == 0
    assert result.out.splitlines()[2:5] == [
        "  decode          no request finished between the scrapes",
        "  generated       0 tokens",
        "  preemptions     0",
    ]


def test_a_scrape_serving_two_models_is_read_per_model(capsys):
    result = read(capsys, "two-models.prom")
    assert result.code == 0
    assert result.out == (
        "two-models.prom: one scrape: counters are totals since the server started\n"
        "model qwen3.6-27b\n"
        "  decode          80.0 tok/s since start (96,000 tokens in 1,200.0 s of decode, "
        "40 requests finished; engine-side)\n"
        "  generated       96,000 tokens since start\n"
        "  preemptions     0 since start\n"
        "  KV cache usage  41.0% (vllm:kv_cache_usage_perc)\n"
        "  requests        3 running, 0 waiting\n"
        "model qwen3.8-27b\n"
        "  decode          153.1 tok/s since start (47,766 tokens in 312.0 s of decode, "
        "11 requests finished; engine-side)\n"
        "  generated       47,766 tokens since start\n"
        "  preemptions     0 since start\n"
        "  KV cache usage  11.8% (vllm:kv_cache_usage_perc)\n"
        "  requests        0 running, 0 waiting\n"
        "  spec decode     69.9% of 55,800 draft tokens accepted since start; "
        "mean accepted length 5.19\n"
    )
    one = read(capsys, "two-models.prom", "--model", "qwen3.6-27b")
    assert one.out.splitlines()[1:3] == [
        "model qwen3.6-27b",
        "  decode          80.0 tok/s since start (96,000 tokens in 1,200.0 s of decode, "
        "40 requests finished; engine-side)",
    ]
    assert len(one.out.splitlines()) == 7
    missing = read(capsys, "two-models.prom", "--model", "qwen3.8-9b")
    assert (missing.code, missing.out) == (2, "")
    assert missing.err == (
        "guards: error: two-models.prom: no model 'qwen3.8-9b' in the scrape "
        "(it serves qwen3.6-27b, qwen3.8-27b)\n"
    )


def test_json_carries_the_figures_and_the_k002_verdict(capsys, tmp_path):
    root = estate(tmp_path)
    (root / "user.env").write_text("MAX_NUM_SEQS=3\n", encoding="utf-8")
    result = read(
        capsys,
        "slow-before.prom",
        "slow-after.prom",
        "--compose",
        "composes/dual.yml",
        "--env-file",
        "user.env",
        "--format",
        "json",
        cwd=root,
    )
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["scrapes"] == ["slow-before.prom", "slow-after.prom"]
    assert document["since_start"] is False
    assert document["models"] == [
        {
            "model": "qwen3.8-27b",
            "figures": {
                "decode_tok_s": 10.0,
                "requests_finished": 6,
                "generated_tokens": 19230,
                "preemptions": 14,
                "kv_cache_usage_pct": 98.7,
                "requests_running": 1,
                "requests_waiting": 2,
                "spec_acceptance_pct": 45.0,
                "spec_mean_accepted_length": 4.15,
                "kv_pool_tokens": 252288,
            },
            "kv_metric": "vllm:kv_cache_usage_perc",
            "kv_pool_is_the_limit": True,
        }
    ]
    assert {k: v for k, v in document["compose"].items() if k != "lines"} == {
        "path": "composes/dual.yml",
        "service": "vllm",
        "image": "vllm/vllm-openai:v0.27.1",
        "model": "qwen3.8-27b",
        "k002": "confirmed",
    }


def test_the_older_kv_gauge_is_read_too():
    text = (SCRAPES / "slow-after.prom").read_text(encoding="utf-8")
    older = text.replace("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
    (found,) = evidence.figures(metrics.parse(older, "old.prom"))
    assert (found.kv_metric, found.kv_usage) == ("vllm:gpu_cache_usage_perc", 0.987)


# -- beside a compose: K002 -------------------------------------------------------------------


def test_preemptions_on_an_oversized_max_num_seqs_confirm_k002(capsys, tmp_path):
    root = estate(tmp_path)
    (root / "user.env").write_text("MAX_NUM_SEQS=3\n", encoding="utf-8")
    result = read(
        capsys,
        "slow-before.prom",
        "slow-after.prom",
        "--compose",
        "composes/dual.yml",
        "--env-file",
        "user.env",
        cwd=root,
    )
    assert (result.code, result.err) == (0, "")
    assert result.out == SLOW + (
        "compose composes/dual.yml: service vllm, image vllm/vllm-openai:v0.27.1\n"
        "  confirms K002: 14 preemptions, and max-num-seqs 3 (from MAX_NUM_SEQS in the "
        "environment) exceeds the 1 sequence of 204,800 tokens (the full context) that the KV "
        "pool of 212,977 tokens (KV pool 212,977 tok, line 2) holds\n"
    )


@pytest.mark.parametrize(
    "scrapes, seqs, kind, line",
    [
        (
            ["retest-before.prom", "retest-after.prom"],
            "1",
            "agrees",
            "no preemption, and max-num-seqs 1 is within the 1 sequence of 204,800 tokens (the "
            "full context) that the KV pool of 212,977 tokens (KV pool 212,977 tok, line 2) "
            "holds (K002 agrees)",
        ),
        (
            ["retest-before.prom", "retest-after.prom"],
            "3",
            "not-confirmed",
            "K002 not confirmed here: no preemption, though max-num-seqs 3 exceeds the 1 "
            "sequence of 204,800 tokens (the full context) that the KV pool of 212,977 tokens "
            "(KV pool 212,977 tok, line 2) holds",
        ),
        (
            ["slow-before.prom", "slow-after.prom"],
            "1",
            "not-k002",
            "14 preemptions, but max-num-seqs 1 is within the 1 sequence of 204,800 tokens (the "
            "full context) that the KV pool of 212,977 tokens (KV pool 212,977 tok, line 2) "
            "holds: not K002's oversized max-num-seqs",
        ),
        (
            ["slow-after.prom"],
            "2",
            "confirmed",
            "confirms K002: 16 preemptions since start, and max-num-seqs 2 exceeds the 1 "
            "sequence of 204,800 tokens (the full context) that the KV pool of 212,977 tokens "
            "(KV pool 212,977 tok, line 2) holds",
        ),
    ],
)
def test_what_the_preemption_count_says_about_k002(capsys, tmp_path, scrapes, seqs, kind, line):
    root = estate(tmp_path, COMPOSE.replace("${MAX_NUM_SEQS:-1}", seqs))
    result = read(capsys, *scrapes, "--compose", "composes/dual.yml", "--format", "json", cwd=root)
    assert result.code == 0, result.err
    compose = json.loads(result.out)["compose"]
    assert (compose["k002"], compose["lines"]) == (kind, [line])


def test_k002_is_not_judged_without_a_pool_figure(capsys, tmp_path):
    root = estate(tmp_path, COMPOSE.replace("KV pool 212,977 tok", "measured"))
    result = read(capsys, "slow-after.prom", "--compose", "composes/dual.yml", cwd=root)
    assert result.code == 0, result.err
    assert result.out.splitlines()[-2:] == [
        "compose composes/dual.yml: service vllm, image vllm/vllm-openai:v0.27.1",
        "  K002 not judged: no measured KV pool in its comments and no registry facts to "
        "compute one",
    ]


def test_with_a_compose_the_model_it_serves_is_picked_from_the_scrape(capsys, tmp_path):
    root = estate(tmp_path)
    result = read(capsys, "two-models.prom", "--compose", "composes/dual.yml", cwd=root)
    assert result.code == 0, result.err
    assert [line for line in result.out.splitlines() if line.startswith("model")] == [
        "model qwen3.8-27b"
    ]
    other = estate(tmp_path / "other", COMPOSE.replace("qwen3.8-27b", "qwen3.8-9b"))
    result = read(capsys, "two-models.prom", "--compose", "composes/dual.yml", cwd=other)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "guards: error: composes/dual.yml: cannot tell which model of the scrape (qwen3.6-27b, "
        "qwen3.8-27b) the compose's service (vllm) serves: name it with --model\n"
    )


@pytest.mark.parametrize(
    "compose, error",
    [
        (
            "services:\n  llama:\n    image: ghcr.io/ggml-org/llama.cpp:server-cuda-b9712\n"
            "    command: -m /m.gguf -c 65536 -np 2\n",
            "composes/dual.yml: no vLLM service in this compose; the scrape is a vLLM server's",
        ),
        ("services: [\n", "composes/dual.yml:2:1: YAML error: did not find expected node content"),
    ],
)
def test_a_compose_that_cannot_be_set_beside_is_exit_2(capsys, tmp_path, compose, error):
    root = estate(tmp_path, compose)
    result = read(capsys, "slow-after.prom", "--compose", "composes/dual.yml", cwd=root)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")


# -- malformed scrapes ------------------------------------------------------------------------

GOOD = (SCRAPES / "slow-after.prom").read_text(encoding="utf-8")
BEFORE = (SCRAPES / "slow-before.prom").read_text(encoding="utf-8")
LINES = GOOD.split("\n")
PREEMPT = LINES.index('vllm:num_preemptions_total{engine="0",model_name="qwen3.8-27b"} 16.0') + 1
DECODE_COUNT = next(
    n
    for n, line in enumerate(LINES, 1)
    if line.startswith("vllm:request_decode_time_seconds_count")
)


def without_line(text, number):
    lines = text.split("\n")
    return "\n".join(lines[: number - 1] + lines[number:])


def replace_line(text, number, new):
    lines = text.split("\n")
    lines[number - 1] = new
    return "\n".join(lines)


MALFORMED = [
    pytest.param(
        GOOD[: GOOD.index("model_na", GOOD.index("vllm:num_preemptions_total{"))],
        f"s.prom:{PREEMPT}: the last line has no line break: the scrape looks truncated",
        id="truncated-mid-line",
    ),
    pytest.param(
        GOOD[: GOOD.index("model_na", GOOD.index("vllm:num_preemptions_total{"))] + "\n",
        f"s.prom:{PREEMPT}: not Prometheus text: its labels are malformed (an unclosed `{{` or "
        "quote)",
        id="truncated-line-then-a-break",
    ),
    pytest.param(
        replace_line(GOOD, PREEMPT, 'vllm:num_preemptions_total{engine="0",model_name="q"} abc'),
        f"s.prom:{PREEMPT}: not Prometheus text: the value 'abc' is not a number",
        id="counter-value-not-a-number",
    ),
    pytest.param(
        GOOD.replace(
            "# TYPE vllm:num_preemptions_total counter", "# TYPE vllm:num_preemptions_total gauge"
        ),
        f"s.prom:{PREEMPT - 1}: vllm:num_preemptions is declared gauge; vLLM exports it as a counter",
        id="counter-declared-a-gauge",
    ),
    pytest.param(
        replace_line(GOOD, PREEMPT, 'vllm:num_preemptions_total{engine="0",model_name="q"} -3.0'),
        f"s.prom:{PREEMPT}: vllm:num_preemptions_total is -3: a counter is never negative",
        id="negative-counter",
    ),
    pytest.param(
        replace_line(GOOD, PREEMPT, 'vllm:num_preemptions_total{model_name="q"} ' + "9" * 400),
        f"s.prom:{PREEMPT}: vllm:num_preemptions_total is 99999999999999999999… (400 "
        "characters): out of range for a server's figure (finite, from 0 to 10^15)",
        id="counter-past-any-count",
    ),
    pytest.param(
        GOOD.replace('num_gpu_blocks="15768"', 'num_gpu_blocks="1²"'),
        f's.prom:{len(LINES) - 1}: vllm:cache_config_info num_gpu_blocks="1²" is not a whole '
        "number below 10^15",
        id="pool-label-not-a-count",
    ),
    pytest.param(
        replace_line(GOOD, 2, "#" + " " * 10_000),
        "s.prom:2: a line of 10,001 characters: longer than a /metrics line (10,000 at most)",
        id="line-longer-than-a-scrape-writes",
    ),
    pytest.param(
        without_line(GOOD, DECODE_COUNT),
        f"s.prom:{DECODE_COUNT}: histogram "
        'vllm:request_decode_time_seconds{engine="0",model_name="qwen3.8-27b"} has no _count: '
        "the scrape is incomplete",
        id="histogram-without-count",
    ),
    pytest.param(
        without_line(without_line(GOOD, DECODE_COUNT), DECODE_COUNT),
        f"s.prom:{DECODE_COUNT - 22}: histogram "
        'vllm:request_decode_time_seconds{engine="0",model_name="qwen3.8-27b"} has no _sum: '
        "the scrape is incomplete",
        id="histogram-of-buckets-only",
    ),
    pytest.param(
        "\n<!DOCTYPE html>\n<html><body>Grafana</body></html>\n",
        "s.prom:2: an HTML or XML page, not Prometheus text (scrape the server's /metrics)",
        id="html",
    ),
    pytest.param(
        '{"object": "list", "data": [{"id": "qwen3.8-27b"}]}\n',
        "s.prom:1: JSON, not Prometheus text (scrape the server's /metrics)",
        id="json",
    ),
    pytest.param(
        "", "s.prom: empty: no metrics in it (a scrape is what /metrics answers)", id="empty"
    ),
    pytest.param(
        " \n\n", "s.prom: empty: no metrics in it (a scrape is what /metrics answers)", id="blank"
    ),
    pytest.param(
        "# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 0.42\n",
        "s.prom: no vllm: metric in it: not a vLLM server's /metrics",
        id="no-vllm-metric",
    ),
    pytest.param(
        "vllm:num_requests_running 1\nthis is a log line, not a sample\n",
        "s.prom:2: not Prometheus text: it is neither a sample (`name{labels} value`) nor a `#` "
        "comment",
        id="prose",
    ),
]


@pytest.mark.parametrize("text, error", MALFORMED)
def test_a_malformed_scrape_is_one_located_line_and_exit_2(capsys, tmp_path, text, error):
    (tmp_path / "s.prom").write_text(text, encoding="utf-8")
    result = read(capsys, "s.prom", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")


def test_a_server_restart_between_the_scrapes_is_refused(capsys, tmp_path):
    """The AFTER scrape's counters are lower: the server restarted, so no delta means a thing."""
    (tmp_path / "before.prom").write_text(GOOD, encoding="utf-8")
    (tmp_path / "after.prom").write_text(BEFORE, encoding="utf-8")
    result = read(capsys, "before.prom", "after.prom", cwd=tmp_path)
    line = next(
        n for n, text in enumerate(BEFORE.split("\n"), 1) if text.startswith("vllm:prefix_cache_q")
    )
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"guards: error: after.prom:{line}: "
        'vllm:prefix_cache_queries_total{engine="0",model_name="qwen3.8-27b"} went down from '
        "3.29e+06 to 2.10355e+06 since before.prom: the server restarted between the scrapes "
        "(or the two are swapped: BEFORE comes first); take both from one run\n"
    )


def test_a_new_creation_time_is_a_restart_too(capsys, tmp_path):
    (tmp_path / "before.prom").write_text(BEFORE, encoding="utf-8")
    later = GOOD.replace("1.7960919469483724e+09", "1.7960999e+09", 1)
    (tmp_path / "after.prom").write_text(later, encoding="utf-8")
    result = read(capsys, "before.prom", "after.prom", cwd=tmp_path)
    line = next(n for n, text in enumerate(GOOD.split("\n"), 1) if "1.79609194694" in text)
    assert result.err == (
        f"guards: error: after.prom:{line}: "
        'vllm:prefix_cache_queries_created{engine="0",model_name="qwen3.8-27b"} was created '
        "again since before.prom: the server restarted between the scrapes; take both from "
        "one run\n"
    )


@pytest.mark.parametrize(
    "setup, error",
    [
        (lambda d: None, "s.prom: no such file"),
        (lambda d: (d / "s.prom").mkdir(), "s.prom: is a directory, not a file"),
        (
            lambda d: (d / "s.prom").write_bytes(b"vllm:num_requests_running 1\n\xff\n"),
            "s.prom:2:1: not valid UTF-8 (byte 0xff)",
        ),
    ],
)
def test_an_unreadable_scrape_is_exit_2(capsys, tmp_path, setup, error):
    setup(tmp_path)
    result = read(capsys, "s.prom", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")


@settings(max_examples=examples(300), deadline=None)
@given(
    cut=st.integers(0, len(GOOD)),
    edits=st.lists(
        st.tuples(st.integers(0, len(GOOD) - 1), st.sampled_from('{}",= \n#a_:.9e+-\\')), max_size=4
    ),
)
def test_a_damaged_scrape_is_read_or_refused_never_a_crash(cut, edits):
    text = list(GOOD[:cut])
    for at, char in edits:
        if at < len(text):
            text[at] = char
    with contextlib.suppress(GuardsError):  # anything else fails the test
        evidence.figures(metrics.parse("".join(text), "s.prom"))


# -- claims evidence add ----------------------------------------------------------------------

REGISTRY = """\
# claims.yaml — the estate's registry.
version: 1
claims:
  # ---------------------------------------------------------------- active
  - id: dual-dflash2-single-stream
    title: Dual-card DFlash2 tiers at ~200K hold one sequence; ship --max-num-seqs 1
    status: active   # re-measured each pin
    reason: >-
      With bf16 KV the dual pool is ~213K tokens, so it holds one ~200K sequence.
    evidence:
      - source: "dual/ultrafast boot log, 2×3090"
        measured: "GPU KV cache size: 212,977 tokens"
        date: 2026-08-26
      # the user report comes next
    applies_to:
      model: qwen3.8-27b
      engine: vllm

  - id: spec-tax-35387
    title: Spec tax
    status: active
    evidence: [{source: "vllm#35387", engine: v0.27.1}]

  - id: kv-bytes
    title: KV bytes
    status: active
    refs: ["#1052"]
    applies_to: {model: qwen3.8-27b}
"""
ENTRY = """\
      - source: vLLM /metrics retest-before.prom -> retest-after.prom (what changed between the scrapes)
        measured: 154.1 tok/s decode (engine-side), 0 preemptions, KV cache 11.8%, spec acceptance 70.0%
        date: 2026-11-30
        engine: vllm/vllm-openai:v0.27.1
        model: qwen3.8-27b
        figures:
          decode_tok_s: 154.1
          requests_finished: 8
          generated_tokens: 46230
          preemptions: 0
          kv_cache_usage_pct: 11.8
          requests_running: 0
          requests_waiting: 0
          spec_acceptance_pct: 70.0
          spec_mean_accepted_length: 5.2
          kv_pool_tokens: 203152
        note: n=6, one stream at 12K-35K
"""


def add(capsys, root, *args):
    return run_guards(
        capsys,
        "claims",
        "evidence",
        "add",
        *args,
        "--date",
        "2026-11-30",
        cwd=root,
    )


def registry_estate(tmp_path, text=REGISTRY):
    root = estate(tmp_path)
    (root / "claims.yaml").write_text(text, encoding="utf-8")
    return root


def test_an_entry_is_spliced_in_with_comments_and_order_kept(capsys, tmp_path):
    root = registry_estate(tmp_path)
    result = add(
        capsys,
        root,
        "dual-dflash2-single-stream",
        "--scrape",
        "retest-before.prom",
        "retest-after.prom",
        "--compose",
        "composes/dual.yml",
        "--note",
        "n=6, one stream at 12K-35K",
    )
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "claims.yaml: added evidence to dual-dflash2-single-stream (on vllm/vllm-openai:v0.27.1): "
        "154.1 tok/s decode (engine-side), 0 preemptions, KV cache 11.8%, spec acceptance 70.0%\n"
    )
    at = REGISTRY.index("      # the user report comes next\n")
    assert (root / "claims.yaml").read_text(encoding="utf-8") == REGISTRY[:at] + ENTRY + REGISTRY[
        at:
    ]
    claim = load(root / "claims.yaml", "claims.yaml").get("dual-dflash2-single-stream")
    assert claim is not None and claim.evidence[-1].figures["decode_tok_s"] == 154.1


def test_a_flow_list_gets_one_more_mapping_and_crlf_is_kept(capsys, tmp_path):
    root = registry_estate(tmp_path)
    path = root / "claims.yaml"
    path.write_bytes(REGISTRY.replace("\n", "\r\n").encode())
    os.chmod(path, 0o640)
    result = add(
        capsys, root, "spec-tax-35387", "--scrape", "slow-after.prom", "--engine", "v0.27.1"
    )
    assert (result.code, result.err) == (0, "")
    expected = REGISTRY.replace(
        '    evidence: [{source: "vllm#35387", engine: v0.27.1}]\n',
        '    evidence: [{source: "vllm#35387", engine: v0.27.1}, {source: "vLLM /metrics '
        'slow-after.prom (totals since start)", measured: "since start: 22.3 tok/s decode '
        '(engine-side), 16 preemptions, KV cache 98.7% with 2 waiting, spec acceptance 50.4%", '
        'date: 2026-11-30, engine: "v0.27.1", model: "qwen3.8-27b", figures: {decode_tok_s: '
        "22.3, requests_finished: 26, generated_tokens: 62747, preemptions: 16, "
        "kv_cache_usage_pct: 98.7, requests_running: 1, requests_waiting: 2, "
        "spec_acceptance_pct: 50.4, spec_mean_accepted_length: 4.53, kv_pool_tokens: 252288}}]\n",
    )
    assert path.read_bytes() == expected.replace("\n", "\r\n").encode()
    assert oct(path.stat().st_mode & 0o777) == "0o640"


def test_a_claim_without_evidence_gets_the_key_in_the_registry_s_order(capsys, tmp_path):
    root = registry_estate(tmp_path)
    result = add(
        capsys,
        root,
        "kv-bytes",
        "--scrape",
        "retest-before.prom",
        "retest-after.prom",
        "--engine",
        "v0.27.1",
    )
    assert (result.code, result.err) == (0, "")
    text = (root / "claims.yaml").read_text(encoding="utf-8")
    assert text.endswith(
        '    refs: ["#1052"]\n'
        "    evidence:\n"
        "      - source: vLLM /metrics retest-before.prom -> retest-after.prom (what changed "
        "between the scrapes)\n"
        "        measured: 154.1 tok/s decode (engine-side), 0 preemptions, KV cache 11.8%, "
        "spec acceptance 70.0%\n"
        "        date: 2026-11-30\n"
        "        engine: v0.27.1\n"
        "        model: qwen3.8-27b\n"
        "        figures:\n"
        "          decode_tok_s: 154.1\n"
        "          requests_finished: 8\n"
        "          generated_tokens: 46230\n"
        "          preemptions: 0\n"
        "          kv_cache_usage_pct: 11.8\n"
        "          requests_running: 0\n"
        "          requests_waiting: 0\n"
        "          spec_acceptance_pct: 70.0\n"
        "          spec_mean_accepted_length: 5.2\n"
        "          kv_pool_tokens: 203152\n"
        "    applies_to: {model: qwen3.8-27b}\n"
    )
    assert text.startswith(REGISTRY[: REGISTRY.index('    refs: ["#1052"]')])


@pytest.mark.parametrize(
    "args, error",
    [
        (
            ["no-such-claim", "--scrape", "slow-after.prom", "--engine", "v0.27.1"],
            "claims.yaml: no claim with id 'no-such-claim'",
        ),
        (
            ["kv-bytes", "--scrape", "slow-after.prom"],
            "the scrape does not say which engine it came from: give --engine TAG or "
            "--compose FILE",
        ),
        (
            ["kv-bytes", "--scrape", "two-models.prom", "--engine", "v0.27.1"],
            "two-models.prom: the scrape serves 2 models (qwen3.6-27b, qwen3.8-27b): name one "
            "with --model",
        ),
        (
            ["kv-bytes", "--scrape", "slow-after.prom", "slow-before.prom", "--engine", "v1"],
            'slow-before.prom:{line}: vllm:prefix_cache_queries_total{{engine="0",model_name='
            '"qwen3.8-27b"}} went down from 3.29e+06 to 2.10355e+06 since slow-after.prom: the '
            "server restarted between the scrapes (or the two are swapped: BEFORE comes first); "
            "take both from one run",
        ),
        (
            ["kv-bytes", "--scrape", "bad.prom", "--engine", "v0.27.1"],
            "bad.prom:1: JSON, not Prometheus text (scrape the server's /metrics)",
        ),
        (
            ["kv-bytes", "--scrape", "slow-after.prom", "--engine", "v1", "--date", "2026-02-30"],
            "--date '2026-02-30' is not a date as YYYY-MM-DD",
        ),
    ],
)
def test_add_refuses_bad_input_and_writes_nothing(capsys, tmp_path, args, error):
    root = registry_estate(tmp_path)
    (root / "bad.prom").write_text("[]\n", encoding="utf-8")
    line = next(
        n
        for n, text in enumerate(BEFORE.split("\n"), 1)
        if text.startswith("vllm:prefix_cache_queries_total")
    )
    before = tree_digest(root)
    result = run_guards(capsys, "claims", "evidence", "add", *args, cwd=root)
    assert (result.code, result.out) == (2, "")
    assert result.err == f"guards: error: {error.format(line=line)}\n"
    assert tree_digest(root) == before


def test_add_refuses_a_claim_written_as_a_flow_mapping(capsys, tmp_path):
    root = registry_estate(tmp_path, "claims:\n  - {id: flat, title: Flat, status: active}\n")
    before = tree_digest(root)
    result = add(capsys, root, "flat", "--scrape", "slow-after.prom", "--engine", "v0.27.1")
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "guards: error: claims.yaml:2: claim flat is written as a flow mapping ({...}); add its "
        "evidence by hand\n"
    )
    assert tree_digest(root) == before


def test_recorded_evidence_on_the_shipped_pin_keeps_c005_quiet(capsys, tmp_path):
    """The loop: the pin moves, C005 warns; measure on it, record it, and it is quiet."""
    root = registry_estate(tmp_path)
    compose = root / "composes" / "dual.yml"
    compose.write_text(COMPOSE.replace("v0.27.1", "v0.28.0"), encoding="utf-8")
    checked = run_guards(capsys, "check", "--select", "C005", cwd=root)
    assert checked.out == (
        "claims.yaml:19:1: C005 [warning] claim spec-tax-35387 is unverified on the shipped "
        "pin: its evidence was measured on v0.27.1, but every compose it applies to ships "
        "another engine: vllm/vllm-openai:v0.28.0 (composes/dual.yml:5)\n"
        "guard suite: 1 pass / 0 fail, 1 warning\n"
    )
    result = add(
        capsys,
        root,
        "spec-tax-35387",
        "--scrape",
        "retest-before.prom",
        "retest-after.prom",
        "--compose",
        "composes/dual.yml",
    )
    assert result.code == 0, result.err
    checked = run_guards(capsys, "check", "--select", "C005", cwd=root)
    assert (checked.code, checked.out) == (0, "guard suite: 1 pass / 0 fail\n")


NEW = {"source": "s: x", "date": "2026-11-30", "engine": "v0.28.0", "figures": {"a": 1}}


@pytest.mark.parametrize(
    "before, after",
    [
        pytest.param(
            "    evidence:\n      - {source: x, date: 2026-01-01}\n    refs: [r]\n",
            "    evidence:\n      - {source: x, date: 2026-01-01}\n"
            '      - {source: "s: x", date: 2026-11-30, engine: "v0.28.0", figures: {a: 1}}\n'
            "    refs: [r]\n",
            id="flow-items-of-a-block-list",
        ),
        pytest.param(
            "    evidence: [\n      {source: x},\n    ]\n",
            "    evidence: [\n      {source: x},\n"
            '    {source: "s: x", date: 2026-11-30, engine: "v0.28.0", figures: {a: 1}}]\n',
            id="flow-list-with-a-trailing-comma",
        ),
        pytest.param(
            "    evidence:\n      -   source: x\n          note: |\n            # kept\n\n"
            "    refs: [r]\n",
            "    evidence:\n      -   source: x\n          note: |\n            # kept\n"
            '      -   source: "s: x"\n          date: 2026-11-30\n          engine: v0.28.0\n'
            "          figures:\n            a: 1\n\n    refs: [r]\n",
            id="wide-dash-and-a-block-scalar",
        ),
        pytest.param(
            "    evidence:\n      - source: x",
            "    evidence:\n      - source: x\n"
            '      - source: "s: x"\n        date: 2026-11-30\n        engine: v0.28.0\n'
            "        figures:\n          a: 1\n",
            id="last-line-without-a-break",
        ),
    ],
)
def test_the_entry_follows_the_list_s_own_style(before, after):
    head = "claims:\n  - id: a\n    title: A\n    status: active\n"
    edits = evidence_edits(head + before, "claims.yaml", "a", NEW)
    assert apply(head + before, edits) == head + after


# -- evidence's K002 verdict and the rule: one count ------------------------------------------

K002_CASES = [case for case in load_cases() if case.rule == "K002"]
SWEPT = """\
# Profile (at-a-glance):
#   Topology:  Dual 3090 PCIe (TP=2)
#   Max ctx:   204800 — MEASURED on 2×3090 @0.90 util (KV pool 212,977 tok)
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command:
      - --tensor-parallel-size
      - "2"
      - --max-model-len
      - "204800"
      - --gpu-memory-utilization
      - "${GPU_MEMORY_UTILIZATION:-0.90}"
      - --kv-cache-dtype
      - bfloat16
      - --max-num-seqs
      - "${MAX_NUM_SEQS:-1}"
"""
COMPUTED = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: >-
      --tensor-parallel-size 2 --max-model-len 131072 --gpu-memory-utilization 0.90
      --kv-cache-dtype bfloat16 --max-num-seqs ${MAX_NUM_SEQS:-1}
"""
NAMED = """\
# Profile (at-a-glance):
#   Max ctx:   204800 — dual/ultrafast measured a KV pool 900,000 tok.
# Measured here: KV pool 212,977 tok.
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--max-model-len, "204800", --max-num-seqs, "${MAX_NUM_SEQS:-1}"]
"""
SIZES = {"kv-heads": 4, "kv-bytes-per-token": {"bf16": 65536, "fp8": 32768}}
MEMORY = {"gpu-memory-gib": 24, "weights-gib": 18, "reserved-gib": 2}


def k002_both(files, root, options=None, env=None):
    """For every vLLM service of the estate: the messages of the K002 rule's findings on its
    knobs, the rule's remarks, and what evidence sets beside the engine's preemptions."""
    result, errors = check("K002", files, root, options, env)
    assert errors == []
    # the estate and options exactly as the rule case's run loads them
    config = Config(
        root=root,
        composes=("composes/**/*.yml",),
        notes=("learnings/**/*.md",),
        rules=options or {},
        header={"preset": "profile"},
    )
    loaded, settings = load_estate(config, env=env), load_options(config, all_rules())
    for compose in loaded.composes:
        for service in (s for s in compose.services if s.engine == VLLM):
            knobs = (service.knob("max_num_seqs"), service.knob("max_model_len"))
            lines = {knob.line for knob in knobs if knob}
            messages = [
                f.message for f in result.findings if f.path == compose.path and f.line in lines
            ]
            judged = evidence.capacity(compose, service, loaded, settings)
            yield service, messages, result.remarks, judged


def agree(service, messages, remarks, judged) -> str:
    """Assert the rule and evidence reach the same pool and count; the rule's verdict."""
    if isinstance(judged, str):
        assert messages == []
        if judged.startswith("no measured KV pool"):
            assert any(f"service {service.name}: no measured KV pool" in r for r in remarks)
        return "not judged"
    pool = judged.pool
    shown = f"the KV pool of {pool.tokens:,} tokens ({pool.text}, "
    if pool.tokens < judged.length:
        assert len(messages) == 1 and "does not fit" in messages[0] and shown in messages[0]
        return "does not fit"
    kind, line = evidence.compare(evidence.Figures("m", False, preemptions=1), judged, service)
    assert f"pool of {pool.tokens:,} tokens ({pool.text}, " in line
    if judged.seqs <= judged.holds:
        assert (messages, kind) == ([], "not-k002")
        return "within"
    assert kind == "confirmed" and len(messages) == 1, messages
    assert messages[0].startswith(f"max-num-seqs {judged.seqs}")
    assert f" > {judged.holds}: " in messages[0] and shown in messages[0]
    assert f"holds {judged.holds} sequence" in messages[0]
    return "over"


@pytest.mark.parametrize("case", K002_CASES, ids=lambda case: case.name)
def test_evidence_and_the_rule_agree_on_every_k002_case(case, tmp_path):
    for found in k002_both(case.files, tmp_path, case.options, case.env):
        agree(*found)


@pytest.mark.parametrize(
    "compose, options, env, within",
    [
        pytest.param(SWEPT, {}, {}, 1, id="measured"),
        pytest.param(
            SWEPT,
            {"max-num-seqs": {**SIZES, "tokens-per-sequence": 0.25}},
            {"GPU_MEMORY_UTILIZATION": "0.95"},
            4,
            id="rescaled-quarter-context",
        ),
        pytest.param(
            SWEPT,
            {"max-num-seqs": {"tokens-per-sequence": 32768}},
            {},
            6,
            id="tokens-per-sequence",
        ),
        pytest.param(COMPUTED, {"max-num-seqs": {**SIZES, **MEMORY}}, {}, 2, id="computed"),
        pytest.param(NAMED, {}, {}, 1, id="not-the-other-compose-s-pool"),
    ],
)
def test_evidence_and_the_rule_hold_the_same_count(tmp_path, compose, options, env, within):
    """Past the count the pool holds, both flag max-num-seqs; up to it, neither does."""
    verdicts = []
    for seqs in range(1, within + 3):
        root = tmp_path / str(seqs)
        files = {"composes/single/c.yml": compose, "composes/dual/ultrafast.yml": "services: {}\n"}
        found = list(k002_both(files, root, options, {**env, "MAX_NUM_SEQS": str(seqs)}))
        assert len(found) == 1
        verdicts.append(agree(*found[0]))
    assert verdicts == ["within"] * within + ["over"] * 2
