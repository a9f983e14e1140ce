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
from typing import TYPE_CHECKING, Any, NamedTuple

from ..sources.compose.engines.kvtypes import same_kv
from ..sources.compose.engines.vllm import kv_dtype
from .figures import (
    Figure,
    Setting,
    comment_figures,
    elsewhere,
    measured_at,
    setting,
    tokens,
)
from .kv import Pool, bytes_per_token, computed_pool, gpu_memory, per_card, rescaled_pool
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


class Search(NamedTuple):
    """The pool a service gets, whether its comments quote any pool figure at all, and why
    each quoted figure is not this service's pool (when none is)."""

    pool: Pool | None
    quoted: bool = False
    left_out: tuple[str, ...] = ()


class Capacity(NamedTuple):
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


class KvSize(NamedTuple):
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
    found = compose_figures(compose, names)
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


# -- the pool a service gets from the figures -------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    """What rescaling a pool needs: whole-model KV bytes per token by dtype, KV heads, and the
    memory of one GPU with how a message names it (``24 GiB (3090, line 4)``)."""

    bytes_per_token: dict[str, int] = field(default_factory=dict)
    kv_heads: int | None = None
    gpu: tuple[float, str] | None = None


def compose_figures(compose: Compose, names: frozenset[str] = frozenset()) -> list[Figure]:
    """A compose's figures in the order to use them: the header's, then the other comments';
    pools in tokens before concurrencies. ``names`` as for ``figures.find_figures``."""
    found: list[Figure] = []
    read = comment_figures(compose, names)
    for figures in (read.header, read.other):
        found += [f for f in figures if f.kind == "pool"]
        found += [f for f in figures if f.kind != "pool"]
    return found


def applicable_pool(
    figures: list[Figure], shipped: Setting, now: Setting, sizes: Sizes
) -> tuple[Pool | None, list[str]]:
    """The first figure's pool that applies to a service running ``now`` (shipped as
    ``shipped``), one that needs no rescaling first; else why none applies, figure by figure."""
    rescaled, reasons = None, []
    for figure in figures:
        outcome = _apply(figure, shipped, now, sizes)
        if isinstance(outcome, str):
            reasons.append(outcome)
        elif not outcome.note:
            return outcome, []
        else:
            rescaled = rescaled or outcome
    return rescaled, [] if rescaled else reasons


def _apply(figure: Figure, shipped: Setting, now: Setting, sizes: Sizes) -> Pool | str:
    quoted = f"{figure.text} (line {figure.line})"
    other = elsewhere(figure, shipped)
    if other is not None:
        ours = _ours(other.kind, shipped)
        return f"{quoted} was measured elsewhere (`{other.text}`){ours}"
    measured = measured_at(figure, shipped)
    count = tokens(figure, measured)
    if count is None:
        return f"{quoted} names no context to multiply"
    if (measured.tp, measured.gpus) != (now.tp, now.gpus):
        return f"{quoted} was measured at TP={measured.tp}, and the service runs TP={now.tp}"
    return _rescaled(
        Pool(count, "measured", figure.line, figure.text), quoted, measured, now, sizes
    )


def _ours(kind: str, shipped: Setting) -> str:
    """``, and the compose ships TP=4`` for a qualifier that contradicts it."""
    if kind == "tp":
        return f", and the compose ships TP={shipped.tp}"
    if kind == "gpus":
        return f", and the compose ships {shipped.gpus} GPU{'s' if shipped.gpus != 1 else ''}"
    if kind == "context":
        return f", and the compose ships max-model-len {shipped.context:,}"
    return ""


def _rescaled(pool: Pool, quoted: str, measured: Setting, now: Setting, sizes: Sizes) -> Pool | str:
    """The pool at the service's utilisation and KV dtype, or why it cannot be known. Memory
    added by the utilisation is per card, so it needs the per-card split (KV heads at TP > 1);
    a KV dtype alone scales the pool by the ratio of bytes per token."""
    old_kv, new_kv = measured.kv or now.kv, now.kv or measured.kv
    new_util = now.util or measured.util or 0.0
    old_util = measured.util or new_util
    util_moved = old_util != new_util
    kv_moved = bool(old_kv and new_kv and not same_kv(old_kv, new_kv))
    if not (util_moved or kv_moved):
        return pool
    old_size = bytes_per_token(sizes.bytes_per_token, old_kv)
    new_size = bytes_per_token(sizes.bytes_per_token, new_kv)
    tp = now.tp or 1
    lacking = [] if sizes.gpu or not util_moved else ["the GPU's memory"]
    lacking += [] if old_size and new_size else ["KV bytes per token"]
    lacking += ["KV heads"] if util_moved and tp > 1 and not sizes.kv_heads else []
    if lacking or not (old_size and new_size):
        at = [f"util {old_util:g} and the service runs {new_util:g}"] if util_moved else []
        at += [f"{old_kv} KV and the service runs {new_kv}"] if kv_moved else []
        return (
            f"{quoted} was measured at {' and '.join(at)}; "
            f"without {' and '.join(lacking)} it is not comparable"
        )
    steps = [f"util {old_util:g} to {new_util:g}"] if util_moved else []
    steps += [f"{old_kv} KV to {new_kv}"] if kv_moved else []
    if not util_moved:
        count = rescaled_pool(pool.tokens, 0, 0, 0, old_size, new_size)
        note = f"rescaled from {steps[0]}: {old_size:,} → {new_size:,} B/token"
        return pool._replace(tokens=count, note=note)
    assert sizes.gpu is not None
    old_card = per_card(old_size, tp, sizes.kv_heads)
    new_card = per_card(new_size, tp, sizes.kv_heads)
    count = rescaled_pool(pool.tokens, old_util, new_util, sizes.gpu[0], old_card, new_card)
    how = [f"{new_util - old_util:+g} × {sizes.gpu[1]}"]
    how += [f"{old_card:,.0f} → {new_card:,.0f}" if kv_moved else f"at {new_card:,.0f}"]
    note = f"rescaled from {' and from '.join(steps)}: {', '.join(how)} B/token/card"
    return pool._replace(tokens=count, note=note)
