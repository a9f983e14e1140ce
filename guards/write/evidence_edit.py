"""``guards claims evidence add``: one evidence entry appended to a claim of ``claims.yaml``.

The entry is spliced into the text, never re-dumped, in the style the claim's list already
has (a block list keeps its dash and key columns, a flow list ``[...]`` gets one more
``{...}``; a claim without ``evidence:`` gets the key where the registry's order puts it). The
result is re-parsed and must differ from the original only by that entry (the verification
``claims retract`` uses) before ``edit.write`` replaces the file atomically, keeping its mode
and line endings.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..errors import GuardsError
from ..run.evidence import Figures, counted
from ..sources import plain, registry, registry_schema, yamlsrc
from ..sources.edit import Edit, apply, line_starts
from ..sources.yamlsrc import MappingNode, Node, SequenceNode
from .registry_edits import (
    _append_flow,
    _claim_node,
    _end_line,
    _insert_line,
    _last_line,
    _verify,
    reparsed,
)


def entry(
    found: Figures,
    scrapes: list[str],
    date: str,
    engine: str | None,
    note: str | None,
) -> dict[str, Any]:
    """The evidence entry for one model's figures (keys in the order they are written)."""
    pair = " -> ".join(scrapes)
    window = "what changed between the scrapes" if len(scrapes) == 2 else "totals since start"
    values: dict[str, Any] = {
        "source": f"vLLM /metrics {pair} ({window})",
        "measured": summary(found),
        "date": date,
        "engine": engine,
        "model": found.model or None,
        "figures": found.numbers(),
        "note": note.strip() if note and note.strip() else None,
    }
    return {k: v for k, v in values.items() if v not in (None, {})}


def summary(found: Figures) -> str:
    """The figures in one line, for ``measured``."""
    parts = []
    if found.decode_tok_s is not None:
        parts.append(f"{found.decode_tok_s:.1f} tok/s decode (engine-side)")
    if found.preemptions is not None:
        parts.append(counted(found.preemptions, "preemption"))
    if found.kv_usage is not None:
        waiting = f" with {found.waiting:,.0f} waiting" if found.waiting else ""
        parts.append(f"KV cache {found.kv_usage * 100:.1f}%{waiting}")
    if found.acceptance is not None:
        parts.append(f"spec acceptance {found.acceptance * 100:.1f}%")
    text = ", ".join(parts) or "no vLLM figure in the scrape"
    return f"since start: {text}" if found.since_start else text


def evidence_edits(text: str, shown: str, claim_id: str, new: dict[str, Any]) -> list[Edit]:
    """The edit that appends ``new`` to the claim's evidence, verified: applied, it changes
    that claim's evidence by exactly that entry and nothing else. No edit when the claim
    already holds that very entry (the same scrapes, engine, date and note are no new
    evidence). GuardsError for bad input."""
    before = registry.parse(text, shown)
    claim = before.get(claim_id)
    if claim is None:
        raise GuardsError(f"no claim with id {claim_id!r}", shown)
    recorded = plain.build(registry.Evidence, registry_schema.evidence(new))
    if recorded in claim.evidence:
        return []
    item = _claim_node(yamlsrc.compose(text, shown), claim_id)
    if item.flow_style:
        raise GuardsError(
            f"claim {claim_id} is written as a flow mapping ({{...}}); add its evidence by hand",
            shown,
            claim.line,
        )
    edits = [_append(text, item, new)]
    after = reparsed(apply(text, edits), shown, claim.line)
    expected = [*claim.evidence, recorded]
    _verify(before, after, claim_id, {"evidence": expected}, shown, "its evidence")
    return edits


def _append(text: str, item: MappingNode, new: dict[str, Any]) -> Edit:
    lines = text.split("\n")
    offsets = [*line_starts(text), len(text)]
    keys = [key.value for key, _ in item.value]
    if "evidence" not in keys:
        indent = item.value[0][0].start_mark.column
        at = offsets[_insert_line(lines, item, keys, "evidence")]
        body = _block(new, indent + 2, indent + 4)
        return _insert(text, at, f"{' ' * indent}evidence:\n{body}")
    node = item.value[keys.index("evidence")][1]
    assert isinstance(node, SequenceNode)  # the registry validated it as a list
    if node.flow_style:
        return _append_flow(text, node, _flow(new))
    first, last = node.value[0], node.value[-1]
    dash = lines[first.start_mark.line].rfind("-", 0, first.start_mark.column)
    if isinstance(first, MappingNode) and first.flow_style:
        body = " " * dash + "- " + _flow(new) + "\n"
    else:
        body = _block(new, dash, first.start_mark.column)
    return _insert(text, offsets[_after(lines, last) + 1], body)


def _after(lines: list[str], node: Node) -> int:
    """0-based last line of a list item's own content (not the comments after it)."""
    if isinstance(node, MappingNode) and node.value and not node.flow_style:
        return _last_line(lines, *node.value[-1])
    return _end_line(lines, node) - 1


def _insert(text: str, at: int, body: str) -> Edit:
    at = min(at, len(text))
    prefix = "" if at == 0 or text[at - 1] == "\n" else "\n"
    return Edit(at, at, prefix + body)


def _block(new: dict[str, Any], dash: int, column: int) -> str:
    """A block-mapping list item: its ``-`` at ``dash``, its keys at ``column``."""
    rows = []
    for name, value in new.items():
        if isinstance(value, dict):
            nested = "".join(f"\n{' ' * (column + 2)}{k}: {_number(v)}" for k, v in value.items())
            rows.append(f"{name}:{nested}")
        else:
            scalar = dt.date.fromisoformat(value) if name == "date" else str(value)
            rows.append(f"{name}:{yamlsrc.after_key(yamlsrc.value_text(scalar, column))}")
    head = " " * dash + "-" + " " * (column - dash - 1)
    return head + ("\n" + " " * column).join(rows) + "\n"


def _flow(new: dict[str, Any]) -> str:
    """A flow mapping on one line: the date plain, every other string double-quoted."""

    def scalar(name: str, value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {_number(v)}" for k, v in value.items()) + "}"
        return str(value) if name == "date" else yamlsrc.quoted(str(value))

    return "{" + ", ".join(f"{k}: {scalar(k, v)}" for k, v in new.items()) + "}"


def _number(value: float) -> str:
    """A figure as YAML every reader takes for that number: YAML 1.1 (PyYAML) reads a float
    only with a dot, so ``1e+16`` is written ``1.0e+16``."""
    if isinstance(value, int):
        return str(value)
    text = repr(float(value))
    return text.replace("e", ".0e") if "e" in text and "." not in text else text
