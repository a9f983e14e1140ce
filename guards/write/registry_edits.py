"""Editing ``claims.yaml`` in place: ``guards claims retract``, ``add``, ``find --confirm``
and ``claims evidence add``, every one through :func:`edit_registry`.

The file is never re-dumped: the new values are spliced into the original text, so comments,
key order, quoting and indentation elsewhere stay byte for byte. A value is written as YAML
that every reader loads back as that value (``yamlsrc.value_text``). Adding to a list
(``find --confirm`` / ``--dismiss``) only inserts the new item after the last one. The result
is re-parsed and validated, and must differ from the original by exactly the change made,
before it is written atomically (temp file + ``os.replace``, keeping the file's mode).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import GuardsError
from ..sources import edit, registry, yamlsrc
from ..sources.edit import Edit, apply, line_starts
from ..sources.yamlsrc import MappingNode, Node, ScalarNode, SequenceNode, Value

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
NO_REGISTRY = "no claims registry to edit"


def edit_registry(path: Path, shown: str, make_edits: Callable[[str, str], list[Edit]]) -> bool:
    """The one way a command changes the registry, so the four that do cannot drift apart:
    it must exist (a command edits one, never starts one), it is read under the write lock,
    ``make_edits(text, shown)`` gives the edits — verified by the function that composes them,
    which alone knows the one change they may make — and they are written. False when there
    is nothing to write (the registry already holds the change). GuardsError: nothing
    written."""
    if not path.is_file():
        raise GuardsError(NO_REGISTRY, shown)
    with edit.locked(path, shown):
        source = edit.read(path, shown)
        edits = make_edits(source.text, shown)
        if not edits:
            return False
        edit.write(source, source.render(edits))
    return True


EMPTY_REGISTRY = "version: 1\nclaims: []\n"


def init_registry(path: Path, shown: str) -> bool:
    """Start a registry with no claims (``guards claims init``); False when one is there
    already (it is left as it is). Written under the write lock, atomically."""
    with edit.locked(path, shown):
        if path.exists():
            return False
        edit.write_file(path, EMPTY_REGISTRY, shown)
    return True


def check_date(value: str) -> str:
    try:
        if DATE.match(value):
            dt.date.fromisoformat(value)
            return value
    except ValueError:
        pass
    raise GuardsError(f"--date {value!r} is not a date as YYYY-MM-DD")


def tidy(text: str) -> str:
    """Free text as a command stores it: without the blank lines around it, and a single line
    without the spaces around it too (a block's first-line indent is kept)."""
    text = text.strip("\n")
    return text if "\n" in text else text.strip()


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
    values: dict[str, Value] = {
        "status": "retracted",
        "retracted": dt.date.fromisoformat(check_date(date)),
        "reason": tidy(reason),
        "replacement": tidy(replacement),
    }
    if claim.reason and not claim.rationale and not claim.is_withdrawn:
        values["rationale"] = claim.reason
    return field_edits(text, shown, claim_id, values)


def field_edits(text: str, shown: str, claim_id: str, values: dict[str, Value]) -> list[Edit]:
    """The edits that set ``values`` on one claim, verified: applied, they change exactly
    those fields of that claim and nothing else. Raises GuardsError for bad input."""
    before = registry.parse(text, shown)
    claim = before.get(claim_id)
    if claim is None:
        raise GuardsError(f"no claim with id {claim_id!r}", shown)
    item = _claim_node(yamlsrc.compose(text, shown), claim_id)
    edits = _edits(text, text.split("\n"), item, values)
    after = reparsed(apply(text, edits), shown, claim.line)
    _verify(before, after, claim_id, values, shown)
    return edits


def append_edits(text: str, shown: str, claim_id: str, field: str, new: str) -> list[Edit]:
    """The edit that adds ``new`` at the end of one claim's list ``field`` (``variants``,
    ``not_match``) and changes no other byte: a block list gets a ``- item`` line after its
    last item, a flow list ``, item`` after its last item, a claim without the field the key
    where the registry's order puts it. Verified: the file's data is the old data with exactly
    that item appended. No edit when the list already holds ``new``."""
    claim = registry.parse(text, shown).get(claim_id)
    if claim is None:
        raise GuardsError(f"no claim with id {claim_id!r}", shown)
    if new in getattr(claim, field):
        return []
    root = yamlsrc.compose(text, shown)
    edits = _append(text, _claim_node(root, claim_id), claim, field, new, shown)
    expected = yamlsrc.construct(root, shown) if root is not None else None
    _claim_data(expected, claim_id).setdefault(field, []).append(new)
    if reparsed(apply(text, edits), shown, claim.line, yamlsrc.data) != expected:
        raise GuardsError(
            f"refusing to write: adding to {claim_id}.{field} would change more than the new "
            "item; nothing written",
            shown,
            claim.line,
        )
    return edits


def _append(
    text: str, item: MappingNode, claim: registry.Claim, field: str, new: str, shown: str
) -> list[Edit]:
    """The insertion for :func:`append_edits`, or a refusal where the list is not written
    as a list of this claim's own."""
    if item.flow_style:
        raise GuardsError(
            f"claim {claim.id} is written as a flow mapping ({{...}}); add to its {field} by hand",
            shown,
            claim.line,
        )
    key, node = next(((k, v) for name, k, v in yamlsrc.items(item) if name == field), (None, None))
    if key is None or node is None:
        return _edits(text, text.split("\n"), item, {field: [new]})
    if node.start_mark.index < key.end_mark.index:  # `field: *name`, written (and used) elsewhere
        raise GuardsError(
            f"{claim.id}.{field} is an alias (*name); add to it by hand",
            shown,
            yamlsrc.line_of(key),
        )
    if not isinstance(node, SequenceNode):
        raise GuardsError(
            f"claim {claim.id}: `{field}` is one string, not a list; write it as a list "
            "to add to it",
            shown,
            yamlsrc.line_of(node),
        )
    return [_append_item(text, node, new, f"{claim.id}.{field}", shown)]


def reparsed(
    text: str, shown: str, line: int, read: Callable[[str, str], Any] = registry.parse
) -> Any:
    """The registry (or with ``read``, the data) an edit gives, or a refusal located in the
    file as it is, at ``line``: the edited text's own location may be a line the file has not."""
    try:
        return read(text, shown)
    except GuardsError as exc:
        raise GuardsError(
            f"refusing to write: the edited registry would not load ({exc.message}); "
            "nothing written",
            shown,
            line,
        ) from None


def _claim_data(data: Any, claim_id: str) -> dict[str, Any]:
    return next(c for c in data["claims"] if c.get("id") == claim_id)


def _append_item(text: str, node: SequenceNode, new: str, name: str, shown: str) -> Edit:
    """The insertion of ``new`` after the last item of a (non-empty block, or flow) list."""
    last = node.value[-1] if node.value else None
    if last is not None and not (
        node.start_mark.index <= last.start_mark.index <= last.end_mark.index <= node.end_mark.index
    ):  # an alias: the node stands elsewhere in the file
        raise GuardsError(
            f"{name} ends with an alias (*name); add to it by hand", shown, yamlsrc.line_of(node)
        )
    if node.flow_style:
        return _append_flow(text, node, yamlsrc.flow_text(new))
    assert last is not None  # a block list has an item
    dash = node.start_mark.column  # a block list starts at its first `-`
    line = " " * dash + "- " + yamlsrc.value_text(new, dash)
    at = _past(text, last)
    if at == len(text) and not text.endswith("\n"):  # a file without a final break keeps so
        return Edit(at, at, "\n" + line)
    return Edit(at, at, line + "\n")


def _past(text: str, last: Node) -> int:
    """Offset of the line after a block list's last item: past its content and a comment on
    its last line, before the comments and blank lines that follow (a ``|+`` block keeps its
    trailing blank lines as content, so past those)."""
    lines = text.split("\n")
    if isinstance(last, ScalarNode) and last.style in ("|", ">"):
        start = last.start_mark.index
        stop = text.find("\n", start)
        header = text[start : stop if stop >= 0 else len(text)].split("#", 1)[0]
        if "+" in header:
            return [*line_starts(text), len(text)][_end_line(lines, last)]
        end = line_starts(text)[_last_line(lines, last, last)]
    else:
        end = last.end_mark.index
    at = text.find("\n", end)
    return len(text) if at < 0 else at + 1


def _append_flow(text: str, node: SequenceNode, rendered: str) -> Edit:
    """``, item`` after a flow list's last item (before a comment that follows it), or the
    item alone before the ``]`` of ``[]`` or of a list that ends with a comma."""
    close = node.end_mark.index - 1  # the `]`
    if not node.value:
        return Edit(close, close, rendered)
    end = node.value[-1].end_mark.index
    if _trailing_comma(text, end, close):
        return Edit(close, close, (" " if text[close - 1] == "," else "") + rendered)
    return Edit(end, end, f", {rendered}")


def _trailing_comma(text: str, start: int, close: int) -> bool:
    """Whether a comma stands between a flow list's last item and its ``]`` (among spaces,
    line breaks and comments)."""
    at = start
    while 0 <= at < close:
        if text[at] == ",":
            return True
        at = text.find("\n", at) if text[at] == "#" else at + 1
    return False


def _first_claim_edits(
    text: str, shown: str, claims: SequenceNode | None, entry: dict[str, Value]
) -> list[Edit]:
    """The first claim of an empty registry: ``claims: []`` (or no ``claims:`` at all, or an
    empty file) becomes a block list holding it; verified like any added claim."""
    body = "\n".join(
        f"    {name}:{yamlsrc.after_key(yamlsrc.value_text(value, 4))}"
        for name, value in entry.items()
    )
    block = "\n  - " + body.lstrip()
    if claims is not None:
        start, end = claims.start_mark.index, claims.end_mark.index
        edits = [Edit(start - (text[start - 1 : start] == " "), end, block)]
    else:
        head = "" if text.strip() else "version: 1\n"
        prefix = "" if not text or text.endswith("\n") else "\n"
        edits = [Edit(len(text), len(text), f"{prefix}{head}claims:{block}\n")]
    _check_added((), reparsed(apply(text, edits), shown, 1), entry, shown, "adding")
    return edits


def add_claim_edits(text: str, shown: str, entry: dict[str, Value]) -> list[Edit]:
    """The edit that appends a new claim (a mapping of registry fields) to the claims list,
    verified: applied, the registry holds exactly one more claim, that one."""
    before = registry.parse(text, shown)
    if before.get(str(entry["id"])) is not None:
        raise GuardsError(f"claim id {entry['id']!r} already exists", shown)
    claims = yamlsrc.get(yamlsrc.compose(text, shown), "claims") if text.strip() else None
    if not before.claims and (claims is None or isinstance(claims, SequenceNode)):
        return _first_claim_edits(text, shown, claims, entry)
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
    after = reparsed(apply(text, edits), shown, yamlsrc.line_of(claims.value[-1]))
    _check_added(before.claims, after, entry, shown, "appending")
    return edits


def _check_added(
    before: tuple[registry.Claim, ...],
    after: registry.Registry,
    entry: dict[str, Value],
    shown: str,
    verb: str,
) -> None:
    """Refuse an added claim unless the registry it gives holds exactly one more claim, that
    one, after the ``before`` claims unchanged."""
    added = after.get(str(entry["id"]))
    if (
        added is None
        or len(after.claims) != len(before) + 1
        or any(
            _fields(c, {"line"}) != _fields(d, {"line"})
            for c, d in zip(before, after.claims, strict=False)
        )
        or any(not _same(getattr(added, k), v) for k, v in entry.items())
    ):
        raise GuardsError(
            f"refusing to write: {verb} {entry['id']} would change more than the new claim; "
            "nothing written",
            shown,
        )


def _claim_node(root: Node | None, claim_id: str) -> MappingNode:
    claims = yamlsrc.get(root, "claims")
    assert isinstance(claims, SequenceNode)
    for item in claims.value:
        if yamlsrc.scalar(yamlsrc.get(item, "id")) == claim_id:
            assert isinstance(item, MappingNode)
            return item
    raise AssertionError(claim_id)


def _edits(text: str, lines: list[str], item: MappingNode, values: dict[str, Value]) -> list[Edit]:
    """A new key where the registry's order puts it; an existing scalar's value replaced."""
    keys = [key.value for key, _ in item.value]
    indent = item.value[0][0].start_mark.column
    offsets = line_starts(text) + [len(text) + 1]
    edits: list[Edit] = []
    for name, value in values.items():
        rendered = yamlsrc.value_text(value, indent)
        if name not in keys:
            at = min(offsets[_insert_line(lines, item, keys, name)], len(text))
            prefix = "\n" if at == len(text) and text and not text.endswith("\n") else ""
            row = " " * indent + f"{name}:{yamlsrc.after_key(rendered)}"
            edits.append(Edit(at, at, prefix + row + ("" if prefix else "\n")))
            continue
        node = item.value[keys.index(name)][1]
        assert not isinstance(value, list)  # lists are only added to (append_edits)
        start, end = node.start_mark.index, _content_end(text, node)
        line_end = text.find("\n", end)
        tail = text[end : line_end if line_end >= 0 else len(text)]
        comment = _header_comment(text, node)
        if "\n" in rendered:  # a block: what followed the old value on its line goes
            # with it (blanks would be the block's last line's content; a comment moves up
            # to the block's indicator line)
            comment, end = tail.strip() or comment, end + len(tail)
        edits.append(Edit(start, end, _with_comment(rendered, comment)))
    return edits


def _header_comment(text: str, node: Node) -> str:
    """The comment on a block scalar's ``|`` / ``>`` line (replaced with the value, so kept)."""
    if not (isinstance(node, ScalarNode) and node.style in ("|", ">")):
        return ""
    start = node.start_mark.index
    stop = text.find("\n", start)
    header = text[start : stop if stop >= 0 else len(text)]
    found = re.search(r"[ \t]#", header)
    return header[found.start() + 1 :] if found else ""


def _with_comment(rendered: str, comment: str) -> str:
    """``rendered`` with ``comment`` at the end of its first line (after a block's indicator)."""
    if not comment:
        return rendered
    first, newline, body = rendered.partition("\n")
    return f"{first} {comment}{newline}{body}"


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
        return _fields(claim, {"line", *values})

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
        or any(not _same(getattr(new, k), v) for k, v in values.items())
    ):
        raise GuardsError(
            f"refusing to write: splicing {claim_id} would change more than {what}; "
            "nothing written",
            shown,
        )


def _same(stored: object, wanted: object) -> bool:
    """The registry holds exactly the value written (a date as the date it names)."""
    if isinstance(stored, dt.date) or isinstance(wanted, dt.date):
        return str(stored) == str(wanted)
    return stored == wanted


def _fields(claim: registry.Claim, leave_out: set[str]) -> dict[str, Any]:
    """A claim's fields (nested records as dicts) but ``leave_out``."""
    return {k: v for k, v in dataclasses.asdict(claim).items() if k not in leave_out}
