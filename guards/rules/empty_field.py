"""S004 empty-field: no Profile field is left without a value.

Why: ``#   Drafter:`` with nothing after it reads as "none" to one operator and "unknown" to
the next. A field with no value and no continuation lines is a hole in the header; write
``none`` or ``N/A`` when that is the answer.

The block is the header convention's (``[header]``; the examples use the ``profile`` preset).

Bad:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Drafter:
    #   Status:    ✅ Production
    services: {}

Finds:
    composes/example.yml:3:13: S004 profile field Drafter has no value

Good:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Drafter:   none (no spec-decode)
    #   Status:    ✅ Production
    services: {}
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from .base import Context, Rule
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding] | None:
    convention = compose.header.convention
    if convention is None or compose.header.profile_line is None:
        return None
    return [
        RULE.at(
            compose.path,
            field.line,
            field.column,
            f"{convention.block} field {field.key} has no value",
            hint="write the value, or `none` / `N/A` when that is the answer",
        )
        for field in compose.header.fields
        if not field.value.strip()
    ]


RULE: Rule[RuleOptions] = Rule(
    id="S004",
    name="empty-field",
    family="schema",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
