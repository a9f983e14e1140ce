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
the compose as shipped, so an ``--env-file`` overlay is not drift. The block is read as one
layout of the statement reader (``guards.facts.said.profile_statements``).

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

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from ..errors import GuardsError
from ..facts.said import Statement, profile_statements
from ..facts.statements import effective_kv
from ..facts.vision import vision
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import LLAMACPP, SGLANG, VLLM, Knob
from ..sources.compose.engines.kvtypes import same_kv
from ..sources.compose.header import first_count, same_count, status_of
from .base import Context, Rule
from .options import Place, RuleOptions, option


def check(compose: Compose, context: Context) -> list[Finding] | None:
    if compose.header.profile_line is None or not compose.shipped:
        return None
    service = compose.shipped[0]
    findings = []
    for statement in profile_statements(compose):
        if statement.knob == "status":
            findings += _status(compose, statement, context)
            continue
        compare = COMPARE.get(statement.knob)
        found = compare(statement, service) if compare is not None else None
        if found is not None:
            findings.append(found)
    return findings


def _finding(statement: Statement, knob: Knob, what: str, hint: str) -> Finding:
    return RULE.at(
        statement.path,
        statement.line,
        statement.column,
        f"header {statement.key} says {statement.said} (line {statement.line}), but {what} is "
        f"{knob.value} ({knob.source} line {knob.line})",
        knob=knob.name,
        hint=hint,
        end_column=statement.end_column,
    )


def _context(statement: Statement, service: Service) -> Finding | None:
    knob = service.knob("max_model_len")
    stated = first_count(statement.value)
    if knob is None or knob.number is None or stated is None:
        return None
    if same_count(stated, int(knob.number)):
        return None
    flag = knob.flag or "max-model-len"
    hint = f"write {int(knob.number)} in the header, or change the default to match"
    return _finding(statement, knob, flag, hint)


def _kv(statement: Statement, service: Service) -> Finding | None:
    knob, stated = service.knob("kv_cache_dtype"), statement.value
    if knob is None or knob.value is None:
        return None
    actual = effective_kv(knob.value, service)
    said = effective_kv(stated, service) if "/" not in stated else stated
    if actual is None or said is None or same_kv(said, actual) or same_kv(stated, knob.value):
        return None
    hint = f"write {actual} in the header, or change the default to match"
    return _finding(statement, knob, knob.flag or "the KV cache type", hint)


def _tensor_parallel(statement: Statement, service: Service) -> Finding | None:
    knob = service.knob("tensor_parallel_size")
    if service.engine not in (VLLM, SGLANG) or not knob or not knob.value:
        return None
    if knob.value == statement.value:
        return None
    hint = f"write TP={knob.value} in the header, or change the default"
    return _finding(statement, knob, knob.flag or "--tensor-parallel-size", hint)


def _split(statement: Statement, service: Service) -> Finding | None:
    knob = service.knob("tensor_split")
    if service.engine != LLAMACPP or not knob or not knob.value:
        return None
    if knob.value.replace("/", ",") == statement.value.replace("/", ","):
        return None
    hint = f"write -ts {knob.value} in the header, or change the default"
    return _finding(statement, knob, "-ts", hint)


def _vision(statement: Statement, service: Service) -> Finding | None:
    decided = vision(service)
    if decided is None or (statement.value == "on") == decided[0]:
        return None
    on, knob = decided
    body = (
        f"{knob.flag} turns image input {'on' if on else 'off'} ({knob.source} line {knob.line})"
        if knob
        else f"the command loads no vision projector ({service.engine})"
    )
    return RULE.at(
        statement.path,
        statement.line,
        statement.column,
        f"header {statement.key} says {statement.said} (line {statement.line}), but {body}",
        hint="make the header say what the command line does",
        end_column=statement.end_column,
    )


COMPARE: dict[str, Callable[[Statement, Service], Finding | None]] = {
    "max_model_len": _context,
    "kv_cache_dtype": _kv,
    "tensor_parallel_size": _tensor_parallel,
    "tensor_split": _split,
    "vision": _vision,
}


def _status(compose: Compose, statement: Statement, context: Context) -> list[Finding]:
    options = context.options(RULE)
    expected = options.status_for(compose.path)
    if expected is None:
        return []
    convention = compose.header.convention
    read = convention.status_of if convention is not None else status_of
    wanted = read(expected) or expected.strip().lower()
    if compose.header.status() == wanted:
        return []
    return [
        RULE.at(
            statement.path,
            statement.line,
            statement.column,
            f"header Status says {statement.value!r} (line {statement.line}), but "
            f"{options.statuses} lists this compose as {expected!r}",
            hint="make them agree",
            end_column=statement.end_column,
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
    statuses: str | None = option(
        None,
        description="A YAML or TOML file (relative to the root) mapping compose paths to a "
        "status; Status must agree with it.",
    )
    _table: Mapping[str, str] = MappingProxyType({})

    def load(self, place: Place) -> Options:
        if not self.statuses:
            return self
        loaded = self.copy()
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
