"""The fast note reader (guards.sources.notes.mdfast) gives the same Note as markdown-it alone, or falls back.

``parse_note`` reads a note's body with :mod:`guards.sources.notes.mdfast`, a port of the markdown-it-py rules
that notes use; where the port stops (a link reference definition, a tab in a container's
indentation, an entity, ...) that note, or that inline run, goes to markdown-it. Every test
here parses the same text twice, ``fast=False`` being markdown-it alone, and compares the two
Notes field by field: the bundled notes, the fixtures, the real notes of ../shared when
present, and generated markdown.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from guards.errors import GuardsError
from guards.sources.edit import unify_breaks
from guards.sources.notes import mdfast
from guards.sources.notes.notes import Note, parse_note

from ..examples import examples
from ..fuzz_strategies import corpus, note_texts
from ..yamldata import read_yaml

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
CLAIMS_DEV = SHARED / "corpus" / "claims-dev" / "snippets.yaml"

FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=list(HealthCheck),
    print_blob=False,
)


def parsed(text: str, fast: bool) -> Note | str:
    try:
        return parse_note(text, "learnings/note.md", fast=fast)
    except GuardsError as exc:  # bad front matter: the same error either way
        return f"GuardsError: {exc}"


def assert_same(text: str) -> None:
    fast, reference = parsed(text, True), parsed(text, False)
    if isinstance(fast, str) or isinstance(reference, str):
        assert fast == reference
        return
    for field in dataclasses.fields(Note):
        mine, theirs = getattr(fast, field.name), getattr(reference, field.name)
        if field.name == "blocks":
            for index, (block, expected) in enumerate(zip(mine, theirs, strict=False)):
                assert block == expected, f"block {index} differs"
        assert mine == theirs, f"Note.{field.name} differs"


def reads_fast(text: str) -> bool:
    """Whether the fast reader takes the whole body (no fallback to markdown-it)."""
    lines = unify_breaks(text).split("\n")
    try:
        mdfast.block_tokens("\n".join(lines))
    except mdfast.Fallback:
        return False
    return True


# --- real notes -------------------------------------------------------------------------------

BUNDLED = sorted((ROOT / "learnings").rglob("*.md")) + sorted((ROOT / "docs").rglob("*.md"))
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.md"))
SHARED_NOTES = sorted(SHARED.rglob("*.md")) if SHARED.is_dir() else []


@pytest.mark.parametrize("path", BUNDLED + FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_bundled_notes_and_fixtures(path):
    text = path.read_text(encoding="utf-8")
    assert_same(text)
    assert reads_fast(text)  # the fast path is taken, not only its fallback


def test_notes_of_the_rule_cases_and_snippets():
    for text in corpus().notes:  # rule-case notes, hand-labelled passages, fixtures
        assert_same(text)


@pytest.mark.skipif(not SHARED_NOTES, reason="../shared not present")
@pytest.mark.parametrize("path", SHARED_NOTES, ids=lambda p: p.name)
def test_markdown_in_shared(path):
    assert_same(path.read_text(encoding="utf-8"))


@pytest.mark.skipif(not CLAIMS_DEV.is_file(), reason="claims-dev set not present")
def test_claims_dev_passages():
    snippets = read_yaml(CLAIMS_DEV)
    passages = [s["text"] for s in snippets if s["kind"] == "note"]
    assert passages
    for text in passages:
        assert_same(text)
        assert reads_fast(text)
    assert_same("\n\n".join(passages))  # and all of them as one note


def test_padded_notes_of_the_benchmark():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from notes_speed import padded_notes
    finally:
        sys.path.pop(0)
    for text in padded_notes()[:3]:  # the two large ones and a small one
        assert_same(text)


def test_no_markdown_it_import_for_the_bundled_notes():
    """A run over ordinary notes does not pay for importing markdown-it."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from guards.errors import GuardsError\n"
        "from guards.sources.notes.notes import parse_note\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        parse_note(Path(path).read_text(encoding='utf-8'), path)\n"
        "    except GuardsError:\n"
        "        pass\n"
        "print('markdown_it' in sys.modules)\n"
    )
    paths = [str(p) for p in BUNDLED + FIXTURES]
    done = subprocess.run(
        [sys.executable, "-c", script, *paths], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


# --- what falls back --------------------------------------------------------------------------

FALLS_BACK = {
    "reference definition": "See [the docs][d].\n\n[d]: https://example.com\n",
    "tab in a list item": "- item\n\tcontinued\n-\tsecond\n",
    "tab after a quote marker": ">\tquoted\n",
    "NUL": "a\0b\n",
    "nesting past markdown-it's limit": "".join("  " * i + "- a\n" for i in range(25)),
}
INLINE_FALLBACK = {
    "entity": "Q&amp;A &#35; &copy;\n",
    "autolink": "See <https://example.com/a%20b> and <me@example.com>.\n",
    "bracket in a link label": "[a [b] c](d) and ![x ![y](z)](w)\n",
    "three tildes": "~~~a~~~ not a fence\n",
    "javascript link": "[click](javascript:alert(1)) [ok](JavaScript:x)\n",
    "escaped protocol": "[a](java&#115;cript:x) [b](javascript\\:x) [c](&#32;javascript:x)\n",
}


@pytest.mark.parametrize("text", FALLS_BACK.values(), ids=FALLS_BACK.keys())
def test_constructs_the_fast_reader_leaves_to_markdown_it(text):
    assert not reads_fast(text)
    assert_same(text)


@pytest.mark.parametrize("text", INLINE_FALLBACK.values(), ids=INLINE_FALLBACK.keys())
def test_inline_runs_left_to_markdown_it(text):
    assert reads_fast(text)  # the blocks are read; the one inline run goes to markdown-it
    assert_same(text)


@pytest.mark.parametrize(
    "text",
    [
        "Title\n=====\n\nSub\n---\ntext\n",  # setext headings
        "> [!WARNING]\n> Retracted 2026-09-08 (claim:a-b): gone.\nlazy line\n",
        "1. one\n   > quoted in the item\n2. two\n\n   para in two\n\n- other list\n",
        "- a\n  - b\n    - c\n   - d\n      - e\n",
        "| a | b |\n|:-|-:|\n| `x|y` | \\| pipe |\n| only one |\n",
        "<!-- guards: ignore[C001] reason -->\n<details>\n<summary>s</summary>\n\nbody\n</details>\n",
        "```py\ncode\n```\n\n    indented\n\n~~~~\nunclosed\n",
        "**bold *nested* text** a*b*c _x_y_ __strong__ ***both*** ~~struck **in** it~~\n",
        "line with two spaces  \nhard break\\\nand backslash\n",
        "[link `code]` text](u 'title') ![alt *em*](src) [empty]() [no](<a b>)\n",
        "`` a ` b `` ` c `` d ``` e\n",
        "a claim:x-y b ~~claim:old-one~~ claim:\\x",
        "---\ntitle: t\nclaims: [a-b]\n---\n# H (claim:a-b)\n",
    ],
)
def test_constructs_read_alike(text):
    assert_same(text)


# --- generated markdown -----------------------------------------------------------------------

WORDS = ("decode", "cliff", "KV", "fp8", "0.90", "—", "é", "⚠️", "claim:a-b", "claim:x_y", "x")
INLINE = (
    *WORDS,
    " ",
    "  ",
    "*",
    "**",
    "_",
    "__",
    "***",
    "~",
    "~~",
    "~~~",
    "`",
    "``",
    "[",
    "]",
    "(",
    ")",
    "!",
    "<",
    ">",
    "&",
    "&amp;",
    "\\",
    "\\*",
    "\\`",
    "|",
    "\\|",
    ".",
    ",",
    ":",
    "\u00a0",
    "\u3000",
    "\t",
    "<br>",
    "<!-- c -->",
    "<a href='x'>",
    "</a>",
    "<https://a.b/c>",
    "[t](u)",
    '[t](u "ti")',
    "[t](<u v>)",
    "[t](u (ti))",
    "[t]( u\n)",
    "[t](u&amp;v)",
    "[t](java&#115;cript:x)",
    "[t](a\\:b)",
    "[t]()",
    "[t][r]",
    "[`c]`](u)",
    "](",
    "“*q*”",
    "(**p**)",
    "![i](s)",
    "![*i*](s 't')",
    "**b**",
    "*e*",
    "_e_",
    "~~s~~",
    "`c`",
    "`` c ` ``",
)
BLOCK_STARTS = (
    "",
    "# ",
    "## ",
    "###### ",
    "####### ",
    "> ",
    ">",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "10. ",
    "- [x] ",
    "   ",
    "    ",
    "| ",
    "<div>",
    "<!-- ",
    "[r]: ",
)
DELIMITER_ROWS = ("|---|---|", "| --- | :-: |", "--|--", ":-", "|-|", "- | -", "|:--|--:|")
SPECIAL_LINES = (
    "",
    "",
    "---",
    "***",
    "===",
    "- - -",
    "```",
    "```py",
    "~~~",
    "-->",
    "</div>",
    "> [!WARNING]",
    "\t- tabbed",
    *DELIMITER_ROWS,
)


# The strategies the composites below draw from, made once: hypothesis makes a new strategy
# on each call and works out its properties on its first draw, which inside the draws of every
# example was most of this file's time. The same strategies, so the same examples.
PIECES = st.lists(st.sampled_from(INLINE), max_size=10)
BREAK = st.sampled_from(("  \n", "\n"))
INDENTS = st.sampled_from(("", "", "", " ", "  ", "   ", "    "))
STARTS = st.sampled_from(BLOCK_STARTS)
SPECIAL = st.sampled_from(SPECIAL_LINES)
CONTAINER_MARKERS = ("> ", ">", "- ", "1. ", "* ", "  - ", "10) ")
MARKERS = st.sampled_from(CONTAINER_MARKERS)
RESTS = {m: st.sampled_from(("> ", "  ", "   ", "", " " * len(m))) for m in CONTAINER_MARKERS}


@st.composite
def inline_text(draw) -> str:
    pieces = draw(PIECES)
    if draw(st.booleans()):
        pieces.insert(draw(st.integers(0, len(pieces))), draw(BREAK))
    return "".join(pieces)


INLINE_TEXT = inline_text()


@st.composite
def line(draw) -> str:
    if draw(st.integers(0, 5)) == 0:
        return draw(SPECIAL)
    indent = draw(INDENTS)
    return indent + draw(STARTS) + draw(INLINE_TEXT)


LINES = st.lists(line(), min_size=1, max_size=5)


@st.composite
def leaf(draw) -> list[str]:
    return draw(LINES)


@st.composite
def contained(draw, children: st.SearchStrategy[list[str]]) -> list[str]:
    """A quote or list item around generated lines, continuation indented or lazy."""
    inner = draw(children)
    marker = draw(MARKERS)
    rest = draw(RESTS[marker])
    return [marker + inner[0]] + [rest + text for text in inner[1:]]


def documents() -> st.SearchStrategy[str]:
    blocks = st.recursive(leaf(), lambda children: contained(children), max_leaves=6)
    return st.builds(
        lambda parts, end: "\n".join(text for part in parts for text in part) + end,
        st.lists(blocks, min_size=1, max_size=8),
        st.sampled_from(("\n", "", "\n\n", "\n  ")),
    )


@settings(FUZZ, max_examples=examples(300))
@given(documents())
def test_generated_markdown_reads_alike(text):
    assert_same(text)


# Any text of the characters markdown reacts to: what no grammar above thought of.
SOUP = st.lists(
    st.sampled_from(list(" \n>-*_`~[]()!<|#1.a\\&:=\"'\t") + ["\u00a0", "é", "claim:a", "<!--"]),
    max_size=60,
).map("".join)


@settings(FUZZ, max_examples=examples(400))
@given(SOUP)
def test_character_soup_reads_alike(text):
    assert_same(text)


@settings(FUZZ, max_examples=examples(200))
@given(note_texts())
def test_mutated_and_generated_notes_read_alike(text):
    assert_same(text)
