"""Editing ``claims.yaml`` in place: ``guards claims retract``, ``add`` and ``find --confirm``.

The file is never re-dumped: the new values are spliced into the original text, so comments,
key order, quoting and indentation elsewhere stay byte for byte. The result is re-parsed and
validated, and every other claim must come out identical, before it is written atomically
(temp file + ``os.replace``, keeping the file's mode).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from . import registry, yamlsrc
from .edit import Edit, apply, line_starts
from .errors import GuardsError
from .yamlsrc import MappingNode, Node, ScalarNode, SequenceNode

ORDER = (
    "id",
    "title",
    "status",
    "asserted",
    "retracted",
    "rationale",
    "reason",
    "text",
    "variants",
    "match",
    "not_match",
    "replacement",
    "superseded_by",
    "refs",
    "evidence",
    "applies_to",
    "facts",
)
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_date(value: str) -> str:
    try:
        if DATE.match(value):
            dt.date.fromisoformat(value)
            return value
    except ValueError:
        pass
    raise GuardsError(f"--date {value!r} is not a date as YYYY-MM-DD")


def retract_edits(
    text: str,
    shown: str,
    claim_id: str,
    date: str,
    reason: str,
    replacement: str,
    force: bool = False,
) -> list[Edit]:
    """The edits that retract ``claim_id``: status, date, reason and replacement. An active
    claim's reason (why it was asserted) moves to ``rationale`` first, so it is not lost."""
    claim = registry.parse(text, shown).get(claim_id)
    if claim is None:
        raise GuardsError(f"no claim with id {claim_id!r}", shown)
    if claim.is_withdrawn and not force:
        when = f" on {claim.retracted}" if claim.retracted else ""
        raise GuardsError(
            f"claim {claim_id} is already {claim.status}{when}; use --force to retract it again",
            shown,
            claim.line,
        )
    if not reason.strip():
        raise GuardsError("--reason is empty")
    values: dict[str, str | list[str]] = {
        "status": "retracted",
        "retracted": check_date(date),
        "reason": reason,
        "replacement": replacement,
    }
    if claim.reason and not claim.rationale and not claim.is_withdrawn:
        values["rationale"] = claim.reason
    return field_edits(text, shown, claim_id, values)


def field_edits(
    text: str, shown: str, claim_id: str, values: dict[str, str | list[str]]
) -> list[Edit]:
    """The edits that set ``values`` on one claim, verified: applied, they change exactly
    those fields of that claim and nothing else. Raises GuardsError for bad input."""
    before = registry.parse(text, shown)
    if before.get(claim_id) is None:
        raise GuardsError(f"no claim with id {claim_id!r}", shown)
    item = _claim_node(yamlsrc.compose(text, shown), claim_id)
    edits = _edits(text, text.split("\n"), item, values)
    _verify(before, registry.parse(apply(text, edits), shown), claim_id, values, shown)
    return edits


def add_claim_edits(text: str, shown: str, entry: dict[str, str | list[str]]) -> list[Edit]:
    """The edit that appends a new claim (a mapping of registry fields) to the claims list,
    verified: applied, the registry holds exactly one more claim, that one."""
    before = registry.parse(text, shown)
    if before.get(str(entry["id"])) is not None:
        raise GuardsError(f"claim id {entry['id']!r} already exists", shown)
    claims = yamlsrc.get(yamlsrc.compose(text, shown), "claims")
    if not isinstance(claims, SequenceNode) or not claims.value or claims.flow_style:
        raise GuardsError(
            "`claims:` must be a block list with at least one claim to append to", shown
        )
    first = claims.value[0].start_mark
    lines = text.split("\n")
    dash = lines[first.line].rfind("-", 0, first.column)  # the item's `-`, before its first key
    indent = first.column
    at = (line_starts(text) + [len(text) + 1])[_end_line(lines, claims.value[-1])]
    body = "\n".join(
        f"{' ' * indent}{name}:{yamlsrc.after_key(yamlsrc.value_text(value, indent))}"
        for name, value in entry.items()
    )
    rendered = " " * dash + "-" + " " * (indent - dash - 1) + body.lstrip() + "\n"
    prefix = "" if at == 0 or text[at - 1 : at] == "\n" else "\n"
    edits = [Edit(min(at, len(text)), min(at, len(text)), prefix + rendered)]
    after = registry.parse(apply(text, edits), shown)
    added = after.get(str(entry["id"]))
    if (
        added is None
        or len(after.claims) != len(before.claims) + 1
        or any(
            c.model_dump(exclude={"line"}) != d.model_dump(exclude={"line"})
            for c, d in zip(before.claims, after.claims, strict=False)
        )
    ):
        raise GuardsError(
            f"refusing to write: appending {entry['id']} would change more than "
            "the new claim; nothing written",
            shown,
        )
    return edits


def _claim_node(root: Node | None, claim_id: str) -> MappingNode:
    claims = yamlsrc.get(root, "claims")
    assert isinstance(claims, SequenceNode)
    for item in claims.value:
        if yamlsrc.scalar(yamlsrc.get(item, "id")) == claim_id:
            assert isinstance(item, MappingNode)
            return item
    raise AssertionError(claim_id)


def _edits(
    text: str, lines: list[str], item: MappingNode, values: dict[str, str | list[str]]
) -> list[Edit]:
    keys = [key.value for key, _ in item.value]
    indent = item.value[0][0].start_mark.column
    offsets = line_starts(text) + [len(text) + 1]
    edits: list[Edit] = []
    for name, value in values.items():
        rendered = yamlsrc.value_text(value, indent)
        if name not in keys:
            at = offsets[_insert_line(lines, item, keys, name)]
            edits.append(Edit(at, at, " " * indent + f"{name}:{yamlsrc.after_key(rendered)}\n"))
            continue
        key, node = item.value[keys.index(name)]
        start, end = node.start_mark.index, _content_end(text, node)
        if isinstance(value, list):  # a list is rewritten from just after its key's colon
            start = text.index(":", key.end_mark.index) + 1

        line_end = text.find("\n", end)
        tail = text[end : line_end if line_end >= 0 else len(text)]
        if "\n" in rendered and tail.strip():  # keep a trailing comment out of the block
            indicator, _, body = rendered.partition("\n")
            rendered, end = f"{indicator} {tail.strip()}\n{body}", end + len(tail)
        edits.append(Edit(start, end, rendered))
    return edits


def _content_end(text: str, node: Node) -> int:
    """End of a value, without the newline and blank lines a block scalar swallows."""
    start, end = node.start_mark.index, node.end_mark.index
    if isinstance(node, ScalarNode) and node.style in ("|", ">"):
        end = start + len(text[start:end].rstrip(" \n"))
    return end


def _insert_line(lines: list[str], item: MappingNode, keys: list[str], name: str) -> int:
    """0-based line where a missing key goes: after the last key that precedes it in ORDER,
    above any blank or comment lines that lead into the next key."""
    rank = ORDER.index(name)
    before = [i for i, key in enumerate(keys) if key in ORDER and ORDER.index(key) < rank]
    anchor = before[-1] if before else 0
    last = _last_line(lines, *item.value[anchor])
    stop = (
        item.value[anchor + 1][0].start_mark.line
        if anchor + 1 < len(keys)
        else _end_line(lines, item)
    )
    line = stop
    while line - 1 > last and _filler(lines[line - 1]):
        line -= 1
    return line


def _last_line(lines: list[str], key: Node, value: Node) -> int:
    """0-based last line holding the value's own content."""
    if isinstance(value, ScalarNode) and value.style not in ("|", ">"):
        return value.end_mark.line
    line = _end_line(lines, value) - 1
    block = isinstance(value, ScalarNode)  # a block scalar's `#` lines are content
    while line > key.start_mark.line and (
        not lines[line].strip() or (not block and _filler(lines[line]))
    ):
        line -= 1
    return line


def _end_line(lines: list[str], node: Node) -> int:
    """0-based line just past a node (its end mark may sit at the next item's ``-``)."""
    mark = node.end_mark
    before = lines[mark.line][: mark.column] if mark.line < len(lines) else ""
    return mark.line + 1 if before.strip() else mark.line


def _filler(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _verify(
    before: registry.Registry,
    after: registry.Registry,
    claim_id: str,
    values: Mapping[str, object],
    shown: str,
    what: str = "its retraction fields",
) -> None:
    """The edit changed exactly the given fields of one claim (each now holding its value),
    or nothing is written."""

    def plain(claim: registry.Claim) -> dict:
        return claim.model_dump(exclude={"line", *values})

    old, new = before.get(claim_id), after.get(claim_id)
    assert old is not None and new is not None
    changed = [
        c.id
        for c, d in zip(before.claims, after.claims, strict=False)
        if c.id != d.id or (c.id != claim_id and plain(c) != plain(d))
    ]
    if (
        changed
        or plain(old) != plain(new)
        or len(before.claims) != len(after.claims)
        or any(_stripped(getattr(new, k)) != _stripped(v) for k, v in values.items())
    ):
        raise GuardsError(
            f"refusing to write: splicing {claim_id} would change more than {what}; "
            "nothing written",
            shown,
        )


def _stripped(value: object) -> object:
    if isinstance(value, list):
        return [str(v).strip() for v in value]
    return "" if value is None else str(value).strip()
