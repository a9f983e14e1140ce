"""Where a service runs (guards/facts/accelerators.py): the accelerator and cards each way of
giving a container a device means, and which services start together under profiles."""

import pytest

from guards.facts.accelerators import (
    ALL,
    CPU,
    HABANA,
    INTEL,
    NVIDIA,
    ROCM,
    UNKNOWN,
    accelerator,
    describe,
    shared_cards,
    started_together,
    together,
)
from guards.sources.compose.compose import parse_compose


def services(body, env=None):
    return parse_compose("services:\n" + body, "c.yml", env).services


def placed(body, env=None):
    (service,) = services("  s:\n    image: vllm/vllm-openai:v0.27.1\n" + body, env)
    found = accelerator(service)
    return found.kind, found.cards, found.named


def ids(*cards):
    return frozenset(cards)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    environment: [NVIDIA_VISIBLE_DEVICES=0]\n", (NVIDIA, ids("0"), True)),
        ('    environment: ["NVIDIA_VISIBLE_DEVICES=1, 2"]\n', (NVIDIA, ids("1", "2"), True)),
        ("    environment: [NVIDIA_VISIBLE_DEVICES=all]\n", (NVIDIA, ALL, False)),
        ("    environment: [NVIDIA_VISIBLE_DEVICES=void]\n", (NVIDIA, ids(), False)),
        ("    gpus: all\n", (NVIDIA, ALL, False)),
        ("    gpus:\n      - count: 2\n", (NVIDIA, ids("0", "1"), False)),
        ("    gpus:\n      - device_ids: ['3']\n", (NVIDIA, ids("3"), True)),
        ("    runtime: nvidia\n", (NVIDIA, ALL, False)),
        (
            "    runtime: nvidia\n    environment: [NVIDIA_VISIBLE_DEVICES=1]\n",
            (NVIDIA, ids("1"), True),
        ),
        ("    devices: [nvidia.com/gpu=all]\n", (NVIDIA, ALL, False)),
        ("    devices: [nvidia.com/gpu=2]\n", (NVIDIA, ids("2"), True)),
        ("    devices: [/dev/nvidia1, /dev/nvidiactl]\n", (NVIDIA, ids("1"), True)),
        ("    devices: [/dev/kfd, /dev/dri]\n", (ROCM, ALL, False)),
        ("    devices: [amd.com/gpu=all]\n", (ROCM, ALL, False)),
        ("    devices: [/dev/dri/renderD128]\n", (INTEL, ALL, False)),
        ("    devices:\n      - source: /dev/dri\n        target: /dev/dri\n", (INTEL, ALL, False)),
        ("    command: [--device, xpu]\n", (INTEL, ALL, False)),
        ("    runtime: habana\n", (HABANA, ALL, False)),
        (
            '    runtime: habana\n    environment: ["HABANA_VISIBLE_DEVICES=0,1"]\n',
            (HABANA, ids("0", "1"), True),
        ),
        ("    command: [--device, cpu]\n", (CPU, ids(), False)),
        ("    command: [--device=cpu]\n    gpus: all\n", (CPU, ids(), False)),
        ("    command: [--max-model-len, '8192']\n", (UNKNOWN, ids(), False)),
        ("    devices: [/dev/kfd]\n    gpus: all\n", (UNKNOWN, ids(), False)),
        ("    environment: [CUDA_VISIBLE_DEVICES=0]\n", (UNKNOWN, ids(), False)),
    ],
)
def test_each_way_of_giving_a_device(body, expected):
    assert placed(body) == expected


@pytest.mark.parametrize(
    ("devices", "expected"),
    [
        ("- driver: nvidia\n    count: 1", (NVIDIA, ids("0"), False)),
        ("- driver: nvidia\n    count: all", (NVIDIA, ALL, False)),
        ("- driver: nvidia", (NVIDIA, ALL, False)),
        ("- capabilities: [gpu]\n    device_ids: ['0', '1']", (NVIDIA, ids("0", "1"), True)),
        ("- capabilities: [gpu]\n    count: ${N:-2}", (NVIDIA, ids("0", "1"), False)),
        ("- capabilities: [gpu]\n    count: lots", (NVIDIA, ids(), False)),
        ("- driver: cdi\n    device_ids: [nvidia.com/gpu=1]", (NVIDIA, ids("1"), True)),
        ("- driver: cdi\n    device_ids: [amd.com/gpu=all]", (ROCM, ALL, False)),
        ("- capabilities: [tpu]", (UNKNOWN, ids(), False)),
        ("- driver: other\n    capabilities: [gpu]", (UNKNOWN, ids(), False)),
    ],
)
def test_device_requests_under_deploy(devices, expected):
    assert placed(_deploy(devices)) == expected


def _deploy(devices):
    """A reservation: the first line is the list item, the others its keys."""
    first, *rest = devices.split("\n")
    body = "    deploy:\n      resources:\n        reservations:\n          devices:\n"
    return body + f"            {first}\n" + "".join(f"              {k.strip()}\n" for k in rest)


def test_a_request_follows_the_operators_overlay():
    body = _deploy("- capabilities: [gpu]\n    count: ${N:-2}")
    assert placed(body, {"N": "4"})[1] == ids("0", "1", "2", "3")


def test_a_cpu_image_runs_on_the_cpu_whatever_it_reserves():
    for image in ("example/vllm-cpu:v0.9", "vllm/vllm-openai:v0.9-cpu", "example/sglang:cpu"):
        (service,) = services(f"  s:\n    image: {image}\n    gpus: all\n")
        assert accelerator(service).kind == CPU, image
    (service,) = services("  s:\n    image: ghcr.io/ggml-org/llama.cpp:server-cuda\n")
    assert accelerator(service).kind == UNKNOWN


def test_what_a_remark_says():
    (service,) = services("  s:\n    image: rocm/vllm\n    devices: [/dev/kfd, /dev/dri]\n")
    assert describe(accelerator(service)) == "runs on AMD ROCm (/dev/kfd)"
    (service,) = services("  s:\n    image: vllm/vllm-openai\n")
    assert "on no known card" in describe(accelerator(service))


COMPOSE = """\
  always:
    image: vllm/vllm-openai
  cpu:
    image: vllm/vllm-openai
    profiles: [cpu]
  nvidia:
    image: vllm/vllm-openai
    profiles: [gpu-nvidia]
  amd:
    image: vllm/vllm-openai
    profiles: [gpu-amd]
  both:
    image: vllm/vllm-openai
    profiles: [gpu-nvidia, gpu-amd]
"""


def names(runs):
    return [[s.name for s in run] for run in runs]


def test_services_without_profiles_always_start():
    always, cpu, nvidia, amd, both = services(COMPOSE)
    assert together(always, cpu) and together(nvidia, always)
    assert not together(cpu, nvidia) and not together(nvidia, amd)
    assert together(nvidia, both) and together(amd, both)


def test_one_profile_at_a_time_by_default():
    assert names(started_together(services(COMPOSE))) == [
        ["always", "cpu"],
        ["always", "nvidia", "both"],
        ["always", "amd", "both"],
    ]


def test_every_service_together_or_each_alone():
    found = services(COMPOSE)
    assert names(started_together(found, "all")) == [[s.name for s in found]]
    assert names(started_together(found, "one")) == [[s.name] for s in found]
    cpu, nvidia = found[1], found[2]
    assert together(cpu, nvidia, "all") and not together(cpu, nvidia, "one")


def test_the_empty_profile_is_the_run_without_profiles():
    found = services(
        "  a:\n    image: x\n    profiles: ['', rag]\n  b:\n    image: x\n    profiles: [ingest]\n"
    )
    assert found[0].profiles == ("", "rag")
    assert names(started_together(found)) == [["a"], ["a"], ["b"]]


def test_profiles_are_interpolated():
    (service,) = services("  a:\n    image: x\n    profiles: ['${P:-gpu}']\n", {"P": "cpu"})
    assert service.profiles == ("cpu",)


def test_shared_cards_groups_the_services_on_each_card_once():
    found = services(
        "  a:\n    image: x\n    environment: ['NVIDIA_VISIBLE_DEVICES=0,1']\n"
        "  b:\n    image: x\n    environment: [NVIDIA_VISIBLE_DEVICES=1]\n"
        "  c:\n    image: x\n    environment: [NVIDIA_VISIBLE_DEVICES=1]\n    profiles: [p]\n"
        "  d:\n    image: x\n    environment: [NVIDIA_VISIBLE_DEVICES=2]\n"
        "  e:\n    image: x\n"
    )
    placed_ = [(s, accelerator(s)) for s in found]
    shared = shared_cards(placed_, "profiles")
    assert [([s.name for s in g.services], g.cards) for g in shared] == [
        (["a", "b", "c"], ids("1"))
    ]
    assert shared_cards(placed_, "one") == []


def test_shared_cards_when_every_service_takes_every_card():
    found = services("  a:\n    image: x\n    gpus: all\n  b:\n    image: x\n    runtime: nvidia\n")
    (shared,) = shared_cards([(s, accelerator(s)) for s in found], "profiles")
    assert [s.name for s in shared.services] == ["a", "b"] and shared.cards is ALL
