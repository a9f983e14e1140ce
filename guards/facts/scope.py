"""Which registry claims apply to a compose service, and the facts they hold for it.

A guard's threshold traces to an *active* claim whose ``applies_to`` matches the service:
every field given must match (model, engine, topology, paths). When that claim is retracted,
its facts stop applying.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from ..sources.compose.engines import LLAMACPP, SGLANG, VLLM
from ..sources.numbers import to_count
from ..sources.patterns import glob_match

if TYPE_CHECKING:
    from ..sources.compose.compose import Compose, Service
    from ..sources.registry import Claim, Registry

TOPOLOGIES = {1: "single", 2: "dual", 4: "multi4", 8: "multi8"}
ENGINE_NAMES = {
    "llamacpp": LLAMACPP,
    "llama-cpp": LLAMACPP,
    "ik-llama": LLAMACPP,
    "ik_llama": LLAMACPP,
    "ik-llama.cpp": LLAMACPP,
    "beellama": LLAMACPP,
    "sglang": SGLANG,
}
METHODS = {
    "draft-mtp": "mtp",
    "mtp": "mtp",
    "dflash": "dflash",
    "dflash2": "dflash",
    "draft-dspark": "dspark",
    "dspark": "dspark",
    "draft_model": "draft_model",
    "eagle": "eagle",
    "eagle3": "eagle3",
    "ngram": "ngram",
    "nextn": "mtp",  # SGLang's --speculative-algorithm names
    "standalone": "draft_model",
}


class Fact(NamedTuple):
    value: Any
    claim: Claim


def topology(compose: Compose, service: Service) -> str | None:
    """single | dual | multi4 | multi8, from the body first, then the path."""
    count = _gpu_count(service)
    if count in TOPOLOGIES:
        return TOPOLOGIES[count]
    parts = compose.path.split("/")
    return next((p for p in parts if p in TOPOLOGIES.values()), None)


def _gpu_count(service: Service) -> int | None:
    if service.engine in (VLLM, SGLANG):
        value = service.value("tensor_parallel_size") or "1"  # both run TP=1 by default
        return to_count(value)
    split = service.value("tensor_split")
    if split:
        return len([part for part in re.split(r"[,/]", split) if part.strip()])
    gpus = service.value("gpus")
    return to_count(gpus)


def method(name: str | None) -> str | None:
    return METHODS.get(name.lower(), name.lower()) if name else None


def model_names(compose: Compose, service: Service) -> list[str]:
    names = [service.value("served_model_name"), service.value("model")]
    field = compose.header.field("Model")
    if field:
        names.append(field.first_value)
    return [n.lower() for n in names if n]


def applies(claim: Claim, compose: Compose, service: Service) -> bool:
    scope = claim.applies_to
    if scope.model and not any(
        m.lower() in name for m in scope.model for name in model_names(compose, service)
    ):
        return False
    if scope.engine and service.engine not in {
        ENGINE_NAMES.get(e.lower(), e.lower()) for e in scope.engine
    }:
        return False
    if scope.topology and topology(compose, service) not in scope.topology:
        return False
    return not scope.paths or any(glob_match(compose.path, p) for p in scope.paths)


def fact(registry: Registry, compose: Compose, service: Service, name: str) -> Fact | None:
    """The first active, applicable claim that sets ``facts.<name>``."""
    for claim in registry.claims:
        if claim.status != "active" or not applies(claim, compose, service):
            continue
        value = getattr(claim.facts, name)
        if value not in (None, {}, []):
            return Fact(value, claim)
    return None


def depth_limit(
    registry: Registry, compose: Compose, service: Service, drafter: str | None
) -> tuple[int, Claim] | None:
    """The deepest validated depth for this drafter method on this topology."""
    wanted, where = method(drafter), topology(compose, service)
    for claim in registry.claims:
        if claim.status != "active" or not applies(claim, compose, service):
            continue
        for limit in claim.facts.drafter_depth_max:
            if method(limit.method) == wanted and limit.topology in (None, where):
                return limit.depth, claim
    return None
