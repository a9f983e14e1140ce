"""Counts and the one tolerance (guards/sources/numbers.py): every reader of ``262K``,
``1.5M``, ``447,000`` or ``32k`` and every "same count" goes through ``read_count``,
``readings``, ``same_count`` and ``TOLERANCE``.

``OLD`` was computed with the readers as they were before they shared this module (the header's
``first_count``/``same_count``, the figures' own amounts, contexts and tolerance, the claims'
``21k`` and the figure conflict's K readings): they must answer exactly as they did."""

import re
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.claims.textmatch import KILO, THOUSANDS, normalise
from guards.facts.figures import Qualifier, Setting, find_figures, same_context, same_setting
from guards.rules.figure_conflict import _agree
from guards.sources import numbers
from guards.sources.compose.header import first_count, same_count
from guards.sources.numbers import Count, read_count, readings, written_out

from ..examples import examples

HEADER_TEXTS = [
    "262K",
    "262k",
    "256K",
    "~200K",
    "204800 (~200K)",
    "1.5M",
    "1.5m",
    "1,048,576",
    "447,000",
    "32k",
    "128K tokens",
    "0.5M",
    "2.5K",
    "262144",
    "no number",
    "",
    "1e5",
    "v0.27",
    "1,2345",
    "12,345,678",
    "~944K",
    "1.5",
    "3.",
    "100 K",
    "x262K",
    "262Ki",
    "1,000K",
    "0.001K",
    "7M",
    "1" * 41,
    "2000000000000M",
    "65536 / 64K",
    "32k-ctx",
    "1,5M",
    "12.75k",
]
ACTUALS = [262144, 262000, 256000, 204800, 200000, 1048576, 1500000, 1572864, 447000, 32768]
FIGURE_LINES = [
    "KV pool 212,977 tok",
    "KV pool: 806,821",
    "KV pool ~944K tok",
    "KV pool ~0.8M tok",
    "KV pool 14.68 GiB / 841,541 tok",
    "GPU KV cache size: 405,504 tokens",
    "1,795,289-token pool",
    "2.03× concurrency",
    "6.85 × 262K sequences",
    "Maximum concurrency for 131,072 tokens per request: 5.10x",
    "KV pool 400K tok at 128K",
    "KV pool 310k tok @262144",
    "KV pool 1.2M tok for 1.5M tokens",
    "KV pool 99K tok at 1M ctx",
    "KV pool 212,977.5 tok at 0.5K",
    "KV pool 300K tok at 32k context",
    "3.1x 64K requests",
]
TOKENS = [131072, 128000, 262144, 1048576, 1000000, 32768]
NOTE_TEXTS = [
    "21k context",
    "sm_12k",
    "0021k",
    "0k",
    "1,024k",
    "x21k",
    "21K",
    "21kb",
    "a 447,000-token",
    "1" * 45 + "k",
    "21.5k",
    "_21k",
    ".21k",
    "(32k)",
    "128k/256k",
]


SETTINGS = [*TOKENS, 100000, 102500, 97500, 102501, 97499, 97561]


def bits(results: Iterable[bool]) -> str:
    """A row of yes/no answers as ``1``/``0``."""
    return "".join("1" if r else "0" for r in results)


def figure_rows() -> list[tuple]:
    rows = []
    for line in FIGURE_LINES:
        for f in find_figures([(1, 2, line)]):
            contexts = [(q.value, q.approximate) for q in f.qualifiers if q.kind == "context"]
            rows.append((line, f.kind, f.value, f.unit, f.scaled, contexts))
    return rows


def table() -> dict[str, object]:
    """Every former reader of counts on the inputs above."""
    counts = {t: first_count(t) for t in HEADER_TEXTS}
    stated = [c for c in dict.fromkeys(counts.values()) if c is not None]
    contexts = sorted({(v, a) for *_, cs in figure_rows() for v, a in cs})
    figures = [f for line in FIGURE_LINES for f in find_figures([(1, 2, line)])]
    return {
        "first_count": counts,
        "same_count": {s: bits(same_count(s, a) for a in ACTUALS) for s in stated},
        "figures": figure_rows(),
        "same_context": {
            (v, ap): bits(same_context(Qualifier("context", v, "", ap), t) for t in TOKENS)
            for v, ap in contexts
        },
        "same_setting": {
            a: bits(same_setting(Setting(context=a), Setting(context=b)) for b in SETTINGS)
            for a in SETTINGS
        },
        "normalise": {t: normalise(t) for t in NOTE_TEXTS},
        "agree": [bits(_agree(a, b) for b in figures) for a in figures],
    }


OLD = {
    "agree": [
        "10000000000000100",
        "01010000000000000",
        "00100000000000000",
        "01011000000000000",
        "00011000000000000",
        "00000100000000000",
        "00000010000000000",
        "00000001000000000",
        "00000000100000000",
        "00000000010000000",
        "00000000001000000",
        "00000000000100000",
        "00000000000010000",
        "00000000000001000",
        "10000000000000100",
        "00000000000000010",
        "00000000000000001",
    ],
    "figures": [
        ("KV pool 212,977 tok", "pool", 212977.0, 1.0, False, []),
        ("KV pool: 806,821", "pool", 806821.0, 1.0, False, []),
        ("KV pool ~944K tok", "pool", 944000.0, 1000.0, True, []),
        ("KV pool ~0.8M tok", "pool", 800000.0, 100000.0, True, []),
        ("KV pool 14.68 GiB / 841,541 tok", "pool", 841541.0, 1.0, False, []),
        ("GPU KV cache size: 405,504 tokens", "pool", 405504.0, 1.0, False, []),
        ("1,795,289-token pool", "pool", 1795289.0, 1.0, False, []),
        ("2.03× concurrency", "concurrency", 2.03, 0.01, False, []),
        ("6.85 × 262K sequences", "concurrency", 6.85, 0.01, False, [(268288, True)]),
        (
            "Maximum concurrency for 131,072 tokens per request: 5.10x",
            "concurrency",
            5.1,
            0.01,
            False,
            [(131072, False)],
        ),
        ("KV pool 400K tok at 128K", "pool", 400000.0, 1000.0, True, [(131072, True)]),
        ("KV pool 310k tok @262144", "pool", 310000.0, 1000.0, True, [(262144, False)]),
        ("KV pool 1.2M tok for 1.5M tokens", "pool", 1200000.0, 100000.0, True, [(1536000, True)]),
        ("KV pool 99K tok at 1M ctx", "pool", 99000.0, 1000.0, True, [(1024000, True)]),
        ("KV pool 212,977.5 tok at 0.5K", "pool", 212977.5, 0.1, False, []),
        ("KV pool 300K tok at 32k context", "pool", 300000.0, 1000.0, True, [(32768, True)]),
        ("3.1x 64K requests", "concurrency", 3.1, 0.1, False, [(65536, True)]),
    ],
    "first_count": {
        "": None,
        "0.001K": (1, True),
        "0.5M": (524288, True),
        "1,000K": (1024000, True),
        "1,048,576": (1048576, False),
        "1,2345": (1, False),
        "1,5M": (1, False),
        "1.5": (1, False),
        "1.5M": (1572864, True),
        "1.5m": (1572864, True),
        "100 K": (102400, True),
        "11111111111111111111111111111111111111111": None,
        "12,345,678": (12345678, False),
        "12.75k": (13056, True),
        "128K tokens": (131072, True),
        "1e5": None,
        "2.5K": (2560, True),
        "2000000000000M": (2097152000000000000, True),
        "204800 (~200K)": (204800, False),
        "256K": (262144, True),
        "262144": (262144, False),
        "262K": (268288, True),
        "262Ki": None,
        "262k": (268288, True),
        "3.": None,
        "32k": (32768, True),
        "32k-ctx": (32768, True),
        "447,000": (447000, False),
        "65536 / 64K": (65536, False),
        "7M": (7340032, True),
        "no number": None,
        "v0.27": None,
        "x262K": None,
        "~200K": (204800, True),
        "~944K": (966656, True),
    },
    "normalise": {
        "(32k)": "(32000)",
        ".21k": ".21k",
        "0021k": "0021000",
        "0k": "0000",
        "1,024k": "1024000",
        "111111111111111111111111111111111111111111111k": "111111111111111111111111111111111111111111111000",
        "128k/256k": "128000/256000",
        "21.5k": "21.5k",
        "21K": "21000",
        "21k context": "21000 context",
        "21kb": "21kb",
        "_21k": " 21k",
        "a 447,000-token": "a 447000-token",
        "sm_12k": "sm_12k",
        "x21k": "x21k",
    },
    "same_context": {
        (32768, True): "000001",
        (65536, True): "000000",
        (131072, False): "110000",
        (131072, True): "110000",
        (262144, False): "001000",
        (268288, True): "001000",
        (1024000, True): "000110",
        (1536000, True): "000000",
    },
    "same_count": {
        (1, False): "0000000000",
        (1, True): "0000000000",
        (2560, True): "0000000000",
        (13056, True): "0000000000",
        (32768, True): "0000000001",
        (65536, False): "0000000000",
        (102400, True): "0000000000",
        (131072, True): "0000000000",
        (204800, False): "0001000000",
        (204800, True): "0001100000",
        (262144, False): "1000000000",
        (262144, True): "1110000000",
        (268288, True): "1110000000",
        (447000, False): "0000000010",
        (524288, True): "0000000000",
        (966656, True): "0000000000",
        (1024000, True): "0000010000",
        (1048576, False): "0000010000",
        (1572864, True): "0000001100",
        (7340032, True): "0000000000",
        (12345678, False): "0000000000",
        (2097152000000000000, True): "0000000000",
    },
    "same_setting": {
        32768: "000001000000",
        97499: "000000001011",
        97500: "000000001011",
        97561: "000000101011",
        100000: "000000111001",
        102500: "000000110100",
        102501: "000000110100",
        128000: "110000000000",
        131072: "110000000000",
        262144: "001000000000",
        1000000: "000010000000",
        1048576: "000100000000",
    },
}


def test_every_former_reader_answers_as_before():
    assert table() == OLD


# -- the tolerance, at its edge -----------------------------------------------------------------

REFERENCE = 100_000  # 2.5% of it is 2,500
EDGES = [(102_500, True), (102_501, False), (97_500, True), (97_499, False)]


@pytest.mark.parametrize(("count", "same"), EDGES)
def test_same_count_holds_just_inside_the_tolerance_either_way(count, same):
    assert numbers.same_count(count, REFERENCE) is same


def test_the_tolerance_is_taken_from_the_reference():
    assert numbers.same_count(REFERENCE, 102_500)  # 2,500 within 2.5% of 102,500 (2,562.5)
    assert not numbers.same_count(REFERENCE, 97_560)  # 2,440 past 2.5% of 97,560 (2,439)


# What a binary reading (K as 1024) may also mean: 104,960 is 102,500 with K as 1000.
BINARY_EDGES = [(97_500, True), (97_499, False), (104_961, True), (104_962, False)]


@pytest.mark.parametrize(("count", "same"), BINARY_EDGES)
def test_a_binary_count_is_the_same_by_either_reading_within_the_tolerance(count, same):
    assert numbers.same_count(count, REFERENCE, binary=True) is same


def callers(count: int, approximate: bool) -> dict[str, bool]:
    """What each caller of the tolerance says of ``count`` against ``REFERENCE``."""
    answers = {
        "header": same_count((count, approximate), REFERENCE),
        "context": same_context(Qualifier("context", count, "", approximate), REFERENCE),
    }
    if not approximate:
        answers["setting"] = same_setting(Setting(context=REFERENCE), Setting(context=count))
    return answers


@pytest.mark.parametrize(("count", "same"), BINARY_EDGES)
def test_every_caller_draws_the_edge_where_numbers_does_for_a_k_count(count, same):
    assert callers(count, True) == {"header": same, "context": same}


@pytest.mark.parametrize(("count", "same"), EDGES)
def test_every_caller_draws_the_edge_where_numbers_does_for_an_exact_count(count, same):
    # an exact header value must match exactly; a context and a setting within the tolerance
    assert callers(count, False) == {"header": False, "context": same, "setting": same}
    assert callers(REFERENCE, False) == {"header": True, "context": True, "setting": True}


def test_every_caller_takes_the_one_tolerance(monkeypatch):
    """A second tolerance anywhere would not move with this one."""
    monkeypatch.setattr(numbers, "TOLERANCE", 0.05)
    assert callers(95_001, False) == {"header": False, "context": True, "setting": True}
    assert callers(95_001, True) == {"header": True, "context": True}


# -- one reading of a count ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("digits", "suffix", "binary", "count"),
    [
        ("447,000", None, False, Count(447_000, 1, False)),
        ("262", "K", False, Count(262_000, 1000, True)),
        ("262", "K", True, Count(268_288, 1024, True)),
        ("1.5", "M", False, Count(1_500_000, 100_000, True)),
        ("1.5", "m", True, Count(1_572_864, 1024**2 / 10, True)),
        ("32", "k", False, Count(32_000, 1000, True)),
        ("2.03", None, False, Count(2.03, 0.01, False)),
        ("٣", None, False, None),  # an Arabic-Indic three is not a setting
        ("1" * 41, None, False, None),
    ],
)
def test_read_count_reads_separators_suffixes_and_both_meanings_of_k(digits, suffix, binary, count):
    assert read_count(digits, suffix, binary) == count


def test_a_suffix_may_mean_1024_and_an_m_is_then_1024_k():
    assert readings(944_000, True) == (944_000, 966_656)
    assert readings(1_500_000, True) == (1_500_000, 1_536_000)
    assert readings(212_977, False) == (212_977,)


def test_written_out_is_the_decimal_reading_as_text():
    for suffix in ("k", "K", "m", "M"):
        assert int(written_out("21", suffix)) == read_count("21", suffix).value
    assert written_out("0021", "k") == "0021000"


def test_every_former_reader_takes_what_a_k_means_from_numbers(monkeypatch):
    """A reader with a K of its own would not move with these."""
    monkeypatch.setitem(numbers.SCALES, "k", 10)
    monkeypatch.setitem(numbers.BINARY, "k", 2048)
    (pool,) = find_figures([(1, 2, "KV pool 310k tok at 128K")])
    assert (pool.value, pool.qualifier("context").value) == (3100, 128 * 2048)
    assert first_count("262K") == (262 * 2048, True)
    assert normalise("21k") == "210"
    exact = find_figures([(1, 2, "KV pool 634,880 tok")])[0]  # 310 x 2048
    assert _agree(pool, exact)


# How normalise spelled its two number patterns before they were written to open with the
# digit: the same matches, found six times faster.
OLD_THOUSANDS = re.compile(r"(?<![0-9,])[0-9]{1,3}(?:,[0-9]{3})++(?![0-9])")
OLD_KILO = re.compile(r"(?<![0-9])([0-9]++)k\b")


@settings(max_examples=examples(500), deadline=None)
@given(st.text(alphabet="0123456789,k_ .xm\n", max_size=24))
def test_normalise_number_patterns_match_as_before(text):
    for new, old in ((THOUSANDS, OLD_THOUSANDS), (KILO, OLD_KILO)):
        assert [(m.span(), m.groups()) for m in new.finditer(text)] == [
            (m.span(), m.groups()) for m in old.finditer(text)
        ]
