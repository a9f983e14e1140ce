"""S002 status-enum: the Status field starts with a known status emoji.

Why: scripts and people sort composes by the leading emoji of Status: ✅ production,
⚠️ caveats, 🧪 experimental, 🐣 incubating, 👁️ preview, ⏸️ upstream-gated, 🗑️ deprecated.
A bare ``⚠`` (U+26A0 without the U+FE0F variation selector) looks the same in most editors but
maps to nothing, so a launcher gate keyed on ``⚠️`` silently lets the compose through.

The vocabulary is the header convention's (``header.statuses``; those above are the
``profile`` preset's): each status name with the spellings a value may open with, an emoji or
a word (a word must end one: ``ready`` does not start ``readying``). A convention without
statuses leaves Status unchecked.

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
from .base import Context, Rule
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding] | None:
    convention = compose.header.convention
    status = compose.header.field("Status")
    if convention is None or not convention.statuses or status is None:
        return None  # no vocabulary to check against; S003 reports a missing Status
    value = status.first_value
    if convention.status_of(value) is not None:
        return []
    shown = value or "(empty)"
    emoji = convention.missing_selector(value)
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
                end_column=status.end_column,
            )
        ]
    spellings = [s for _, listed in convention.statuses for s in listed]
    kind = "status" if any(c.isalnum() for s in spellings for c in s) else "status emoji"
    known = ", ".join(f"{listed[0]} {name}" for name, listed in convention.statuses)
    return [
        RULE.at(
            compose.path,
            status.line,
            status.column,
            f"Status {shown!r} does not start with a known {kind}",
            hint=f"start it with one of: {known}",
            end_column=status.end_column,
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
