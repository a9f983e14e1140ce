"""Every rule: registered, documented, and its own Bad/Finds/Good examples hold exactly."""

import pkgutil
import re
import textwrap
import tomllib

import pytest

import guards.rules
from guards.errors import GuardsError
from guards.report.text import TextReporter
from guards.rules import all_rules, find, select
from guards.rules.options import load_options
from guards.sources.config import Config

from ..rule_cases import check

RULES = all_rules()


NOT_RULES = {"base", "options", "docs"}  # what the rules share, and their documentation


def test_every_rule_module_is_registered():
    modules = {m.name for m in pkgutil.iter_modules(guards.rules.__path__)} - NOT_RULES
    registered = {rule.check.__module__.rsplit(".", 1)[1] for rule in RULES}
    assert modules == registered


def test_ids_and_names_are_unique_and_well_formed():
    assert len({r.id for r in RULES}) == len(RULES) == len({r.name for r in RULES})
    for rule in RULES:
        assert re.fullmatch(r"[A-Z]\d{3}", rule.id)
        assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*", rule.name)
        assert rule.doc.startswith(f"{rule.id} {rule.name}: ")


def example(rule, label):
    match = re.search(rf"^{label}:\n((?:    .*\n|\n)+)", rule.doc, re.MULTILINE)
    assert match, f"{rule.id} has no {label}: example"
    return textwrap.dedent(match.group(1)).strip("\n") + "\n"


def example_files(text):
    """``--- path`` lines split a multi-file example; a bare example is one compose. A
    ``--- guards.toml`` part holds the settings the example runs with."""
    if not text.startswith("--- "):
        return {"composes/example.yml": text}
    files = {}
    for chunk in text.split("--- ")[1:]:
        path, _, body = chunk.partition("\n")
        files[path.strip()] = body
    return files


def finds(rule, text, root):
    """The finding lines of ``rule`` that ``guards check`` prints for an example, with every
    rule running (so a rule that judges the others has something to judge)."""
    others = [r.id for r in RULES if r is not rule]
    files = example_files(text)
    settings = tomllib.loads(files.pop("guards.toml", "")).get("rules")
    result, errors = check(rule.id, files, root, settings, also=others)
    assert errors == []
    return "".join(TextReporter().finding(f) for f in result.findings if f.rule == rule.id)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_documented_examples(rule, tmp_path):
    for part in ("Why:", "Bad:", "Finds:", "Good:"):
        assert part in rule.doc
    assert rule.doc.index("Bad:") < rule.doc.index("Finds:") < rule.doc.index("Good:")
    assert finds(rule, example(rule, "Bad"), tmp_path / "bad") == example(rule, "Finds")
    assert finds(rule, example(rule, "Good"), tmp_path / "good") == ""


def test_selection_by_id_prefix_name_and_family():
    assert [r.id for r in select(RULES, ["S00"], [])] == [
        r.id for r in RULES if r.id.startswith("S00")
    ]
    assert [r.id for r in select(RULES, ["status-enum"], [])] == ["S002"]
    assert [r.id for r in select(RULES, ["schema"], ["S002"])] == ["S001", "S003", "S004", "S005"]
    assert [r.id for r in select(RULES, ["C"], [])] == ["C001", "C002", "C003", "C004", "C005"]
    assert find(RULES, "required-fields").id == "S003"


def test_an_unknown_status_in_caveats_unless_is_a_config_error(tmp_path):
    config = Config(root=tmp_path, rules={"required-fields": {"caveats-unless": ["prod"]}})
    with pytest.raises(GuardsError) as caught:
        load_options(config, RULES)
    assert str(caught.value) == (
        "rules.required-fields.caveats-unless: unknown status 'prod' (known: caveats, "
        "deprecated, experimental, incubating, preview, production, upstream-gated) "
        "(got ['prod'])"
    )
