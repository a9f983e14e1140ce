import pytest

from guards.sources.markers import (
    CLAIM_REF,
    RETRACTION_MARKER,
    Marker,
    find_claim_refs,
    retraction_marker,
    strip_struck,
)

# --- claim citations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("see claim:decode-cliff-1096.", [("decode-cliff-1096", 4)]),
        ("claim:a", [("a", 0)]),
        (
            "(claim:kv-fp8) and claim:gpu-util-ceiling-090,",
            [("kv-fp8", 1), ("gpu-util-ceiling-090", 19)],
        ),
        ("`claim:x1`", [("x1", 1)]),
        ("claim:x:y", [("x", 0)]),
        ("#claim:anchor", [("anchor", 1)]),
    ],
)
def test_claim_refs_found(text, expected):
    assert find_claim_refs(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "reclaim:x",  # inside a longer word
        "pre-claim:x",  # hyphenated prefix
        "x_claim:y",
        "claim:Decode-cliff",  # not kebab-case
        "claim:abc_def",
        "claim:abc--def",
        "claim:abc-",
        "claim:",
        "claim: spaced",
        "Claim:upper-label",
    ],
)
def test_claim_refs_rejected(text):
    assert find_claim_refs(text) == []
    assert CLAIM_REF.search(text) is None


# --- retraction markers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, expected",
    [
        (
            "⚠️ Corrected 2026-08-01 (#838). This list previously said …",
            Marker("corrected", "2026-08-01", ()),
        ),
        (
            "Retracted 2026-09-08: the decode cliff (claim:decode-cliff-1096)",
            Marker("retracted", "2026-09-08", ("decode-cliff-1096",)),
        ),
        ("RETRACTED (claim:decode-cliff-1096)", Marker("retracted", None, ("decode-cliff-1096",))),
        ("retracted 2026-09-08", Marker("retracted", "2026-09-08", ())),
        (
            "The decode cliff (SUPERSEDED 2026-08-20 by claim:a, claim:b)",
            Marker("superseded", "2026-08-20", ("a", "b")),
        ),
        (
            "**Superseded 2026-08-20 (claim:drafter-depth-3):** depth 3",
            Marker("superseded", "2026-08-20", ("drafter-depth-3",)),
        ),
    ],
)
def test_marker_found(line, expected):
    assert retraction_marker(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "we retracted the cliff",  # no date, no claim id
        "Corrected later, see #838",
        "Correction 2026-08-01: not the marker word",
        "uncorrected 2026-08-01",
        "Corrected 2026-13-01",  # not a date
        "Corrected 20260801",
        "Corrected 2026-08-011",
        "Retracted, see reclaim:decode-cliff",  # not a citation
        "2026-09-08 claim:decode-cliff-1096",  # no marker word
        "",
    ],
)
def test_marker_rejected(line):
    assert retraction_marker(line) is None


@pytest.mark.parametrize(
    "line, kind",
    [
        ("Corrected 2026-08-01: 0.90", "corrected"),
        ("⚠️ **Retracted** 2026-09-08", "retracted"),
        ("(Superseded claim:x)", "superseded"),
    ],
)
def test_marker_at_start(line, kind):
    assert retraction_marker(line, at_start=True).kind == kind


@pytest.mark.parametrize(
    "line",
    [
        "Note: corrected 2026-08-01",
        "The cliff was retracted on 2026-09-08",
        "1 Corrected 2026-08-01",
    ],
)
def test_marker_not_at_start(line):
    assert retraction_marker(line) is not None
    assert retraction_marker(line, at_start=True) is None


def test_marker_regex_is_case_insensitive_whole_word():
    assert [m.group(1) for m in RETRACTION_MARKER.finditer("Retracted RETRACTED retracted")] == [
        "Retracted",
        "RETRACTED",
        "retracted",
    ]
    assert RETRACTION_MARKER.search("retractedness corrections") is None


# --- struck text ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "~~0.95 is safe on this model~~ 0.90 is the ceiling",
            (" 0.90 is the ceiling", ["0.95 is safe on this model"]),
        ),
        ("# ~~a~~ and ~~b c~~.", ("#  and .", ["a", "b c"])),
        ("nothing struck", ("nothing struck", [])),
        ("~single~ tilde", ("~single~ tilde", [])),
        ("a ~~ spaced ~~ b", ("a ~~ spaced ~~ b", [])),
        ("~~~ fence ~~~", ("~~~ fence ~~~", [])),
        ("~~unclosed", ("~~unclosed", [])),
    ],
)
def test_strip_struck(text, expected):
    assert strip_struck(text) == expected


def test_markers_module_imports_only_re():
    import guards.sources.markers as markers

    imported = {name for name, value in vars(markers).items() if type(value).__name__ == "module"}
    assert imported == {"re"}
