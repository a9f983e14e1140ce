"""How many sequences a vLLM service's KV pool holds against its ``--max-num-seqs``.

The pool is the first measured figure in the compose's comments that applies to the service as
it runs (``figures.py`` reads them and says why each other one does not apply), else one
computed from registry facts and the GPU's memory (``kv.py``); a sequence is max-model-len
tokens, or the tokens an estate plans per sequence. Both the K002 rule and ``guards evidence
read --compose`` need these numbers: they live here, as functions of the compose, the service,
the registry and plain values, so the two cannot come to different counts. The rule turns
them into findings; evidence sets them beside the engine's preemptions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..sources.compose.engines.vllm import kv_dtype
from .figures import Sizes, applicable_pool, compose_figures, compose_names, setting
from .kv import Pool, bytes_per_token, computed_pool, gpu_memory, per_card
from .scope import fact

if TYPE_CHECKING:
    from ..sources.compose.compose import Compose, Service
    from ..sources.registry import Registry


@dataclass(frozen=True)
class Planning:
    """What the estate states where no active registry claim does (memory figures for the
    computed pool), and the tokens it plans per sequence: K002's option values, plain."""

    gpu_memory_gib: float | None = None
    weights_gib: float | None = None
    reserved_gib: float | None = None
    kv_heads: int | None = None
    kv_bytes_per_token: Mapping[str, int] = field(default_factory=dict)
    tokens_per_sequence: float | None = None

    @classmethod
    def of(cls, options: object | None) -> Planning:
        """The values of these names on a rule's options (the defaults where it has none), so
        facts never depend on the rule's options class."""
        default = cls()
        return cls(
            **{f.name: getattr(options, f.name, getattr(default, f.name)) for f in fields(cls)}
        )


@dataclass(frozen=True)
class Search:
    """The pool a service gets, whether its comments quote any pool figure at all, and why
    each quoted figure is not this service's pool (when none is)."""

    pool: Pool | None
    quoted: bool = False
    left_out: tuple[str, ...] = ()


@dataclass(frozen=True)
class Capacity:
    """A vLLM service's max-num-seqs and max-model-len against the pool it gets."""

    seqs: int
    length: int  # max-model-len
    search: Search
    per_sequence: int  # tokens one sequence takes
    label: str  # where that number comes from: "the full context", "tokens-per-sequence", ...

    @property
    def pool(self) -> Pool | None:
        return self.search.pool

    @property
    def holds(self) -> int:
        """The sequences the pool holds (0 without a pool)."""
        return self.search.pool.tokens // self.per_sequence if self.search.pool else 0


@dataclass(frozen=True)
class KvSize:
    """KV bytes per token for the service's KV dtype, and how they split over its cards."""

    dtype: str | None
    per_token: int  # whole model
    tp: int
    kv_heads: int | None

    def card(self, tokens: int) -> float:
        """Bytes of ``tokens`` tokens of KV on one card."""
        return per_card(self.per_token * tokens, self.tp, self.kv_heads)


def capacity(
    compose: Compose,
    service: Service,
    registry: Registry,
    names: frozenset[str],
    planning: Planning,
) -> Capacity | None:
    """What the service's pool holds; None when it sets no max-num-seqs or max-model-len.
    ``names`` are how comments name the estate's composes (``figures.estate_names``)."""
    seqs, length = whole_number(service, "max_num_seqs"), whole_number(service, "max_model_len")
    if seqs is None or length is None:
        return None
    search = kv_pool(compose, service, registry, names, planning)
    per_sequence, label = sequence_tokens(planning.tokens_per_sequence, length)
    return Capacity(seqs, length, search, per_sequence, label)


def whole_number(service: Service, name: str) -> int | None:
    """A knob's value as a whole number of at least 1 (max-num-seqs, max-model-len)."""
    knob = service.knob(name)
    number = knob.number if knob else None
    return int(number) if number is not None and number >= 1 else None


def sequence_tokens(planned: float | None, length: int) -> tuple[int, str]:
    """Tokens per sequence at max-model-len ``length`` and where that number comes from:
    ``planned`` is a count, a fraction of the context (at most 1), or None for all of it."""
    if planned is None or planned == 1:
        return length, "the full context"
    if planned < 1:
        return max(1, int(planned * length)), f"tokens-per-sequence {planned:g} × the context"
    if planned >= length:
        return length, "the full context"
    return int(planned), "tokens-per-sequence"


def kv_pool(
    compose: Compose,
    service: Service,
    registry: Registry,
    names: frozenset[str],
    planning: Planning,
) -> Search:
    """The pool measured in the comments that applies to the service as it runs, else the
    one computed from the registry's facts."""
    shipped = next((s for s in compose.shipped if s.name == service.name), service)
    sizes = Sizes(
        figure(registry, compose, service, "kv_bytes_per_token", planning) or {},
        figure(registry, compose, service, "kv_heads", planning),
        card_memory(compose, service, registry, planning),
    )
    found = compose_figures(compose.comments, names, compose_names(compose.path))
    pool, reasons = applicable_pool(found, setting(shipped), setting(service), sizes)
    if pool is None:
        pool = computed(compose, service, registry, planning)
    return Search(pool, bool(found), tuple(reasons))


def computed(
    compose: Compose, service: Service, registry: Registry, planning: Planning
) -> Pool | None:
    """The pool from the GPU's memory at the utilisation, less weights and reserved memory."""
    weights = figure(registry, compose, service, "weights_gib", planning)
    reserved = figure(registry, compose, service, "reserved_gib", planning) or 0.0
    util = service.knob("gpu_memory_utilization")
    size = kv_size(compose, service, registry, planning)
    memory = card_memory(compose, service, registry, planning)
    if not (size and size.per_token and memory and weights and util and util.number):
        return None
    card = size.card(1)
    tokens = computed_pool(memory[0], util.number, weights, reserved, size.tp, card)
    text = (
        f"computed: {memory[1]} × {util.number:g} − {weights:g} GiB weights / TP {size.tp} − "
        f"{reserved:g} GiB reserved, at {card:,.0f} B/token/card"
    )
    return Pool(tokens, "computed", None, text)


def kv_size(
    compose: Compose, service: Service, registry: Registry, planning: Planning
) -> KvSize | None:
    """The service's KV bytes per token, when the registry or the estate gives them."""
    table = figure(registry, compose, service, "kv_bytes_per_token", planning)
    dtype = kv_dtype(service.value("kv_cache_dtype") or "auto", service.value("dtype"))
    size = bytes_per_token(table, dtype) if table else None
    if size is None:
        return None
    tp = whole_number(service, "tensor_parallel_size") or 1
    return KvSize(dtype, size, tp, figure(registry, compose, service, "kv_heads", planning))


def card_memory(
    compose: Compose, service: Service, registry: Registry, planning: Planning
) -> tuple[float, str] | None:
    """The memory of one GPU and how it reads in a message: the GPU model the header's
    Topology names, else a registry fact, else the estate's figure."""
    field_ = compose.header.field("Topology")
    named = gpu_memory(field_.value) if field_ else None
    if named and field_:
        return named[0], f"{named[0]:g} GiB ({named[1]}, line {field_.line})"
    memory = figure(registry, compose, service, "gpu_memory_gib", planning)
    return (memory, f"{memory:g} GiB") if memory else None


def figure(
    registry: Registry, compose: Compose, service: Service, name: str, planning: Planning
) -> Any:
    """A registry fact for the service, else the estate's value of that name."""
    found = fact(registry, compose, service, name)
    return found.value if found else getattr(planning, name)
