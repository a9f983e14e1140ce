"""Every rule: registered, documented, and its own Bad/Good examples behave as documented."""

import pkgutil
import re
import textwrap

import pytest

import guards.rules
from guards.compose import parse_compose
from guards.config import Config
from guards.estate import Estate, load_estate
from guards.options import load_options
from guards.registry import empty
from guards.rules import Context, all_rules, find, select
from guards.suite import run

RULES = all_rules()


def test_every_rule_module_is_registered():
    modules = {m.name for m in pkgutil.iter_modules(guards.rules.__path__)}
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
    """``--- path`` lines split a multi-file example; a bare example is one compose."""
    if not text.startswith("--- "):
        return {"composes/example.yml": text}
    files = {}
    for chunk in text.split("--- ")[1:]:
        path, _, body = chunk.partition("\n")
        files[path.strip()] = body
    return files


def run_rule(rule, text, root):
    root.mkdir()
    for path, body in example_files(text).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(body, encoding="utf-8")
    config = Config(root=root, composes=("composes/*.yml",), notes=("learnings/*.md",))
    estate = load_estate(config)
    assert estate.errors == []
    return [f for result in run(estate, [rule]).results for f in result.findings]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_documented_examples(rule, tmp_path):
    for part in ("Why:", "Bad:", "Good:"):
        assert part in rule.doc
    assert run_rule(rule, example(rule, "Bad"), tmp_path / "bad"), f"{rule.id}: Bad passes"
    assert run_rule(rule, example(rule, "Good"), tmp_path / "good") == [], (
        f"{rule.id}: Good example fails"
    )


def test_selection_by_id_prefix_name_and_family():
    assert [r.id for r in select(RULES, ["S00"], [])] == [
        r.id for r in RULES if r.id.startswith("S00")
    ]
    assert [r.id for r in select(RULES, ["status-enum"], [])] == ["S002"]
    assert [r.id for r in select(RULES, ["schema"], ["S002"])] == ["S001", "S003", "S004", "S005"]
    assert [r.id for r in select(RULES, ["C"], [])] == ["C001", "C002", "C003", "C004"]
    assert find(RULES, "required-fields").id == "S003"


def test_required_fields_options(tmp_path):
    text = "# Profile (at-a-glance):\n#   Model:  x\n#   Status: ⚠️ Caveated\nservices: {}\n"
    compose = parse_compose(text, "c.yml")
    rule = find(RULES, "S003")

    def messages(options):
        config = Config(root=tmp_path, rules={"required-fields": options})
        estate = Estate(tmp_path, config, empty(), composes=[compose])
        context = Context(estate, load_options(config, RULES))
        return [f.message for f in rule.check(compose, context)]

    assert messages({"fields": ["Model"]}) == ["profile block has no Caveats field (Status is ⚠️)"]
    assert messages({"fields": ["Model"], "caveats-unless": ["caveats"]}) == []
    with pytest.raises(guards.errors.GuardsError, match="unknown status 'prod'"):
        messages({"caveats-unless": ["prod"]})
