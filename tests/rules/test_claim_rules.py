"""What the claim guards rely on: generated-region markers and the text normalisation (the rule
cases are in tests/rules/C00*.yml)."""

import pytest

from guards.claims.textmatch import normalise, words
from guards.sources.compose.compose import parse_compose

BODY = "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n"


def compose(header):
    return parse_compose(header + BODY, "composes/c.yml")


def test_unpaired_region_markers_are_collected_with_their_lines():
    def problems(header):
        return [(p.line, p.message) for p in compose(header).marker_problems]

    assert problems("# >>> guards:x\n# text\n") == [
        (1, "generated region guards:x is never closed")
    ]
    assert problems("# <<< guards:x\n") == [(1, "`<<< guards:x` closes a region that is not open")]
    assert problems("# >>> guards:a\n# >>> guards:a\n# <<< guards:a\n") == [
        (2, "generated region guards:a opens inside guards:a (opened at line 1)")
    ]
    assert compose("# >>> guards:a\n# <<< guards:a\n").marker_problems == []


@pytest.mark.parametrize(
    "raw, folded",
    [
        ("1.5–6 tok/s", "1.5-6 tok/s"),
        ("≈12k", "~12000"),
        ("~21,443 ctx", "~21443 ctx"),
        ("2×3090", "2x3090"),
        ("n ≥ 3", "n >= 3"),
        ("**collapses** at `SPEC_N=0`", "  collapses   at  spec_n=0 "),
        ("ACCUMULATED\u00a0CONTEXT", "accumulated context"),
    ],
)
def test_normalise(raw, folded):
    assert normalise(raw) == folded


def test_words_split_on_punctuation_and_keep_decimals():
    assert words("MTP n=3 (dual-max) falls off ~21K to 1.5—6 t/s") == [
        "mtp",
        "n",
        "3",
        "dual",
        "max",
        "falls",
        "off",
        "21000",
        "to",
        "1.5",
        "6",
        "t",
        "s",
    ]
