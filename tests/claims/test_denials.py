"""Denials: a match phrase that says its subject does not work ("CUDA graphs do not work with
the DFlash2 drafter") is repeated by a sentence that denies the same subject in other words
("are unsupported", "are not available", "never work") and keeps the phrase's other
distinctive words; a condition, another clause's denial, a denial of another thing, a choice
not to use it, a retraction quoting it and the replacement stay quiet."""

import pytest

from guards.claims.denial import denial_after, denied, predicate_end, spans
from guards.claims.textmatch import words
from guards.claims.tokens import tokenize

from ..cli_helpers import run_guards, write

CLAIMS = """\
claims:
  - id: cuda-graphs-dflash
    title: CUDA graphs do not work with the DFlash2 drafter
    status: retracted
    retracted: 2026-10-14
    reason: The crash was an image built without the graph-capture patch (vllm#48812).
    replacement: CUDA graphs run with the DFlash2 drafter on the fixed image; drop --enforce-eager.
    text: >-
      CUDA graphs do not work with the DFlash2 drafter (vllm#48812): every DFlash2 tier must
      pass --enforce-eager, at a 9-12% decode cost.
    match: ["CUDA graphs do not work with the DFlash2 drafter"]
"""
BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
COMMENTS = {
    # denied in other words: stale
    "unsupported": "# CUDA graphs are unsupported with a DFlash2 drafter; keep --enforce-eager.\n",
    "coordinated": (
        "# DFlash2 tier.\n#\n# CUDA graphs are a known gap here and are not available\n"
        "# to a DFlash2 drafter, whatever the image.\n"
    ),
    # controls
    "condition": (
        "# If CUDA graphs are not available to the DFlash2 drafter, the engine falls back to "
        "eager.\n"
    ),
    "clause": "# CUDA graphs stay on, but the DFlash2 drafter is not supported on TP=4.\n",
    "other": "# CUDA graphs are not supported on the CPU-offload tier.\n",
    "choice": "# CUDA graphs are not used by the DFlash2 drafter tier: it runs eager by choice.\n",
    "retraction": (
        '# Retracted 2026-10-14 (claim:cuda-graphs-dflash): "CUDA graphs are not available to a\n'
        '# DFlash2 drafter" was the old image.\n'
    ),
    "replacement": (
        "# CUDA graphs run with the DFlash2 drafter on the fixed image; drop --enforce-eager.\n"
    ),
}
NOTE = """\
# DFlash2

| tier | graphs |
|---|---|
| dflash2-tp2 | CUDA graphs never work with this DFlash2 drafter build |
| dflash2-tp4 | captured at boot |
"""
FOUND = (
    "C001 repeats withdrawn claim cuda-graphs-dflash ({lines}), retracted 2026-10-14: The crash "
    "was an image built without the graph-capture patch (vllm#48812).\n"
    "    hint: say instead: CUDA graphs run with the DFlash2 drafter on the fixed image; drop "
    "--enforce-eager.\n"
)


def test_check_finds_the_denials_and_not_the_controls(capsys, tmp_path):
    files = {f"composes/{name}.yml": text + BODY for name, text in COMMENTS.items()}
    root = write(tmp_path, {"claims.yaml": CLAIMS, "learnings/dflash.md": NOTE, **files})
    result = run_guards(capsys, "check", "--root", str(root), "--select", "C001", "-v")
    assert result.code == 1
    assert result.out == (
        "composes/coordinated.yml:3:1: " + FOUND.format(lines="line 3")
        + "composes/unsupported.yml:1:1: " + FOUND.format(lines="line 1")
        + "learnings/dflash.md:5:1: " + FOUND.format(lines="line 5")
        + "guard suite: 6 pass / 3 fail\n"
    )  # fmt: skip


@pytest.mark.parametrize(
    "text, end",
    [
        ("is not available", 2),
        ("does not work at all", 2),
        ("doesn't run", 2),
        ("won't work", 2),
        ("cannot be used", None),  # a denial of use, not of working
        ("cannot run", 1),
        ("is likewise unavailable", 2),
        ("unsupported", 0),
        ("is not yet supported", 3),
        ("will not be available", 3),
        ("never works", 1),
        ("is not only available on the B200", None),  # affirms
        ("is not used", None),
        ("works", None),
    ],
)
def test_a_denial_is_an_auxiliary_a_negation_and_a_word_of_working(text, end):
    assert predicate_end(words(text), 0) == end


@pytest.mark.parametrize(
    "text, found",
    [
        ("nvfp4 kv is not available", "nvfp4 kv is not available"),
        (
            "nvfp4 kv is a different story and is not available",
            "nvfp4 kv is a different story and is not available",
        ),
        ("nvfp4 kv on sm_120 with the stock image and its pin is not available", None),  # far
        ("nvfp4 kv works where fa3 is not available", None),  # another clause
        ("nvfp4 kv helps but fa3 is not supported", None),
        ("if nvfp4 kv is not available fall back to fp8", None),  # a condition
        ("do not use nvfp4 kv", None),  # advice
    ],
)
def test_the_subject_is_denied_in_its_own_clause(text, found):
    sequence = words(text)
    start = sequence.index("nvfp4")
    last = denial_after(sequence, start, start + 1, (0, len(sequence) - 1))
    assert (None if last is None else " ".join(sequence[start : last + 1])) == found


@pytest.mark.parametrize(
    "phrase, subject, kept",
    [
        ("nvfp4 KV does not work at all", ("nvfp4", "kv"), set()),
        ("so the nvfp4 KV does NOT work here", ("nvfp4", "kv"), set()),
        ("CUDA graphs do not work with the DFlash2 drafter", ("cuda", "graphs"), {"dflash2"}),
        ("DATACENTER Blackwell only", None, None),  # denies nothing
        ("the one does not work", None, None),  # no distinctive subject
    ],
)
def test_a_phrase_denies_its_subject_and_keeps_its_distinctive_words(phrase, subject, kept):
    distinctive = {"nvfp4", "kv", "cuda", "graphs", "dflash2", "datacenter", "blackwell"}
    found = denied(words(phrase), distinctive)
    assert found == (None if subject is None else (subject, frozenset(kept)))


@pytest.mark.parametrize(
    "text, found",
    [
        ("NVFP4 *KV* is not available here.", ["nvfp4 kv is not available"]),
        ("NVFP4 weights and KV are not available.", []),  # no "nvfp4 KV" in one run of words
        ("NVFP4 KV is fine. FP8 KV is not available.", []),  # another sentence's denial
        ("CUDA graphs are unsupported with a DFlash2 drafter.", ["cuda graphs are unsupported"]),
        ("CUDA graphs are unsupported on the CPU tier.", []),  # the phrase's DFlash2 is not kept
    ],
)
def test_a_passage_denies_the_whole_subject_and_keeps_the_phrase_words(text, found):
    denials = [(("nvfp4", "kv"), frozenset()), (("cuda", "graphs"), frozenset({"dflash2"}))]
    tokens = tokenize([[(1, text)]])
    said = [" ".join(tokens.sequence[a : b + 1]) for a, b in spans(tokens, denials)]
    assert said == found
