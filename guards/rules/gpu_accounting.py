"""K004 gpu-accounting: services sharing GPUs fit on them; TP × PP matches the reserved GPUs.

Why: two vLLM services on the same card each claim their ``--gpu-memory-utilization`` share of
it; 0.6 + 0.6 cannot fit, and the second one dies at boot or - worse - boots and OOMs under load.
The shares of vLLM and SGLang services on NVIDIA cards are summed card by card, for services
that run together. Compose starts a service without ``profiles`` always and one with profiles
when one of them is enabled; by default (option ``together``) services that share no profile
are alternatives, one profile per hardware or variant. A service whose command replaces the
server (``sleep infinity``) runs no engine. A service is on the cards its device request names
(``device_ids``, ``count``, ``gpus:``, CDI names such as ``nvidia.com/gpu=0``), else on those of
``NVIDIA_VISIBLE_DEVICES``, else on every card when it asks for all (``count: all``, ``gpus:
all``, ``runtime: nvidia``); with none of these it is on no known card and not counted. A
service on a card that sets no utilisation counts vLLM's default 0.9; SGLang sizes its share at
start-up, so a group holding one is not summed. ROCm (``/dev/kfd``), Intel (``/dev/dri``) and
CPU engines (``--device cpu``, ``*-cpu`` images) are not counted. A Habana card runs one
process: two services that run together and name the same card in ``HABANA_VISIBLE_DEVICES``
are reported (when one names none, a remark says so). And when a service names its cards or a
count of them, tensor-parallel × pipeline-parallel (× SGLang's data-parallel) size must equal
that number: TP=4 on three reserved cards does not boot, TP=2 on four leaves two idle. What was
not counted, and why, is a remark under ``-v``.

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

from typing import Literal

from ..facts.accelerators import (
    HABANA,
    NVIDIA,
    Accelerator,
    Shared,
    accelerator,
    describe,
    shared_cards,
    together,
)
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import SGLANG, VLLM, Knob
from ..sources.compose.engines.sglang import data_parallel
from .base import Context, Rule, line_end
from .options import RuleOptions, option

Placed = list[tuple[Service, Accelerator]]


class Options(RuleOptions):
    together: Literal["profiles", "all", "one"] = option(
        "profiles",
        description="Which services run at the same time: `profiles` (services that share a "
        "profile, and those without profiles, which always start), `all` (every service) or "
        "`one` (one model server at a time: nothing is summed).",
    )
    budget: float = option(
        1.0,
        gt=0,
        le=1,
        strict=False,  # TOML gives `budget = 1` as an integer
        description="The share of a card the services on it may sum to, for an estate that "
        "keeps headroom.",
    )


def check(compose: Compose, context: Context) -> list[Finding] | None:
    placed = [(s, accelerator(s)) for s in compose.services if s.engine in (VLLM, SGLANG)]
    if not placed:
        return None
    options = context.options(RULE)
    findings = [f for s, a in placed for f in _width(compose, s, a)]
    if len(placed) > 1:
        gpus = [(s, a) for s, a in placed if a.kind == NVIDIA and a.on_cards]
        for shared in shared_cards(gpus, options.together):
            findings += _sum(compose, shared, options.budget, context)
        findings += _habana(compose, [(s, a) for s, a in placed if a.kind == HABANA], context)
        _uncounted(compose, placed, gpus, context)
    return findings


def _width(compose: Compose, service: Service, placed: Accelerator) -> list[Finding]:
    reserved = placed.cards
    tp, pp = service.knob("tensor_parallel_size"), service.knob("pipeline_parallel_size")
    if placed.kind not in (NVIDIA, HABANA) or (placed.kind == HABANA and not placed.named):
        return []
    if not reserved or (tp is not None and tp.number is None):
        return []
    width = int(tp.number) if tp is not None and tp.number is not None else 1
    stages = int(pp.number) if pp and pp.number else 1
    copies = data_parallel(service.knobs) if service.engine == SGLANG else 1
    if copies is None or width * stages * copies == len(reserved):
        return []
    path = compose.file(tp.path if tp else service.path)
    line, column, end = (
        (tp.line, tp.column, tp.end_column)
        if tp
        else (service.line, 1, _service_line_end(compose, service))
    )
    unit = "Habana cards" if placed.kind == HABANA else "GPUs"
    return [
        RULE.at(
            path,
            line,
            column,
            f"service {service.name} runs TP={width}"
            + (f" × PP={stages}" if stages > 1 else "")
            + (f" × DP={copies}" if copies > 1 else "")
            + f" on {width * stages * copies} {unit} but reserves {len(reserved)} "
            f"({','.join(sorted(reserved))})",
            knob="tensor_parallel_size",
            hint="make the parallel size match the reserved devices",
            end_column=end,
        )
    ]


def _sum(compose: Compose, shared: Shared, budget: float, context: Context) -> list[Finding]:
    """The utilisations of services on one card must sum to the budget or less; each group
    that overflows is reported once, at its first service."""
    names = [s.name for s in shared.services]
    unsized = [s.name for s in shared.services if _share_unknown(s)]
    if unsized:
        context.remark(
            RULE,
            compose.path,
            f"{', '.join(unsized)} set no --mem-fraction-static (SGLang sizes it at "
            f"start-up): the shares of {', '.join(names)} on shared GPUs are not summed",
        )
        return []
    group = [(s, s.knob("gpu_memory_utilization")) for s in shared.services]
    total = sum(_util(u) for _, u in group)
    if total <= budget + 1e-9:
        return []
    parts = " + ".join(f"{s.name} {_util(u):g}" for s, u in group)
    over = f", over the budget of {_text(budget)}" if budget < 1 else ""
    return [
        RULE.at(
            shared.services[0].file(compose.path),
            shared.services[0].line,
            1,
            f"services sharing GPUs ask for {parts} = {total:.2f} of a card{over}",
            knob="gpu_memory_utilization",
            hint=f"lower their utilisations so they sum to {_text(budget)} or less, "
            "or give them separate devices",
            end_column=_service_line_end(compose, shared.services[0]),
        )
    ]


def _habana(compose: Compose, placed: Placed, context: Context) -> list[Finding]:
    """A Habana card runs one process: two services that run together on a card both name."""
    options = context.options(RULE)
    named = [(s, a) for s, a in placed if a.named]
    unnamed = [
        s.name
        for s, a in placed
        if not a.named and any(together(s, o, options.together) for o, _ in placed if o is not s)
    ]
    if unnamed:
        context.remark(
            RULE,
            compose.path,
            f"Habana cards not named by {', '.join(unnamed)} (HABANA_VISIBLE_DEVICES all or "
            f"unset): whether {', '.join(s.name for s, _ in placed)} share a card is not checked",
        )
    return [
        RULE.at(
            shared.services[0].file(compose.path),
            shared.services[0].line,
            1,
            f"services {' and '.join(s.name for s in shared.services)} both take Habana card"
            f"{'s' if len(shared.cards or ()) > 1 else ''} {','.join(sorted(shared.cards or ()))}"
            ": a Habana card runs one process",
            hint="give each service its own cards in HABANA_VISIBLE_DEVICES",
            end_column=_service_line_end(compose, shared.services[0]),
        )
        for shared in shared_cards(named, options.together)
    ]


def _uncounted(compose: Compose, placed: Placed, gpus: Placed, context: Context) -> None:
    """Say which services beside ones on NVIDIA GPUs were not counted, and why."""
    mode = context.options(RULE).together
    counted = {id(s) for s, _ in gpus}
    for service, where in placed:
        if id(service) in counted or where.kind == HABANA:
            continue
        if any(together(service, other, mode) for other, _ in gpus):
            context.remark(
                RULE,
                compose.path,
                f"service {service.name} {describe(where)}; not counted with the services "
                "on NVIDIA GPUs",
            )


def _share_unknown(service: Service) -> bool:
    """SGLang without --mem-fraction-static picks its share from the card's memory."""
    return service.engine == SGLANG and service.knob("gpu_memory_utilization") is None


def _text(budget: float) -> str:
    return f"{budget:g}" if budget < 1 else "1.0"


def _util(knob: Knob | None) -> float:
    """vLLM's default utilisation for a service on a card that sets none."""
    return knob.number if knob is not None and knob.number is not None else 0.9


def _service_line_end(compose: Compose, service: Service) -> int:
    """The end of the line that names ``service`` (a finding about the whole service)."""
    return line_end(compose.lines_of(service.file(compose.path)), service.line)


RULE: Rule[Options] = Rule(
    id="K004",
    name="gpu-accounting",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
