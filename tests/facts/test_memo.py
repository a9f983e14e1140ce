"""Facts read once and shared: ``per_object`` computes a fact once per live object and forgets
it with the object; the rules that share a fact (K001 and K006 a note's invocations, C001's
passages a text's words, D006 the estate's composes by path) report exactly what they report
when each computes its own."""

from __future__ import annotations

import gc

import pytest

from guards.claims import tokens
from guards.facts import invocations
from guards.facts.memo import per_object
from guards.rules import unknown_flag, utilisation_ceiling
from guards.sources.notes.notes import parse_note
from tests.rule_cases import check, load_cases, outcome


class Parsed:
    """A stand-in for a parsed file (weakly referenceable, unhashable as dataclasses are)."""

    __hash__ = None  # type: ignore[assignment]


def test_a_fact_is_computed_once_per_object_and_forgotten_with_it():
    calls: list[object] = []

    @per_object
    def fact(target: Parsed) -> tuple[int, ...]:
        calls.append(target)
        return (len(calls),)

    first, second = Parsed(), Parsed()
    assert fact(first) is fact(first) == (1,)
    assert fact(second) == (2,)
    assert calls == [first, second]
    del first, second, calls[:]
    gc.collect()
    assert fact._kept == {}  # nothing kept for objects gone: their ids may be reused


NOTE = (
    "# Serving\n\n```bash\nvllm serve org/model --max-model-len 8192 \\\n"
    "    --gpu-memory-utilization 1.2 --not-a-flag 3\n```\n"
)


def test_a_notes_invocations_are_read_once_and_are_what_reading_them_again_gives():
    note = parse_note(NOTE, "learnings/serving.md")
    shared = invocations.note_invocations(note)
    assert invocations.note_invocations(note) is shared
    assert shared == invocations.note_invocations.__wrapped__(note)
    assert [i.engine for i in shared] == ["vllm"]


def _unshared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shared read computed afresh at each use."""
    fresh = invocations.note_invocations.__wrapped__
    for module in (invocations, unknown_flag, utilisation_ceiling):
        monkeypatch.setattr(module, "note_invocations", fresh)
    monkeypatch.setattr(tokens, "read", tokens.read.__wrapped__)


def test_k001_and_k006_report_the_same_with_the_invocations_shared_or_not(tmp_path, monkeypatch):
    files = {"learnings/serving.md": NOTE}
    together, _ = check("K006", files, tmp_path / "shared", also=["K001"])
    _unshared(monkeypatch)
    alone = [check(rule, files, tmp_path / rule)[0] for rule in ("K001", "K006")]
    found = sorted((f.rule, f.line, f.column, f.message) for f in together.findings)
    assert {f.rule for f in together.findings} == {"K001", "K006"}
    assert found == sorted((f.rule, f.line, f.column, f.message) for r in alone for f in r.findings)


SHARED_READS = ("C001", "C003", "C004", "D006", "D008", "K001", "K006")


@pytest.mark.parametrize(
    "case",
    [c for c in load_cases() if c.rule in SHARED_READS],
    ids=lambda c: f"{c.rule}-{c.name}",
)
def test_the_rule_cases_print_the_same_with_every_read_computed_afresh(case, tmp_path, monkeypatch):
    shared = outcome(case, tmp_path / "shared")
    _unshared(monkeypatch)
    assert outcome(case, tmp_path / "fresh") == shared


def test_a_text_pasted_at_other_lines_shares_its_words_not_its_lines():
    first = tokens.tokenize([[(3, "Use the MTP tier, not NVFP4 KV.")]])
    pasted = tokens.tokenize([[(40, "Use the MTP tier, not NVFP4 KV.")]])
    assert pasted.sequence is first.sequence  # read once
    assert first.lines == [3] * len(first) and pasted.lines == [40] * len(pasted)
    fresh = tokens.read.__wrapped__(tokens.joined([[(40, "Use the MTP tier, not NVFP4 KV.")]]))
    assert (pasted.normalised, pasted.unit_words, pasted.sequence) == fresh


def test_the_estates_composes_by_path_are_built_once_and_read_only(tmp_path):
    files = {"composes/a/one.yml": "services:\n  s:\n    image: x\n"}
    check("D006", files, tmp_path)  # writes the files
    from guards.run.estate import load_estate
    from guards.sources.config import Config

    estate = load_estate(Config(root=tmp_path, composes=("composes/**/*.yml",), notes=()))
    by_path = estate.composes_by_path
    assert by_path is estate.composes_by_path
    assert dict(by_path) == {c.path: c for c in estate.composes}
    with pytest.raises(TypeError):
        by_path["other"] = estate.composes[0]  # type: ignore[index]
