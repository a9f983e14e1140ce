"""Claim guards beyond the incident: registry drift, unknown ids, incomplete retractions,
struck text, generated regions, and the text normalisation they rely on."""

from pathlib import Path

import pytest

from guards.compose import parse_compose
from guards.config import Config
from guards.errors import GuardsError
from guards.estate import Estate
from guards.notes import parse_note
from guards.registry import parse
from guards.rules import all_rules, select
from guards.suite import run
from guards.textmatch import normalise, words

REGISTRY = parse(
    """\
claims:
  - id: decode-cliff-1096
    title: Accumulated-context decode cliff
    status: retracted
    retracted: 2026-09-08
    reason: A harness artefact (#1218), not the engine. More detail follows.
    text: >-
      On the spec-decode tiers decode collapses once accumulated context passes a
      threshold: MTP n=3 falls off ~21k to 1.5–6 tok/s.
      Interim: MTP tier (higher cliff) or SPEC_N=0 for sustained >~20k.
    match: ["accumulated-context decode cliff"]
    replacement: A steady spec-decode tax that scales with drafter depth.
    superseded_by: spec-tax-35387
  - id: spec-tax-35387
    title: Spec tax
    status: active
  - id: old-ceiling
    title: 0.95 is safe
    status: superseded
    text: gpu-memory-utilization 0.95 is safe on this model with room to spare
""",
    "claims.yaml",
)
BODY = "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n"


def check(*targets, rules="C001,C002,C003"):
    estate = Estate(Path("."), Config(root=Path(".")), REGISTRY)
    for target in targets:
        (estate.notes if target.path.endswith(".md") else estate.composes).append(target)
    return [
        (f.rule, f.path, f.line, f.message)
        for r in run(estate, select(all_rules(), rules.split(","), [])).results
        for f in r.findings
    ]


def note(text):
    return parse_note(text, "learnings/n.md")


def compose(header):
    return parse_compose(header + BODY, "composes/c.yml")


def test_struck_copy_followed_by_the_correction_is_not_stale():
    text = (
        "# Long context\n\n~~On the spec-decode tiers decode collapses once accumulated "
        "context passes a threshold: MTP n=3 falls off ~21k to 1.5–6 tok/s.~~ It was our "
        "harness; see claim:spec-tax-35387.\n"
    )
    assert check(note(text)) == []


def test_generated_region_is_not_stale():
    header = (
        "# Profile (at-a-glance):\n#   Model:     Qwen3.8-27B\n"
        "# >>> guards:cliff\n# Interim: MTP tier (higher cliff) or SPEC_N=0 for sustained "
        ">~20k\n# <<< guards:cliff\n"
    )
    assert check(compose(header), rules="C001") == []
    assert check(compose(header.replace("guards:cliff", "guards-cliff")), rules="C001") != []


def test_unclosed_generated_region_is_an_input_error():
    with pytest.raises(GuardsError) as caught:
        compose("# >>> guards:x\n# text\n")
    assert str(caught.value) == "composes/c.yml:1: generated region guards:x is never closed"
    with pytest.raises(GuardsError) as caught:
        compose("# <<< guards:x\n")
    assert "closes a region that is not open" in str(caught.value)


def test_header_citing_a_withdrawn_claim_as_current():
    header = (
        "# Profile (at-a-glance):\n#   Model:  x\n# Decode cliff: see claim:decode-cliff-1096\n"
    )
    assert check(compose(header), rules="C002") == [
        (
            "C002",
            "composes/c.yml",
            3,
            "cites claim decode-cliff-1096 as current, but "
            "claims.yaml:2 lists it as retracted on 2026-09-08",
        )
    ]


def test_citation_inside_a_header_callout_is_fine():
    header = (
        "# ⚠️ RETRACTED 2026-09-08 (claim:decode-cliff-1096): it was the harness.\n"
        "#   See claim:spec-tax-35387.\n"
    )
    assert check(compose(header)) == []


def test_front_matter_retracting_an_active_claim_names_both_places():
    text = "---\nretracts: [spec-tax-35387]\n---\n# Notes\n"
    assert check(note(text), rules="C002") == [
        (
            "C002",
            "learnings/n.md",
            2,
            "retracts claim spec-tax-35387, but claims.yaml:14 lists it as active",
        )
    ]


def test_superseded_claim_cited_in_front_matter_claims_list():
    text = "---\nclaims: [old-ceiling]\n---\n# Notes\n"
    assert check(note(text), rules="C002") == [
        (
            "C002",
            "learnings/n.md",
            2,
            "cites claim old-ceiling as current, but claims.yaml:17 lists it as superseded",
        )
    ]


def test_unknown_claim_ids_with_a_suggestion():
    estate_findings = check(
        note("See claim:spec-tax-35378 and claim:nothing-like-it.\n"), rules="C003"
    )
    assert [m for *_, m in estate_findings] == [
        "cites claim spec-tax-35378, which claims.yaml does not define",
        "cites claim nothing-like-it, which claims.yaml does not define",
    ]


def test_unknown_claim_guard_is_off_without_a_registry():
    estate = Estate(
        Path("."),
        Config(root=Path(".")),
        parse("", "claims.yaml"),
        notes=[note("claim:whatever\n")],
    )
    assert run(estate, select(all_rules(), ["C003"], [])).results == ()


def test_incomplete_retraction_names_what_is_missing_and_a_citing_place():
    results = check(note("Old advice: claim:old-ceiling.\n"), rules="C004")
    assert results == [
        (
            "C004",
            "claims.yaml",
            17,
            "claim old-ceiling is superseded but lacks "
            "a retraction date (`retracted:`), a reason, a `replacement`; cited at "
            "learnings/n.md:1",
        )
    ]


def test_stale_copy_in_a_superseded_claim_without_replacement_says_remove():
    estate = Estate(
        Path("."),
        Config(root=Path(".")),
        REGISTRY,
        notes=[
            note(
                "We run gpu-memory-utilization 0.95 — it is safe on this model "
                "with room to spare.\n"
            )
        ],
    )
    found = [f for r in run(estate, select(all_rules(), ["C001"], [])).results for f in r.findings]
    assert [f.message for f in found] == [
        "repeats withdrawn claim old-ceiling (line 1), superseded"
    ]
    assert found[0].hint.startswith("remove it, or quote it inside a `Retracted")


@pytest.mark.parametrize(
    "raw, folded",
    [
        ("1.5–6 tok/s", "1.5-6 tok/s"),
        ("≈12k", "~12000"),
        ("~21,443 ctx", "~21443 ctx"),
        ("2×3090", "2x3090"),
        ("n ≥ 3", "n >= 3"),
        ("**collapses** at `SPEC_N=0`", " collapses  at  spec_n=0 "),
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
