"""KV-pool figures in comments and what each was measured at (guards/figures.py), the GPU
memory table and the rescaling arithmetic (guards/kv.py)."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from guards.facts.figures import (
    Naming,
    Setting,
    compose_names,
    elsewhere,
    estate_names,
    find_figures,
    measured_at,
    same_setting,
    tokens,
)
from guards.facts.kv import GIB, gpu_memory, rescaled_pool
from guards.rules.max_num_seqs import Options


def comments(text: str, first: int = 1) -> list[tuple[int, int, str]]:
    """Comment lines as the compose parser gives them: the text after ``#`` starts at
    column 2."""
    return [(first + i, 2, line[1:]) for i, line in enumerate(text.splitlines())]


def read(text: str, names: tuple[str, ...] = (), own: tuple[str, ...] = ()) -> list[tuple]:
    """(line, column, kind, value, text, {kind: (value, as written)}) of every figure."""
    return [
        (
            f.line,
            f.column,
            f.kind,
            f.value,
            f.text,
            {q.kind: (q.value, q.text) for q in f.qualifiers},
        )
        for f in find_figures(comments(text), estate_names(names), own)
    ]


# -- figures ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "kind", "value", "written"),
    [
        ("# KV pool 415,744 tok", "pool", 415744, "KV pool 415,744 tok"),
        ("# KV pool: 806,821", "pool", 806821, "KV pool: 806,821"),
        ("# KV pool ~944K", "pool", 944000, "KV pool ~944K"),
        ("# KV pool ~0.8M tok", "pool", 800000, "KV pool ~0.8M tok"),
        ("# KV pool 9.9 GiB / 301,204 tok", "pool", 301204, "KV pool 9.9 GiB / 301,204 tok"),
        ("# KV pool at 0.85: 120,000 tok", "pool", 120000, "KV pool at 0.85: 120,000 tok"),
        (
            "# boot: GPU KV cache size: 99,328 tokens",
            "pool",
            99328,
            "GPU KV cache size: 99,328 tokens",
        ),
        ("# a 1,400,000-token fp8 KV pool", "pool", 1400000, "1,400,000-token fp8 KV pool"),
        ("# 3.40× concurrency", "concurrency", 3.4, "3.40× concurrency"),
        ("# 6.25 × 64K sequences", "concurrency", 6.25, "6.25 × 64K sequences"),
        (
            "# Maximum concurrency for 65,536 tokens per request: 2.50x",
            "concurrency",
            2.5,
            "Maximum concurrency for 65,536 tokens per request: 2.50",
        ),
    ],
)
def test_each_way_of_writing_a_figure(line, kind, value, written):
    [(_, _, found_kind, found_value, text, _)] = read(line)
    assert (found_kind, found_value, text) == (kind, value, written)


@pytest.mark.parametrize(
    "line",
    [
        "# KV pool 14.68 GiB",  # memory, not tokens
        "# KV pool 2048 MiB",
        "# KV pool size (default: 131072 — native)",  # an env table's description
        "# KV pool + cudagraphs + scratch",
        "# a 131,072-token window. TP=2 runs",
        "# 2.5x faster prefill",
    ],
)
def test_look_alikes_are_not_figures(line):
    assert read(line) == []


def test_precision_is_what_the_writer_wrote():
    found = find_figures(
        comments("# KV pool 806,821 tok\n#\n# KV pool ~0.8M tok\n#\n# 2.3× concurrency")
    )
    assert [(f.unit, f.scaled) for f in found] == [(1, False), (100_000, True), (0.1, False)]


def test_line_and_column_of_a_figure_wrapped_over_two_lines():
    text = "#   KV:        fp8 — 1,202,000-token\n#              pool, enough for four streams"
    said = {"kv": ("fp8_e4m3", "KV: fp8")}  # the field's own dtype, in the same sentence
    assert read(text) == [(1, 22, "pool", 1202000, "1,202,000-token pool", said)]


def test_lines_are_counted_from_where_the_comments_start():
    found = find_figures(comments("# x\n# KV pool 100,000 tok", first=40))
    assert [(f.line, f.column) for f in found] == [(41, 11)]


# -- qualifiers -------------------------------------------------------------------------------


def test_the_qualifiers_of_a_figure_measured_elsewhere():
    text = "# Validated on the 2-card proxy: KV pool 295K tok — tight on 2 cards, fine on 4"
    assert read(text) == [(1, 42, "pool", 295000, "KV pool 295K tok", {"gpus": (2, "2-card")})]


@pytest.mark.parametrize(
    ("text", "kind", "value", "written"),
    [
        ("# KV pool 1 tok on 2×3090", "gpus", 2, "2×3090"),
        ("# KV pool 1 tok on 4x 4090", "gpus", 4, "4x 4090"),
        ("# KV pool 1 tok on 2×24 GB", "gpus", 2, "2×24 GB"),
        ("# KV pool 1 tok at TP=4", "tp", 4, "TP=4"),
        ("# KV pool 1 tok, tensor-parallel-size 8", "tp", 8, "tensor-parallel-size 8"),
        ("# KV pool 1 tok on a dual-card rig", "gpus", 2, "dual-card"),
        ("# KV pool 1 tok on a single 5090", "gpus", 1, "single 5090"),
        ("# KV pool 1 tok on 8 GPUs", "gpus", 8, "8 GPUs"),
        ("# KV pool 1 tok @0.90", "util", 0.9, "@0.90"),
        ("# KV pool 1 tok at util 0.95", "util", 0.95, "util 0.95"),
        ("# KV pool 1 tok, 0.88 util", "util", 0.88, "0.88 util"),
        ("# KV pool 1 tok at 0.85", "util", 0.85, "at 0.85"),
        ("# KV pool 1 tok at 92% util", "util", 0.92, "92% util"),
        ("# KV pool 1 tok at 128K", "context", 131072, "at 128K"),
        ("# KV pool 1 tok @262144", "context", 262144, "@262144"),
        ("# KV pool 1 tok, 64K context", "context", 65536, "64K context"),
        ("# KV pool 1 tok with bf16 KV", "kv", "bf16", "bf16 KV"),
        ("# KV pool 1 tok (KV fp8)", "kv", "fp8_e4m3", "KV fp8"),
        ("# KV pool 1 tok, KV cache: q8_0", "kv", "q8_0", "KV cache: q8_0"),
        ("# the sibling's KV pool 1 tok", "source", "sibling's", "sibling's"),
    ],
)
def test_each_kind_of_qualifier(text, kind, value, written):
    text = text.replace(" 1 tok", " 100,000 tok")
    [(_, _, _, _, _, said)] = read(text)
    assert said == {kind: (value, written)}


@pytest.mark.parametrize(
    "text",
    [
        "# KV pool 100,000 tok; recall passed at 257,544 prompt tokens",  # a prompt length
        "# prefill 5,116 tok/s @10K, KV pool 100,000 tok",  # a speed's context
        "# KV pool 100,000 tok, single-stream",  # not a card count
        "# KV pool 100,000 tok. Tested on 4 cards, at 0.95 and at 262K.",  # another sentence
        "# KV pool 100,000 tok, 20.4 GiB/card",
    ],
)
def test_what_is_not_a_qualifier_of_the_figure(text):
    [(_, _, _, _, _, said)] = read(text)
    assert said == {}


def test_a_sentence_ends_at_a_stop_a_semicolon_a_middle_dot_and_a_new_field():
    text = (
        "#   Max ctx:   131072 on 2 cards (KV pool 301,204 tok; the old one at 0.95)\n"
        "#   Caveats:   at 0.85 · KV pool 310K tok · 4 cards"
    )
    assert read(text) == [
        (1, 43, "pool", 301204, "KV pool 301,204 tok", {"gpus": (2, "2 cards")}),
        (2, 34, "pool", 310000, "KV pool 310K tok", {}),
    ]


def test_the_nearest_qualifier_of_each_kind_counts():
    text = "# KV pool 400K tok on 2 cards at 0.90, KV pool 800K tok on TP=4 at 0.95"
    assert read(text) == [
        (
            1,
            11,
            "pool",
            400000,
            "KV pool 400K tok",
            {"gpus": (2, "2 cards"), "util": (0.9, "at 0.90")},
        ),
        (1, 48, "pool", 800000, "KV pool 800K tok", {"tp": (4, "TP=4"), "util": (0.95, "at 0.95")}),
    ]


def test_a_concurrency_names_its_own_context_first():
    text = "# boot at 256K: Maximum concurrency for 131,072 tokens per request: 1.10x"
    [(_, _, _, _, _, said)] = read(text)
    assert said == {"context": (131072, "131,072")}


def test_another_compose_named_beside_a_figure():
    text = "# dual/fast spends its 212,977-token pool on one stream; dual/max: KV pool 219,873 tok"
    assert read(text, ("dual/fast", "dual/max"), ("dual/max",)) == [
        (1, 24, "pool", 212977, "212,977-token pool", {"source": ("dual/fast", "dual/fast")}),
        (1, 76, "pool", 219873, "KV pool 219,873 tok", {}),  # dual/max is this compose
    ]


def test_compose_names_are_the_last_two_path_parts():
    assert compose_names("composes/qwen3.8-27b/vllm/dual/ultrafast.yml") == ("dual/ultrafast",)
    assert compose_names("c.yml") == ()


# -- a figure against a compose ---------------------------------------------------------------

SHIPPED = Setting(tp=4, gpus=4, util=0.9, context=131072, kv="bf16")


def figure(text: str):
    [found] = find_figures(comments(text))
    return found


def test_a_figure_measured_on_other_cards_is_elsewhere():
    found = figure("# on 2 cards: KV pool 295K tok")
    assert elsewhere(found, SHIPPED).text == "2 cards"


def test_a_context_written_in_k_is_the_shipped_one():
    found = figure("# KV pool 500K tok at 128K")
    assert elsewhere(found, SHIPPED) is None
    assert measured_at(found, SHIPPED) == SHIPPED


def test_util_and_kv_are_measured_settings_not_elsewhere():
    found = figure("# KV pool 500K tok @0.95 with fp8 KV")
    assert elsewhere(found, SHIPPED) is None
    assert measured_at(found, SHIPPED) == Setting(4, 4, 0.95, 131072, "fp8_e4m3")


def test_a_concurrency_times_its_context():
    assert tokens(figure("# 5.10× concurrency"), SHIPPED) == 668467
    at_64k = figure("# 5.10× concurrency at 64K")
    assert tokens(at_64k, measured_at(at_64k, SHIPPED)) == 334234


def test_settings_compare_what_both_know():
    assert same_setting(SHIPPED, Setting(util=0.9))
    assert same_setting(SHIPPED, Setting(context=128000, kv="fp16"))
    assert not same_setting(SHIPPED, Setting(util=0.95))
    assert not same_setting(SHIPPED, Setting(gpus=2))


# -- memory -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topology", "memory"),
    [
        ("Dual 3090 PCIe (TP=2, no NVLink)", (24.0, "3090")),
        ("4x RTX 4090", (24.0, "4090")),
        ("Single 5090 (TP=1)", (32.0, "5090")),
        ("2× A100 80GB SXM", (80.0, "A100 80GB")),
        ("A100-SXM4-40GB", (40.0, "A100-SXM4-40GB")),
        ("8× H100", (80.0, "H100")),
        ("L40S", (48.0, "L40S")),
        ("3090 + 4080 mixed", (16.0, "4080")),  # the tightest card sizes the pool
        ("Dual A100", None),  # sold with 40 and 80 GB: the size must be written
        ("Quad card rig", None),
        ("13090", None),
    ],
)
def test_gpu_memory_by_model(topology, memory):
    assert gpu_memory(topology) == memory


def test_rescaling_adds_the_utilisation_share_and_divides_by_bytes_per_token():
    # 0.05 of 24 GiB more at 32,768 B/token/card: +39,321.6 tokens
    assert rescaled_pool(212977, 0.90, 0.95, 24, 32768, 32768) == 252298
    # half the bytes per token: twice the tokens from the same memory
    assert rescaled_pool(212977, 0.90, 0.90, 0, 32768, 16384) == 425954
    assert rescaled_pool(1000, 0.9, 0.5, 24, 32768, 32768) == 0
    assert rescaled_pool(0, 0.90, 0.95, 1, GIB, GIB) == 0


# -- the K002 option --------------------------------------------------------------------------


@pytest.mark.parametrize("value", [32768, 0.25, 1])
def test_tokens_per_sequence_takes_a_count_or_a_fraction(value):
    assert Options.validate({"tokens-per-sequence": value}).tokens_per_sequence == value


@pytest.mark.parametrize("value", [1.5, 0, -1])
def test_tokens_per_sequence_refuses_a_partial_count_and_nothing(value):
    with pytest.raises(ValidationError):
        Options.validate({"tokens-per-sequence": value})


def _by_alternation(sentence: str, names: list[str], own: list[str]) -> list[tuple[int, str]]:
    """Mentions as one alternation of every name finds them (longest first), for comparison."""
    ordered = sorted(set(names) | set(own), key=lambda name: (-len(name), name))
    pattern = re.compile(
        r"(?<![\w/.-])(?:" + "|".join(map(re.escape, ordered)) + r")(?![\w/-])", re.I
    )
    mine = {name.lower() for name in own}
    return [
        (m.start(), m.group(0))
        for m in pattern.finditer(sentence)
        if m.group(0).lower() not in mine
    ]


NAME_PARTS = st.sampled_from(["dual", "single", "fp8", "fp8.mtp", "mtp-5", "Dual", "a_b", "x"])


@given(
    st.lists(st.tuples(NAME_PARTS, NAME_PARTS), min_size=1, max_size=6),
    st.lists(
        st.one_of(NAME_PARTS, st.sampled_from(["/", ".", "-", " ", "(", ")", ".yml", "'s", "é"])),
        max_size=14,
    ),
)
def test_naming_finds_what_one_alternation_of_every_name_finds(pairs, pieces):
    names = [f"{a}/{b}" for a, b in pairs]
    own, others = names[:1], names[1:]
    sentence = "".join(pieces)
    naming = Naming(estate_names(f"c/{n}.yml" for n in names), own)
    assert list(naming.others(sentence)) == _by_alternation(sentence, others, own)
