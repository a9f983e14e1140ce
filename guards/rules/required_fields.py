"""S003 required-fields: the Profile block has every required field.

Why: the at-a-glance block is what an operator reads before launching. Without Model, Topology,
Drafter, KV or Status they guess; a compose that is not ✅ production or 🧪 experimental must
say why in Caveats.

Options (``[tool.guards.rules.required-fields]``): ``fields`` (default Model, Topology, Drafter,
KV, Status) and ``caveats-unless`` (statuses that need no Caveats; default production and
experimental).

Bad:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Topology:  Dual 3090 PCIe (TP=2)
    #   Status:    ⚠️ Production w/ caveats
    services: {}

Good:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Topology:  Dual 3090 PCIe (TP=2)
    #   Drafter:   MTP n=3 built-in
    #   KV:        fp8_e4m3
    #   Status:    ⚠️ Production w/ caveats
    #   Caveats:   vllm#50021 exposure; SPEC_N=0 mitigates
    services: {}
"""

from __future__ import annotations

from ..compose import Compose
from ..config import Config
from ..errors import GuardsError
from ..findings import Finding, Severity
from ..header import NO_CAVEATS_NEEDED, STATUSES, status_of
from . import Context, Rule

DEFAULT_FIELDS = ("Model", "Topology", "Drafter", "KV", "Status")


def check(compose: Compose, context: Context) -> list[Finding] | None:
    header = compose.header
    if header.profile_line is None:
        return None  # S001 reports the missing block
    options = context.options(RULE)
    config = context.estate.config
    required = list(_strings(options, "fields", DEFAULT_FIELDS, config))
    status = header.field("Status")
    exempt = _strings(options, "caveats-unless", NO_CAVEATS_NEEDED, config)
    status_name = status_of(status.first_value) if status else None
    if status_name is not None and status_name not in exempt:
        required.append("Caveats")
    missing = [name for name in required if header.field(name) is None]
    findings = []
    for name in missing:
        why = (
            f" (Status is {status.first_value.split()[0]})" if name == "Caveats" and status else ""
        )
        findings.append(
            RULE.at(
                compose.path,
                header.profile_line,
                1,
                f"profile block has no {name} field{why}",
                hint=f"add `#   {name + ':':<11}…` to the profile block",
            )
        )
    return findings


def _strings(options: dict, key: str, default: tuple[str, ...], config: Config) -> tuple[str, ...]:
    value = options.get(key, default)
    source, line = config.source, config.line_of(key)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise GuardsError(f"rules.required-fields.{key} must be a list of strings", source, line)
    if key == "caveats-unless":
        known = set(STATUSES.values())
        unknown = [v for v in value if v not in known]
        if unknown:
            raise GuardsError(
                f"rules.required-fields.caveats-unless: unknown status "
                f"{unknown[0]!r} (known: {', '.join(sorted(known))})",
                source,
                line,
            )
    return tuple(value)


RULE = Rule(
    "S003",
    "required-fields",
    "schema",
    ("compose",),
    Severity.ERROR,
    "The Profile block has Model, Topology, Drafter, KV, Status (and Caveats when due).",
    check,
    __doc__,
)
