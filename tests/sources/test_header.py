from guards.sources.compose.header import (
    PROFILE,
    Convention,
    convention,
    header_span,
    missing_selector,
    parse_header,
    status_of,
)

HEADER = """\
# ===========================================================================
# Profile (at-a-glance):
#   Model:     Qwen3.8-27B (AutoRound INT4 — 4-bit;
#              ~18 GiB, lm_head bf16)
#   Topology:  Dual 3090 PCIe (TP=2, no NVLink)
#   Drafter:   DFlash2 EXTERNAL block-drafter n=5
#              Toggle: SPEC_N=<n> sets depth; SPEC_N=0 disables
#   Max ctx:   204800 (~200K) — MEASURED (KV pool 212,977 tok)
#  a one-space-indented note inside the block
#   Caveats:
#     - first bullet
#       continued
#     - second bullet
#   Status:    🧪 Experimental
# ---------------------------------------------------------------------------
# WHY bf16 KV:
#   fp8 KV forces FlashInfer.
#
# ⚠️ MAX_NUM_SEQS=1 (single-stream).
# ⚠️ RETRACTED 2026-09-08 (claim:decode-cliff-1096). This header previously said:
#   "decode collapses past ~21k"
# ===========================================================================
# Requires-min-gpu-count: 2
# Tensor-parallel: 2
services:
  s: {}
"""


def parse(text=HEADER):
    return parse_header(text.split("\n"))


def test_header_spans_the_leading_comment_block():
    assert header_span(HEADER.split("\n")) == (1, 24)
    assert header_span(["", "# a", "", "# b", "x: 1", "# c"]) == (2, 4)
    assert header_span(["services:", "# late"]) == (0, 0)


def test_profile_fields_with_continuations_and_value_columns():
    header = parse()
    assert header.profile_line == 2
    assert [f.key for f in header.fields] == [
        "Model",
        "Topology",
        "Drafter",
        "Max ctx",
        "Caveats",
        "Status",
    ]
    model = header.field("model")
    assert (model.line, model.end_line, model.column) == (3, 4, 16)
    assert model.value == "Qwen3.8-27B (AutoRound INT4 — 4-bit;\n~18 GiB, lm_head bf16)"
    assert model.first_value == "Qwen3.8-27B (AutoRound INT4 — 4-bit;"
    drafter = header.field("Drafter")
    assert drafter.value.endswith("Toggle: SPEC_N=<n> sets depth; SPEC_N=0 disables")


def test_field_with_only_nested_bullets_takes_them_as_its_value():
    caveats = parse().field("Caveats")
    assert (caveats.line, caveats.end_line) == (10, 13)
    assert caveats.value == "- first bullet\ncontinued\n- second bullet"


def test_irregular_lines_are_notes_not_fields():
    header = parse()
    assert [(n.number, n.text.strip()) for n in header.notes] == [
        (9, "a one-space-indented note inside the block")
    ]
    assert header.field("Max ctx").end_line == 8


def test_field_lookup_folds_case_and_spacing():
    text = "# Profile (at-a-glance):\n#   MAX  ctx:   262144\n#   Default ctx: 200000\n"
    header = parse(text)
    assert header.field("Max ctx").value == "262144"
    assert header.field("default ctx", "max ctx").key == "MAX  ctx"


def test_prose_sections_split_on_blank_lines_and_warning_lines():
    sections = parse().sections
    assert [(s.line, s.title) for s in sections] == [
        (16, "WHY bf16 KV:"),
        (19, "⚠️ MAX_NUM_SEQS=1 (single-stream)."),
        (20, "⚠️ RETRACTED 2026-09-08 (claim:decode-cliff-1096). This header previously said:"),
        (23, "Requires-min-gpu-count: 2"),
    ]
    retracted = sections[2]
    assert retracted.end_line == 21
    assert retracted.retraction.kind == "retracted"
    assert retracted.retraction.claim_ids == ("decode-cliff-1096",)
    assert sections[0].retraction is None


def test_flat_key_value_lines():
    flat = parse().flat
    assert [(f.key, f.value, f.line, f.column) for f in flat] == [
        ("Requires-min-gpu-count", "2", 23, 27),
        ("Tensor-parallel", "2", 24, 20),
    ]
    assert parse().flat_value("tensor-parallel").value == "2"


def test_header_without_profile_block_keeps_flat_lines():
    header = parse("# Hardware metadata:\n# Tensor-parallel: 4\nservices: {}\n")
    assert header.present and header.profile_line is None and header.fields == ()
    assert header.flat_value("Tensor-parallel").value == "4"


def test_banner_before_the_profile_block_is_not_a_field():
    text = "# qwen3.8-27b — dual ultrafast\n#\n# Profile (at-a-glance):\n#   Model:   X\n"
    header = parse(text)
    assert header.profile_line == 3
    assert [f.key for f in header.fields] == ["Model"]


def test_no_header():
    header = parse("services:\n  s: {}\n")
    assert not header.present and header.fields == ()


def test_status_enum_and_the_variation_selector():
    assert status_of("✅ Production") == "production"
    assert status_of("⚠️ Production w/ caveats") == "caveats"
    assert status_of("👁️ Preview") == "preview"
    assert status_of("🗑️ Deprecated") == "deprecated"
    assert status_of("⚠ Production w/ caveats") is None  # bare U+26A0
    assert missing_selector("⚠ Production w/ caveats") == "⚠️"
    assert missing_selector("⚠️ Production w/ caveats") is None
    assert status_of("Production") is None and missing_selector("Production") is None


# -- the header convention --------------------------------------------------------------------


def test_no_settings_declare_no_convention():
    assert convention(None) is None and convention({}) is None


def test_the_preset_is_the_profile_block_and_given_keys_override_it():
    assert convention({"preset": "profile"}) == PROFILE
    narrowed = convention({"preset": "profile", "required": ["Model"]})
    assert narrowed.required == ("Model",) and narrowed.statuses == PROFILE.statuses
    assert narrowed.shown == "Profile (at-a-glance):"
    renamed = convention({"preset": "profile", "marker": "Card:"})
    assert (renamed.marker, renamed.shown, renamed.block) == ("Card", "Card:", "card")


def test_the_preset_reads_what_the_parser_read_before():
    assert parse(HEADER) == parse_header(HEADER.split("\n"), PROFILE)
    assert parse().convention is PROFILE


def test_without_a_convention_no_block_is_read_as_fields():
    header = parse_header(HEADER.split("\n"), None)
    assert header.present and header.profile_line is None and header.fields == ()
    assert header.sections[0].line == 2  # the block's lines are prose
    assert [f.key for f in header.flat] == ["Requires-min-gpu-count", "Tensor-parallel"]
    assert header.status() is None


CARD = """\
# 📋 Model card (tiny) =
#   Model = tiny-7b
#   Status = Ready for use
#   Profile: not a field here
services: {}
"""


def test_a_convention_of_its_own_marker_separator_and_vocabulary():
    card = Convention(marker="Model card", separator="=", statuses=(("ready", ("✅", "ready")),))
    header = parse_header(CARD.split("\n"), card)
    assert header.profile_line == 1
    assert [(f.key, f.value) for f in header.fields] == [
        ("Model", "tiny-7b"),
        ("Status", "Ready for use"),
    ]
    assert [n.text for n in header.notes] == ["   Profile: not a field here"]
    assert header.status() == "ready"
    assert parse_header(CARD.split("\n")).profile_line is None  # not a Profile block


def test_a_word_status_must_end_a_word():
    card = Convention(marker="Card", statuses=(("ready", ("ready",)), ("gone", ("🗑\ufe0f",))))
    assert card.status_of("READY now") == "ready" and card.status_of("ready") == "ready"
    assert card.status_of("readying") is None
    assert card.missing_selector("🗑 gone") == "🗑\ufe0f"
