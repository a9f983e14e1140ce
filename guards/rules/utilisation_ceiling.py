"""K001 utilisation-ceiling: `--gpu-memory-utilization` stays at or under its ceiling.

Why: the knob is a ceiling on what vLLM claims, not a target. Higher means a bigger KV pool and
less slack for transient prefill peaks: on qwen3.8-27b 0.95 OOMed at 16K prompts where the
shipped 0.90 did not. The ceiling comes from an active registry claim that applies to the
compose (``facts.gpu_memory_utilization_max``, quoted with its reason); without one, values
above ``default-ceiling`` fail (option, default 0.94: 0.95 and up is an error out of the box).
Checked on the effective value, so ``--env-file`` shows what an operator's overlay does.

Bad:
    --- claims.yaml
    claims:
      - id: qwen38-27b-util-ceiling
        title: 0.90 is the utilisation ceiling for qwen3.8-27b
        status: active
        reason: The knob is a ceiling on what vLLM claims; higher leaves less slack for prefill.
        applies_to: {model: qwen3.8-27b}
        facts: {gpu_memory_utilization_max: 0.90}
    --- composes/dual.yml
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--served-model-name, qwen3.8-27b, --gpu-memory-utilization, "0.95"]

Finds:
    composes/dual.yml:4:75: K001 gpu-memory-utilization 0.95 is above the ceiling 0.90 (claim qwen38-27b-util-ceiling, claims.yaml:2: The knob is a ceiling on what vLLM claims; higher leaves less slack for prefill.)

Good:
    --- claims.yaml
    claims:
      - id: qwen38-27b-util-ceiling
        title: 0.90 is the utilisation ceiling for qwen3.8-27b
        status: active
        reason: The knob is a ceiling on what vLLM claims; higher leaves less slack for prefill.
        applies_to: {model: qwen3.8-27b}
        facts: {gpu_memory_utilization_max: 0.90}
    --- composes/dual.yml
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--served-model-name, qwen3.8-27b, --gpu-memory-utilization, "0.90"]
"""

from __future__ import annotations

from pydantic import Field

from ..facts.scope import fact
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.compose.engines import SGLANG, VLLM, Knob
from .base import Context, Rule, provenance, summary
from .options import RuleOptions


class Options(RuleOptions):
    default_ceiling: float = Field(
        0.94, gt=0, le=1, description="The ceiling when no registry claim sets one for the model."
    )


def check(compose: Compose, context: Context) -> list[Finding] | None:
    knobs = [
        (s, knob)
        for s in compose.services
        if s.engine in (VLLM, SGLANG) and (knob := s.knob("gpu_memory_utilization")) is not None
    ]
    if not knobs:
        return None
    default = context.options(RULE).default_ceiling
    findings = []
    for service, knob in knobs:
        value = knob.number
        if value is None:
            continue
        ceiling = fact(context.estate.registry, compose, service, "gpu_memory_utilization_max")
        limit = ceiling.value if ceiling else default
        if value <= limit + 1e-9:
            continue
        if ceiling:
            claim = ceiling.claim
            why = f": {summary(claim.reason)}" if claim.reason else ""
            source = f"claim {claim.id}, {context.estate.registry.path}:{claim.line}{why}"
        else:
            source = f"the default ceiling {default:g}; no registry claim sets one for this model"
        findings.append(
            RULE.at(
                compose.file(knob.path),
                knob.line,
                knob.column,
                f"{_flag(knob)} {knob.value}{provenance(knob)} is above the ceiling "
                f"{limit:.2f} ({source})",
                knob="gpu_memory_utilization",
                claim=ceiling.claim.id if ceiling else None,
                hint=f"ship {limit:.2f} or lower; a bigger KV pool is not worth prefill OOMs",
            )
        )
    return findings


def _flag(knob: Knob) -> str:
    """The flag as the engine spells it: SGLang's --mem-fraction-static is the same ceiling."""
    return (knob.flag or "--gpu-memory-utilization").lstrip("-")


RULE = Rule(
    id="K001",
    name="utilisation-ceiling",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
