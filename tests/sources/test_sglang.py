"""SGLang as an engine dialect: its flags as canonical knobs, how a service is recognised as
SGLang, and the rules that read those knobs (K001, K004, D003) on small SGLang estates.

The composes below follow SGLang's documented launch syntax (``python -m sglang.launch_server``
and ``sglang serve`` with the flags of its server-arguments page)."""

import pytest

from guards.facts.scope import method
from guards.sources.compose.compose import parse_compose
from guards.sources.compose.engines import LLAMACPP, SGLANG, UNKNOWN, VLLM
from guards.sources.compose.engines.sglang import method_name

from ..cli_helpers import run_guards, write


def service(text, env=None):
    compose = parse_compose(text, "c.yml", env)
    assert len(compose.services) == 1
    return compose.services[0]


def table(text, env=None):
    """{knob: (value, line, column, source, flag)} for the one service of ``text``."""
    return {
        name: (k.value, k.line, k.column, k.source, k.flag)
        for name, k in service(text, env).knobs.items()
    }


# -- list-form command: interpolation, --flag=value, switches -----------------------------------

LIST_FORM = """\
services:
  sglang:
    image: ${SGLANG_IMAGE:-lmsysorg/sglang:v0.5.4-cu126}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 2
              capabilities: [gpu]
    command:
      - python3
      - -m
      - sglang.launch_server
      - --model-path
      - /models/qwen3.8-27b-fp8
      - --served-model-name
      - qwen3.8-27b
      - --context-length
      - "${CONTEXT_LENGTH:-131072}"
      - --mem-fraction-static=${MEM_FRACTION:-0.88}
      - --max-running-requests
      - "${MAX_RUNNING:-4}"
      - --trust-remote-code
      - --tp-size
      - "${TP:-2}"
      - --kv-cache-dtype
      - fp8_e4m3
      - --dtype
      - bfloat16
      - --quantization
      - fp8
      - --enable-metrics
      - --host
      - 0.0.0.0
      - --port
      - "30000"
"""


def test_list_form_knobs_values_lines_columns_and_flags():
    assert service(LIST_FORM).engine == SGLANG
    assert table(LIST_FORM) == {
        "model": ("/models/qwen3.8-27b-fp8", 16, 9, "command", "--model-path"),
        "served_model_name": ("qwen3.8-27b", 18, 9, "command", "--served-model-name"),
        "max_model_len": ("131072", 20, 9, "command", "--context-length"),
        "gpu_memory_utilization": ("0.88", 21, 31, "command", "--mem-fraction-static"),
        "max_num_seqs": ("4", 23, 9, "command", "--max-running-requests"),
        "tensor_parallel_size": ("2", 26, 9, "command", "--tp-size"),
        "kv_cache_dtype": ("fp8_e4m3", 28, 9, "command", "--kv-cache-dtype"),
        "dtype": ("bfloat16", 30, 9, "command", "--dtype"),
        "quantization": ("fp8", 32, 9, "command", "--quantization"),
        "port": ("30000", 37, 9, "command", "--port"),
        "image": ("lmsysorg/sglang:v0.5.4-cu126", 3, 12, "image", None),
        "gpus": ("2", 8, 1, "deploy", None),
    }


def test_list_form_follows_the_operator_overlay_and_keeps_what_controls_each_knob():
    found = service(LIST_FORM, {"MEM_FRACTION": "0.95", "CONTEXT_LENGTH": "65536"}).knobs
    assert found["gpu_memory_utilization"].value == "0.95"
    assert found["gpu_memory_utilization"].from_env == ("MEM_FRACTION",)
    assert found["gpu_memory_utilization"].raw == "--mem-fraction-static=${MEM_FRACTION:-0.88}"
    assert found["max_model_len"].value == "65536"
    assert found["max_model_len"].variables == ("CONTEXT_LENGTH",)


def test_no_port_flag_is_no_port_knob():
    text = LIST_FORM.replace('      - --port\n      - "30000"\n', "")
    assert "port" not in service(text).knobs  # SGLang's own default (30000) is not invented


def test_switches_do_not_take_the_next_flag_or_its_value():
    text = (
        "services:\n  s:\n    image: lmsysorg/sglang:latest\n"
        "    command: [--trust-remote-code, --enable-dp-attention, --context-length, '4096',"
        " --disable-radix-cache, --max-running-requests, '8', --enable-metrics, --port, '8000']\n"
    )
    found = {name: knob.value for name, knob in service(text).knobs.items()}
    assert found == {
        "enable_dp_attention": "true",
        "max_model_len": "4096",
        "max_num_seqs": "8",
        "port": "8000",
        "image": "lmsysorg/sglang:latest",
    }


def test_aliases_and_the_abbreviations_the_documentation_uses():
    text = (
        "services:\n  s:\n    image: lmsysorg/sglang:latest\n"
        "    command: [--model, /m, --tensor-parallel-size, '4', --pipeline-parallel-size, '2',"
        " --data-parallel-size, '2', --speculative-draft-model, /d]\n"
    )
    found = service(text).knobs
    assert [(k, found[k].value, found[k].flag) for k in sorted(found) if k != "image"] == [
        ("data_parallel_size", "2", "--data-parallel-size"),
        ("draft_model", "/d", "--speculative-draft-model"),
        ("model", "/m", "--model"),
        ("pipeline_parallel_size", "2", "--pipeline-parallel-size"),
        ("tensor_parallel_size", "4", "--tensor-parallel-size"),
    ]


def test_unset_variable_without_default_is_unresolved_not_guessed():
    text = (
        "services:\n  s:\n    image: lmsysorg/sglang\n    command: [--context-length, '${CTX}']\n"
    )
    knob = service(text).knobs["max_model_len"]
    assert (knob.value, knob.note) == (None, "CTX is unset and has no default")


# -- `sglang serve`: positional model, --tp / --dp ------------------------------------------------


def test_sglang_serve_positional_model_and_short_parallel_flags():
    text = (
        "services:\n  s:\n"
        "    command: sglang serve Qwen/Qwen3-8B --tp 2 --dp 2 --enable-dp-attention --port 8000\n"
    )
    assert service(text).engine == SGLANG
    assert table(text) == {
        "model": ("Qwen/Qwen3-8B", 3, 27, "command", None),
        "tensor_parallel_size": ("2", 3, 46, "command", "--tp"),
        "data_parallel_size": ("2", 3, 53, "command", "--dp"),
        "enable_dp_attention": ("true", 3, 55, "command", "--enable-dp-attention"),
        "port": ("8000", 3, 84, "command", "--port"),
    }


def test_the_command_is_the_model_when_the_entrypoint_runs_sglang_serve():
    text = (
        "services:\n  s:\n    image: lmsysorg/sglang:latest\n"
        "    entrypoint: [bash, -c, 'exec sglang serve \"$$@\"', --]\n"
        "    command: [/models/qwen, --context-length, '8192']\n"
    )
    knob = service(text).knobs["model"]
    assert (knob.value, knob.line, knob.column, knob.flag) == ("/models/qwen", 5, 15, None)


def test_launch_server_takes_no_positional_model():
    text = (
        "services:\n  s:\n    image: lmsysorg/sglang:latest\n"
        "    entrypoint: [bash, -c, 'exec python3 -m sglang.launch_server \"$$@\"', --]\n"
        "    command: [/models/qwen, --context-length, '8192']\n"
    )
    assert "model" not in service(text).knobs


# -- bash entrypoint: `exec python3 -m sglang.launch_server "$@"` with a drafter -----------------

ENTRYPOINT = """\
services:
  sglang-mtp:
    image: lmsysorg/sglang:v0.5.4
    environment:
      - SPEC_N=${SPEC_N:-}
      - SPEC=${SPEC:-}
    entrypoint:
      - bash
      - -c
      - |
        set -e
        _spec_n="$${SPEC_N:-3}"
        case "$${SPEC:-}" in off|OFF|0) _spec_n=0 ;; esac
        SPEC_ARGS=()
        if [ "$$_spec_n" -gt 0 ]; then
          SPEC_ARGS=(--speculative-algorithm NEXTN --speculative-num-steps "$$_spec_n")
        fi
        exec python3 -m sglang.launch_server "$@" --speculative-eagle-topk "$${TOPK:-1}" "$${SPEC_ARGS[@]}"
      - --
    command:
      - --model-path
      - /models/qwen3.8-27b
      - --tp
      - "1"
      - --mem-fraction-static
      - "0.85"
      - --speculative-num-draft-tokens
      - "4"
"""


def test_entrypoint_form_reads_the_command_and_the_script_s_own_flags():
    assert service(ENTRYPOINT).engine == SGLANG
    assert table(ENTRYPOINT) == {
        "model": ("/models/qwen3.8-27b", 22, 9, "command", "--model-path"),
        "tensor_parallel_size": ("1", 24, 9, "command", "--tp"),
        "gpu_memory_utilization": ("0.85", 26, 9, "command", "--mem-fraction-static"),
        "speculative_num_draft_tokens": ("4", 28, 9, "command", "--speculative-num-draft-tokens"),
        "drafter_method": ("mtp", 16, 46, "entrypoint", "--speculative-algorithm"),
        "drafter_depth": ("3", 12, 9, "entrypoint", "--speculative-num-steps"),
        "speculative_eagle_topk": ("1", 18, 76, "entrypoint", "--speculative-eagle-topk"),
        "image": ("lmsysorg/sglang:v0.5.4", 3, 12, "image", None),
    }
    depth = service(ENTRYPOINT).knobs["drafter_depth"]
    assert (depth.raw, depth.variables) == ("$${SPEC_N:-3}", ("SPEC_N",))


def test_entrypoint_depth_follows_spec_n_through_the_container_environment():
    depth = service(ENTRYPOINT, {"SPEC_N": "5"}).knobs["drafter_depth"]
    assert (depth.value, depth.from_env) == ("5", ("SPEC_N",))


@pytest.mark.parametrize("env", [{"SPEC": "off"}, {"SPEC_N": "0"}])
def test_entrypoint_drafter_off_switches(env):
    assert service(ENTRYPOINT, env).knobs["drafter_depth"].value == "0"


def test_a_variable_the_service_does_not_forward_does_not_reach_the_script():
    assert service(ENTRYPOINT, {"TOPK": "4"}).knobs["speculative_eagle_topk"].value == "1"


def test_command_flags_win_over_the_script_s():
    text = ENTRYPOINT.replace(
        '      - "4"\n', '      - "4"\n      - --speculative-num-steps\n      - "2"\n'
    )
    depth = service(text).knobs["drafter_depth"]
    assert (depth.value, depth.line, depth.source) == ("2", 30, "command")


# -- the drafter ----------------------------------------------------------------------------------


def drafter(command):
    text = f"services:\n  s:\n    image: lmsysorg/sglang:latest\n    command: {command}\n"
    found = service(text).knobs
    return found.get("drafter_method"), found.get("drafter_depth")


def test_steps_without_an_algorithm_are_no_drafter():
    assert drafter("[--speculative-num-steps, '3', --speculative-eagle-topk, '1']") == (None, None)


def test_algorithm_without_steps_leaves_the_depth_to_sglang():
    found_method, depth = drafter("[--speculative-algorithm, EAGLE3, --mem-fraction-static, '0.8']")
    assert (found_method.value, found_method.line, found_method.column) == ("eagle3", 4, 40)
    assert (depth.value, depth.line, depth.column, depth.flag) == (
        None,
        4,
        40,
        "--speculative-num-steps",
    )
    assert depth.note == "no --speculative-num-steps: SGLang picks the depth for the model"


@pytest.mark.parametrize(
    ("algorithm", "name"),
    [
        ("EAGLE", "eagle"),
        ("EAGLE3", "eagle3"),
        ("NEXTN", "mtp"),
        ("STANDALONE", "draft_model"),
        ("NGRAM", "ngram"),
        ("DFLASH", "dflash"),
        ("DSPARK", "dspark"),
        ("MY_REGISTERED", "my_registered"),
    ],
)
def test_algorithms_get_the_registry_s_method_names(algorithm, name):
    assert method_name(algorithm) == name
    assert method(algorithm) == name  # registry facts may spell it either way


def test_inline_flag_value_form_for_the_drafter():
    found_method, depth = drafter("[--speculative-algorithm=EAGLE, --speculative-num-steps=5]")
    assert (found_method.value, depth.value, depth.column) == ("eagle", "5", 70)


# -- which engine -------------------------------------------------------------------------------

SCRIPT = "    entrypoint: [bash, -c, '{line}', --]\n"


@pytest.mark.parametrize(
    ("lines", "engine"),
    [
        ("    image: lmsysorg/sglang:latest\n", SGLANG),
        ("    image: ${IMAGE:-docker.io/lmsysorg/sglang:v0.5.4-cu126}\n", SGLANG),
        (SCRIPT.format(line='exec python3 -m sglang.launch_server \\"$$@\\"'), SGLANG),
        (SCRIPT.format(line='exec sglang serve \\"$$@\\"'), SGLANG),
        ("    command: [python3, -m, sglang.launch_server, --model-path, /m]\n", SGLANG),
        ("    command: [--mem-fraction-static, '0.8']\n", SGLANG),
        ("    command: ['--context-length=4096']\n", SGLANG),
        ("    command: [--tp-size, '2']\n", SGLANG),
        ("    command: [--max-running-requests, '4']\n", SGLANG),
        ("    command: [--tensor-parallel-size, '2', --context-length, '4096']\n", SGLANG),
        ("    image: vllm/vllm-openai:v0.27.1\n    command: [--tensor-parallel-size, '2']\n", VLLM),
        ("    command: [--tensor-parallel-size, '2', --max-model-len, '4096']\n", VLLM),
        ("    image: ghcr.io/ggml-org/llama.cpp:server\n    command: -c 4096\n", LLAMACPP),
        ("    image: redis:7\n", UNKNOWN),
    ],
)
def test_engine_detection(lines, engine):
    assert service("services:\n  s:\n" + lines).engine == engine


# -- the rules on an SGLang estate ---------------------------------------------------------------

CEILING_CLAIM = """\
claims:
  - id: sglang-fraction-ceiling
    title: 0.88 is the static-memory ceiling for qwen3.8-27b on SGLang
    status: active
    reason: SGLang claims weights and KV up front; CUDA graphs and activations need the rest.
    applies_to: {model: qwen3.8-27b, engine: sglang}
    facts: {gpu_memory_utilization_max: 0.88}
"""
SGLANG_COMPOSE = """\
services:
  sglang-qwen38:
    image: lmsysorg/sglang:v0.5.4
    command:
      - python3
      - -m
      - sglang.launch_server
      - --model-path
      - /models/qwen3.8-27b
      - --served-model-name
      - qwen3.8-27b
      - --tp-size
      - "2"
      - --mem-fraction-static
      - "${MEM_FRACTION_STATIC:-0.90}"
"""
VLLM_COMPOSE = """\
services:
  vllm-qwen38:
    image: vllm/vllm-openai:v0.27.1
    command: [--served-model-name, qwen3.8-27b, --gpu-memory-utilization, "0.90"]
"""


def test_k001_judges_mem_fraction_static_against_an_sglang_claim(capsys, tmp_path):
    write(
        tmp_path,
        {
            "claims.yaml": CEILING_CLAIM,
            "composes/sglang/dual.yml": SGLANG_COMPOSE,
            "composes/vllm/dual.yml": VLLM_COMPOSE,  # the claim is SGLang's: 0.94 applies here
        },
    )
    result = run_guards(capsys, "check", "--root", str(tmp_path), "--select", "K001", "-v")
    assert result.code == 1
    assert result.out.splitlines() == [
        "composes/sglang/dual.yml:15:9: K001 mem-fraction-static 0.90 is above the ceiling 0.88 "
        "(claim sglang-fraction-ceiling, claims.yaml:2: SGLang claims weights and KV up front; "
        "CUDA graphs and activations need the rest.)",
        "    hint: ship 0.88 or lower; a bigger KV pool is not worth prefill OOMs",
        "guard suite: 1 pass / 1 fail",
    ]


def test_k001_default_ceiling_applies_to_sglang_without_a_claim(capsys, tmp_path):
    write(tmp_path, {"composes/dual.yml": SGLANG_COMPOSE.replace("0.90", "0.95")})
    result = run_guards(capsys, "check", "--root", str(tmp_path), "--select", "K001")
    assert (result.code, result.out.splitlines()) == (
        1,
        [
            "composes/dual.yml:15:9: K001 mem-fraction-static 0.95 is above the ceiling 0.94 "
            "(the default ceiling 0.94; no registry claim sets one for this model)",
            "guard suite: 0 pass / 1 fail",
        ],
    )


def test_k001_passes_at_the_claimed_ceiling(capsys, tmp_path):
    write(
        tmp_path,
        {"claims.yaml": CEILING_CLAIM, "composes/dual.yml": SGLANG_COMPOSE.replace("0.90", "0.88")},
    )
    result = run_guards(capsys, "check", "--root", str(tmp_path), "--select", "K001")
    assert (result.code, result.out) == (0, "guard suite: 1 pass / 0 fail\n")


PAIR = """\
# Tensor-parallel: 2
# Requires-min-gpu-count: 2
services:
  chat:
    image: lmsysorg/sglang:v0.5.4
    environment: [NVIDIA_VISIBLE_DEVICES=0]
    command: [python3, -m, sglang.launch_server, --model-path, /m, --tp-size, "2", --dp-size, "2"]
  embed:
    image: lmsysorg/sglang:v0.5.4
    environment: [NVIDIA_VISIBLE_DEVICES=0]
    command: [python3, -m, sglang.launch_server, --model-path, /e, --is-embedding]
"""


def test_k004_and_d003_count_data_parallel_copies_and_do_not_guess_unset_fractions(
    capsys, tmp_path
):
    write(tmp_path, {"composes/pair.yml": PAIR})
    result = run_guards(capsys, "check", "--root", str(tmp_path), "--select", "K004,D003", "-v")
    assert result.out.splitlines() == [
        "composes/pair.yml:2:27: D003 flat line Requires-min-gpu-count: 2 (line 2) disagrees "
        "with the body: 4 (--tp-size, line 7 × DP 2)",
        "    hint: write `# Requires-min-gpu-count: 4`",
        "composes/pair.yml:7:79: K004 service chat runs TP=2 × DP=2 on 4 GPUs but reserves 1 (0)",
        "    hint: make the parallel size match the reserved devices",
        "guard suite: 0 pass / 2 fail",
    ]
    assert (
        "guards: K004 composes/pair.yml: chat, embed set no --mem-fraction-static (SGLang sizes "
        "it at start-up): the shares of chat, embed on shared GPUs are not summed"
    ) in result.err.splitlines()


def test_k004_dp_attention_runs_on_the_tp_group_s_cards_and_sums_explicit_fractions(
    capsys, tmp_path
):
    text = (
        PAIR.replace(
            '"2", --dp-size, "2"]',
            '"2", --dp-size, "2", --enable-dp-attention, --mem-fraction-static, "0.7"]',
        )
        .replace("[NVIDIA_VISIBLE_DEVICES=0]", "['NVIDIA_VISIBLE_DEVICES=0,1']", 1)
        .replace("--is-embedding]", "--is-embedding, --mem-fraction-static, '0.4']")
    )
    write(tmp_path, {"composes/pair.yml": text})
    result = run_guards(capsys, "check", "--root", str(tmp_path), "--select", "K004,D003")
    assert result.out.splitlines() == [
        "composes/pair.yml:4:1: K004 services sharing GPUs ask for chat 0.7 + embed 0.4 = 1.10 "
        "of a card",
        "guard suite: 1 pass / 1 fail",
    ]
