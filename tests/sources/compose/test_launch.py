"""Which engine a service runs: the image reference parsed, and the engine read wherever the
compose launches it (``command:``/``entrypoint:`` as lists or strings, ``sh -c`` scripts in
either key, ``exec``, env prefixes, continuations, ``&&`` chains), with the flags each dialect
reads from there. The composes are small ones written for each shape."""

from __future__ import annotations

import pytest

from guards.sources.compose.compose import parse_compose
from guards.sources.compose.engines import LLAMACPP, SGLANG, UNKNOWN, VLLM
from guards.sources.compose.engines.identity import image_engine, parse_image


def service(text, env=None):
    compose = parse_compose(text, "c.yml", env)
    assert len(compose.services) == 1
    return compose.services[0]


def knob(text, name):
    found = service(text).knobs[name]
    return (found.value, found.line, found.column, found.source, found.flag)


# -- the image reference ------------------------------------------------------------------------


def test_image_reference_parts():
    ref = parse_image("registry.example:5000/team/llama.cpp:server-cuda@sha256:abc")
    assert (ref.registry, ref.path, ref.tag, ref.digest) == (
        "registry.example:5000",
        ("team", "llama.cpp"),
        "server-cuda",
        "sha256:abc",
    )
    assert parse_image("ollama/ollama") == parse_image("ollama/ollama")
    assert parse_image(":rocm") is None  # what an unset `${IMAGE}:rocm` leaves


@pytest.mark.parametrize(
    ("image", "engine"),
    [
        ("vllm/vllm-openai:v0.27.1", VLLM),
        ("docker.io/vllm/vllm-openai-rocm:latest", VLLM),
        ("rocm/vllm:rocm6.4_vllm_0.9", VLLM),
        ("lmsysorg/sglang:v0.5.4-cu126", SGLANG),
        ("lmsysorg/sglang:", SGLANG),  # the tag from an unset variable
        ("ghcr.io/ggml-org/llama.cpp:server-cuda-b9000", LLAMACPP),
        ("ghcr.io/ggml-org/llama.cpp:full", LLAMACPP),
        ("ghcr.io/ggerganov/llama.cpp:server", LLAMACPP),
        ("ghcr.io/someone/llama-cpp:latest", LLAMACPP),
        ("example/llamacpp", LLAMACPP),
        ("example/llama-server:cpu", LLAMACPP),
        ("ghcr.io/someone/ik-llama-cpp:cu12-server", LLAMACPP),
        ("ghcr.io/ggml-org/llama.cpp:light", UNKNOWN),  # llama-cli only
        ("ollama/ollama:rocm", UNKNOWN),
        ("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.0", UNKNOWN),
        ("nvcr.io/nim/nvidia/llama-nemotron-embed-1b-v2:1.0.0", UNKNOWN),
        ("ghcr.io/someone/llama-swap:cuda", UNKNOWN),
        ("ghcr.io/someone/llama-cpp-python:latest", UNKNOWN),  # another server, port 8000
        ("example/my-vllm-fork", UNKNOWN),
        ("redis:7", UNKNOWN),
    ],
)
def test_engine_from_the_image_repository_not_a_substring(image, engine):
    assert image_engine(image)[0] == engine
    text = f"services:\n  s:\n    image: '{image}'\n"
    assert service(text).engine == engine


def test_an_unset_image_variable_names_no_engine():
    text = "services:\n  s:\n    image: ${LLAMA_IMAGE}\n"
    assert (service(text).engine, service(text).launch.reason) == (UNKNOWN, "no image repository")
    assert service(text, {"LLAMA_IMAGE": "ghcr.io/ggml-org/llama.cpp:server"}).engine == LLAMACPP


# -- where the engine is launched ---------------------------------------------------------------

TP = "--tensor-parallel-size"


@pytest.mark.parametrize(
    ("lines", "engine", "tp"),
    [
        ("    command: vllm serve /m --tensor-parallel-size 2\n", VLLM, ("2", 4, 51)),
        ("    command: [vllm, serve, /m, --tensor-parallel-size, '2']\n", VLLM, ("2", 4, 56)),
        (
            "    entrypoint: python3 -m vllm.entrypoints.openai.api_server\n"
            "    command: --model /m --tensor-parallel-size 4\n",
            VLLM,
            ("4", 5, 48),
        ),
        (
            "    entrypoint: [python3, -m, sglang.launch_server]\n    command: [--tp-size, '2']\n",
            SGLANG,
            ("2", 5, 26),
        ),
        ("    command: sglang serve /m --tp 2\n", SGLANG, ("2", 4, 35)),
        (
            "    command: [env, NCCL_DEBUG=INFO, /app/llama-server, -m, /m.gguf, -ts, '1,1']\n",
            LLAMACPP,
            None,
        ),
    ],
)
def test_the_argv_launches_the_engine(lines, engine, tp):
    text = "services:\n  s:\n    image: example/base\n" + lines
    found = service(text)
    assert found.engine == engine
    if tp is not None:
        got = found.knobs["tensor_parallel_size"]
        assert (got.value, got.line, got.column) == tp


SCRIPT_IN_COMMAND = """\
services:
  s:
    image: lmsysorg/sglang:v0.5.4
    environment:
      - TP=${TP:-2}
    entrypoint: ["/bin/bash", "-c"]
    command:
      - |
        pip install --quiet hf_transfer && \\
          FOO=1 exec python3 -m sglang.launch_server --model-path /models/m \\
          --tp-size "$$TP" --mem-fraction-static 0.85 --context-length $$CTX
"""


def test_a_script_in_the_command_under_a_bash_entrypoint():
    found = service(SCRIPT_IN_COMMAND)
    assert found.engine == SGLANG
    assert found.launch.reason == ("the command script runs `python3 -m sglang.launch_server`")
    assert knob(SCRIPT_IN_COMMAND, "tensor_parallel_size") == ("2", 11, 21, "command", "--tp-size")
    assert knob(SCRIPT_IN_COMMAND, "model") == ("/models/m", 10, 67, "command", "--model-path")
    assert knob(SCRIPT_IN_COMMAND, "gpu_memory_utilization")[0] == "0.85"
    ctx = found.knobs["max_model_len"]
    assert (ctx.value, ctx.note) == (None, "$CTX is never assigned in the entrypoint script")


def test_the_container_environment_reaches_the_script():
    assert service(SCRIPT_IN_COMMAND, {"TP": "4"}).value("tensor_parallel_size") == "4"


def test_positional_words_after_dollar_zero_are_the_script_s_arguments():
    text = (
        "services:\n  s:\n    image: example/base\n"
        "    entrypoint: [sh, -ec, 'umask 002; exec vllm serve \"$$@\" --max-num-seqs 8', --]\n"
        "    command: [/m, --max-model-len, '4096']\n"
    )
    found = service(text)
    assert (found.engine, found.value("model"), found.value("max_model_len")) == (
        VLLM,
        "/m",
        "4096",
    )
    assert knob(text, "max_num_seqs")[3] == "entrypoint"


def test_a_string_form_shell_script_and_a_variable_the_script_assigns():
    text = (
        "services:\n  s:\n    image: example/base\n"
        "    command: bash -c 'N=3; exec llama-server -m /m.gguf -np $$N'\n"
    )
    found = service(text)
    assert (found.engine, found.value("max_num_seqs")) == (LLAMACPP, "3")


def test_a_script_that_launches_nothing_known_leaves_the_engine_to_the_image():
    text = (
        "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n"
        "    entrypoint: [bash, -c, 'exec /opt/start.sh \"$$@\"', --]\n"
        "    command: [--max-model-len, '4096']\n"
    )
    found = service(text)
    assert (found.engine, found.launch.idle, found.value("max_model_len")) == (VLLM, False, "4096")
    assert found.launch.reason == (
        "the entrypoint script launches no known engine; image vllm/vllm-openai"
    )


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        ("    command: sleep infinity\n", "the command runs `sleep infinity`, not a server"),
        (
            "    entrypoint: [tail, -f, /dev/null]\n",
            "the entrypoint runs `tail -f /dev/null`, not a server",
        ),
        (
            "    command: [sh, -c, 'echo ready && sleep infinity']\n",
            "the command script runs no server",
        ),
    ],
)
def test_a_command_that_replaces_the_server_runs_no_engine(lines, reason):
    text = "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n" + lines
    found = service(text)
    assert (found.engine, found.launch.idle, found.launch.reason) == (UNKNOWN, True, reason)
    assert found.knobs.keys() == {"image"}


def test_how_the_image_identified_the_engine_is_said():
    found = service("services:\n  s:\n    image: ghcr.io/ggml-org/llama.cpp:server\n")
    assert (found.engine, found.launch.reason) == (LLAMACPP, "image ggml-org/llama.cpp")
    found = service("services:\n  s:\n    image: ollama/ollama:latest\n")
    assert found.launch.reason == "image ollama/ollama is not an engine image guards knows"
