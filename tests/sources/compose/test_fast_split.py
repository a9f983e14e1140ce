"""The quick word splits of ``guards.sources.compose.words`` give what the reference splits
give (shlex, and the written-word scanner), word for word; the memos are bounded; the records
built directly equal what ``_replace`` builds; a script's memoised values are what
it computes afresh."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.sources.compose import words
from guards.sources.compose.engines import Token
from guards.sources.compose.interpolate import Unresolved, Value
from guards.sources.compose.script import EnvEntry, Script, ScriptLine
from guards.sources.compose.words import (
    quick_fields,
    quick_parts,
    quick_words,
    scanned_words,
    shell_fields,
    shell_parts,
    written_words,
)

from ...examples import examples

# Mostly the characters of flags, paths and expansions, with some of every character the
# quick paths must leave to the reference (blanks, quotes, backslash, `#`, other spaces).
PLAIN = "abz09-_=./:$@{}();<>|&"
SPECIAL = " \t\r\n\x0b\x0c\xa0\u2003\"'\\#"
TEXTS = st.one_of(
    st.text(alphabet=PLAIN, max_size=24),
    st.text(alphabet=PLAIN + SPECIAL, max_size=24),
    st.text(max_size=16),
)


def reference_parts(text: str) -> tuple[str, ...] | None:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return tuple(lexer)
    except ValueError:
        return None


def reference_fields(text: str) -> tuple[str, ...] | None:
    try:
        return tuple(shlex.split(text))
    except ValueError:
        return None


# -- exact results ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a&&b", ("a", "&&", "b")),
        ("--port=8000;", ("--port=8000", ";")),
        ("x|&y", ("x", "|&", "y")),
        (");(", (");(",)),  # a run of punctuation is one part, as shlex makes it
        ("${A:-1}", ("${A:-1}",)),
        ("", ()),
    ],
)
def test_plain_words_take_the_quick_path(text, parts):
    assert quick_parts(text) == parts
    assert shell_parts(text) == parts == reference_parts(text)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ('"a b"c', ("a bc",)),  # quotes removed
        ("a#b", ("a",)),  # shlex reads a comment even inside a word
        ("#x", ()),
        ("a\\b", ("ab",)),
        ("'open", None),  # a quote left open
    ],
)
def test_other_words_go_to_shlex(text, parts):
    assert quick_parts(text) is None
    assert shell_parts(text) == parts


def test_fields_split_at_shlex_blanks_only():
    assert quick_fields("a  b\tc\r\nd") == ("a", "b", "c", "d")
    assert shell_fields("a\x0bb x#y") == ("a\x0bb", "x#y")  # str.split would cut at \x0b
    assert quick_fields("'a b' c") is None
    assert shell_fields("'a b' c") == ("a b", "c")
    with pytest.raises(ValueError):
        shell_fields("'open")


def test_written_words_keep_quotes_and_expansions_whole():
    assert quick_words("a\xa0b  c") == ((0, "a"), (2, "b"), (5, "c"))  # \xa0 is a blank
    assert quick_words('x="a b"') is None
    assert written_words('x="${A:-a b}" y') == ((0, 'x="${A:-a b}"'), (14, "y"))
    assert written_words("${A:-${B:-x y}}z w") == ((0, "${A:-${B:-x y}}z"), (17, "w"))
    assert written_words('"open quote') == ()  # as the scanner always read it


def test_the_memos_are_bounded():
    for split in (shell_parts, shell_fields, written_words):
        assert split.cache_info().maxsize == words.MEMO_SIZE <= 4096


# -- the quick paths against the references -----------------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(TEXTS)
def test_quick_parts_are_shlex_parts(text):
    quick = quick_parts(text)
    assert quick is None or quick == reference_parts(text)
    assert shell_parts(text) == reference_parts(text)


@settings(max_examples=examples(300), deadline=None)
@given(TEXTS)
def test_quick_fields_are_shlex_split(text):
    quick = quick_fields(text)
    assert quick is None or quick == reference_fields(text)


@settings(max_examples=examples(300), deadline=None)
@given(TEXTS)
def test_quick_words_are_the_scanned_words(text):
    quick = quick_words(text)
    assert quick is None or quick == scanned_words(text)
    assert written_words(text) == scanned_words(text)


# -- records built directly ---------------------------------------------------------------------


def test_with_text_is_replace_of_the_text():
    values = {
        "text": "a",
        "raw": "${A}",
        "line": 3,
        "column": 7,
        "variables": ("A",),
        "from_env": ("A",),
        "unresolved": (Unresolved("B", "unset"),),
        "quoted": True,
        "source": "entrypoint",
        "end_column": 11,
    }
    assert set(Token._fields) == set(values)  # a new field must be kept too
    token = Token(**values)
    assert token.with_text("b") == token._replace(text="b")


# -- a script's memoised values -----------------------------------------------------------------


def script(*texts: str) -> Script:
    lines = [ScriptLine(n, text, text) for n, text in enumerate(texts, 1)]
    env = {"SPEC_N": EnvEntry("SPEC_N", "5", 1, Value("5"))}
    return Script(lines, env)


def test_container_env_is_a_fresh_copy_each_time():
    found = script("x=1")
    env = found.container_env()
    env["x"] = "changed"
    assert found.container_env() == {"SPEC_N": "5"}


def test_memoised_evaluation_is_the_first_one():
    found = script('n="${SPEC_N:-7}"', "n=9")
    first = found.evaluate("n")
    assert (first.value, first.line.number if first.line else 0) == ("5", 1)
    assert found.evaluate("n") == first == script('n="${SPEC_N:-7}"', "n=9").evaluate("n")
    assert found.assignment("n") == (found.lines[0], "${SPEC_N:-7}")
    assert found.assignment("missing") is None
