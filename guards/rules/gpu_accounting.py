"""K004 gpu-accounting: services sharing GPUs fit on them; TP × PP matches the reserved GPUs.

Why: two vLLM services on the same card each claim their ``--gpu-memory-utilization`` share of
it; 0.6 + 0.6 cannot fit, and the second one dies at boot or - worse - boots and OOMs under load.
Services share cards when their ``device_ids``, numeric ``count`` or
``NVIDIA_VISIBLE_DEVICES`` overlap, or when any of them takes every card (``count: all`` or no
reservation); the shares are summed card by card, so services on different cards of a
shared reservation are not added together. And when a service lists its GPUs explicitly, tensor-parallel × pipeline-parallel
size must equal that number: TP=4 on three reserved cards does not boot, TP=2 on four leaves
two idle.

Bad:
    services:
      chat:
        image: vllm/vllm-openai:v0.27.1
        environment: [NVIDIA_VISIBLE_DEVICES=0]
        command: [--gpu-memory-utilization, "0.60"]
      embed:
        image: vllm/vllm-openai:v0.27.1
        environment: [NVIDIA_VISIBLE_DEVICES=0]
        command: [--gpu-memory-utilization, "0.50"]

Finds:
    composes/example.yml:2:1: K004 services sharing GPUs ask for chat 0.6 + embed 0.5 = 1.10 of a card

Good:
    services:
      chat:
        image: vllm/vllm-openai:v0.27.1
        environment: [NVIDIA_VISIBLE_DEVICES=0]
        command: [--gpu-memory-utilization, "0.60"]
      embed:
        image: vllm/vllm-openai:v0.27.1
        environment: [NVIDIA_VISIBLE_DEVICES=0]
        command: [--gpu-memory-utilization, "0.30"]
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import SGLANG, VLLM, Knob
from ..sources.compose.engines.sglang import data_parallel
from ..sources.numbers import to_count
from .base import Context, Rule
from .options import RuleOptions

MAX_GPUS = 4096  # a larger `count` is not a reservation this rule can reason about
ALL = None  # a service on every card


def check(compose: Compose, context: Context) -> list[Finding] | None:
    served = [s for s in compose.services if s.engine in (VLLM, SGLANG)]
    if not served:
        return None
    findings = [f for s in served for f in _width(compose, s)]
    if len(served) > 1:
        findings += _shared(compose, served, context)
    return findings


def cards(service: Service) -> frozenset[str] | None:
    """The GPUs a service uses: explicit ids, ``count: N`` (cards 0..N-1), or ALL."""
    for device in service.devices:
        if device.get("device_ids"):
            return frozenset(device["device_ids"])
        count = str(device.get("count", "all"))
        cards_counted = to_count(count, MAX_GPUS)
        if cards_counted is not None:
            return frozenset(str(i) for i in range(cards_counted))
    visible = service.environment.get("NVIDIA_VISIBLE_DEVICES")
    if visible is not None and visible.value and visible.value not in ("all", "void"):
        return frozenset(v.strip() for v in visible.value.split(",") if v.strip())
    return ALL


def _width(compose: Compose, service: Service) -> list[Finding]:
    reserved = cards(service)
    tp, pp = service.knob("tensor_parallel_size"), service.knob("pipeline_parallel_size")
    if reserved is ALL or (tp is not None and tp.number is None):
        return []
    width = int(tp.number) if tp is not None and tp.number is not None else 1
    stages = int(pp.number) if pp and pp.number else 1
    copies = data_parallel(service.knobs) if service.engine == SGLANG else 1
    if copies is None or width * stages * copies == len(reserved):
        return []
    line, column = (tp.line, tp.column) if tp else (service.line, 1)
    return [
        RULE.at(
            compose.path,
            line,
            column,
            f"service {service.name} runs TP={width}"
            + (f" × PP={stages}" if stages > 1 else "")
            + (f" × DP={copies}" if copies > 1 else "")
            + f" on {width * stages * copies} GPUs but reserves {len(reserved)} "
            f"({','.join(sorted(reserved))})",
            knob="tensor_parallel_size",
            hint="make the parallel size match the reserved devices",
        )
    ]


def _shared(compose: Compose, services: list[Service], context: Context) -> list[Finding]:
    """Per card, the utilisations of the services on it must sum to one card or less; each
    group of services that overflows a card is reported once, at its first service."""
    used = [(s, cards(s), s.knob("gpu_memory_utilization")) for s in services]
    named = sorted(set[str]().union(*(c for _, c, _ in used if c is not ALL)))
    findings, seen = [], set()
    for card in named or [""]:  # no card named: every service is on every card (ALL)
        group = [(s, u) for s, c, u in used if c is ALL or card in c]
        key = tuple(s.name for s, _ in group)
        if len(group) < 2 or key in seen:
            continue
        seen.add(key)
        unsized = [s.name for s, _ in group if _share_unknown(s)]
        if unsized:
            context.remark(
                RULE,
                compose.path,
                f"{', '.join(unsized)} set no --mem-fraction-static (SGLang sizes it at "
                f"start-up): the shares of {', '.join(key)} on shared GPUs are not summed",
            )
            continue
        findings += _overflow(compose, group)
    return findings


def _overflow(compose: Compose, group: list[tuple[Service, Knob | None]]) -> list[Finding]:
    total = sum(_util(u) for _, u in group)
    if total <= 1.0 + 1e-9:
        return []
    parts = " + ".join(f"{s.name} {_util(u):g}" for s, u in group)
    return [
        RULE.at(
            compose.path,
            group[0][0].line,
            1,
            f"services sharing GPUs ask for {parts} = {total:.2f} of a card",
            knob="gpu_memory_utilization",
            hint="lower their utilisations so they sum to 1.0 or less, "
            "or give them separate devices",
        )
    ]


def _share_unknown(service: Service) -> bool:
    """SGLang without --mem-fraction-static picks its share from the card's memory."""
    return service.engine == SGLANG and service.knob("gpu_memory_utilization") is None


def _util(knob) -> float:
    return knob.number if knob is not None and knob.number is not None else 0.9


RULE: Rule[RuleOptions] = Rule(
    id="K004",
    name="gpu-accounting",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
