"""D011 reads a comment's words holding a ``/`` with one pattern (``SLASHED``): exactly the
words of ``WORD`` that hold one, at the same offsets (every candidate holds a ``/``), in time
linear in the text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from guards.rules.dead_path import SLASHED, WORD

TEXT = st.text(alphabet="ab/ \t'\"`,;|.()=$~-", max_size=40)


@given(TEXT)
def test_slashed_words_are_the_words_with_a_slash(text: str) -> None:
    words = [(m.start(), m.group()) for m in WORD.finditer(text) if "/" in m.group()]
    assert [(m.start(), m.group()) for m in SLASHED.finditer(text)] == words


def test_long_words_without_a_slash_are_passed_over_in_linear_time() -> None:
    assert list(SLASHED.finditer("x" * 200_000 + " a/b")) != []
