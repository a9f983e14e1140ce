"""D004 catalog-drift: each entry of a catalog of profiles agrees with the compose it names.

Why: estates keep a catalog of profiles — one entry per compose with its path and the settings
it ships — that launchers, dashboards and tables read instead of the compose. When a compose
changes and its entry does not, they start or advertise a profile that no longer exists.
Option ``catalogs`` names the catalog files (YAML, TOML or JSON, relative to the root);
``entries`` is the dotted key of the entries in each (a mapping of id to entry, or a list),
``compose-key`` the entry field holding the compose's path, and ``fields`` maps each catalog
field to what it states: a knob (``max_model_len``, ``gpu_memory_utilization``,
``kv_cache_dtype``, ``max_num_seqs``, ``tensor_parallel_size``, ``pipeline_parallel_size``,
``drafter_depth``, ``port`` — the port the engine listens on, …) or ``status`` (the header's
Status). Numbers compare as numbers (``0.9`` = ``"0.90"``), KV types as the engine means them
(vLLM ``fp8`` is ``fp8_e4m3``, ``auto`` follows ``--dtype``), statuses by name or emoji; each
disagreement is reported at the knob (or the Status field) with the catalog file and line,
against the compose as shipped. A compose without an entry is not checked. An entry naming a
compose that is not checked, and a field whose knob the compose does not set or resolve, are
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

from typing import Any

from pydantic import Field, PrivateAttr, field_validator

from ..facts.statements import effective_kv
from ..findings import Finding, Severity
from ..sources import yamlsrc
from ..sources.catalog import (
    KV_TYPES,
    NUMBERS,
    STATUS,
    Entry,
    Layout,
    Spot,
    read_catalog,
    status_name,
)
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import UNKNOWN, llamacpp, sglang, vllm
from ..sources.compose.engines.kvtypes import canonical_kv, same_kv
from ..sources.numbers import to_number
from .base import Context, Rule
from .options import Place, RuleOptions

KNOBS = frozenset(
    {*vllm.FLAGS.values(), *llamacpp.FLAGS.values(), *sglang.FLAGS.values()}
    | {*sglang.SWITCHES.values(), "kv_cache_dtype", "drafter_depth", "drafter_method"}
    | {"served_model_name", "image", "gpus"}
)
DEFAULT_FIELDS = (
    *("max_model_len", "gpu_memory_utilization", "kv_cache_dtype", "max_num_seqs"),
    *("tensor_parallel_size", "pipeline_parallel_size", "drafter_depth", STATUS),
)
SUFFIXES = (".yaml", ".yml", ".toml", ".json")


def check(compose: Compose, context: Context) -> list[Finding] | None:
    options = context.options(RULE)
    if context.estate.composes and compose is context.estate.composes[0]:
        _remark_strays(context, options)
    entries = options.entries_for(compose.path)
    if not entries:
        return None
    findings, compared = [], 0
    for entry in entries:
        for field, target in options.fields.items():
            given = entry.fields.get(field)
            if given is None:
                continue
            outcome = (_status if target == STATUS else _knob)(compose, target, given, entry, field)
            if isinstance(outcome, str):
                where = f"{entry.source}:{given.line}: {field} (entry {entry.name})"
                context.remark(RULE, compose.path, f"{where} not compared: {outcome}")
                continue
            compared += 1
            findings += [outcome] if outcome is not None else []
    return findings if compared else None  # nothing compared: the check does not apply


def _remark_strays(context: Context, options: Options) -> None:
    """Once per run: the entries that name no compose of the run."""
    checked = {c.path for c in context.estate.composes}
    for entry in options.catalog_entries:
        if entry.compose not in checked:
            context.remark(
                RULE,
                f"{entry.source}:{entry.line}",
                f"entry {entry.name} names {entry.compose}, which is not among the composes "
                "checked",
            )


def _knob(
    compose: Compose, target: str, given: Spot, entry: Entry, field: str
) -> Finding | str | None:
    """The catalog's value against the knob: a finding, why it was not compared, or None."""
    service = _service(compose)
    if isinstance(service, str):
        return service
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
    )


def _service(compose: Compose) -> Service | str:
    engines = [s for s in compose.shipped if s.engine != UNKNOWN]
    if len(engines) == 1:
        return engines[0]
    if not engines:
        return "the compose runs no known engine"
    names = ", ".join(s.name for s in engines)
    return f"the compose runs {len(engines)} engine services ({names})"


def _agree(target: str, stated: Any, value: str, service: Service) -> bool | str:
    """Whether the catalog's value means the knob's, or why that cannot be told."""
    if target in NUMBERS:
        actual = to_number(value)
        if actual is None:
            return f"{target} is {value!r}, not a number"
        return to_number(str(stated)) == actual
    if target not in KV_TYPES:
        return stated.strip() == value.strip()
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


def _status(
    compose: Compose, target: str, given: Spot, entry: Entry, field: str
) -> Finding | str | None:
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
    )


# --- options --------------------------------------------------------------------------------


class Options(RuleOptions):
    catalogs: list[str] = Field(
        default_factory=list,
        description="Catalog files (.yaml, .yml, .toml or .json, relative to the root) whose "
        "entries must agree with the composes they name.",
    )
    entries: str = Field(
        "entries",
        description="Dotted key of the entries in each catalog: a mapping of id to entry or a "
        'list of entries ("" for the whole file).',
    )
    compose_key: str = Field(
        "compose_path",
        description="The entry field holding the compose's path, relative to the root.",
    )
    fields: dict[str, str] = Field(
        default_factory=lambda: {name: name for name in DEFAULT_FIELDS},
        description="Catalog field -> what it states: a canonical knob name (max_model_len, "
        "gpu_memory_utilization, kv_cache_dtype, max_num_seqs, tensor_parallel_size, port, ...) "
        "or status (the header's Status). Given, it replaces this default.",
    )
    _entries: tuple[Entry, ...] = PrivateAttr(default=())
    _by_compose: dict[str, list[Entry]] = PrivateAttr(default_factory=dict)

    @field_validator("catalogs")
    @classmethod
    def _catalog_paths(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.lower().endswith(SUFFIXES):
                raise ValueError(f"catalog {path!r} is not a .yaml, .yml, .toml or .json file")
        return value

    @field_validator("entries")
    @classmethod
    def _dotted(cls, value: str) -> str:
        if value and not all(value.split(".")):
            raise ValueError(f"{value!r} is not a dotted key (a.b.c)")
        return value

    @field_validator("compose_key")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value:
            raise ValueError("the compose key must be a field name")
        return value

    @field_validator("fields")
    @classmethod
    def _targets(cls, value: dict[str, str]) -> dict[str, str]:
        for field, target in value.items():
            if target != STATUS and target not in KNOBS:
                raise ValueError(f"{field} = {target!r}: not a knob name or status")
        return value

    def load(self, place: Place) -> Options:
        if not self.catalogs:
            return self
        loaded = self.model_copy()
        loaded._entries = tuple(
            entry
            for source in self.catalogs
            for entry in read_catalog(
                yamlsrc.read_text(place("catalogs", source), source), source, self.layout
            )
        )
        by_compose: dict[str, list[Entry]] = {}
        for entry in loaded._entries:
            by_compose.setdefault(entry.compose, []).append(entry)
        loaded._by_compose = by_compose
        return loaded

    @property
    def layout(self) -> Layout:
        return Layout(self.entries, self.compose_key, self.fields)

    @property
    def catalog_entries(self) -> tuple[Entry, ...]:
        return self._entries

    def entries_for(self, path: str) -> list[Entry]:
        return self._by_compose.get(path, [])


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
