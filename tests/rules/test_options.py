"""Rule options: declared per rule, validated once, errors at the TOML file and line."""

import datetime as dt
import json
import subprocess
import sys
from dataclasses import replace

import pytest

from guards.errors import GuardsError
from guards.findings import Severity
from guards.rules import all_rules
from guards.rules.options import RuleOptions, load_options
from guards.sources.configfile import load_config

from ..cli_helpers import run_guards, tree_digest
from ..shelf import Shelf


def write(path, text):
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "config, error",
    [
        (
            '[rules.required-feilds]\nfields = ["Model"]\n',
            "guards.toml:1: rules.required-feilds: unknown rule (did you mean `required-fields`?)",
        ),
        (
            '[rules.max-num-seqs]\nkv-heads = 4\ngpu-memory-gib = "24"\n',
            "guards.toml:3: rules.max-num-seqs.gpu-memory-gib: input should be a valid number "
            "(got '24')",
        ),
        (
            "[rules.K001]\n\ndefault-cieling = 0.9\n",
            "guards.toml:3: rules.K001.default-cieling: unknown option (known: severity, "
            "default-ceiling)",
        ),
        (
            '[rules.stale-claim]\nseverity = "loud"\n',
            "guards.toml:2: rules.stale-claim.severity: input should be 'error', 'warning' or "
            "'info' (got 'loud')",
        ),
        (
            "[rules]\nK001 = {default-ceiling = 2}\n",
            "guards.toml:2: rules.K001.default-ceiling: input should be less than or equal to 1 "
            "(got 2)",
        ),
        (
            "[rules.K001]\ndefault-ceiling = 0.9\n[rules.utilisation-ceiling]\n"
            "default-ceiling = 0.8\n",
            "guards.toml:3: rules.utilisation-ceiling: options for K001 are given twice (by id "
            "and by name)",
        ),
        (
            '[tool.guards]\ncomposes = ["composes/*.yml"]\n[tool.guards.rules.nope]\nx = 1\n',
            "guards.toml:3: rules.nope: unknown rule (see `guards rules`)",
        ),
        (
            '[rules.header-drift]\nstatuses = "catalog.yaml"\n',
            "catalog.yaml: no such file",
        ),
    ],
)
def test_bad_rule_options_stop_the_run_at_the_toml_line(capsys, estate, config, error):
    write(estate / "guards.toml", config)
    before = tree_digest(estate)
    result = run_guards(capsys, "check", "--root", str(estate))
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")
    assert tree_digest(estate) == before


def test_options_in_pyproject_are_validated_too(capsys, estate):
    write(estate / "pyproject.toml", "[tool.guards]\n\n[tool.guards.rules.K001]\nceiling = 1\n")
    result = run_guards(capsys, "check", "--root", str(estate))
    assert result.err == (
        "guards: error: pyproject.toml:4: rules.K001.ceiling: unknown option (known: severity, "
        "default-ceiling)\n"
    )


def test_a_guards_toml_pasted_from_pyproject_works(capsys, estate):
    write(
        estate / "guards.toml",
        '[tool.guards]\ncomposes = ["composes/*.yml"]\n\n[tool.guards.rules.S003]\n'
        'fields = ["Model", "Runbook"]\n\n[tool.guards.header]\npreset = "profile"\n',
    )
    result = run_guards(capsys, "check", "--root", str(estate), "--select", "S003")
    assert result.code == 1
    assert result.out.count("S003 profile block has no Runbook field") == 2


def test_top_level_and_tool_table_together_is_an_error(capsys, estate):
    write(estate / "guards.toml", 'notes = []\n[tool.guards]\ncomposes = ["x"]\n')
    result = run_guards(capsys, "check", "--root", str(estate))
    assert result.err == (
        "guards: error: guards.toml:2: settings both at the top level and under [tool.guards]; "
        "keep one\n"
    )


def test_explain_lists_every_option_with_type_default_and_meaning(capsys):
    result = run_guards(capsys, "explain", "K002")
    tail = result.out.split("Options ([tool.guards.rules.max-num-seqs]):\n", 1)[1]
    assert tail.splitlines() == [
        "    severity (severity | None, default none): Report this rule's findings at this "
        "severity instead of its own.",
        "    gpu-memory-gib (float | None, default none): Memory of one GPU, GiB.",
        "    weights-gib (float | None, default none): Model weights, GiB (all cards).",
        "    reserved-gib (float | None, default none): Memory per card outside vLLM's pool "
        "(CUDA context, activations).",
        "    kv-heads (int | None, default none): KV heads: per-card KV divides by min(TP, KV "
        "heads).",
        "    kv-bytes-per-token (dict[str, int], default {}): Whole-model KV bytes per token, "
        "by dtype.",
        "    tokens-per-sequence (float | None, default none): Tokens to plan per sequence: a "
        "count (32768), or a fraction of max-model-len when at most 1 (0.25). Default: the full "
        "context.",
    ]


# -- the option classes are plain; a table is validated, or built from what it validated to -----


TABLES = {  # a table for each rule with options of its own, every kind of option among them
    "K001": {"default-ceiling": 0.9, "severity": "warning"},
    "K002": {"tokens-per-sequence": 0.25, "kv-bytes-per-token": {"fp8": 36864}, "kv-heads": 4},
    "K004": {"together": "all", "budget": 1},  # an integer where a float is declared
    "K006": {"extra-flags": ["--fork-only"]},
    "K007": {"extra-variables": ["FORK_ONLY"]},
    "C005": {"require-evidence": True},
    "D001": {"statuses": None},
    "D004": {"fields": {"ctx": "--ctx-size", "state": "status"}, "entries": "models.list"},
    "S003": {"fields": ["Model"], "caveats-unless": ["production"]},
}


def option_class(rule_id):
    return next(r.options for r in all_rules() if r.id == rule_id)


def options_of(root, tables, kept=None):
    config = replace(load_config(root), rules=tables)
    return load_options(config, all_rules(), kept)


def test_every_rule_with_options_has_a_table_here():
    declared = {r.id for r in all_rules() if len(r.options.OPTIONS) > 1}
    assert declared == set(TABLES)


def test_kept_options_are_the_options_validation_gives(tmp_path, monkeypatch):
    shelf = Shelf()
    validated = options_of(tmp_path, TABLES, shelf)
    assert len(shelf.data) == len(TABLES) and validated == options_of(tmp_path, TABLES)
    assert validated["D004"].fields == {"ctx": "max_model_len", "state": "status"}  # checked
    assert validated["K004"].budget == 1.0 and type(validated["K004"].budget) is float

    def fail(cls, table):
        raise AssertionError("validated again")

    monkeypatch.setattr(RuleOptions, "validate", classmethod(fail))
    kept = options_of(tmp_path, TABLES, shelf)
    assert kept == validated
    assert kept["D004"].given == {"fields", "entries"} and kept["K001"].severity is Severity.WARNING
    assert type(kept["K004"].budget) is float


@pytest.mark.parametrize(
    "rule, data",
    [
        ("K001", {"default_ceiling": 1.5}),  # outside its bounds
        ("K001", {"default_ceiling": "0.9"}),
        ("K001", {"severity": "loud"}),
        ("K001", {"ceiling": 0.9}),  # not an option
        ("K001", [0.9]),
        ("K004", {"together": "some"}),
        ("K002", {"kv_bytes_per_token": {"fp8": 1.5}}),
        ("K002", {"kv_heads": 0}),
        ("K006", {"extra_flags": "--fork-only"}),
        ("C005", {"require_evidence": 1}),
        ("S003", {"fields": [None]}),
    ],
)
def test_kept_data_not_of_the_declared_types_and_bounds_is_a_miss(tmp_path, rule, data):
    shelf = Shelf()
    good = options_of(tmp_path, {rule: TABLES[rule]}, shelf)
    (text,) = shelf.data
    shelf.data[text] = json.dumps(data)
    assert option_class(rule).from_kept(data) is None
    assert options_of(tmp_path, {rule: TABLES[rule]}, shelf) == good  # validated again
    assert shelf.data[text] != json.dumps(data)  # and kept again


def test_a_table_not_kept_is_validated_with_its_error_whatever_is_kept(tmp_path):
    shelf = Shelf()
    options_of(tmp_path, {"K001": {"default-ceiling": 0.9}}, shelf)
    errors = []
    for kept in (None, shelf):
        with pytest.raises(GuardsError) as raised:
            options_of(tmp_path, {"K001": {"default-ceiling": 1.5}}, kept)
        errors.append(str(raised.value))
    assert errors[0] == errors[1]
    assert errors[0].endswith(
        "rules.K001.default-ceiling: input should be less than or equal to 1 (got 1.5)"
    )


def test_a_table_with_a_toml_date_is_validated_each_run(tmp_path):
    shelf = Shelf()
    with pytest.raises(GuardsError, match="input should be a valid string"):
        options_of(tmp_path, {"D001": {"statuses": dt.date(2026, 1, 1)}}, shelf)
    assert shelf.data == {}


def test_options_are_frozen_and_compare_by_value():
    options = option_class("K001")(default_ceiling=0.9)
    with pytest.raises(AttributeError, match="frozen"):
        options.default_ceiling = 0.5
    assert options == option_class("K001")(default_ceiling=0.9) != option_class("K001")()
    assert option_class("K001")() == option_class("K001")(default_ceiling=0.94)  # the default
    assert repr(options) == "Options(severity=None, default_ceiling=0.9)"
    with pytest.raises(TypeError, match="unknown options"):
        option_class("K001")(ceiling=0.9)


def test_the_rule_modules_build_their_options_without_pydantic():
    script = (
        "import sys\nfrom guards.rules import all_rules\n"
        "[rule.options() for rule in all_rules()]\nprint('pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout == "False\n", done.stderr
