"""Findings, errors and fixes as protocol types: lines from 0, columns in the client's units."""

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from guards.errors import GuardsError
from guards.findings import Finding, Replacement, Severity
from guards.server.convert import diagnostic, error_diagnostic, span, text_edits

UTF16 = PositionCodec(types.PositionEncodingKind.Utf16)
UTF32 = PositionCodec(types.PositionEncodingKind.Utf32)
LINES = ["# 🧪 Status: ⚠️ Experimental", "services: {}", ""]


def finding(**given) -> Finding:
    fields = {
        "rule": "S002",
        "severity": Severity.WARNING,
        "path": "composes/a.yml",
        "line": 1,
        "column": 14,
        "message": "Status starts with U+26A0",
    }
    return Finding(**(fields | given))


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def test_a_column_after_a_character_past_the_bmp_counts_two_utf16_units():
    # "🧪" is one code point and two UTF-16 units: column 14 is the 13th code point after it
    assert span(LINES, UTF16, (1, 14), (1, 16)) == types.Range(start=at(0, 14), end=at(0, 16))
    assert span(LINES, UTF32, (1, 14), (1, 16)) == types.Range(start=at(0, 13), end=at(0, 15))


def test_a_point_covers_the_rest_of_its_line_and_places_are_held_to_the_text():
    assert span(LINES, UTF32, (2, 1), None) == types.Range(start=at(1, 0), end=at(1, 12))
    assert span(LINES, UTF32, (2, 40), None) == types.Range(start=at(1, 12), end=at(1, 12))
    assert span(LINES, UTF32, (9, 3), None) == types.Range(start=at(2, 0), end=at(2, 0))
    assert span(LINES, UTF32, (2, 5), (1, 1)) == types.Range(start=at(1, 4), end=at(1, 4))


def test_a_finding_is_a_diagnostic_with_its_hint_code_and_link():
    found = finding(hint="use ⚠️ (U+26A0 U+FE0F)", fingerprint="abc")
    assert diagnostic(found, LINES, UTF32, "https://example.org/rules") == types.Diagnostic(
        range=types.Range(start=at(0, 13), end=at(0, 27)),
        message="Status starts with U+26A0\nhint: use ⚠️ (U+26A0 U+FE0F)",
        severity=types.DiagnosticSeverity.Warning,
        code="S002",
        code_description=types.CodeDescription(href="https://example.org/rules#s002-status-enum"),
        source="guards",
        data={"fingerprint": "abc"},
    )
    plain = diagnostic(
        finding(severity=Severity.INFO, end_line=2, end_column=9), LINES, UTF32, None
    )
    assert (plain.severity, plain.code_description, plain.message, plain.range) == (
        types.DiagnosticSeverity.Information,
        None,
        "Status starts with U+26A0",
        types.Range(start=at(0, 13), end=at(1, 8)),
    )


def test_an_error_is_a_diagnostic_at_its_line_without_a_code():
    error = GuardsError("YAML error: mapping values are not allowed here", "a.yml", 2, 9)
    assert error_diagnostic(error, LINES, UTF32) == types.Diagnostic(
        range=types.Range(start=at(1, 8), end=at(1, 12)),
        message="YAML error: mapping values are not allowed here",
        severity=types.DiagnosticSeverity.Error,
        source="guards",
    )
    unplaced = error_diagnostic(GuardsError("config file not found", "guards.toml"), LINES, UTF32)
    assert unplaced.range == types.Range(start=at(0, 0), end=at(0, 27))


def test_a_fix_is_edits_of_the_buffer_with_its_line_endings():
    replacements = [Replacement(1, 14, 1, 16, "⚠️"), Replacement(3, 1, 3, 1, "# a\n# b\n")]
    assert text_edits(replacements, LINES, "\r\n", UTF16) == [
        types.TextEdit(range=types.Range(start=at(0, 14), end=at(0, 16)), new_text="⚠️"),
        types.TextEdit(range=types.Range(start=at(2, 0), end=at(2, 0)), new_text="# a\r\n# b\r\n"),
    ]
