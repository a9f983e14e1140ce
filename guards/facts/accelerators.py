"""Where a compose service runs, as Compose and the container runtimes decide it: which
accelerator (NVIDIA, Habana, ROCm, Intel, the CPU), which of its cards, and which services
start together.

Cards come from what gives a container a device: a device request (``deploy.resources.
reservations.devices``, the ``gpus:`` key, CDI names), a ``devices:`` file (``/dev/kfd``,
``/dev/dri``, ``/dev/nvidia0``), a visible-devices variable or a ``runtime:``. A service with
none of these is on no known card: it is not assumed to take every card. A service whose
engine runs on the CPU (``--device cpu``, a ``*-cpu`` image) is on no card whatever it
reserves.

Profiles follow the Compose specification: a service without ``profiles`` always starts, one
with profiles starts when one of them is enabled. Which profiles an operator enables together
is not in the compose; the default reading (``together = "profiles"``) is that one profile is
enabled at a time, so services that share no profile are alternatives (``cpu`` /
``gpu-nvidia`` / ``gpu-amd``), the common use of profiles. ``"all"`` says every service runs
together, ``"one"`` that the estate starts one model server at a time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..sources.numbers import to_count

if TYPE_CHECKING:
    from ..sources.compose.compose import Service

NVIDIA, HABANA, ROCM, INTEL, CPU, UNKNOWN = "nvidia", "habana", "rocm", "intel", "cpu", "unknown"
ALL = None  # every card of the kind
MAX_CARDS = 4096  # a larger `count` is not a reservation to reason about
CDI_VENDORS = {"nvidia.com": NVIDIA, "amd.com": ROCM, "intel.com": INTEL, "habana.ai": HABANA}
VISIBLE = {NVIDIA: "NVIDIA_VISIBLE_DEVICES", HABANA: "HABANA_VISIBLE_DEVICES"}
RUNTIMES = {"nvidia": NVIDIA, "habana": HABANA}
ENGINE_DEVICES = {"xpu": INTEL, "hpu": HABANA}
NO_CARD = ("void", "none")
CPU_IMAGE = re.compile(r"(?<![a-z0-9])cpu(?![a-z0-9])")
LABELS = {
    NVIDIA: "NVIDIA GPUs",
    HABANA: "Habana cards",
    ROCM: "AMD ROCm",
    INTEL: "an Intel GPU",
    CPU: "the CPU",
}


class Accelerator(NamedTuple):
    """What a service runs on. ``cards`` is ALL (every card of the kind), the ids, or empty
    (on no known card); ``named`` says the ids are written out, not a count; ``why`` is what
    says so, as written (``device_ids 0,1``, ``/dev/kfd``, ``--device cpu``)."""

    kind: str
    cards: frozenset[str] | None
    named: bool
    why: str
    rank: int = 0  # which evidence wins within a kind: requests and files, variables, runtime

    @property
    def on_cards(self) -> bool:
        return self.cards is ALL or bool(self.cards)


def accelerator(service: Service) -> Accelerator:
    cpu = _cpu(service)
    if cpu:
        return Accelerator(CPU, frozenset(), False, cpu)
    found = [*_requests(service), *_files(service.device_files), *_settings(service)]
    kinds = {a.kind for a in found}
    if len(kinds) > 1:  # /dev/dri also comes with ROCm cards and NVIDIA video work
        found = [a for a in found if a.kind != INTEL]
        kinds.discard(INTEL)
    if not kinds:
        return Accelerator(UNKNOWN, frozenset(), False, "")
    if len(kinds) > 1:
        return Accelerator(UNKNOWN, frozenset(), False, " and ".join(a.why for a in found))
    best = [a for a in found if a.rank == min(a.rank for a in found)]
    cards = _union(a.cards for a in best)
    named = cards is not ALL and all(a.named for a in best)
    return Accelerator(best[0].kind, cards, named, ", ".join(dict.fromkeys(a.why for a in best)))


def describe(placed: Accelerator) -> str:
    """What a service runs on, for a remark: ``runs on AMD ROCm (/dev/kfd)``."""
    if placed.kind == UNKNOWN and not placed.why:
        return "reserves no GPU and sets no visible-devices variable, so it is on no known card"
    if placed.kind == UNKNOWN:
        return f"asks for devices of different kinds ({placed.why})"
    if not placed.on_cards and placed.kind != CPU:
        return f"is on no card ({placed.why})"
    return f"runs on {LABELS[placed.kind]} ({placed.why})"


def together(a: Service, b: Service, mode: str = "profiles") -> bool:
    """Whether two services can run at the same time (see the module's docstring)."""
    if mode == "all":
        return True
    if mode == "one":
        return a is b
    return not a.profiles or not b.profiles or bool(set(a.profiles) & set(b.profiles))


def started_together(services: Sequence[Service], mode: str = "profiles") -> list[list[Service]]:
    """The sets of services that run at once: one per profile enabled alone (with the services
    that always start), all of them, or each alone."""
    if mode == "one":
        return [[s] for s in services]
    profiles = list(dict.fromkeys(p for s in services for p in s.profiles))
    if mode == "all" or not profiles:
        return [list(services)]
    return [[s for s in services if not s.profiles or p in s.profiles] for p in profiles]


class Shared(NamedTuple):
    """Services that run together on at least one common card, and those cards (ALL: each
    of them takes every card)."""

    services: tuple[Service, ...]
    cards: frozenset[str] | None


def shared_cards(placed: Sequence[tuple[Service, Accelerator]], mode: str) -> list[Shared]:
    """Per card, the services on it that run together; a group inside a larger one is left
    out (the larger one asks for at least as much)."""
    where = {id(s): a for s, a in placed if a.on_cards}
    groups: dict[tuple[str, ...], tuple[list[Service], set[str]]] = {}
    for run in started_together([s for s, _ in placed if id(s) in where], mode):
        named = sorted(set().union(*(where[id(s)].cards or () for s in run)))
        for card in named or [""]:  # no card named: each of them is on every card
            group = [s for s in run if _on(where[id(s)], card)]
            if len(group) > 1:
                groups.setdefault(tuple(s.name for s in group), (group, set()))[1].add(card)
    keys = [set(k) for k in groups]
    return [
        Shared(tuple(group), frozenset(cards) if "" not in cards else ALL)
        for key, (group, cards) in groups.items()
        if not any(set(key) < other for other in keys)
    ]


def _on(placed: Accelerator, card: str) -> bool:
    return placed.cards is ALL or card in placed.cards


def _union(cards: Iterable[frozenset[str] | None]) -> frozenset[str] | None:
    found: set[str] = set()
    for each in cards:
        if each is ALL:
            return ALL
        found |= each
    return frozenset(found)


def _cpu(service: Service) -> str:
    if service.engine_device == "cpu":
        return "--device cpu"
    image = service.knob("image")
    name = (image.value or image.raw).lower() if image is not None else ""
    return f"image {name}" if CPU_IMAGE.search(name.rsplit("/", 1)[-1]) else ""


def _requests(service: Service) -> list[Accelerator]:
    """Device requests: reservations under ``deploy`` and the ``gpus:`` key (an implicit
    ``gpu`` capability, so NVIDIA's driver by default)."""
    found = []
    for entry, implied in [(e, False) for e in service.devices] + [(e, True) for e in service.gpus]:
        found += _request(entry, implied)
    return found


def _request(entry: dict[str, Any], gpus_key: bool) -> list[Accelerator]:
    driver = entry.get("driver")
    ids: list[str] = entry.get("device_ids") or []
    if driver == "cdi" or (ids and all(_cdi(i) for i in ids)):
        return [a for i in ids if (a := _cdi(i)) is not None]
    if driver not in (None, "nvidia"):
        return [Accelerator(UNKNOWN, frozenset(), False, f"driver {driver}")]
    if driver is None and not gpus_key and "gpu" not in entry.get("capabilities", []):
        return []
    if ids:
        return [Accelerator(NVIDIA, frozenset(ids), True, f"device_ids {','.join(ids)}")]
    count = str(entry.get("count", "all")).strip()
    if count.lower() == "all":
        return [Accelerator(NVIDIA, ALL, False, "gpus: all" if gpus_key else "count: all")]
    number = to_count(count, MAX_CARDS)
    cards = frozenset(str(i) for i in range(number)) if number is not None else frozenset()
    return [Accelerator(NVIDIA, cards, False, f"count: {count}")]


def _cdi(name: str) -> Accelerator | None:
    """A CDI device name, ``vendor.com/class=device``: ``nvidia.com/gpu=0``, ``=all``."""
    vendor, slash, rest = name.partition("/")
    kind = CDI_VENDORS.get(vendor.lower()) if slash else None
    card = rest.partition("=")[2].strip()
    if kind is None or not card:
        return None
    if card == "all":
        return Accelerator(kind, ALL, False, name)
    return Accelerator(kind, frozenset([card]), True, name)


def _files(paths: Sequence[str]) -> list[Accelerator]:
    found = []
    for path in paths:
        number = path.removeprefix("/dev/nvidia")
        if path == "/dev/kfd":
            found.append(Accelerator(ROCM, ALL, False, path))
        elif path == "/dev/dri" or path.startswith("/dev/dri/"):
            found.append(Accelerator(INTEL, ALL, False, path))
        elif path.startswith("/dev/nvidia") and number.isdigit():
            found.append(Accelerator(NVIDIA, frozenset([number]), True, path))
        elif (cdi := _cdi(path)) is not None:
            found.append(cdi)
    return found


def _settings(service: Service) -> list[Accelerator]:
    """Visible-devices variables (rank 1), then ``runtime:`` and the engine's ``--device``
    (rank 2: a kind, every card)."""
    found = []
    for kind, name in VISIBLE.items():
        entry = service.environment.get(name)
        value = (entry.value or "").strip() if entry is not None else ""
        if value.lower() == "all":
            found.append(Accelerator(kind, ALL, False, f"{name}=all", 1))
        elif value.lower() in NO_CARD:
            found.append(Accelerator(kind, frozenset(), False, f"{name}={value}", 1))
        elif value:
            ids = frozenset(v.strip() for v in value.split(",") if v.strip())
            found.append(Accelerator(kind, ids, True, f"{name}={value}", 1))
    if service.runtime in RUNTIMES:
        found.append(
            Accelerator(RUNTIMES[service.runtime], ALL, False, f"runtime: {service.runtime}", 2)
        )
    if service.engine_device in ENGINE_DEVICES:
        kind = ENGINE_DEVICES[service.engine_device]
        found.append(Accelerator(kind, ALL, False, f"--device {service.engine_device}", 2))
    return found
