"""Rule options: declared per rule, validated once, errors at the TOML file and line."""

import pytest

from ..cli_helpers import run_guards, tree_digest


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
