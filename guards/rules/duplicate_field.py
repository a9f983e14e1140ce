"""S005 duplicate-field: each Profile field appears once.

Why: two ``Max ctx:`` lines in one block - typically one left behind by an edit - leave the
operator to guess which is current, and every guard that reads the header would have to guess
too. Keys compare case-insensitively (``MAX ctx`` and ``Max ctx`` are the same field).

The block is the header convention's (``[header]``; the examples use the ``profile`` preset).

Bad:
    # Profile (at-a-glance):
    #   Max ctx:   262144
    #   KV:        fp8_e4m3
    #   Max ctx:   204800 (~200K)
    services: {}

Finds:
    composes/example.yml:4:1: S005 profile field Max ctx repeats the one on line 2

Good:
    # Profile (at-a-glance):
    #   Max ctx:   204800 (~200K)
    #   KV:        fp8_e4m3
    services: {}
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from .base import Context, Rule, line_end
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding] | None:
    convention = compose.header.convention
    if convention is None or compose.header.profile_line is None:
        return None
    first_seen: dict[str, int] = {}
    findings = []
    for field in compose.header.fields:
        key = " ".join(field.key.lower().split())
        if key in first_seen:
            findings.append(
                RULE.at(
                    compose.path,
                    field.line,
                    1,
                    f"{convention.block} field {field.key} repeats the one on line {first_seen[key]}",
                    hint="keep one line per field; merge or delete the other",
                    end_column=line_end(compose.lines, field.line),
                )
            )
        else:
            first_seen[key] = field.line
    return findings


RULE: Rule[RuleOptions] = Rule(
    id="S005",
    name="duplicate-field",
    family="schema",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
