"""What makes reading a compose's figures cheap changes nothing it reads: the words every
figure holds are looked for first (in the paragraph, and in each line), a compose's figures are
read once and shared by K002 and D007, and D002 reads no statement where no comment says
``default`` or ``SHIPS``."""

import re
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from guards.facts import figures
from guards.facts.figures import comment_figures, estate_names, find_figures
from guards.rules.comment_default import SHIPPED, SHIPS, TABLE_ROW, VAR_DEFAULT, statements
from guards.sources.compose.compose import parse_compose

from ..examples import examples

EVERYTHING = re.compile("")  # a gate that lets every text through
PIECES = [
    "KV pool",
    "KV cache pool",
    "GPU KV cache",
    "size:",
    " 212,977",
    " 944K",
    " tok",
    " tokens",
    "2.03×",
    " concurrency",
    "Maximum concurrency for 131,072 tokens per request: 5.10x",
    " 6.85 × 262K sequences",
    "-token pool",
    " at 0.90",
    " TP=2",
    " 2 cards",
    " @262144",
    " fp8 KV",
    " sibling",
    " dual/ultrafast",
    ". ",
    "; ",
    " · ",
    " — ",
    ", ",
    "(",
    ")",
    " ",
    "ſequences",
    "POOL",
    "Streams",
    "requests",
]
LINES = st.lists(st.lists(st.sampled_from(PIECES), max_size=8).map("".join), max_size=6)


def numbered(lines: list[str]) -> list[tuple[int, int, str]]:
    return [(number, 2, text) for number, text in enumerate(lines, 1)]


@settings(max_examples=examples(300), deadline=None)
@given(LINES)
def test_the_word_gates_change_no_figure(lines):
    names = estate_names(["a/dual/ultrafast.yml", "a/b/this.yml"])
    gated = find_figures(numbered(lines), names, ("b/this",))
    with (
        mock.patch.object(figures, "FIGURE_WORD", EVERYTHING),
        mock.patch.object(figures, "LINE_WORD", EVERYTHING),
    ):
        assert find_figures(numbered(lines), names, ("b/this",)) == gated


def test_a_figure_written_over_two_lines_is_read():
    lines = numbered(["boot: GPU KV cache", "size: 405,504 tokens", "", "KV", "pool 212,977 tok"])
    assert [(f.value, f.line) for f in find_figures(lines)] == [
        (405504, 2),
        (212977, 5),
    ]  # at the number


COMPOSE = """\
# Profile (at-a-glance):
#   KV:        fp8 — KV pool 806,821 tok
#   Max ctx:   262144 (KV pool ~944K tok)
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    # measured: 2.03× concurrency at 262K
    command: [--max-model-len, "262144", --kv-cache-dtype, fp8]
"""


def test_a_composes_figures_are_read_once_per_estate():
    compose = parse_compose(COMPOSE, "composes/x/example.yml")
    names = estate_names([compose.path])
    read = comment_figures(compose, names)
    header = [(c.line, c.column + 1, c.text) for c in compose.comments if c.where == "header"]
    other = [(c.line, c.column + 1, c.text) for c in compose.comments if c.where != "header"]
    assert list(read.header) == find_figures(header, names, ("x/example",))
    assert list(read.other) == find_figures(other, names, ("x/example",))
    assert [f.value for f in read.header] == [806821, 944000]
    assert [f.value for f in read.other] == [2.03]
    assert comment_figures(compose, names) is read
    again = parse_compose(COMPOSE, "composes/x/example.yml")  # another compose: read again
    assert comment_figures(again, names) is not read
    assert comment_figures(again, names) == read
    other_estate = frozenset(set(names))  # equal names of another estate: the memo starts over
    assert comment_figures(compose, other_estate) is not read
    assert comment_figures(compose, other_estate) == read


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "CTX_SIZE   KV pool size     (default: 131072)",
                "NP default 4",
                "W4A8 ",
                "SHIPS ON",
                "ships on",
                "(the Shipped Default)",
                "mode=fast ",
                "DEFAULT",
                "(defaults: 1 / 2)",
                "A / B",
                " is ",
                "x",
                " ",
            ]
        ),
        max_size=6,
    ).map("".join)
)
def test_a_comment_without_default_or_ships_states_nothing(text):
    patterns = (TABLE_ROW, VAR_DEFAULT, SHIPPED, SHIPS)
    if not any(pattern.search(text) for pattern in patterns):
        assert statements(text) == []
    else:
        assert "SHIPS" in text or "default" in text.lower()  # what the gate lets through
    assert statements("W4A8 SHIPS ON")[0].value == "on"
    assert statements("mode=fast (the Shipped Default)")[0].value == "fast"
