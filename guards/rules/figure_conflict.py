"""D007 figure-conflict: a header gives each KV-pool or concurrency figure one value per configuration.

Why: operators size ``--max-num-seqs``, the context and the utilisation by the pool and
concurrency figures in the header. When one header quotes the KV pool as 806,821 tokens in one
field and 944K in another, or the concurrency as 2.36× and 1.13×, one of them is stale - a
re-measurement updated one place and not the other - and the reader cannot tell which. Two
figures conflict when they are the same kind (a pool in tokens, a concurrency), nothing said
beside them sets them apart (GPUs or TP, utilisation, context, KV dtype; what a figure leaves
unsaid is what the compose ships), and they differ by more than the precision either was
written with: 806,821 agrees with 806K and with ~0.8M (a K may mean 1000 or 1024). Figures
qualified apart (``at 0.90: KV pool 806,821 tok; at 0.95: KV pool 944K tok``) are two
configurations, not a conflict.

Bad:
    # Profile (at-a-glance):
    #   KV:        fp8 — KV pool 806,821 tok
    #   Max ctx:   262144 (KV pool ~944K tok)
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "262144", --kv-cache-dtype, fp8]

Finds:
    composes/example.yml:3:33: D007 the header quotes the KV pool as 944,000 tokens here (KV pool ~944K tok) and as 806,821 tokens on line 2 (KV pool 806,821 tok), for the same configuration

Good:
    # Profile (at-a-glance):
    #   KV:        fp8 — KV pool 806,821 tok at util 0.90
    #   Max ctx:   262144 (KV pool ~944K tok at util 0.95)
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "262144", --kv-cache-dtype, fp8]
"""

from __future__ import annotations

from ..facts.figures import (
    Figure,
    Setting,
    comment_figures,
    measured_at,
    same_setting,
    setting,
)
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.compose.engines import VLLM
from ..sources.numbers import readings
from .base import Context, Rule
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding] | None:
    found = comment_figures(compose, context.estate.compose_names).header
    figures = [f for f in found if not f.qualifier("source")]
    kinds = [f.kind for f in figures]
    if not any(kinds.count(kind) > 1 for kind in set(kinds)):
        return None
    shipped = _shipped(compose)
    findings = []
    for index, figure in enumerate(figures):
        alike = [e for e in figures[:index] if _comparable(e, figure, shipped)]
        if alike and not any(_agree(e, figure) for e in alike):
            findings.append(_finding(compose, alike[0], figure))
    return findings


def _shipped(compose: Compose) -> Setting:
    """What the header describes: the shipped vLLM service, else the first service."""
    services = sorted(compose.shipped, key=lambda s: s.engine != VLLM)
    return setting(services[0]) if services else Setting()


def _comparable(first: Figure, second: Figure, shipped: Setting) -> bool:
    """The same kind of figure, for the same configuration."""
    return first.kind == second.kind and same_setting(
        measured_at(first, shipped), measured_at(second, shipped)
    )


def _agree(first: Figure, second: Figure) -> bool:
    """Equal within the precision either was written with, reading a K as 1000 or 1024."""
    slack = max(first.unit, second.unit) * (1 + 1e-9)
    return any(
        abs(a - b) <= slack * max(a / first.value, b / second.value)
        for a in readings(first.value, first.scaled)
        for b in readings(second.value, second.scaled)
    )


def _finding(compose: Compose, earlier: Figure, figure: Figure) -> Finding:
    what = "the KV pool" if figure.kind == "pool" else "the concurrency"
    return RULE.at(
        compose.path,
        figure.line,
        figure.column,
        f"the header quotes {what} as {_value(figure)} here ({figure.text}) and as "
        f"{_value(earlier)} on line {earlier.line} ({earlier.text}), for the same configuration",
        hint="correct the stale figure, or say beside each what it was measured at "
        "(TP=2, @0.90, at 128K, fp8 KV)",
        end_column=figure.end_column,
    )


def _value(figure: Figure) -> str:
    if figure.kind == "pool":
        return f"{figure.value:,.0f} tokens"
    return f"{figure.value:g}×"


RULE: Rule[RuleOptions] = Rule(
    id="D007",
    name="figure-conflict",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
