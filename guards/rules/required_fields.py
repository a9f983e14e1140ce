"""S003 required-fields: the Profile block has every required field (Caveats when the status needs it).

Why: the at-a-glance block is what an operator reads before launching. Without Model, Topology,
Drafter, KV or Status they guess; a compose that is not ✅ production or 🧪 experimental must
say why in Caveats.

The fields are the header convention's ``required`` (the ``profile`` preset: Model, Topology,
Drafter, KV, Status); the Caveats demand is the convention's ``caveats-field`` (the preset's;
a convention of your own makes none unless it sets one).

Options (``[tool.guards.rules.required-fields]``): ``fields`` (default: the convention's
``required``) and ``caveats-unless`` (statuses that need no Caveats; default production and
experimental, names of the profile preset's vocabulary).

Bad:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Topology:  Dual 3090 PCIe (TP=2)
    #   Status:    ⚠️ Production w/ caveats
    services: {}

Finds:
    composes/example.yml:1:1: S003 profile block has no Caveats field (Status is ⚠️)
    composes/example.yml:1:1: S003 profile block has no Drafter field
    composes/example.yml:1:1: S003 profile block has no KV field

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

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.compose.header import NO_CAVEATS_NEEDED, STATUSES
from .base import Context, Rule, line_end
from .options import RuleOptions, option, validator


class Options(RuleOptions):
    fields: list[str] | None = option(
        None,
        description="Fields every block must have (default: the header convention's "
        "`required`; the profile preset's are Model, Topology, Drafter, KV, Status).",
    )
    caveats_unless: list[str] = option(
        list(NO_CAVEATS_NEEDED),
        description="Statuses (by name: production, caveats, ...) that need no Caveats field.",
    )

    @validator("caveats_unless")
    def _known(cls, value: list[str]) -> list[str]:
        known = set(STATUSES.values())
        unknown = [v for v in value if v not in known]
        if unknown:
            raise ValueError(f"unknown status {unknown[0]!r} (known: {', '.join(sorted(known))})")
        return value


def check(compose: Compose, context: Context) -> list[Finding] | None:
    header, convention = compose.header, compose.header.convention
    if convention is None or header.profile_line is None:
        return None  # S001 reports the missing block
    options = context.options(RULE)
    required = list(convention.required if options.fields is None else options.fields)
    status = header.field("Status")
    status_name = header.status()
    caveats = convention.caveats_field
    if caveats and status_name is not None and status_name not in options.caveats_unless:
        required.append(caveats)
    if not required:
        return None  # the convention requires nothing
    missing = [name for name in required if header.field(name) is None]
    findings = []
    for name in missing:
        why = f" (Status is {status.first_value.split()[0]})" if name == caveats and status else ""
        key = f"{name}{convention.separator}"
        findings.append(
            RULE.at(
                compose.path,
                header.profile_line,
                1,
                f"{convention.block} block has no {name} field{why}",
                hint=f"add `#   {key:<11}…` to the {convention.block} block",
                end_column=line_end(compose.lines, header.profile_line),
            )
        )
    return findings


RULE = Rule(
    id="S003",
    name="required-fields",
    family="schema",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
