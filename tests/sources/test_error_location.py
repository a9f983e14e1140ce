"""Parsers raise without a file; the boundary that read the text names it.

A parser knows the line of a problem, not the name its text is known by. These tests keep it
so: an error raised deep in a compose, registry, note or env-file parser carries no path, the
entry point attaches the one it was given, and no parser function grows a ``shown`` parameter
again just to quote it in a message.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from guards.errors import GuardsError, located
from guards.sources import envfile, jsonsrc, metrics, registry, registry_schema, yamlsrc
from guards.sources.compose import compose, merge, ports, services, xguards
from guards.sources.compose.compose import parse_compose
from guards.sources.config import parse_toml
from guards.sources.configfile import load_config
from guards.sources.notes import notes
from guards.sources.notes.notes import parse_note

from ..package_source import syntax

SOURCES = Path(compose.__file__).resolve().parent.parent

# The entry points that take the name a text is known by: they attach it to errors (and a
# Compose, Registry or Note keeps it as data). Nothing below them takes it.
ENTRY_POINTS = {
    "compose/compose.py": {"parse_compose"},
    "registry.py": {"load", "parse"},
    "envfile.py": {"load_env_file"},
    "notes/notes.py": {"parse_note"},
    "yamlsrc.py": {"read_text", "compose", "construct", "data"},
    "jsonsrc.py": {"parse"},
    "metrics.py": {"read", "parse"},
    "config.py": {"parse_toml"},
    "configfile.py": {"_load"},
    "settings.py": set(),
}
PARSERS = [*sorted(p.relative_to(SOURCES).as_posix() for p in SOURCES.glob("compose/*.py"))]
PARSERS += [name for name in ENTRY_POINTS if not name.startswith("compose/")]
PARSERS += ["catalog.py", "envfile.py"]


def _error(call) -> GuardsError:
    with pytest.raises(GuardsError) as caught:
        call()
    return caught.value


def _where(error: GuardsError) -> tuple:
    return error.message, error.line, error.column


def _service_node(body: str) -> yamlsrc.MappingNode:
    root = yamlsrc.compose(body)
    node = yamlsrc.get(yamlsrc.get(root, "services"), "app")
    assert isinstance(node, yamlsrc.MappingNode)
    return node


COMPOSES = {
    "duplicate key": "services:\n  app:\n    image: a\n    image: b\n",
    "service not a mapping": "services:\n  app: 3\n",
    "interpolation": "services:\n  app:\n    image: ${X:-a\n",
    "command": "services:\n  app:\n    image: a\n    command: echo a\\\n",
    "port": 'services:\n  app:\n    image: a\n    ports: ["${P!x}:80"]\n',
    "healthcheck": (
        "services:\n  app:\n    image: a\n"
        '    healthcheck:\n      test: "curl http://localhost:${P!x}/h"\n'
    ),
    "x-guards": "x-guards:\n  colour: red\nservices:\n  app:\n    image: a\n",
    "no services": "x-a: 1\n",
}


@pytest.mark.parametrize("name", sorted(COMPOSES))
def test_a_compose_error_is_placed_only_by_parse_compose(name):
    text = COMPOSES[name]
    placed = _error(lambda: parse_compose(text, "composes/c.yml"))
    assert placed.path == "composes/c.yml"
    bare = _error(lambda: compose._parse(text, "composes/c.yml", {}))
    assert bare.path is None
    assert _where(bare) == _where(placed)
    assert str(placed) == str(GuardsError(bare.message, "composes/c.yml", bare.line, bare.column))


def test_service_and_port_parsers_raise_without_a_path():
    lines = merge.Texts(COMPOSES["port"].split("\n"))
    node = _service_node(COMPOSES["port"])
    key = yamlsrc.compose("app")
    assert _error(lambda: services.parse_service("app", key, node, lines, {})).path is None
    assert _error(lambda: ports.parse_health_and_ports("app", node, lines, {}, {})).path is None
    root = yamlsrc.compose(COMPOSES["x-guards"])
    assert _error(lambda: xguards.compose_data(root)).path is None


def test_yaml_errors_name_a_file_only_when_given_one():
    text = "a: 1\na: 2\n"
    assert _error(lambda: yamlsrc.compose(text)).path is None
    assert _error(lambda: yamlsrc.data(text)).path is None
    named = _error(lambda: yamlsrc.compose(text, "x.yml"))
    assert (named.path, _where(named)) == ("x.yml", _where(_error(lambda: yamlsrc.compose(text))))


@pytest.mark.parametrize(
    "text",
    ["claims: 3\n", "claims:\n  - id: a\n    text: t\n  - id: a\n    text: t\n", "- 1\n"],
)
def test_a_registry_error_is_placed_only_by_parse(text):
    bare = _error(lambda: registry_schema._claims(text))
    placed = _error(lambda: registry.parse(text, "claims.yaml"))
    assert bare.path is None and placed.path == "claims.yaml"
    assert _where(bare) == _where(placed)


@pytest.mark.parametrize(
    "text", ["---\ntitle: [\n---\n", "---\nclaims: 3\n---\n", "---\nx: 1\n", "---\n- 1\n---\n"]
)
def test_a_note_error_is_placed_only_by_parse_note(text):
    bare = _error(lambda: notes._front_matter(text.split("\n")))
    placed = _error(lambda: parse_note(text, "learnings/n.md"))
    assert bare.path is None and placed.path == "learnings/n.md"
    assert _where(bare) == _where(placed)


@pytest.mark.parametrize("text", ['A=1\nB="open\nC=2\n', "A='open\n"])
def test_an_env_file_error_is_placed_only_by_load_env_file(tmp_path, text):
    path = tmp_path / "x.env"
    path.write_text(text, encoding="utf-8")
    bare = _error(lambda: envfile.parse_env(text))
    placed = _error(lambda: envfile.load_env_file(path, "x.env"))
    assert bare.path is None and placed.path == "x.env"
    assert _where(bare) == _where(placed)


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (lambda t, s: parse_toml(t, s), "a = [\n"),
        (lambda t, s: parse_toml(t, s), "x = " + "[" * 200 + "]" * 200),
        (lambda t, s: jsonsrc.parse(t, s), '{"a": 1,\n}'),
        (lambda t, s: jsonsrc.parse(t, s), "[" * 200 + "]" * 200),
        (lambda t, s: metrics.parse(t, s), "<html>\n"),
        (lambda t, s: metrics.parse(t, s), "vllm:x one\n"),
    ],
)
def test_toml_json_and_scrape_errors_are_placed_at_their_entry_point(parse, text):
    placed = _error(lambda: parse(text, "x.txt"))
    assert placed.path == "x.txt" and placed.line is not None


def test_a_settings_error_names_the_file_and_the_key_line(tmp_path):
    (tmp_path / "guards.toml").write_text('notes = ["a"]\n\nmax-file-mb = 0\n')
    error = _error(lambda: load_config(tmp_path))
    assert (error.path, error.line) == ("guards.toml", 3)
    assert error.message == "`max-file-mb` must be a whole number of megabytes from 1 to 4096"


def test_located_keeps_a_path_already_given():
    with pytest.raises(GuardsError) as caught, located("outer.yml"):
        raise GuardsError("bad", "inner.yml", 3)
    assert str(caught.value) == "inner.yml:3: bad"
    with pytest.raises(GuardsError) as caught, located("outer.yml"):
        raise GuardsError("bad", None, 3, 4)
    assert str(caught.value) == "outer.yml:3:4: bad"


def _shown_takers(relative: str) -> set[str]:
    tree = syntax(SOURCES / relative)
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        if arg.arg == "shown"
    }


@pytest.mark.parametrize("relative", PARSERS)
def test_only_entry_points_take_a_shown_name(relative):
    assert _shown_takers(relative) <= ENTRY_POINTS.get(relative, set())


def test_the_entry_points_listed_still_exist():
    for relative, names in ENTRY_POINTS.items():
        assert _shown_takers(relative) == names, relative


def test_a_placed_error_keeps_its_kind_and_its_own_fields():
    class Special(GuardsError):
        def __init__(self, error: GuardsError, extra: int) -> None:
            super().__init__(error.message, error.path, error.line, error.column)
            self.extra = extra

    placed = Special(GuardsError("bad", None, 2), 7).at("c.yml")
    assert isinstance(placed, Special) and placed.extra == 7
    assert str(placed) == "c.yml:2: bad"
