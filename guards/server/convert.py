"""Findings, errors and edits as the protocol's types.

Positions: a finding's line and column are 1-based and count code points of the text as guards
read it (every line break as LF); the protocol counts lines from 0 and columns in the units the
client and server agreed on (UTF-16 unless the client offers another), which ``codec``
converts, line by line. A finding that marks a point (no end of its own) covers the rest of
its line, so an editor has something to underline and to hover.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from ..errors import GuardsError
from ..findings import Finding, Replacement, Severity

SOURCE = "guards"
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def diagnostic(
    finding: Finding, lines: Sequence[str], codec: PositionCodec, rules_url: str | None
) -> types.Diagnostic:
    """A finding as a diagnostic: its span, its message with its hint (as SARIF gives them),
    the rule id as code with a link to its reference when the settings publish one
    (``rules-url``), and its fingerprint, by which a code action finds it again."""
    message = finding.message + (f"\nhint: {finding.hint}" if finding.hint else "")
    start = (finding.line, finding.column)
    end = (finding.end_line, finding.end_column)
    link = None
    if rules_url:
        link = types.CodeDescription(href=f"{rules_url}#{_anchors().get(finding.rule, '')}")
    return types.Diagnostic(
        range=span(lines, codec, start, None if end == start else end),
        message=message,
        severity=SEVERITY[finding.severity],
        code=finding.rule,
        code_description=link,
        source=SOURCE,
        data={"fingerprint": finding.fingerprint},
    )


def error_diagnostic(
    error: GuardsError, lines: Sequence[str], codec: PositionCodec
) -> types.Diagnostic:
    """An input the check could not read or parse (or settings that stopped it), at its line
    and column, as ``guards check`` says it."""
    start = (error.line or 1, error.column or 1)
    return types.Diagnostic(
        range=span(lines, codec, start, None),
        message=error.message,
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
    )


def span(
    lines: Sequence[str],
    codec: PositionCodec,
    start: tuple[int, int],
    end: tuple[int, int] | None,
) -> types.Range:
    """The range from 1-based ``start`` to ``end`` (exclusive; None: the end of the start's
    line), each held to the text."""
    first = _point(lines, *start)
    last = _point(lines, *end) if end else ServerTextPosition(first.line, _width(lines, first.line))
    return types.Range(
        start=codec.position_to_client_units(lines, first),
        end=codec.position_to_client_units(lines, max(first, last)),
    )


def _point(lines: Sequence[str], line: int, column: int) -> ServerTextPosition:
    row = min(max(line, 1), max(len(lines), 1)) - 1
    return ServerTextPosition(row, min(max(column, 1) - 1, _width(lines, row)))


def _width(lines: Sequence[str], row: int) -> int:
    return len(lines[row]) if row < len(lines) else 0


def text_edits(
    replacements: Sequence[Replacement],
    lines: Sequence[str],
    newline: str,
    codec: PositionCodec,
) -> list[types.TextEdit]:
    """A fix's replacements (1-based lines and columns of ``lines``, the text guards read) as
    edits of the buffer, the lines they add ending as the buffer's lines do (``newline``)."""
    return [
        types.TextEdit(
            range=types.Range(
                start=codec.position_to_client_units(lines, _point(lines, r.line, r.column)),
                end=codec.position_to_client_units(lines, _point(lines, r.end_line, r.end_column)),
            ),
            new_text=r.text.replace("\n", newline),
        )
        for r in replacements
    ]


@cache
def _anchors() -> dict[str, str]:
    """Each rule's anchor in the rules reference (``guards.rules.docs.anchor``)."""
    from ..rules import all_rules
    from ..rules.docs import anchor

    return {rule.id: anchor(rule) for rule in all_rules()}
