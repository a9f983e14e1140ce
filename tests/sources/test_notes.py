import subprocess
import sys
import time
from pathlib import Path

import pytest

from guards.errors import GuardsError
from guards.sources.markers import Marker
from guards.sources.notes.notes import Citation, RetractionContext, Section, parse_note

FIXTURES = Path(__file__).parents[1] / "fixtures" / "notes"
OLD_CLIFF = "Decode throughput falls off a cliff once accumulated context passes 96k tokens"


def load(name):
    return parse_note((FIXTURES / name).read_text(encoding="utf-8"), f"learnings/{name}")


def block_at(note, line):
    return next(block for block in note.blocks if block.line == line)


def blocks_with(note, wording):
    return [block for block in note.blocks if wording in block.text]


# --- the retraction note --------------------------------------------------------------------


@pytest.fixture(scope="module")
def cliff():
    return load("qwen3.8-27b-decode-cliff.md")


CLIFF_CONTEXT = RetractionContext(
    "heading", Marker("retracted", "2026-09-08", ("decode-cliff-1096",)), 15, 27
)


def test_front_matter_is_data_not_blocks(cliff):
    assert cliff.front_matter == {
        "title": "qwen3.8-27b on 2x L40S — long-context decode",
        "model": "qwen3.8-27b",
        "engine": "vllm",
        "claims": ["kv-fp8-bytes-per-token"],
        "retracts": ["decode-cliff-1096"],
    }
    assert cliff.blocks[0].line == 10
    assert cliff.path == "learnings/qwen3.8-27b-decode-cliff.md"


def test_sections_nest_and_end_before_next_heading(cliff):
    assert cliff.sections == [
        Section("qwen3.8-27b: long-context decode", 1, 10, 45),  # trailing '##' dropped
        Section("Retracted 2026-09-08: the decode cliff (claim:decode-cliff-1096)", 2, 15, 27),
        Section("Why our earlier cliff was wrong", 3, 25, 27),
        Section("Current numbers", 2, 29, 40),
        Section("Follow-up", 2, 42, 45),  # setext heading
    ]


def test_retracted_heading_covers_its_section(cliff):
    assert cliff.retractions == [CLIFF_CONTEXT]
    inside = [b.line for b in cliff.blocks if b.retraction == CLIFF_CONTEXT]
    assert inside == [15, 17, 20, 23, 25, 27]
    assert block_at(cliff, 12).retraction is None
    assert block_at(cliff, 29).retraction is None


def test_quoted_old_wording_inside_retraction(cliff):
    [quote, code] = blocks_with(cliff, OLD_CLIFF)
    assert (quote.kind, code.kind) == ("paragraph", "code")
    assert quote.quoted is True
    assert quote.section == 1
    assert quote.retraction == CLIFF_CONTEXT
    assert quote.text == (OLD_CLIFF + ";\nkeep max_model_len at 98304 or below.")
    assert quote.line_texts == (
        (20, OLD_CLIFF + ";"),
        (21, "keep max_model_len at 98304 or below."),
    )


def test_block_kinds_lines_and_sections(cliff):
    summary = [(b.kind, b.line, b.end_line, b.section) for b in cliff.blocks]
    assert summary == [
        ("heading", 10, 10, 0),
        ("paragraph", 12, 13, 0),
        ("heading", 15, 15, 1),
        ("paragraph", 17, 18, 1),
        ("paragraph", 20, 21, 1),
        ("paragraph", 23, 23, 1),
        ("heading", 25, 25, 2),
        ("paragraph", 27, 27, 2),
        ("heading", 29, 29, 3),
        ("table", 31, 34, 3),
        ("code", 36, 40, 3),
        ("heading", 42, 43, 4),
        ("paragraph", 45, 45, 4),
    ]


def test_inline_markup_removed(cliff):
    assert block_at(cliff, 12).text == (
        "Measurements from the tp2 stack (composes/qwen3.8-27b-tp2.yml), vLLM 0.11, fp8 KV"
        " cache.\nKV footprint follows claim:kv-fp8-bytes-per-token."
    )
    assert block_at(cliff, 10).text == "qwen3.8-27b: long-context decode"


def test_table_rows_keep_their_lines(cliff):
    table = block_at(cliff, 31)
    assert table.line_texts == (
        (31, "context | decode tok/s | note"),
        (33, "32k | 34 | baseline"),
        (34, "96k | 31 | no cliff (claim:decode-cliff-1096 is retracted)"),
    )
    assert table.text == "\n".join(text for _, text in table.line_texts)


def test_fenced_code_is_a_code_block(cliff):
    code = block_at(cliff, 36)
    assert code.kind == "code"
    assert code.end_line == 40
    assert code.line_texts[1] == (38, "# " + OLD_CLIFF)
    assert code.text.startswith("# the old wording")


def test_citations_with_columns(cliff):
    assert cliff.citations == [
        Citation("kv-fp8-bytes-per-token", 5, 10, False, front_matter=True, end_column=32),
        Citation("decode-cliff-1096", 7, 5, True, front_matter=True, end_column=22),  # retracts:
        Citation("kv-fp8-bytes-per-token", 13, 22, False, end_column=50),
        Citation("decode-cliff-1096", 15, 44, True, end_column=67),  # in the retracted heading
        # "(claim:X is retracted)" says so itself
        Citation("decode-cliff-1096", 34, 38, True, end_column=61),
    ]  # none from the code block


def test_retracts(cliff):
    assert cliff.retracted_ids == {"decode-cliff-1096"}


# --- callouts, lists and struck text --------------------------------------------------------


@pytest.fixture(scope="module")
def ceilings():
    return load("qwen3.8-27b-ceilings.md")


def test_callout_contexts(ceilings):
    assert ceilings.retractions == [
        RetractionContext("callout", Marker("corrected", "2026-08-01", ()), 3, 5),
        RetractionContext(
            "paragraph", Marker("superseded", "2026-08-20", ("drafter-depth-3",)), 11, 12
        ),
        RetractionContext(
            "callout", Marker("retracted", "2026-09-08", ("decode-cliff-1096",)), 14, 16
        ),
        RetractionContext("callout", Marker("superseded", "2026-08-20", ()), 18, 20),
        RetractionContext("paragraph", Marker("corrected", "2026-08-03", ()), 24, 24),
    ]


def test_corrected_callout_covers_old_wording(ceilings):
    [callout] = blocks_with(ceilings, '"0.95 is safe on this model"')
    assert callout.retraction == ceilings.retractions[0]
    assert callout.line_texts[0] == (3, "⚠️ Corrected 2026-08-01 (#838). This list previously said")


def test_github_alert_marker_on_second_line(ceilings):
    [quote] = blocks_with(ceilings, OLD_CLIFF)
    assert quote.retraction.kind == "callout"
    assert quote.line_texts[0] == (14, "[!WARNING]")


def test_github_alert_marker_in_next_paragraph(ceilings):
    assert block_at(ceilings, 18).retraction == ceilings.retractions[3]
    assert block_at(ceilings, 20).retraction == ceilings.retractions[3]


def test_plain_quote_is_not_a_callout_but_its_marked_paragraph_is(ceilings):
    assert block_at(ceilings, 22).retraction is None  # "we retracted" has no date
    assert block_at(ceilings, 24).retraction == ceilings.retractions[4]


def test_struck_text_removed_and_recorded(ceilings):
    item = block_at(ceilings, 7)
    assert item.text == (
        "gpu_memory_utilization: 0.90 is the ceiling\n(see claim:gpu-util-ceiling-090)."
    )
    assert item.struck == ("0.95 is safe on this model",)
    assert item.retraction is None  # struck text is not a retraction context


def test_list_item_marker_covers_nested_items(ceilings):
    assert block_at(ceilings, 11).text == (
        "Superseded 2026-08-20 (claim:drafter-depth-3): drafter depth 3"
    )
    assert block_at(ceilings, 12).retraction == ceilings.retractions[1]
    assert block_at(ceilings, 10).retraction is None


def test_nested_list_items_are_blocks(ceilings):
    assert [(b.line, b.text) for b in ceilings.blocks if b.line in (9, 10)] == [
        (9, "max_num_seqs: 64 with fp8 KV"),
        (10, "128 only with max_model_len ≤ 32768"),
    ]


def test_ceilings_citations_and_retracts(ceilings):
    assert ceilings.citations == [
        Citation("gpu-util-ceiling-090", 8, 8, False),
        Citation("drafter-depth-3", 11, 28, True),
        Citation("decode-cliff-1096", 15, 46, True),
    ]
    assert ceilings.retracted_ids == {"drafter-depth-3", "decode-cliff-1096"}
    assert ceilings.front_matter == {}


# --- the same wording with no retraction context --------------------------------------------


@pytest.fixture(scope="module")
def stale():
    return load("qwen3.8-27b-stale.md")


def test_same_wording_outside_retraction(stale, cliff):
    assert [b.retraction for b in blocks_with(stale, OLD_CLIFF)] == [None, None]
    assert [b.retraction for b in blocks_with(cliff, OLD_CLIFF) if b.kind != "code"] == [
        CLIFF_CONTEXT
    ]


def test_unstruck_wording_is_kept(stale, ceilings):
    [live] = blocks_with(stale, "0.95 is safe on this model")
    assert live.text == "gpu_memory_utilization: 0.95 is safe on this model"
    assert live.struck == ()
    assert "0.95" not in block_at(ceilings, 7).text


def test_marker_words_without_date_are_not_contexts(stale):
    assert stale.retractions == []
    assert stale.retracted_ids == set()


def test_longer_words_are_not_citations(stale):
    assert stale.citations == [Citation("decode-cliff-1096", 3, 81, False)]


# --- front matter ---------------------------------------------------------------------------


def test_bad_front_matter_fixture():
    with pytest.raises(GuardsError) as caught:
        load("bad-front-matter.md")
    error = caught.value
    assert (error.path, error.line) == ("learnings/bad-front-matter.md", 4)
    assert str(error).startswith("learnings/bad-front-matter.md:4:")
    assert "YAML error" in error.message


@pytest.mark.parametrize(
    "text, line, column, message",
    [
        ("---\ntitle: x\n", 1, None, "front matter opened with '---' is never closed"),
        ("---\n", 1, None, "front matter opened with '---' is never closed"),
        ("---\n- a\n- b\n---\n", 1, None, "front matter must be a mapping"),
        ("---\njust text\n---\n", 1, None, "front matter must be a mapping"),
        ("---\na: 1\nb: [\n---\n", 4, 1, None),
        ("---\na: 1\n  b: 2\n---\n", 3, 4, None),
        (
            "---\nclaims: {a: b}\n---\n",
            2,
            None,
            "front matter 'claims' must be a claim id or a list of claim ids",
        ),
        (
            "---\nretracts:\n  - ok-id\n  - 12\n---\n",
            4,
            None,
            "front matter 'retracts' must be a claim id or a list of claim ids",
        ),
        (
            "---\nclaims: Decode Cliff\n---\n",
            2,
            None,
            "front matter 'claims': 'Decode Cliff' is not a kebab-case claim id",
        ),
        ("---\nx: !!python/name:os.system\n---\n", 2, 4, None),
    ],
)
def test_front_matter_errors(text, line, column, message):
    with pytest.raises(GuardsError) as caught:
        parse_note(text, "n.md")
    error = caught.value
    assert (error.path, error.line, error.column) == ("n.md", line, column)
    if message is not None:
        assert error.message == message


def test_front_matter_ids_as_string_or_list():
    note = parse_note("---\nclaims: a-1\nretracts: [b-2, c-3]\n---\nbody\n", "n.md")
    assert note.citations == [
        Citation("a-1", 2, 9, False, front_matter=True),
        Citation("b-2", 3, 12, True, front_matter=True),
        Citation("c-3", 3, 17, True, front_matter=True),
    ]
    assert note.retracted_ids == {"b-2", "c-3"}
    assert note.blocks[0].line_texts == ((5, "body"),)


def test_empty_retracts_key():
    note = parse_note("---\nretracts:\n---\n", "n.md")
    assert note.citations == []
    assert note.retracted_ids == set()


def test_dots_close_front_matter():
    note = parse_note("---\na: 1\n...\n# H\n", "n.md")
    assert note.front_matter == {"a": 1}
    assert note.sections == [Section("H", 1, 4, 4)]


def test_rule_later_in_file_is_not_front_matter():
    note = parse_note("# H\n\n---\na: 1\n---\n", "n.md")
    assert note.front_matter == {}


# --- edge cases -----------------------------------------------------------------------------


def test_empty_file():
    note = parse_note("", "n.md")
    assert (note.front_matter, note.sections, note.blocks, note.retractions, note.citations) == (
        {},
        [],
        [],
        [],
        [],
    )
    assert note.retracted_ids == set()


def test_only_front_matter():
    note = parse_note("---\nretracts: gone-1\n---\n", "n.md")
    assert note.blocks == [] and note.sections == []
    assert note.citations == [Citation("gone-1", 2, 11, True, front_matter=True)]
    assert note.retracted_ids == {"gone-1"}


def test_empty_front_matter():
    assert parse_note("---\n---\ntext\n", "n.md").blocks[0].line == 3


def test_blocks_before_first_heading_have_section_minus_one():
    note = parse_note("intro\n\n# H\n", "n.md")
    assert [(b.text, b.section) for b in note.blocks] == [("intro", -1), ("H", 0)]


def test_paragraph_marker_must_open_the_paragraph():
    text = "We found it was retracted 2026-09-08.\n\n⚠️ **Retracted 2026-09-08**: the cliff.\n"
    note = parse_note(text, "n.md")
    assert [b.retraction is not None for b in note.blocks] == [False, True]
    assert note.retractions == [
        RetractionContext("paragraph", Marker("retracted", "2026-09-08", ()), 3, 3)
    ]


def test_heading_marker_anywhere_in_heading():
    note = parse_note("## The decode cliff (RETRACTED, claim:cliff-1)\n\nold text\n", "n.md")
    assert note.retractions == [
        RetractionContext("heading", Marker("retracted", None, ("cliff-1",)), 1, 3)
    ]


def test_innermost_context_wins():
    text = (
        "## Retracted 2026-09-08\n\n> Corrected 2026-09-10: the date above.\n> old words\n\nafter\n"
    )
    note = parse_note(text, "n.md")
    heading, callout = note.retractions
    assert (heading.kind, heading.line, heading.end_line) == ("heading", 1, 6)
    assert (callout.kind, callout.line, callout.end_line) == ("callout", 3, 4)
    assert [b.retraction.kind for b in note.blocks] == ["heading", "callout", "heading"]


def test_struck_citation_counts_as_retracted_mention():
    note = parse_note("Use ~~claim:old-1~~ claim:new-2 now.\n", "n.md")
    assert note.citations == [Citation("old-1", 1, 7, True), Citation("new-2", 1, 21, False)]
    assert note.blocks[0].text == "Use claim:new-2 now."
    assert note.blocks[0].struck == ("claim:old-1",)


def test_struck_across_lines():
    note = parse_note("a ~~old\nwords~~ new\n", "n.md")
    assert note.blocks[0].struck == ("old\nwords",)
    assert note.blocks[0].line_texts == ((1, "a"), (2, "new"))


def test_citation_columns_follow_markup():
    note = parse_note("- **see** `claim:a-1` and claim:a-1\n", "n.md")
    assert [(c.claim_id, c.line, c.column) for c in note.citations] == [
        ("a-1", 1, 12),
        ("a-1", 1, 27),
    ]


def test_links_and_images_become_text():
    note = parse_note("[the claim:a-1 page](https://x/claim:b-2) ![alt *x*](i.png)\n", "n.md")
    assert note.blocks[0].text == "the claim:a-1 page alt x"
    assert [c.claim_id for c in note.citations] == ["a-1"]  # not the URL


def test_code_blocks_have_no_citations():
    text = "```\nclaim:in-fence\n```\n\n    claim:indented\n\n<!-- claim:in-html -->\n"
    note = parse_note(text, "n.md")
    assert note.citations == []
    assert [(b.kind, b.line, b.line_texts) for b in note.blocks] == [
        ("code", 1, ((2, "claim:in-fence"),)),
        ("code", 5, ((5, "claim:indented"),)),
    ]


def test_setext_heading_and_trailing_hashes():
    note = parse_note("Title\n=====\n\n### Sub ###\n\nSecond\n------\n", "n.md")
    assert note.sections == [
        Section("Title", 1, 1, 7),
        Section("Sub", 3, 4, 4),
        Section("Second", 2, 6, 7),
    ]


def test_multi_line_setext_heading():
    note = parse_note("Retracted claim:x-1\nthe old title\n---\nbody\n", "n.md")
    assert note.sections == [Section("Retracted claim:x-1 the old title", 2, 1, 4)]
    assert note.blocks[0].text == "Retracted claim:x-1\nthe old title"
    assert note.blocks[0].line_texts == ((1, "Retracted claim:x-1"), (2, "the old title"))
    assert note.retractions[0].kind == "heading"


def test_hard_break_is_a_newline():
    note = parse_note("one\\\ntwo  \nthree\n", "n.md")
    assert note.blocks[0].text == "one\ntwo\nthree"


def test_loose_list_item_context_ends_at_its_text():
    text = "- Corrected 2026-08-01: x\n\n  more\n\n- next\n"
    note = parse_note(text, "n.md")
    assert [(c.line, c.end_line) for c in note.retractions] == [(1, 3)]
    assert [b.retraction is not None for b in note.blocks] == [True, True, False]


# --- import cost and speed ------------------------------------------------------------------


def test_markdown_it_imported_lazily():
    code = "import sys, guards.sources.notes.notes; print('markdown_it' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_parse_300_lines_fast():
    parts = [
        (FIXTURES / name).read_text(encoding="utf-8")
        for name in (
            "qwen3.8-27b-decode-cliff.md",
            "qwen3.8-27b-ceilings.md",
            "qwen3.8-27b-stale.md",
        )
    ]
    text = parts[0] + "\n".join(parts[1:] * 10)
    text = "\n".join(text.split("\n")[:300])
    parse_note(text, "n.md")  # warm the cached parser
    best = min(_timed(parse_note, text) for _ in range(5))
    assert best < 0.05  # measured ~7 ms; the bound only catches pathological regressions


def _timed(function, text):
    start = time.process_time()  # CPU time: another worker's load does not count
    function(text, "n.md")
    return time.process_time() - start
