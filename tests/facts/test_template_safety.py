"""Templates are code from the estate: what they can reach (plain data only), which template
files they can read (inside --root, through the path policy, recorded for the cache), what a
render may cost (steps, time, size, depth), and that what they render reads back as written.
Every failure is a G001 finding at the region under `check` and a located one-line error under
`regen` (exit 2, nothing written)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import jinja2
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from guards.errors import GuardsError
from guards.facts import budget
from guards.facts.regions import (
    checksum,
    context,
    data_of,
    environment,
    regenerate,
    render_regions,
)
from guards.facts.sandbox import Function
from guards.run import parallel
from guards.sources import edit, registry
from guards.sources.compose.comments import REGION_CLOSE, REGION_OPEN
from guards.sources.compose.compose import parse_compose

from ..cli_helpers import run_guards, tree_digest
from ..examples import examples

PROJECT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REGISTRY = """\
claims:
  - id: kv-bytes
    title: KV bytes per token
    status: active
    asserted: 2026-08-01
    text: fp8 KV costs 32,768 bytes per token on this model.
"""
BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
REGION = "# >>> guards:t\n# <<< guards:t\n"
NOTES = "{% for note in data.notes %}{{ note }}\n{% endfor %}"


def make_estate(root: Path, files: dict[str, str]) -> Path:
    defaults = {"claims.yaml": REGISTRY, "guards.toml": 'composes = ["composes/*.yml"]\n'}
    for name, text in {**defaults, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


def check_and_regen(capsys, root: Path) -> tuple[str, str]:
    """The G001 line `check` gives and the error line `regen` gives; regen wrote nothing."""
    before = tree_digest(root)
    check = run_guards(capsys, "check", "--root", str(root), "--select", "G001")
    regen = run_guards(capsys, "regen", "--root", str(root))
    assert (check.code, regen.code, regen.out) == (1, 2, "guards regen: 0 files regenerated\n")
    assert tree_digest(root) == before
    return check.out.splitlines()[0], regen.err


def refused(capsys, tmp_path: Path, template: str) -> str:
    """The message a template gives: the same in the G001 finding and in regen's error."""
    root = make_estate(
        tmp_path / "e", {"composes/a.yml": REGION + BODY, "templates/t.j2": template}
    )
    finding, error = check_and_regen(capsys, root)
    prefix = "composes/a.yml:1:1: G001 region cannot be rendered: region guards:t: "
    assert finding.startswith(prefix), finding
    message = finding[len(prefix) :]
    assert error == f"guards: error: composes/a.yml:1: region guards:t: {message}\n"
    return message


def rendered(tmp_path: Path, template: str, data: str = "") -> str:
    """What regen writes for a region of template ``template``."""
    root = make_estate(tmp_path / "r", {"templates/t.j2": template})
    text = REGION + data + BODY
    reg = registry.parse(REGISTRY, "claims.yaml")
    return edit.apply(text, regenerate(text, "c.yml", reg, root / "templates", root, False))


# -- templates see plain data only -----------------------------------------------------

FULL_REGISTRY = """\
claims:
  - id: every-field
    title: Every field set
    status: superseded
    asserted: 2026-01-02
    retracted: 2026-03-04
    rationale: why it was asserted
    reason: why it was withdrawn
    text: the wording
    variants: [another wording]
    match: [a phrase]
    not_match: [not this]
    replacement: what holds instead
    superseded_by: other
    refs: [vllm#1]
    evidence:
      - source: bench/run.md
        measured: 2026-01-01
        date: 2026-01-01
        figures: {tok_s: 12.5}
    applies_to: {model: [m], engine: [vllm]}
    facts:
      kv_bytes_per_token: {fp8: 32768}
      drafter_depth_max: [{method: mtp, depth: 2}]
  - id: other
    title: Other
    status: active
"""
PLAIN_SCALARS = (str, int, float, bool, type(None))


def assert_plain(value: object, where: str) -> None:
    """Fails on anything a template could reach that is not plain data: a callable, a model,
    a date, a tuple, a subclass of a plain type."""
    if type(value) in PLAIN_SCALARS:
        return
    if type(value) is list:
        for index, item in enumerate(value):
            assert_plain(item, f"{where}[{index}]")
    elif type(value) is dict:
        for key, item in value.items():
            assert type(key) in PLAIN_SCALARS, f"{where}: key {key!r}"
            assert_plain(item, f"{where}.{key}")
    else:
        raise AssertionError(f"{where} is a {type(value).__module__}.{type(value).__name__}")


def registries() -> list[registry.Registry]:
    found = [registry.parse(FULL_REGISTRY, "claims.yaml")]
    for path in [PROJECT / "claims.yaml", *sorted(FIXTURES.glob("estates/*/claims.yaml"))]:
        found.append(registry.load(path, path.name))
    return found


def composes_with_regions():
    for path in sorted((PROJECT / "composes").rglob("*.yml")):
        compose = parse_compose(path.read_text(encoding="utf-8"), path.name)
        yield from ((compose, region) for region in compose.regions)


def test_everything_a_template_reaches_is_plain_data():
    walked = 0
    for reg in registries():
        for compose, region in composes_with_regions():
            values = context(data_of(compose, region), reg, (compose.path, region.line))
            claim = values.pop("claim")
            assert type(claim) is Function and repr(claim) == "claim"
            assert_plain(values, compose.path)
            for claim_id in sorted(reg.ids):
                assert_plain(claim(claim_id), f"claim({claim_id!r})")
                walked += 1
    assert walked > 100


def test_a_claim_is_seen_by_its_documented_fields():
    reg = registry.parse(FULL_REGISTRY, "claims.yaml")
    compose, region = next(composes_with_regions())
    view = context(data_of(compose, region), reg, ("c.yml", 1))["claim"]("every-field")
    assert view == {
        "id": "every-field",
        "title": "Every field set",
        "status": "superseded",
        "asserted": "2026-01-02",
        "retracted": "2026-03-04",
        "rationale": "why it was asserted",
        "reason": "why it was withdrawn",
        "text": "the wording",
        "variants": ["another wording"],
        "replacement": "what holds instead",
        "superseded_by": "other",
        "refs": ["vllm#1"],
        "is_withdrawn": True,
    }


def test_the_environment_offers_no_library_objects():
    env = environment(None)
    assert list(env.globals) == ["range"] and type(env.globals["range"]) is Function
    assert not {"lipsum", "cycler", "joiner", "namespace", "dict"} & set(env.globals)
    assert not {"pprint", "random"} & set(env.filters)


HOSTILE = [
    (
        "{{ claim('kv-bytes').__class__ }}",
        "access to attribute '__class__' of 'dict' object is unsafe.",
    ),
    (
        "{{ claim('kv-bytes').model_validate_json('{}') }}",
        "'dict object' has no attribute 'model_validate_json'",
    ),
    ("{{ claim('kv-bytes').model_copy() }}", "'dict object' has no attribute 'model_copy'"),
    (
        "{{ claim('kv-bytes')|attr('__class__') }}",
        "access to attribute '__class__' of 'dict' object is unsafe.",
    ),
    ("{{ claim.__call__ }}", "access to attribute '__call__' of 'Function' object is unsafe."),
    ("{{ claim._function }}", "access to attribute '_function' of 'Function' object is unsafe."),
    ("{{ cycler(1, 2).next() }}", "'cycler' is undefined"),
    ("{{ joiner() }}", "'joiner' is undefined"),
    ("{% set ns = namespace(x=1) %}{{ ns }}", "'namespace' is undefined"),
    ("{{ lipsum() }}", "'lipsum' is undefined"),
    ("{{ dict(a=1) }}", "'dict' is undefined"),
    ("{{ range.__self__ }}", "'guards.facts.sandbox.Function object' has no attribute '__self__'"),
    (
        "{{ self._TemplateReference__context }}",
        "access to attribute '_TemplateReference__context' of 'TemplateReference' object is unsafe.",
    ),
    ("{{ ''.__class__.__mro__ }}", "access to attribute '__class__' of 'str' object is unsafe."),
    (
        "{{ '{0.__class__}'.format('') }}",
        "access to attribute '__class__' of 'str' object is unsafe.",
    ),
    (
        "{{ ('{0.__class__}'|safe).format('') }}",
        "access to attribute '__class__' of 'str' object is unsafe.",
    ),
    (
        "{{ data.items.__self__ }}",
        "access to attribute '__self__' of 'builtin_function_or_method' object is unsafe.",
    ),
    (
        "{{ compose.services|map(attribute='__class__')|join }}",
        "access to attribute '__class__' of 'dict' object is unsafe.",
    ),
    ("{{ loop }}", "'loop' is undefined"),
    (
        "{% for x in [1] %}{{ loop.__class__ }}{% endfor %}",
        "access to attribute '__class__' of 'LoopContext' object is unsafe.",
    ),
]


@pytest.mark.parametrize("template, message", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_template_reaches_nothing(capsys, tmp_path, template, message):
    assert refused(capsys, tmp_path, template) == message


INERT = [
    ("{{ claim }} {{ range }}", "claim range"),
    ("{{ claim('kv-bytes') is mapping }} {{ claim('kv-bytes').title }}", "True KV bytes per token"),
    ("{{ compose.services|map(attribute='__class__')|list }}", "[Undefined]"),
    (
        "{{ data }}",
        "{'model': None, 'status': None, 'caveats': [], 'fields': {}, 'notes': [], 'profile': {}}",
    ),
]


@pytest.mark.parametrize("template, text", INERT, ids=[i[0] for i in INERT])
def test_what_a_template_may_print_is_inert_text(tmp_path, template, text):
    assert rendered(tmp_path, template).splitlines()[1] == f"# {text}"


# -- template files: inside --root only -------------------------------------------------

OUT = "is a link that leads outside the estate root; not read or written"
LINKED_OUT = [
    ("the template", {}, {"templates/t.j2": "t.j2"}, "templates/t.j2", "templates/t.j2"),
    (
        "an included one",
        {"templates/t.j2": '{% include "part.j2" %}'},
        {"templates/part.j2": "t.j2"},
        "templates/part.j2",
        "templates/part.j2",
    ),
    (
        "an extended one",
        {"templates/t.j2": '{% extends "base.j2" %}'},
        {"templates/base.j2": "t.j2"},
        "templates/base.j2",
        "templates/base.j2",
    ),
    (
        "an imported one",
        {"templates/t.j2": '{% import "macros.j2" as m %}{{ m }}'},
        {"templates/macros.j2": "t.j2"},
        "templates/macros.j2",
        "templates/macros.j2",
    ),
    (
        "a folder inside the templates folder",
        {"templates/t.j2": '{% include "lib/t.j2" %}'},
        {"templates/lib": "."},
        "templates/lib/t.j2",
        "templates/lib",
    ),
]


@pytest.mark.parametrize(
    "name, files, links, shown, link", LINKED_OUT, ids=[case[0] for case in LINKED_OUT]
)
def test_a_template_that_leads_out_of_the_root_is_not_read(
    capsys, tmp_path, name, files, links, shown, link
):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.j2").write_text("SECRET {{ args }}\n")
    root = make_estate(tmp_path / "e", {"composes/a.yml": REGION + BODY, **files})
    for at, target in links.items():
        (root / at).parent.mkdir(parents=True, exist_ok=True)
        (root / at).symlink_to(outside / target)
    finding, error = check_and_regen(capsys, root)
    assert finding == f"composes/a.yml:1:1: G001 region cannot be rendered: {shown}: {link} {OUT}"
    assert error == f"guards: error: {shown}: {link} {OUT}\n"


def test_a_templates_folder_that_leads_out_of_the_root_is_not_read(capsys, tmp_path):
    outside = tmp_path / "outside"
    (outside / "templates").mkdir(parents=True)
    (outside / "templates" / "t.j2").write_text("SECRET {{ args }}\n")
    root = make_estate(tmp_path / "e", {"composes/a.yml": REGION + BODY})
    (root / "templates").symlink_to(outside / "templates")
    finding, error = check_and_regen(capsys, root)
    assert finding == (
        f"composes/a.yml:1:1: G001 region cannot be rendered: templates/t.j2: templates {OUT}"
    )
    assert f"templates {OUT}" in error and "SECRET" not in finding + error


def test_a_compiled_template_is_reused_while_its_file_reads_the_same(tmp_path):
    root = make_estate(tmp_path / "e", {"templates/t.j2": "one"})
    env = environment(root / "templates", root)
    first = env.get_template("t.j2")
    assert env.get_template("t.j2") is first
    (root / "templates" / "t.j2").write_text("two")
    assert env.get_template("t.j2") is not first
    assert env.get_template("t.j2").render() == "two"


def test_a_template_linked_inside_the_root_is_read(tmp_path):
    root = make_estate(tmp_path / "e", {"shared/t.j2": "shared text\n"})
    (root / "templates").mkdir()
    (root / "templates" / "t.j2").symlink_to(root / "shared" / "t.j2")
    reg = registry.parse(REGISTRY, "claims.yaml")
    text = REGION + BODY
    edits = regenerate(text, "c.yml", reg, root / "templates", root, False)
    assert edit.apply(text, edits).splitlines()[1] == "# shared text"


@pytest.mark.parametrize(
    "template, message",
    [
        (
            '{% include "../claims.yaml" %}',
            "no template '../claims.yaml' in templates/ or among the built-ins",
        ),
        (
            '{% include "/etc/hostname" %}',
            "no template '/etc/hostname' in templates/ or among the built-ins",
        ),
    ],
)
def test_a_template_named_outside_the_folder_is_not_found(capsys, tmp_path, template, message):
    assert refused(capsys, tmp_path, template) == message


UNREADABLE = [
    ("{{ 1 }}", b"ok\n\xff\n", "templates/t.j2:2:1: not valid UTF-8 (byte 0xff)"),
    ('{% include "a\\x00b.j2" %}', None, "templates/a\\x00b.j2: path contains a NUL byte"),
    (
        '{% include "big.j2" %}',
        None,
        "templates/big.j2: is larger than 100,000 characters, the most a template may hold",
    ),
    ('{% include "folder.j2" %}', None, "templates/folder.j2: is a directory, not a file"),
]


@pytest.mark.parametrize(
    "template, data, message", UNREADABLE, ids=["not UTF-8", "NUL byte", "too large", "a folder"]
)
def test_a_template_file_that_cannot_be_read_is_a_located_error(
    capsys, tmp_path, template, data, message
):
    files = {"composes/a.yml": REGION + BODY, "templates/t.j2": template}
    root = make_estate(tmp_path / "e", {**files, "templates/big.j2": "x" * 100_001})
    (root / "templates" / "folder.j2").mkdir()
    if data is not None:
        (root / "templates" / "t.j2").write_bytes(data)
    finding, error = check_and_regen(capsys, root)
    assert finding == f"composes/a.yml:1:1: G001 region cannot be rendered: {message}"
    assert error == f"guards: error: {message}\n"


# -- the budget ---------------------------------------------------------------------------

STEPS = "rendering takes more than 1,000,000 steps (the budget of one region)"
SLOW = "rendering takes longer than 2 s (the budget of one region)"
LARGE = "a value of more than 1,000,000 characters (the budget of one region)"
OUTPUT = "renders more than 1,000,000 characters (the budget of one region)"
BITS = "a number of more than 100,000 bits (the budget of one region)"
NESTED = "macros or recursive loops nest more than 50 deep"
BUDGET = [
    # loops: every turn is a step, with or without output, filtered or recursive
    ("{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}", STEPS),
    ("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", STEPS),
    (
        "{% for a in range(100000) %}{% for b in range(100000) if 0 %}{% endfor %}{% endfor %}",
        STEPS,
    ),
    ("{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}", STEPS),
    (
        "{% for a in range(100000) recursive %}{{ loop(range(100000)) if loop.depth0 == 0 }}"
        "{% endfor %}",
        STEPS,
    ),
    # the clock: few steps, each of them long
    (
        "{% set l = range(100000)|list %}{% for i in range(100000) %}{{ l.copy()|length }}{% endfor %}",
        SLOW,
    ),
    # values built large from small ones, refused before they are built
    ("{{ 'x' * 3000000000 }}", LARGE),
    ("{{ 3000000000 * 'x' }}", LARGE),
    ("{{ [0] * 1000000000 }}", LARGE),
    ("{{ 'x'.ljust(1000000000) }}", LARGE),
    ("{{ 'x'.zfill(1000000000) }}", LARGE),
    ("{{ ('\t' * 1000).expandtabs(1000000) }}", LARGE),
    ("{{ (1).to_bytes(1000000000, 'big') }}", LARGE),
    ("{{ 'x'|center(1000000000) }}", LARGE),
    ("{{ ('x\n' * 1000)|indent(1000000) }}", LARGE),
    ("{{ ('x' * 1000)|replace('x', 'y' * 10000) }}", LARGE),
    ("{{ ('x' * 1000).replace('x', 'y' * 10000) }}", LARGE),
    ("{{ range(1000)|join('y' * 10000) }}", LARGE),
    ("{{ ('y' * 10000).join(range(1000)|map('string')) }}", LARGE),
    ("{{ ('a ' * 100000)|wordwrap(1, wrapstring='y' * 100) }}", LARGE),
    ("{{ '%999999999d' % 1 }}", LARGE),
    ("{{ '%(a)s' * 1000 % {'a': 'x' * 10000} }}", LARGE),
    ("{{ '%999999999d'|format(1) }}", LARGE),
    ("{{ '{:999999999}'.format(1) }}", LARGE),
    ("{{ '{0}' * 1000 }}{{ ('{0}' * 1000).format('x' * 10000) }}", LARGE),
    ("{{ range(10)|batch(1000000000, 'x')|list }}", LARGE),
    ("{{ range(10)|slice(1000000000, 'x')|list }}", LARGE),
    ("{{ (range(100000)|list)|tojson(indent=100) }}", LARGE),
    # and measured once built: growth one step at a time
    ("{% set s = 'x' * 600000 %}{{ s ~ s }}", LARGE),
    ("{% set l = [] %}{% for i in range(100000) %}{{ l.append('x' * 1000) }}{% endfor %}", LARGE),
    ("{% set l = ['x'] %}{% for i in range(30) %}{{ l.extend(l) }}{% endfor %}", LARGE),
    (
        "{% set d = {} %}{% for i in range(100000) %}{{ d.update({i: 'x' * 10000}) }}{% endfor %}",
        LARGE,
    ),
    (
        "{% macro m(s) %}{{ s ~ s }}{% endmacro %}{{ m(m(m(m(m(m(m(m(m(m('x' * 4000)))))))))) }}",
        OUTPUT,
    ),
    ("{{ ('x' * 999999).split('x') }}", LARGE),
    ("{{ 10 ** 1000000 }}", BITS),
    ("{{ 2 ** 99999 * 2 ** 99999 }}", BITS),
    # what is printed, buffered output (macros, blocks) and literal text included
    ("{% for i in range(2000) %}{{ 'x' * 1000 }}{% endfor %}", OUTPUT),
    (
        "{% macro m() %}{% for i in range(100000) %}literal text{% endfor %}{% endmacro %}{{ m()|length }}",
        OUTPUT,
    ),
    ("{% set l = ['x' * 1000] * 900 %}{{ l }}{{ l }}", OUTPUT),
    # depth
    ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", NESTED),
    (
        "{% macro f(n) %}{{ caller() }}{% endmacro %}{% macro g() %}{% call f(1) %}{{ g() }}{% endcall %}{% endmacro %}{{ g() }}",
        NESTED,
    ),
    ("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", NESTED),
    ('{% include "t.j2" %}', "templates include, extend or call themselves too deeply"),
    ('{% extends "t.j2" %}', "templates include, extend or call themselves too deeply"),
    ("{{ range(1000000) }}", "range() of more than 100,000 numbers"),
    ("{{ range(10 ** 30) }}", "range() of more than 100,000 numbers"),
    ("{{ '%*d' % (5, 1) }}", "a `*` width or precision in %-formatting is not supported"),
    # the template's own errors
    ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero"),
    ("{{ 1 // 0 }}", "ZeroDivisionError: integer division or modulo by zero"),
    ("{{ 1 % 0 }}", "ZeroDivisionError: integer modulo by zero"),
    ("{{ 1 + 'a' }}", "TypeError: unsupported operand type(s) for +: 'int' and 'str'"),
    ("{{ 'a' - 1 }}", "TypeError: unsupported operand type(s) for -: 'str' and 'int'"),
    ("{{ 2.0 ** 10000 }}", "OverflowError: (34, 'Numerical result out of range')"),
    ("{{ 'x'|wordwrap(0) }}", "ValueError: invalid width 0 (must be > 0)"),
    ("{{ 'abcdef'|truncate(-5) }}", "AssertionError: expected length >= 3, got -5"),
    ("{{ '%s %s'|format(1) }}", "TypeError: not enough arguments for format string"),
    ("{{ '%(a)s' % {} }}", "KeyError: 'a'"),
    (
        "{{ '{1}'.format(0) }}",
        "IndexError: tuple index out of range",
    ),
    (
        "{{ 10 ** 5000 }}",
        "ValueError: Exceeds the limit (4300 digits) for integer string conversion; use "
        "sys.set_int_max_str_digits() to increase the limit",
    ),
    ("{{ [[1], (2,)]|sum(start=[]) }}", "TypeError: sum() of lists: every item must be a list"),
]


@pytest.mark.parametrize("template, message", BUDGET, ids=[case[0][:60] for case in BUDGET])
def test_a_render_past_its_budget_or_failing_is_g001_and_a_located_error(
    capsys, tmp_path, monkeypatch, template, message
):
    if message == SLOW:  # the clock, shortened: the same check, an eighth of the wait
        monkeypatch.setattr(budget, "MAX_SECONDS", 0.25)
        message = message.replace("2 s", "0.25 s")
    else:  # on a loaded machine the clock must not trip before the step count
        monkeypatch.setattr(budget, "MAX_SECONDS", 60.0)
    if message == STEPS:  # the count, lowered: the same check on every turn, a tenth of them
        monkeypatch.setattr(budget, "MAX_STEPS", 100_000)
        message = message.replace("1,000,000", "100,000")
    start = time.monotonic()
    assert refused(capsys, tmp_path, template) == message
    assert time.monotonic() - start < 10  # both commands, each within the budget


def test_an_out_of_memory_error_is_a_located_error(capsys, tmp_path, monkeypatch):
    def exhausted(value):
        raise MemoryError

    monkeypatch.setitem(jinja2.defaults.DEFAULT_FILTERS, "upper", exhausted)
    environment.cache_clear()
    try:
        assert refused(capsys, tmp_path, "{{ 'x'|upper }}") == "out of memory"
    finally:
        environment.cache_clear()


def test_the_budget_is_per_region(tmp_path):
    """Two regions, each within the budget and the two together past it: each render has its
    own count (the compiled template is shared)."""
    loop = "{% for a in range(100) %}{% for b in range(3000) %}{% endfor %}{% endfor %}done"
    root = make_estate(tmp_path / "two", {"templates/t.j2": loop})
    reg = registry.parse(REGISTRY, "claims.yaml")
    compose = parse_compose(REGION + REGION + BODY, "c.yml")
    regions = render_regions(compose, reg, root / "templates", root)
    assert [r.edit.new.splitlines()[0] for r in regions] == ["# done", "# done"]


def test_the_budget_holds_in_forked_worker_processes(tmp_path, monkeypatch):
    """No signals: the same checks stop a render in a worker `guards.run.parallel` forks."""
    monkeypatch.setattr(budget, "MAX_SECONDS", 60.0)  # the steps, not a loaded clock, stop it
    loop = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    root = make_estate(tmp_path / "w", {"templates/t.j2": loop})
    reg = registry.parse(REGISTRY, "claims.yaml")

    def render(text: str) -> tuple[int, str]:
        try:
            regenerate(text, "c.yml", reg, root / "templates", root, False)
        except GuardsError as exc:
            return os.getpid(), str(exc)
        return os.getpid(), "rendered"

    results = parallel.ordered_map(render, [REGION + BODY] * 2, 2)
    assert [message for _, message in results] == [f"c.yml:1: region guards:t: {STEPS}"] * 2
    assert {pid for pid, _ in results} - {os.getpid()}  # a worker rendered (this process may too)


def test_templates_that_fit_the_budget_still_render(tmp_path):
    template = (
        "{{ '%-11s' | format('Model:') }}{{ ('x' * 1000) | length }} {{ '{:>5}'.format(7) }}"
        " {{ [1, 2] + [3] }} {{ 2 ** 10 }} {{ range(3)|join('-') }} {{ 'a' ~ 'b' }}"
        " {{ [[1], [2]]|sum(start=[]) }}"
    )
    assert rendered(tmp_path, template).splitlines()[1] == (
        "# Model:     1000     7 [1, 2, 3] 1024 0-1-2 ab [1, 2]"
    )


# -- what is written reads back the same ----------------------------------------------------


@pytest.mark.parametrize(
    "char", ["\u2028", "\u2029", "\x85", "\r", "\r\n"], ids=["LS", "PS", "NEL", "CR", "CRLF"]
)
def test_every_line_break_guards_reads_is_a_line_break_of_the_region(capsys, tmp_path, char):
    note = json.dumps(f"one{char}two")
    root = make_estate(
        tmp_path / "e",
        {
            "composes/a.yml": REGION + f"x-guards:\n  notes: [{note}]\n" + BODY,
            "templates/t.j2": NOTES,
        },
    )
    first = run_guards(capsys, "regen", "--root", str(root))
    assert (first.code, first.err) == (0, "")
    written = (root / "composes/a.yml").read_text(encoding="utf-8")
    assert written.startswith("# >>> guards:t\n# one\n# two\n# <<< guards:t (checksum: ")
    again = run_guards(capsys, "regen", "--check", "--root", str(root))
    assert (again.code, again.out) == (0, "guards regen: 0 files would change\n")
    check = run_guards(capsys, "check", "--root", str(root), "--select", "G")
    assert (check.code, check.out) == (0, "guard suite: 3 pass / 0 fail\n")


UNWRITABLE = ["\x0c", "\x0b", "\x00", "\x07", "\x1b", "\x1c", "\x7f", "\x9b", "\ufffe", "\uffff"]


@pytest.mark.parametrize("char", UNWRITABLE, ids=[f"U+{ord(c):04X}" for c in UNWRITABLE])
def test_a_character_a_yaml_file_cannot_hold_is_an_error_at_the_region(capsys, tmp_path, char):
    note = json.dumps(f"first\nsecond {char} third")
    root = make_estate(
        tmp_path / "e",
        {
            "composes/a.yml": REGION + f"x-guards:\n  notes: [{note}]\n" + BODY,
            "templates/t.j2": NOTES,
        },
    )
    finding, error = check_and_regen(capsys, root)
    message = f"rendered line 2 holds U+{ord(char):04X}, a character a YAML file cannot hold"
    assert (
        finding == f"composes/a.yml:1:1: G001 region cannot be rendered: region guards:t: {message}"
    )
    assert error == f"guards: error: composes/a.yml:1: region guards:t: {message}\n"


def test_a_lone_surrogate_is_an_error_at_the_region(capsys, tmp_path):
    message = "rendered line 1 holds U+D800, a character a YAML file cannot hold"
    assert refused(capsys, tmp_path, "{{ '\\ud800' }}") == message


@pytest.mark.parametrize(
    "line", ["<<< guards:t", ">>> guards:claim kv-bytes", "  <<<guards:x (checksum: 00)"]
)
def test_a_rendered_line_that_reads_as_a_marker_is_an_error(capsys, tmp_path, line):
    message = f"rendered line 2 reads as a region marker ({line.strip()}), which would end or nest the region"
    assert refused(capsys, tmp_path, f"first\n{line}\n") == message


YAML_PRINTABLE = "\t\n" + "".join(map(chr, range(0x20, 0x7F)))  # and 0xA0 up, bar the below
BREAKS = "\r\x85\u2028\u2029"
SPECIALS = [*BREAKS, "\r\n", "\n", "\t", " ", "#", '"', "\\", "\x0c", "\x07", "\x1b", "\x7f"]
SPECIALS += [
    "\x9b",
    "\xa0",
    "\ufeff",
    "\ufffe",
    "\u3000",
    "é",
    "😀",
    "⚠️",
    ": x",
    "- y",
    "<<< guards:t",
]


def unwritable(char: str) -> bool:
    code = ord(char)
    return not (
        char in YAML_PRINTABLE
        or 0xA0 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or code >= 0x10000
    )


def yaml_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar, every character that is not printable escaped."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char in BREAKS or char == "\n" or unwritable(char):
            out.append(f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


TEXTS = st.lists(
    st.one_of(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=6), st.sampled_from(SPECIALS)
    ),
    max_size=8,
).map("".join)


def loaded(text: str) -> list:
    """The data of ``text`` as libyaml, pure PyYAML and ruamel.yaml read it."""
    return [
        yaml.load(text, Loader=yaml.CSafeLoader),
        yaml.load(text, Loader=yaml.SafeLoader),
        YAML(typ="safe", pure=True).load(text),
    ]


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(notes=st.lists(TEXTS, min_size=1, max_size=3), crlf=st.booleans(), bom=st.booleans())
def test_what_is_written_reads_back_the_same(tmp_path_factory, notes, crlf, bom):
    root = Path(tmp_path_factory.mktemp("e"))
    (root / "templates").mkdir()
    (root / "templates" / "t.j2").write_text(NOTES, encoding="utf-8")
    reg = registry.parse(REGISTRY, "claims.yaml")
    newline = "\r\n" if crlf else "\n"
    data = "x-guards:\n  notes: [" + ", ".join(map(yaml_quoted, notes)) + "]\n"
    raw = (REGION + data + BODY).replace("\n", newline)
    path = root / "c.yml"
    path.write_bytes((("\ufeff" if bom else "") + raw).encode("utf-8"))
    source = edit.read(path, "c.yml")
    lines = edit.unify_breaks("\n".join(notes)).split("\n")
    bad = next((c for c in "".join(lines) if unwritable(c)), None)
    marker = any(REGION_OPEN.match(line) or REGION_CLOSE.match(line) for line in lines)
    try:
        edits = regenerate(source.text, "c.yml", reg, root / "templates", root, False)
    except GuardsError as exc:
        assert (exc.path, exc.line) == ("c.yml", 1)
        assert bad is not None or marker, exc
        if bad is not None and not marker:
            assert f"holds U+{ord(bad):04X}, a character a YAML file cannot hold" in exc.message
        return
    assert bad is None and not marker
    written = source.render(edits)
    assert loaded(edit.unify_breaks(written)) == loaded(source.text)
    path.write_bytes((("\ufeff" if bom else "") + written).encode("utf-8"))
    again = edit.read(path, "c.yml")
    compose = parse_compose(again.text, "c.yml")
    regions = render_regions(compose, reg, root / "templates", root)
    assert [(r.stale, r.edited_by_hand) for r in regions] == [(False, False)]
    assert regenerate(again.text, "c.yml", reg, root / "templates", root, False) == []


# -- the cache knows every template a run read -----------------------------------------


@pytest.fixture
def cached(tmp_path, monkeypatch):
    """An estate whose region renders an included template and one reached through a folder
    that is a symlink to another folder of the estate; the cache on."""
    body = "# one two\n"
    root = make_estate(
        tmp_path / "estate",
        {
            "composes/a.yml": f"# >>> guards:t\n{body}# <<< guards:t (checksum: {checksum(body)})\n"
            + BODY,
            "templates/t.j2": '{% include "part.j2" %} {% include "shared/more.j2" %}',
            "templates/part.j2": "one",
            "lib/more.j2": "two",
        },
    )
    (root / "templates" / "shared").symlink_to(root / "lib")
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    return root


def check_json(capsys, root: Path, *args: str) -> tuple[int, str, str]:
    result = run_guards(
        capsys, "check", "--root", str(root), "--format", "json", "--select", "G", *args
    )
    return result.code, result.out, result.err


@pytest.mark.parametrize(
    "changed", ["templates/part.j2", "lib/more.j2"], ids=["included", "linked folder"]
)
def test_a_warm_run_after_a_template_changed_is_the_cold_one(capsys, cached, changed):
    kept = check_json(capsys, cached)
    assert kept[0] == 0, kept
    (cached / changed).write_text("changed")
    warm = check_json(capsys, cached)
    cold = check_json(capsys, cached, "--no-cache")
    assert warm == cold
    assert warm != kept and '"G001"' in warm[1]
