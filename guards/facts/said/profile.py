"""The profile block and the tier lines of a compose header, as statements: what D001 and D005
compare with the body."""

from __future__ import annotations

import re

from ...sources.compose.compose import Compose
from ...sources.compose.header import HeaderField, HeaderLine, first_count
from ..statements import Stated, said_in, stated_kv
from ..vision import stated_vision
from .base import Statement

PROFILE_FIELDS = (
    ("max_model_len", ("Default ctx", "Max ctx")),
    ("kv_cache_dtype", ("KV",)),
    ("topology", ("Topology",)),
    ("vision", ("Vision",)),
    ("status", ("Status",)),
)
HEADER_COUNT = re.compile(r"~?\d[\d,.]*\s*[KkMm]?")
TP_FIELD = re.compile(r"\bTP\s*=\s*(\d+)\b")
SPLIT_FIELD = re.compile(r"-ts\s+([\d.,/]+)")
SHIPPED_DEFAULT = re.compile(
    r"\bshipped\s+default(?:\s+combination|\s+tier)?\s*(?:is\s*|:\s*)?"
    r"\((?P<items>[^()\n]*+)\)",
    re.IGNORECASE,
)


def profile_statements(compose: Compose) -> list[Statement]:
    """What the profile block (the header convention's ``Key: value`` fields) says of the
    compose's first service: a field's value is read in its affirmed clauses (``header.
    affirmed``: asides only when the lead states nothing, nothing a clause negates), one
    statement per knob, placed where the value starts."""
    header = compose.header
    if header.profile_line is None or not compose.shipped:
        return []
    subject = compose.shipped[0].name
    found = []
    for knob, keys in PROFILE_FIELDS:
        field = header.field(*keys)
        if field is None:
            continue
        for name, value, said in _field_says(knob, field):
            found.append(
                Statement(
                    subject,
                    name,
                    value,
                    compose.path,
                    field.line,
                    field.column,
                    "profile",
                    key=field.key,
                    said=said,
                    end_column=field.end_column,
                )
            )
    return found


def _field_says(knob: str, field: HeaderField) -> list[tuple[str, str, str]]:
    """(knob, value, words) a profile field states."""
    if knob == "max_model_len":
        hit = field.search(HEADER_COUNT)
        said = hit[1].group(0).strip() if hit else ""
        return [(knob, said, said)] if said and first_count(said) else []
    if knob == "kv_cache_dtype":
        kv = next((kv for _, text in field.statements() if (kv := stated_kv(text))), None)
        return [(knob, kv, kv)] if kv else []
    if knob == "topology":
        found = []
        tp, split = field.search(TP_FIELD), field.search(SPLIT_FIELD)
        if tp:
            found.append(("tensor_parallel_size", tp[1].group(1), tp[1].group(0)))
        if split:
            value = split[1].group(1).rstrip(",.")
            found.append(("tensor_split", value, f"-ts {value}"))
        return found
    if knob == "vision":
        on = stated_vision(field.lead)
        return [] if on is None else [(knob, "on" if on else "off", field.lead.strip())]
    return [(knob, field.first_value, field.first_value)]


def tier_lines(compose: Compose) -> list[Stated]:
    """The lines that restate the tier the body ships: the summary line (the first prose
    line after the profile block, not a generated region nor a retraction callout), and the
    parenthesis of every "shipped default (…)" comment."""
    found = []
    summary = summary_line(compose)
    if summary is not None:
        found.append(Stated("summary line", summary.number, summary.text, summary.column))
    for comment in compose.comments:
        for match in SHIPPED_DEFAULT.finditer(comment.text):
            column = comment.column + 1 + match.start("items")
            found.append(Stated("comment", comment.line, match.group("items"), column))
    return found


def summary_line(compose: Compose) -> HeaderLine | None:
    """The first prose line after the profile block (not a generated region, not a
    retraction callout)."""
    header = compose.header
    if header.profile_line is None:
        return None
    end = max((f.end_line for f in header.fields), default=header.profile_line)
    for section in header.sections:
        if section.line > end and not compose.is_correction(section.line) and section.lines:
            return section.lines[0]
    return None


def tier_statements(compose: Compose) -> list[Statement]:
    """What the tier lines say (layout ``tier``), knob by knob (``statements.said_in``:
    drafter depth, context, KV, vision), about the compose's first service."""
    if not compose.shipped:
        return []
    subject = compose.shipped[0].name
    found = []
    for line in tier_lines(compose):
        for said in said_in(line):
            column = line.column + said.said.start()
            words = said.said.group(0).strip()
            found.append(
                Statement(
                    subject,
                    said.knob,
                    said.value,
                    compose.path,
                    line.number,
                    column,
                    "tier",
                    key=line.label,
                    said=words,
                    end_column=line.column + said.said.end(),
                )
            )
    return found
