"""D004 catalog-drift: each entry of a catalog of profiles agrees with the compose it names.

Why: estates keep a catalog of profiles — one entry per compose with its path and the settings
it ships — that launchers, dashboards and tables read instead of the compose. When a compose
changes and its entry does not, they start or advertise a profile that no longer exists.
Option ``catalogs`` names the catalog files (YAML, TOML or JSON, relative to the root; a glob
names one file per compose, a file without ``entries`` being one entry); ``entries`` is the
dotted key of the entries (a mapping of id to entry, or a list). An entry is joined to a compose
by its ``compose-key`` field (the path), else to a service by its ``service-key`` field (the
service's name, ``container_name`` or served model name), else, in a glob's file, by the file's
stem (a compose's or a service's); in a compose of several services, an entry whose id or
service names one compares that one. ``fields`` maps each catalog field (a dotted path) to what
it states: a knob (``max_model_len``, ``gpu_memory_utilization``, ``kv_cache_dtype``,
``max_num_seqs``, ``tensor_parallel_size``, ``drafter_depth``, ``port`` — the port the engine
listens on, …), a flag that sets one (``--ctx-size``) or ``status`` (the header's Status);
unset, fields named like those knobs in any case style (``maxModelLen``, ``Max-Num-Seqs``) or
by another engine's key (``context_length``) are compared. ``args`` names fields holding engine
flags (``args: {"--max-model-len": 32768}``, ``extra_args: ["--ctx-size 32768"]``), each compared
as the knob the dialect reads it as (other flags are remarks). Numbers compare as numbers
(``0.9`` = ``"0.90"``, ``32K`` = 32768 or 32000), KV types as the engine means them (vLLM
``fp8`` is ``fp8_e4m3``, ``auto`` follows ``--dtype``; one KV field against llama.cpp's K and V
set to different types states the K type, unless the entry maps both), statuses by name or
emoji; each disagreement is reported at the knob (or the Status field) with the catalog file and
line, against the compose as shipped. A compose without an entry is not checked. An entry that
joins no compose checked, and a field whose knob the compose does not set or resolve, are
remarks. A malformed catalog stops the run. The example maps a catalog shaped
``entries: {id: {compose_path, max_ctx, mem_util, kv_format, max_num_seqs, tp, status}}`` in its
``guards.toml``.

Bad:
    --- guards.toml
    [rules.catalog-drift]
    catalogs = ["profiles.yaml"]

    [rules.catalog-drift.fields]
    max_ctx = "max_model_len"
    mem_util = "gpu_memory_utilization"
    kv_format = "kv_cache_dtype"
    max_num_seqs = "max_num_seqs"
    tp = "tensor_parallel_size"
    status = "status"
    --- profiles.yaml
    entries:
      example-dual-fast:
        compose_path: composes/example.yml
        max_ctx: 131072
        mem_util: 0.90
        kv_format: fp8_e4m3
        max_num_seqs: 4
        tp: 2
        status: production
    --- composes/example.yml
    # Profile (at-a-glance):
    #   Status:    🧪 Experimental
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--tensor-parallel-size, "2", --max-model-len, "204800",
                  --gpu-memory-utilization, "0.9", --kv-cache-dtype, fp8,
                  --max-num-seqs, "4"]

Finds:
    composes/example.yml:2:16: D004 header Status is '🧪 Experimental', but profiles.yaml:9 says status: production (entry example-dual-fast)
    composes/example.yml:6:61: D004 max_model_len is 204800, but profiles.yaml:4 says max_ctx: 131072 (entry example-dual-fast)

Good:
    --- guards.toml
    [rules.catalog-drift]
    catalogs = ["profiles.yaml"]

    [rules.catalog-drift.fields]
    max_ctx = "max_model_len"
    mem_util = "gpu_memory_utilization"
    kv_format = "kv_cache_dtype"
    max_num_seqs = "max_num_seqs"
    tp = "tensor_parallel_size"
    status = "status"
    --- profiles.yaml
    entries:
      example-dual-fast:
        compose_path: composes/example.yml
        max_ctx: 131072
        mem_util: 0.90
        kv_format: fp8_e4m3
        max_num_seqs: 4
        tp: 2
        status: production
    --- composes/example.yml
    # Profile (at-a-glance):
    #   Status:    ✅ Production
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--tensor-parallel-size, "2", --max-model-len, "131072",
                  --gpu-memory-utilization, "0.9", --kv-cache-dtype, fp8,
                  --max-num-seqs, "4"]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..facts.knobwords import knob_of_flag, knob_of_key
from ..facts.statements import effective_kv
from ..facts.subjects import loose
from ..findings import Finding, Severity
from ..sources import yamlsrc
from ..sources.catalog import (
    GLOB,
    KV_TYPES,
    NUMBERS,
    STATUS,
    Entry,
    Layout,
    Spot,
    matching,
    number_readings,
    read_catalog,
    status_name,
)
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import UNKNOWN, llamacpp, sglang, vllm
from ..sources.compose.engines.kvtypes import canonical_kv, same_kv
from ..sources.numbers import to_number
from .base import Context, Rule
from .options import Place, RuleOptions, option, validator

KNOBS = frozenset(
    {*vllm.FLAGS.values(), *llamacpp.FLAGS.values(), *sglang.FLAGS.values()}
    | {*sglang.SWITCHES.values(), "kv_cache_dtype", "drafter_depth", "drafter_method"}
    | {"served_model_name", "image", "gpus"}
)
DEFAULT_FIELDS = (
    *("max_model_len", "gpu_memory_utilization", "kv_cache_dtype", "max_num_seqs"),
    *("tensor_parallel_size", "pipeline_parallel_size", "drafter_depth", STATUS),
)
NAMED = frozenset(DEFAULT_FIELDS) | {"cache_type_k", "cache_type_v", "max_num_batched_tokens"}
SUFFIXES = (".yaml", ".yml", ".toml", ".json")
KV_PAIR = {"cache_type_k", "cache_type_v"}
WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake(name: str) -> str:
    """A field name in snake case: ``maxModelLen``, ``max-model-len``, ``Max Model Len``."""
    return re.sub(r"[\s.-]+", "_", WORD_BREAK.sub("_", name.strip())).lower()


def named_target(name: str) -> str | None:
    """What a catalog field states when the estate maps none: a knob its name spells in any
    case style (or as the flag that sets it, or a key another engine uses), or the status."""
    if name.startswith("-"):
        knob = knob_of_flag(name)
        return knob if knob in NAMED else None
    key = snake(name)
    if key in NAMED:
        return key
    knob = knob_of_key(key) or knob_of_flag("--" + key.replace("_", "-"))
    return knob if knob in NAMED else None


def flag_knob(flag: str) -> str | None:
    """The knob an engine flag sets, when some dialect reads it as one."""
    knob = knob_of_flag(flag)
    if knob is None:
        tables = (vllm.FLAGS, llamacpp.FLAGS, sglang.FLAGS)
        knob = next((t[flag] for t in tables if flag in t), None)
    return knob if knob in KNOBS else None


def check(compose: Compose, context: Context) -> list[Finding] | None:
    options = context.options(RULE)
    joined = _joins(context, options)
    findings, compared = [], 0
    for entry, service in joined.get(compose.path, []):
        for flag, line in entry.unread:
            where = f"{entry.source}:{line}: {flag} (entry {entry.name})"
            context.remark(
                RULE, compose.path, f"{where} not compared: no engine reads it as a knob"
            )
        for field, given in entry.fields.items():
            target = entry.targets[field]
            if target == STATUS:
                outcome = _status(compose, given, entry, field)
            else:
                outcome = _knob(compose, service, target, given, entry, field)
            if isinstance(outcome, str):
                where = f"{entry.source}:{given.line}: {field} (entry {entry.name})"
                context.remark(RULE, compose.path, f"{where} not compared: {outcome}")
                continue
            compared += 1
            findings += [outcome] if outcome is not None else []
    return findings if compared else None  # nothing compared: the check does not apply


# --- joins: an entry -> a compose and the service it describes ------------------------------

Joined = dict[str, list[tuple[Entry, "Service | str | None"]]]
_LAST: list[tuple[object, object, Joined]] = []


def _joins(context: Context, options: Options) -> Joined:
    """Each compose's entries with the service each describes (a string: why none), built
    once per run; the entries that join nothing are remarked then."""
    if _LAST and _LAST[0][0] is context.estate and _LAST[0][1] is options:
        return _LAST[0][2]
    composes = {c.path: c for c in context.estate.composes}
    joined: Joined = {}
    for entry in options.catalog_entries:
        found = _join(entry, composes)
        if isinstance(found, str):
            context.remark(RULE, f"{entry.source}:{entry.line}", f"entry {entry.name} {found}")
            continue
        compose, service = found
        joined.setdefault(compose.path, []).append((entry, service))
    _LAST[:] = [(context.estate, options, joined)]
    return joined


def _join(entry: Entry, composes: dict[str, Compose]) -> tuple[Compose, Service | str | None] | str:
    """The compose an entry describes and its service, or why it joins none."""
    if entry.compose is not None:
        compose = composes.get(entry.compose)
        if compose is None:
            return f"names {entry.compose}, which is not among the composes checked"
        named = entry.service or entry.name
        service = _named_in(compose, named)
        if service is None and entry.service is not None:
            return f"names service {entry.service}, which {entry.compose} does not run"
        return compose, service
    name = entry.service or entry.stem or ""
    if entry.service is None:
        stems = [c for p, c in composes.items() if p.rsplit("/", 1)[-1].rsplit(".", 1)[0] == name]
        if len(stems) == 1:
            return stems[0], _named_in(stems[0], entry.name)
    found = [(c, s) for c in composes.values() if (s := _named_in(c, name)) is not None]
    if len(found) == 1:
        return found[0]
    if found:
        return f"names {name}, which fits several services"
    return f"names {name}, which is no compose or service among those checked"


def _named_in(compose: Compose, name: str) -> Service | None:
    """The service of ``compose`` called ``name``: its key, container_name or served model name
    (exactly, else in the loose spelling), when one service is."""
    for same in (lambda a: a == name, lambda a: loose(a) == loose(name) != ""):
        found = [s for s in compose.shipped if any(same(n) for n in _names(s))]
        if len(found) == 1:
            return found[0]
    return None


def _names(service: Service) -> list[str]:
    served = service.value("served_model_name")
    return [n for n in (service.name, service.container_name, served) if n]


def _engine(compose: Compose, service: Service | str | None) -> Service | str:
    if service is not None:
        if isinstance(service, str) or service.engine != UNKNOWN:
            return service
        return f"service {service.name} runs no known engine"
    engines = [s for s in compose.shipped if s.engine != UNKNOWN]
    if len(engines) == 1:
        return engines[0]
    if not engines:
        return "the compose runs no known engine"
    names = ", ".join(s.name for s in engines)
    return f"the compose runs {len(engines)} engine services ({names})"


# --- comparisons ------------------------------------------------------------------------------


def _knob(
    compose: Compose,
    chosen: Service | str | None,
    target: str,
    given: Spot,
    entry: Entry,
    field: str,
) -> Finding | str | None:
    """The catalog's value against the knob: a finding, why it was not compared, or None."""
    service = _engine(compose, chosen)
    if isinstance(service, str):
        return service
    target = _kv_half(target, service, entry)
    knob = service.knob(target)
    note = f" ({knob.note})" if knob is not None and knob.note else ""
    if knob is None or knob.source == "engine-default":
        return f"the compose does not set {target}{note}"
    if knob.value is None:
        return f"{target} cannot be resolved{note}"
    agree = _agree(target, given.value, knob.value, service)
    if agree is not False:
        return None if agree is True else agree
    meant = _meaning(target, knob.value, service)
    shown = f"{knob.value} ({meant})" if meant else knob.value
    return RULE.at(
        compose.path,
        knob.line,
        knob.column,
        f"{target} is {shown}, but {entry.source}:{given.line} says {field}: {given.shown} "
        f"(entry {entry.name})",
        hint=f"write {field}: {meant or knob.value} in {entry.source}, or change the compose",
        knob=target,
        end_column=knob.end_column,
    )


def _kv_half(target: str, service: Service, entry: Entry) -> str:
    """One KV field against a compose that sets K and V to different types states the K type,
    unless the entry maps both halves itself."""
    combined = service.value("kv_cache_dtype") or ""
    if target != "kv_cache_dtype" or "/" not in combined or service.knob("cache_type_k") is None:
        return target
    return target if set(entry.targets.values()) >= KV_PAIR else "cache_type_k"


def _agree(target: str, stated: Any, value: str, service: Service) -> bool | str:
    """Whether the catalog's value means the knob's, or why that cannot be told."""
    if target in NUMBERS:
        actual = to_number(value)
        if actual is None:
            return f"{target} is {value!r}, not a number"
        return actual in (number_readings(stated) or ())
    if target not in KV_TYPES:
        return str(stated).strip() == value.strip()
    if same_kv(stated, value):
        return True
    if target != "kv_cache_dtype":
        return False  # llama.cpp's cache types mean what they say
    meant = effective_kv(value, service)
    said = effective_kv(stated, service) if "/" not in stated else stated
    if meant is None or said is None:
        return "`auto` follows the checkpoint's dtype, which the compose does not state"
    return same_kv(said, meant)


def _meaning(target: str, value: str, service: Service) -> str | None:
    """What a KV type set as ``auto`` means here (bf16 from ``--dtype``), when that differs."""
    meant = effective_kv(value, service) if target == "kv_cache_dtype" else None
    return meant if meant and meant != canonical_kv(value) else None


def _status(compose: Compose, given: Spot, entry: Entry, field: str) -> Finding | str | None:
    header = compose.header.field("Status")
    if header is None:
        return "the header has no Status field"
    actual = compose.header.status()
    if actual is None:
        return f"header Status {header.first_value!r} maps to no status"
    if actual == status_name(given.value):
        return None
    return RULE.at(
        compose.path,
        header.line,
        header.column,
        f"header Status is {header.first_value!r}, but {entry.source}:{given.line} says "
        f"{field}: {given.shown} (entry {entry.name})",
        hint=f"write {field}: {actual} in {entry.source}, or change the header Status",
        end_column=header.end_column,
    )


# --- options --------------------------------------------------------------------------------


class Options(RuleOptions):
    catalogs: list[str] = option(
        factory=list,
        description="Catalog files (.yaml, .yml, .toml or .json, relative to the root) whose "
        "entries must agree with the composes they name; a glob names one file per compose.",
    )
    entries: str = option(
        "entries",
        description="Dotted key of the entries in each catalog: a mapping of id to entry or a "
        'list of entries ("" for the whole file).',
    )
    compose_key: str = option(
        "compose_path",
        description="The entry field holding the compose's path, relative to the root.",
    )
    service_key: str = option(
        "service",
        description="The entry field naming the service it describes: its name in the "
        "compose, its container_name or its served model name.",
    )
    args: list[str] = option(
        factory=lambda: ["args", "extra_args"],
        description="Dotted entry fields holding engine flags: a mapping of flag to value or a "
        'list of "--flag value" strings; each flag is compared as the knob it sets.',
    )
    fields: dict[str, str] = option(
        factory=lambda: {name: name for name in DEFAULT_FIELDS},
        description="Catalog field (a dotted path in the entry) -> what it states: a knob "
        "name (max_model_len, gpu_memory_utilization, kv_cache_dtype, max_num_seqs, "
        "tensor_parallel_size, port, ...), a flag that sets one (--ctx-size) or status. "
        "Unset: fields are named like the knobs in any case style.",
    )
    _entries: tuple[Entry, ...] = ()

    @validator("catalogs")
    def _catalog_paths(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.lower().endswith(SUFFIXES):
                raise ValueError(f"catalog {path!r} is not a .yaml, .yml, .toml or .json file")
        return value

    @validator("entries")
    def _dotted(cls, value: str) -> str:
        if value and not all(value.split(".")):
            raise ValueError(f"{value!r} is not a dotted key (a.b.c)")
        return value

    @validator("compose_key", "service_key")
    def _named(cls, value: str) -> str:
        if not value:
            raise ValueError("the key must be a field name")
        return value

    @validator("fields")
    def _targets(cls, value: dict[str, str]) -> dict[str, str]:
        found = {}
        for field, target in value.items():
            knob = flag_knob(target) if target.startswith("-") else target
            if knob is None or (knob != STATUS and knob not in KNOBS):
                raise ValueError(f"{field} = {target!r}: not a knob name, its flag or status")
            found[field] = knob
        return found

    def load(self, place: Place) -> Options:
        if not self.catalogs:
            return self
        loaded = self.copy()
        entries: list[Entry] = []
        for pattern in self.catalogs:
            one_file = GLOB.search(pattern) is not None
            for source in matching(_root_of(place("catalogs", pattern), pattern), pattern):
                text = yamlsrc.read_text(place("catalogs", source), source)
                entries += read_catalog(text, source, self.layout, one_file)
        loaded._entries = tuple(entries)
        return loaded

    @property
    def layout(self) -> Layout:
        named = None if "fields" in self.given else named_target
        args = tuple(self.args)
        keys = (self.entries, self.compose_key, self.fields, self.service_key)
        return Layout(*keys, args, named, flag_knob)

    @property
    def catalog_entries(self) -> tuple[Entry, ...]:
        return self._entries


def _root_of(where: Path, pattern: str) -> Path:
    """The estate root, from the path a pattern names under it."""
    for _ in pattern.replace("\\", "/").strip("/").split("/"):
        where = where.parent
    return where


RULE = Rule(
    id="D004",
    name="catalog-drift",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
