"""Every rule: registered, documented, and its own Bad/Finds/Good examples hold exactly."""

import ast
import json
import pkgutil
import re
import textwrap
import tomllib
from pathlib import Path

import pytest

import guards.rules
from guards.errors import GuardsError
from guards.findings import Severity
from guards.report.text import TextReporter
from guards.rules import Rule, all_rules, find, select
from guards.rules.docs import markdown
from guards.rules.options import load_options
from guards.sources.config import Config

from ..cli_helpers import run_guards
from ..package_source import syntax
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


def test_each_rule_has_one_summary_the_first_line_of_its_docstring():
    for rule in RULES:
        head, _, rest = rule.doc.strip().partition("\n")
        assert head == f"{rule.id} {rule.name}: {rule.summary}"
        assert rest.startswith("\n"), f"{rule.id}: the summary runs on past its line"
        assert rule.summary.endswith(".") and "``" not in rule.summary, rule.id


def test_no_rule_module_passes_a_summary_or_a_positional_argument():
    calls = []
    for path in sorted(Path(guards.rules.__file__).parent.glob("*.py")):
        tree = syntax(path)
        calls += [
            (path.name, node)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Rule"
        ]
    assert len(calls) == len(RULES)  # every declaration was seen
    for name, call in calls:
        assert call.args == [], f"{name}:{call.lineno}: Rule(...) takes keywords only"
        assert "summary" not in {k.arg for k in call.keywords}, f"{name}:{call.lineno}"


RULE_FIELDS = {
    "id": "Z001",
    "name": "made-up",
    "family": "schema",
    "targets": ("compose",),
    "severity": Severity.ERROR,
    "check": lambda target, context: None,
}


def test_a_rule_takes_keywords_only_and_no_summary_of_its_own():
    rule = Rule(**RULE_FIELDS, doc="Z001 made-up: what it checks.\n\nWhy: because.\n")
    assert rule.summary == "what it checks."
    with pytest.raises(TypeError):
        Rule(*RULE_FIELDS.values(), "Z001 made-up: what it checks.")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Rule(**RULE_FIELDS, doc="Z001 made-up: what it checks.", summary="something else")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "doc",
    [
        "what it checks.",  # no id and name
        "Z001 other-name: what it checks.",
        "Z001 made-up: what it checks, in a sentence\nwrapped onto a second line.\n\nWhy: x.",
    ],
)
def test_a_docstring_that_does_not_open_with_its_summary_line_is_refused(doc):
    with pytest.raises(ValueError, match="Z001"):
        Rule(**RULE_FIELDS, doc=doc)


def test_every_place_that_describes_a_rule_prints_its_docstrings_first_line(capsys, incident):
    heads = {r.id: r.doc.strip().partition("\n")[0].partition(": ")[2] for r in RULES}
    listing = run_guards(capsys, "rules").out.splitlines()
    assert [line.split()[0] for line in listing] == list(heads)
    assert all(line.endswith(f"  {heads[line.split()[0]]}") for line in listing)
    reference = markdown(RULES)
    assert all(f"| {head.replace('|', chr(92) + '|')} |" in reference for head in heads.values())
    result = run_guards(capsys, "check", "--root", str(incident), "--format", "sarif")
    described = json.loads(result.out)["runs"][0]["tool"]["driver"]["rules"]
    assert {r["id"]: r["shortDescription"]["text"] for r in described} == heads


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


def test_every_rule_module_is_in_the_order_once():
    from guards import rules

    folder = Path(rules.__file__).parent
    helpers = {"__init__", "base", "options", "docs"}
    modules = {p.stem for p in folder.glob("*.py")} - helpers
    assert sorted(rules.ORDER) == sorted(modules), "add the module to rules.ORDER"
    assert len(set(rules.ORDER)) == len(rules.ORDER)
    ids = [rule.id for rule in rules.all_rules()]
    assert len(set(ids)) == len(ids)
