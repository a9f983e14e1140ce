import pytest

from guards.errors import GuardsError
from guards.sources.registry import parse

CLAIM = "  - id: {id}\n    title: t\n    status: {status}\n"


def test_minimal_registry_and_defaults():
    registry = parse("claims:\n" + CLAIM.format(id="a", status="active"), "claims.yaml")
    claim = registry.get("a")
    assert claim.line == 2 and claim.match == [] and claim.facts.kv_bytes_per_token == {}
    assert registry.ids == {"a"} and not claim.is_withdrawn


def test_strings_are_accepted_where_lists_are_expected():
    text = (
        "claims:\n"
        + CLAIM.format(id="a", status="retracted")
        + ("    match: one phrase\n    refs: '#1096'\n    applies_to: {model: qwen3.8-27b}\n")
    )
    claim = parse(text, "claims.yaml").get("a")
    assert claim.match == ["one phrase"] and claim.refs == ["#1096"]
    assert claim.applies_to.model == ["qwen3.8-27b"] and claim.is_withdrawn


def test_dates_are_parsed_from_strings():
    text = "claims:\n" + CLAIM.format(id="a", status="retracted") + "    retracted: 2026-09-08\n"
    assert str(parse(text, "claims.yaml").get("a").retracted) == "2026-09-08"


def test_empty_file_is_an_empty_registry():
    assert parse("", "claims.yaml").claims == ()
    assert parse("# nothing yet\n", "claims.yaml").claims == ()


@pytest.mark.parametrize(
    "tail, message",
    [
        ("    superseded_by: b\n", "claims.yaml:5: claims[0].superseded_by: unknown claim id 'b'"),
        (
            "    facts:\n      gpu_memory_utilization_max: 1.5\n",
            "claims.yaml:6: claims[0].facts.gpu_memory_utilization_max: input should be less than or "
            "equal to 1 (got 1.5)",
        ),
        (
            "    facts:\n      drafter_depth_max: [{method: mtp}]\n",
            "claims.yaml:6: claims[0].facts.drafter_depth_max[0].depth: required field is missing",
        ),
    ],
)
def test_invalid_claims_name_the_line_and_field(tail, message):
    with pytest.raises(GuardsError) as caught:
        parse("claims:\n" + CLAIM.format(id="a", status="active") + tail, "claims.yaml")
    assert str(caught.value) == message


def test_unknown_top_level_key():
    with pytest.raises(GuardsError) as caught:
        parse("version: 1\nclaim: []\n", "claims.yaml")
    assert str(caught.value) == "claims.yaml:2: claim: unknown field"
