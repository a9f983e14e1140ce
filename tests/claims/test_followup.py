"""Follow-ups: passages that act on a claim on a condition ("un-park ... when #40211 is
fixed") are labelled in `guards claims find` and ranked right below its restatements, above
passages that merely share its words; `guards check` does not report them."""

import pytest

from guards.claims.followup import condition, names_subject

from ..cli_helpers import run_guards, write

CLAIMS = """\
claims:
  - id: fp8-prefix-corruption
    title: prefix caching corrupts fp8_e5m2 outputs
    status: retracted
    retracted: 2026-10-02
    reason: A tokenizer bug in the image, fixed in the pin (#40211); prefix caching never was the cause.
    replacement: Prefix caching is safe with an fp8_e5m2 KV cache on gemma-4-31b since the tokenizer fix.
    text: >-
      Prefix caching with an fp8_e5m2 KV cache corrupts long outputs on gemma-4-31b
      (#40211); keep --enable-prefix-caching off on every tier.
"""
BODY = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--served-model-name, gemma-4-31b, --kv-cache-dtype, fp8_e5m2]
"""
NOTE = """\
# gemma-4-31b

## Parked

Un-park prefix caching on the fp8_e5m2 tiers when #40211 is fixed.

## Caching

Prefix caching with a bf16 KV cache keeps long outputs intact on gemma-4-31b; the bf16 tiers
keep it on.

## Tiers

Revisit every tier's KV cache size when the next release lands. Re-test gemma-4-31b once the
new image ships.
"""
ESTATE = {
    "claims.yaml": CLAIMS,
    "guards.toml": '[header]\npreset = "profile"\n',
    # two restatements: one verbatim, one re-wrapped under another heading
    "composes/gemma/fast.yml": (
        "# Prefix caching with an fp8_e5m2 KV cache corrupts long outputs on gemma-4-31b\n"
        "# (#40211); keep --enable-prefix-caching off on every tier.\n" + BODY
    ),
    "composes/gemma/long.yml": (
        "# Long-context tier.\n#\n# Prefix caching with an fp8_e5m2 KV cache corrupts\n"
        "# long outputs on gemma-4-31b (#40211); keep\n# --enable-prefix-caching off on every "
        "tier.\n" + BODY
    ),
    # one follow-up, one passage sharing many words, one conditional about something else
    "learnings/gemma.md": NOTE,
}
RESTATED = (
    "       words: caching, corrupts, kv, prefix, gemma · numbers and ids: 40211, fp8_e5m2, 31b · "
    'repeats: "prefix caching with an fp8_e5m2 kv cache corrupts…"\n'
    "       > Prefix caching with an fp8_e5m2 KV cache corrupts long outputs on gemma-4-31b "
    "(#40211); keep --enab…\n"
)


def test_find_ranks_the_follow_up_below_the_restatements(capsys, tmp_path):
    root = write(tmp_path, ESTATE)
    result = run_guards(capsys, "claims", "find", "fp8-prefix-corruption", "--root", str(root))
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "fp8-prefix-corruption (retracted 2026-10-02): 4 passages share its words\n"
        " 1.00  stale       composes/gemma/fast.yml:1-2\n" + RESTATED +
        " 1.00  stale       composes/gemma/long.yml:3-5\n" + RESTATED +
        " 0.48  follow-up   learnings/gemma.md:5\n"
        '       acts on it: "when 40211 is fixed" · words: caching, prefix, on · numbers and '
        "ids: 40211, fp8_e5m2\n"
        "       > Un-park prefix caching on the fp8_e5m2 tiers when #40211 is fixed.\n"
        " 0.62  candidate   learnings/gemma.md:9-10\n"
        "       words: caching, kv, prefix, gemma, outputs, cache, keep · numbers and ids: 31b · "
        'repeats: "prefix caching with"; "on gemma 4 31b"\n'
        "       > Prefix caching with a bf16 KV cache keeps long outputs intact on gemma-4-31b; "
        "the bf16 tiers keep i…\n"
    )  # fmt: skip


def test_check_reports_the_restatements_only(capsys, tmp_path):
    root = write(tmp_path, ESTATE)
    result = run_guards(capsys, "check", "--root", str(root), "--select", "C001")
    assert [line.split(":")[0] for line in result.out.splitlines()[:-1]] == [
        "composes/gemma/fast.yml",
        "composes/gemma/long.yml",
    ]


@pytest.mark.parametrize(
    "sentence, found",
    [
        ("un park the spec decode tiers when 1096 recovers", "when 1096 recovers"),
        ("re enable mtp once the fix lands", "once the fix lands"),
        ("keep it off until 40211 is fixed", "until 40211 is fixed"),
        ("revisit the ceiling after the next pin", "revisit the ceiling after the next pin"),
        ("the re test 1232 found decode flat", None),  # a report of a re-test, no condition
        ("from 2026 08 25 until the retraction the composes carried this", None),
        ("the harness was fixed in 1218", None),
    ],
)
def test_a_condition_is_an_action_on_a_condition_or_a_recovery(sentence, found):
    assert condition(sentence) == found


def test_the_subject_needs_a_rare_word_and_a_share_of_a_statement():
    assert names_subject({"prefix", "caching", "40211"}, set(), 0.48)
    assert not names_subject({"prefix", "caching"}, set(), 0.48)  # plain words only
    assert not names_subject({"40211"}, set(), 0.2)  # the issue alone, little else
    assert names_subject({"tiers"}, {"4-6"}, 0.31)  # a figure of the claim
