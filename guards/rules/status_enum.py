"""S002 status-enum: the Status field starts with a known status emoji.

Why: scripts and people sort composes by the leading emoji of Status: ✅ production,
⚠️ caveats, 🧪 experimental, 🐣 incubating, 👁️ preview, ⏸️ upstream-gated, 🗑️ deprecated.
A bare ``⚠`` (U+26A0 without the U+FE0F variation selector) looks the same in most editors but
maps to nothing, so a launcher gate keyed on ``⚠️`` silently lets the compose through.

Bad:
    # Profile (at-a-glance):
    #   Status:    ⚠ Production w/ caveats
    services: {}

Finds:
    composes/example.yml:2:16: S002 Status '⚠ Production w/ caveats' starts with U+26A0 without the U+FE0F variation selector, so it maps to no status

Good:
    # Profile (at-a-glance):
    #   Status:    ⚠️ Production w/ caveats
    services: {}
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.compose.header import STATUSES, missing_selector, status_of
from .base import Context, Rule
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding] | None:
    status = compose.header.field("Status")
    if status is None:
        return None  # S003 reports a missing Status
    value = status.first_value
    if status_of(value) is not None:
        return []
    shown = value or "(empty)"
    emoji = missing_selector(value)
    if emoji is not None:
        message = (
            f"Status {shown!r} starts with U+{ord(emoji[0]):04X} without the U+FE0F "
            f"variation selector, so it maps to no status"
        )
        return [
            RULE.at(
                compose.path,
                status.line,
                status.column,
                message,
                hint=f"write {emoji} (with U+FE0F)",
            )
        ]
    known = ", ".join(f"{emoji} {name}" for emoji, name in STATUSES.items())
    return [
        RULE.at(
            compose.path,
            status.line,
            status.column,
            f"Status {shown!r} does not start with a known status emoji",
            hint=f"start it with one of: {known}",
        )
    ]


RULE: Rule[RuleOptions] = Rule(
    id="S002",
    name="status-enum",
    family="schema",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
