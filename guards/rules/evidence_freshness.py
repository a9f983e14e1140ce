"""C005 evidence-freshness: a claim in force was measured on an engine one of its composes still ships.

Why: a claim lives on its measurements, and a measurement holds for the engine it was taken
on. When the composes move to a new image (``v0.27.1`` -> ``v0.28.0``), decode rates,
acceptance and preemption behaviour may all change, and a claim measured only on the old pin
is unverified where operators run it. Each evidence entry records the ``engine`` it was
measured on (an image or a tag; ``guards claims evidence add`` writes it); when every compose
the claim applies to (its ``applies_to``, the same scope the knob guards use) ships an image
whose tag matches none of them, the claim is flagged with both pins named. Tags compare
without the image name and a leading ``v`` (``vllm/vllm-openai:v0.27.1`` = ``v0.27.1`` =
``0.27.1``); the image a compose ships by default counts, not an operator's override. Only
claims in force are judged (active and disputed: a retracted or superseded claim needs no
verification), and only when an evidence entry records an engine (older entries that do not
are not judged; ``--verbose`` says so). With ``require-evidence = true`` a claim in force
with no evidence at all is flagged too. A warning: it asks for a measurement, it does not say
the claim is wrong (``severity = "error"`` makes it fail the run).

Bad:
    --- claims.yaml
    claims:
      - id: spec-tax-35387
        title: Spec decode pays a steady tax that scales with drafter depth
        status: active
        evidence:
          - {source: "vllm#35387", engine: v0.27.1, date: 2026-09-01}
        applies_to: {model: qwen3.8-27b, engine: vllm}
    --- composes/dual.yml
    services:
      vllm:
        image: vllm/vllm-openai:v0.28.0
        command: [--served-model-name, qwen3.8-27b]

Finds:
    claims.yaml:2:1: C005 [warning] claim spec-tax-35387 is unverified on the shipped pin: its evidence was measured on v0.27.1, but every compose it applies to ships another engine: vllm/vllm-openai:v0.28.0 (composes/dual.yml:3)

Good:
    --- claims.yaml
    claims:
      - id: spec-tax-35387
        title: Spec decode pays a steady tax that scales with drafter depth
        status: active
        evidence:
          - {source: "vllm#35387", engine: v0.27.1, date: 2026-09-01}
          - {source: "re-measured on the new pin", engine: v0.28.0, date: 2026-11-20}
        applies_to: {model: qwen3.8-27b, engine: vllm}
    --- composes/dual.yml
    services:
      vllm:
        image: vllm/vllm-openai:v0.28.0
        command: [--served-model-name, qwen3.8-27b]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..facts.scope import applies
from ..findings import Finding, Severity
from ..sources.compose.engines import UNKNOWN, Knob
from .base import Context, Rule
from .options import RuleOptions, option

if TYPE_CHECKING:
    from ..sources.registry import Claim

SHOWN = 3  # composes named per pin


class Options(RuleOptions):
    require_evidence: bool = option(
        False, description="Also flag a claim in force that has no evidence entry at all."
    )


def check(claim: Claim, context: Context) -> list[Finding] | None:
    if claim.is_withdrawn:
        return None
    registry = context.estate.registry.path
    if not claim.evidence:
        if not context.options(RULE).require_evidence:
            return None
        return [
            RULE.at(
                registry,
                claim.line,
                1,
                f"claim {claim.id} has no evidence: nothing records what it was measured on",
                claim=claim.id,
                hint="record a measurement: `guards claims evidence add "
                f"{claim.id} --scrape BEFORE AFTER --compose FILE`",
            )
        ]
    measured = {engine_pin(e.engine): e.engine for e in claim.evidence if e.engine}
    if not measured:
        context.remark(
            RULE, registry, f"claim {claim.id}: no evidence entry records its engine; not checked"
        )
        return None
    shipped = _shipped(claim, context)
    if not shipped:
        context.remark(RULE, registry, f"claim {claim.id}: no compose it applies to names an image")
        return None
    if any(image_pin(image) in measured for image, _ in shipped):
        return []
    return [_stale(claim, registry, list(measured.values()), shipped)]


def _shipped(claim: Claim, context: Context) -> list[tuple[str, str]]:
    """(image, where) for every engine service, as shipped, of the composes the claim
    applies to."""
    found = []
    for compose in context.estate.composes:
        for service in compose.shipped:
            knob = service.knob("image")
            if service.engine == UNKNOWN or not _named(knob):
                continue
            if applies(claim, compose, service):
                assert knob is not None and knob.value is not None
                found.append((knob.value, f"{compose.path}:{knob.line}"))
    return found


def _named(knob: Knob | None) -> bool:
    return knob is not None and bool(knob.value)


def _stale(
    claim: Claim, registry: str, engines: list[str], shipped: list[tuple[str, str]]
) -> Finding:
    by_pin: dict[str, list[str]] = {}
    for image, where in shipped:
        by_pin.setdefault(image, []).append(where)
    pins = "; ".join(
        f"{image} ({', '.join(places[:SHOWN])}{', …' if len(places) > SHOWN else ''})"
        for image, places in by_pin.items()
    )
    first = shipped[0][1].rsplit(":", 1)[0]
    return RULE.at(
        registry,
        claim.line,
        1,
        f"claim {claim.id} is unverified on the shipped pin: its evidence was measured on "
        f"{', '.join(engines)}, but every compose it applies to ships another engine: {pins}",
        claim=claim.id,
        hint="measure it on the shipped pin and record it: `guards claims evidence add "
        f"{claim.id} --scrape BEFORE AFTER --compose {first}` (or retract it if it no longer "
        "holds)",
    )


def image_pin(image: str) -> str:
    """The tag (or digest) of an image reference, normalised: ``vllm/vllm-openai:v0.27.1``
    -> ``0.27.1``; no tag is ``latest``."""
    if "@" in image:
        return image.rsplit("@", 1)[1].lower()
    name = image.rsplit("/", 1)[-1]
    return _version(name.partition(":")[2] or "latest")


def engine_pin(engine: str) -> str:
    """What an evidence entry's ``engine`` pins: an image reference's tag, or the version
    itself (``v0.27.1``, ``vllm 0.27.1``)."""
    words = engine.split()
    last = words[-1] if words else ""
    return image_pin(last) if "/" in last or ":" in last or "@" in last else _version(last)


def _version(tag: str) -> str:
    tag = tag.lower()
    return tag[1:] if tag[:1] == "v" and tag[1:2].isdigit() else tag


RULE = Rule(
    id="C005",
    name="evidence-freshness",
    family="claims",
    targets=("claim",),
    severity=Severity.WARNING,
    check=check,
    doc=__doc__,
    options=Options,
)
