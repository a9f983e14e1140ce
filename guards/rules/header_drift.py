"""D001 header-drift: the Profile block describes what the body really sets.

Why: operators read the header, not the body. ``Max ctx`` (or ``Default ctx``) must equal
``--max-model-len`` / ``-c`` (262144 = 262K = 256K); ``KV`` must name the ``--kv-cache-dtype`` the body sets
(``auto`` follows ``--dtype``; vLLM ``fp8`` is ``fp8_e4m3``; llama.cpp ``-ctk``/``-ctv``);
``Topology``'s ``TP=N`` or ``-ts`` split must match the body, and ``Vision`` what the command
line decides (a llama.cpp ``--mmproj``, vLLM's ``--language-model-only``). A field's value is its leading
statement: asides (parentheses, text after a dash or a semicolon) are read only when the lead
states nothing, and nothing a clause negates ("can't do fp8", "fp8 instead of bf16", "n=3
REJECTED") counts as the value. With option ``statuses`` (a YAML
or TOML file mapping compose paths to a status), Status must agree with it too. Compared with
the compose as shipped, so an ``--env-file`` overlay is not drift.

Bad:
    # Profile (at-a-glance):
    #   Topology:  Dual 3090 PCIe (TP=2)
    #   KV:        fp8_e4m3
    #   Max ctx:   262144
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--tensor-parallel-size, "2", --max-model-len, "204800",
                  --kv-cache-dtype, bfloat16]

Finds:
    composes/example.yml:3:16: D001 header KV says fp8_e4m3 (line 3), but --kv-cache-dtype is bfloat16 (command line 9)
    composes/example.yml:4:16: D001 header Max ctx says 262144 (line 4), but --max-model-len is 204800 (command line 8)

Good:
    # Profile (at-a-glance):
    #   Topology:  Dual 3090 PCIe (TP=2)
    #   KV:        bf16 — MANDATORY here
    #   Max ctx:   204800 (~200K)
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--tensor-parallel-size, "2", --max-model-len, "204800",
                  --kv-cache-dtype, bfloat16]
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, PrivateAttr

from ..errors import GuardsError
from ..facts.statements import effective_kv, stated_kv
from ..facts.vision import stated_vision, vision
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import LLAMACPP, SGLANG, VLLM, Knob
from ..sources.compose.engines.kvtypes import same_kv
from ..sources.compose.header import HeaderField, first_count, same_count, status_of
from .base import Context, Rule
from .options import Place, RuleOptions

TP = re.compile(r"\bTP\s*=\s*(\d+)\b")
SPLIT = re.compile(r"-ts\s+([\d.,/]+)")


def check(compose: Compose, context: Context) -> list[Finding] | None:
    if compose.header.profile_line is None or not compose.shipped:
        return None
    service = compose.shipped[0]
    findings = _context(compose, service) + _kv(compose, service) + _topology(compose, service)
    return findings + _vision(compose, service) + _status(compose, context)


def _finding(
    compose: Compose, field: HeaderField, said: str, knob: Knob, what: str, hint: str
) -> Finding:
    return RULE.at(
        compose.path,
        field.line,
        field.column,
        f"header {field.key} says {said} (line {field.line}), but {what} is "
        f"{knob.value} ({knob.source} line {knob.line})",
        knob=knob.name,
        hint=hint,
    )


def _context(compose: Compose, service: Service) -> list[Finding]:
    field = compose.header.field("Default ctx", "Max ctx")
    knob = service.knob("max_model_len")
    hit = field.search(COUNT_TEXT) if field else None
    stated = first_count(hit[1].group(0)) if hit else None
    if field is None or hit is None or knob is None or knob.number is None or stated is None:
        return []
    if same_count(stated, int(knob.number)):
        return []
    said = hit[1].group(0).strip()
    flag = knob.flag or "max-model-len"
    return [
        _finding(
            compose,
            field,
            said,
            knob,
            flag,
            f"write {int(knob.number)} in the header, or change the default to match",
        )
    ]


COUNT_TEXT = re.compile(r"~?\d[\d,.]*\s*[KkMm]?")


def _kv(compose: Compose, service: Service) -> list[Finding]:
    field, knob = compose.header.field("KV"), service.knob("kv_cache_dtype")
    if field is None or knob is None or knob.value is None:
        return []
    stated = next((kv for _, text in field.statements() if (kv := stated_kv(text))), None)
    if stated is None:
        return []
    actual = effective_kv(knob.value, service)
    said = effective_kv(stated, service) if "/" not in stated else stated
    if actual is None or said is None or same_kv(said, actual) or same_kv(stated, knob.value):
        return []
    return [
        _finding(
            compose,
            field,
            stated,
            knob,
            knob.flag or "the KV cache type",
            f"write {actual} in the header, or change the default to match",
        )
    ]


def _topology(compose: Compose, service: Service) -> list[Finding]:
    field = compose.header.field("Topology")
    if field is None:
        return []
    found_tp, found_split = field.search(TP), field.search(SPLIT)
    stated_tp = found_tp[1] if found_tp else None
    stated_split = found_split[1] if found_split else None
    if stated_tp and service.engine in (VLLM, SGLANG):
        knob = service.knob("tensor_parallel_size")
        if knob and knob.value and knob.value != stated_tp.group(1):
            return [
                _finding(
                    compose,
                    field,
                    stated_tp.group(0),
                    knob,
                    knob.flag or "--tensor-parallel-size",
                    f"write TP={knob.value} in the header, or change the default",
                )
            ]
    if stated_split and service.engine == LLAMACPP:
        knob = service.knob("tensor_split")
        said = stated_split.group(1).rstrip(",.")
        if knob and knob.value and knob.value.replace("/", ",") != said.replace("/", ","):
            return [
                _finding(
                    compose,
                    field,
                    f"-ts {said}",
                    knob,
                    "-ts",
                    f"write -ts {knob.value} in the header, or change the default",
                )
            ]
    return []


def _vision(compose: Compose, service: Service) -> list[Finding]:
    field, decided = compose.header.field("Vision"), vision(service)
    said = stated_vision(field.lead) if field else None
    if field is None or decided is None or said is None or said == decided[0]:
        return []
    on, knob = decided
    body = (
        f"{knob.flag} turns image input {'on' if on else 'off'} ({knob.source} line {knob.line})"
        if knob
        else f"the command loads no vision projector ({service.engine})"
    )
    return [
        RULE.at(
            compose.path,
            field.line,
            field.column,
            f"header Vision says {field.lead.strip()} (line {field.line}), but {body}",
            hint="make the header say what the command line does",
        )
    ]


def _status(compose: Compose, context: Context) -> list[Finding]:
    options = context.options(RULE)
    field = compose.header.field("Status")
    expected = options.status_for(compose.path)
    if field is None or expected is None:
        return []
    convention = compose.header.convention
    read = convention.status_of if convention is not None else status_of
    wanted = read(expected) or expected.strip().lower()
    if compose.header.status() == wanted:
        return []
    return [
        RULE.at(
            compose.path,
            field.line,
            field.column,
            f"header Status says {field.first_value!r} (line {field.line}), but {options.statuses} "
            f"lists this compose as {expected!r}",
            hint="make them agree",
        )
    ]


def read_statuses(path: Path, source: str) -> dict[str, str]:
    """The statuses file (``path``, named ``source``): a YAML or TOML mapping of compose path
    to status."""
    from ..sources import yamlsrc

    text = yamlsrc.read_text(path, source)
    if source.endswith(".toml"):
        from ..sources.config import parse_toml

        data = parse_toml(text, source)
    else:
        node = yamlsrc.compose(text, source)
        data = yamlsrc.construct(node, source) if node is not None else {}
    if not isinstance(data, dict):
        raise GuardsError("statuses file must map compose paths to a status", source, 1)
    return {str(k): str(v) for k, v in data.items()}


class Options(RuleOptions):
    statuses: str | None = Field(
        None,
        description="A YAML or TOML file (relative to the root) mapping compose paths to a "
        "status; Status must agree with it.",
    )
    _table: dict[str, str] = PrivateAttr(default_factory=dict)

    def load(self, place: Place) -> Options:
        if not self.statuses:
            return self
        loaded = self.model_copy()
        loaded._table = read_statuses(place("statuses", self.statuses), self.statuses)
        return loaded

    def status_for(self, path: str) -> str | None:
        return self._table.get(path)


RULE = Rule(
    id="D001",
    name="header-drift",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
