import dataclasses
import json
from pathlib import Path
from typing import get_args

import pytest

from guards.errors import GuardsError
from guards.sources import registry_schema
from guards.sources.registry import (
    STATUSES,
    AppliesTo,
    Claim,
    DepthLimit,
    Evidence,
    Facts,
    from_kept,
    parse,
)

from ..shelf import Shelf

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


# -- a kept registry: the validated data of the same text, checked as it is built ---------------


BUNDLED = (Path(__file__).resolve().parents[2] / "claims.yaml").read_text()


def test_a_kept_registry_builds_the_registry_validation_does(monkeypatch):
    shelf = Shelf()
    validated = parse(BUNDLED, "claims.yaml", shelf)
    assert len(shelf.data) == 1 and validated == parse(BUNDLED, "claims.yaml")

    def fail(text):
        raise AssertionError("validated again")

    monkeypatch.setattr(registry_schema, "validated", fail)
    kept = parse(BUNDLED, "claims.yaml", shelf)
    assert kept == validated and any(c.evidence and c.facts != Facts() for c in kept.claims)


@pytest.mark.parametrize(
    "damage",
    [
        lambda values: {"claims": values},  # another shape
        lambda values: [{**values[0], "status": "withdrawn"}],  # a value the schema refuses
        lambda values: [{**values[0], "unknown": 1}],  # a field this version lacks
        lambda values: [{**values[0], "retracted": "last week"}],
        lambda values: [{**values[0], "evidence": [{"figures": {"tps": "fast"}}]}],
        lambda values: [{**values[0], "line": "2"}],
        lambda values: "not json of ours",
    ],
)
def test_kept_data_that_does_not_build_the_claims_is_a_miss(damage):
    shelf = Shelf()
    good = parse(BUNDLED, "claims.yaml", shelf)
    shelf.data[BUNDLED] = json.dumps(damage(json.loads(shelf.data[BUNDLED])))
    assert from_kept(shelf.get(BUNDLED)) is None
    assert parse(BUNDLED, "claims.yaml", shelf) == good  # validated again, and kept again
    assert from_kept(shelf.get(BUNDLED)) is not None


def test_an_invalid_registry_gives_the_same_error_with_or_without_a_kept_one():
    text = "claims:\n" + CLAIM.format(id="a", status="withdrawn")
    errors = []
    for kept in (None, Shelf()):
        with pytest.raises(GuardsError) as raised:
            parse(text, "claims.yaml", kept)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and errors[0].startswith("claims.yaml:4: claims[0].status:")


def test_the_statuses_are_the_schemas():
    schema = registry_schema.Claim.model_fields["status"].annotation
    assert get_args(schema) == STATUSES


@pytest.mark.parametrize(
    "record, model",
    [
        (Claim, registry_schema.Claim),
        (Evidence, registry_schema.Evidence),
        (AppliesTo, registry_schema.AppliesTo),
        (Facts, registry_schema.Facts),
    ],
)
def test_each_record_has_the_fields_of_its_schema(record, model):
    assert [f.name for f in dataclasses.fields(record)] == list(model.model_fields)


def test_a_depth_limit_has_the_fields_of_its_schema():
    assert list(DepthLimit._fields) == list(registry_schema.DepthLimit.model_fields)
