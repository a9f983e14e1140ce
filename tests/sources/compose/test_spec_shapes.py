"""Every shape the Compose reference loader accepts is read, never refused.

Each compose below is valid Compose (empty services, ``include:``, ``extends:`` chains,
``!reset``/``!override``, merge keys, ``x-`` extensions at every level, ``name:``/``version:``,
``profiles:``). It goes through ``parse_compose`` and through ``guards check`` on an estate of
its own, which must end 0 or 1, never 2. The real errors stay errors, with their messages.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guards.errors import GuardsError
from guards.sources.compose.compose import Compose, parse_compose

from ...cli_helpers import run_guards

VLLM = "vllm/vllm-openai:v0.9.0"

SHAPES: dict[str, tuple[str, list[str]]] = {
    "empty service": ("services:\n  app:\n", ["app"]),
    "empty mapping": ("services:\n  app: {}\n", ["app"]),
    "null service": ("services:\n  app: null\n  web: ~\n", ["app", "web"]),
    "include only": ("include:\n  - other.yml\n", []),
    "include and services": (
        "include:\n  - path: other.yml\nservices:\n  app:\n    image: a\n",
        ["app"],
    ),
    "no services at all": ("services: {}\n", []),
    "name and version": ("name: stack\nversion: '3.8'\nservices:\n  app:\n    image: a\n", ["app"]),
    "profiles": ("services:\n  app:\n    image: a\n    profiles: [gpu, debug]\n", ["app"]),
    "extends chain": (
        "services:\n"
        "  a:\n    extends: b\n    command: --max-model-len 4096\n"
        "  b:\n    extends:\n      service: c\n    environment: [B=1]\n"
        f"  c:\n    image: {VLLM}\n",
        ["a", "b", "c"],
    ),
    "extends another file": (
        "services:\n  app:\n    extends:\n      file: base.yml\n      service: base\n"
        "    image: a\n",
        ["app"],
    ),
    "reset and override": (
        "services:\n  app:\n    image: a\n    command: !reset []\n"
        "    ports: !override\n      - 8000:8000\n    healthcheck: !reset null\n",
        ["app"],
    ),
    "reset a service": ("services:\n  app:\n    image: a\n  gone: !reset null\n", ["app"]),
    "merge key": (
        "x-base: &base\n  image: a\n  restart: always\n"
        "services:\n  app:\n    <<: *base\n    command: serve\n",
        ["app"],
    ),
    "merge key list": (
        "x-a: &a {image: a}\nx-b: &b {environment: {K: v}}\nservices:\n  app:\n    <<: [*a, *b]\n",
        ["app"],
    ),
    "extensions everywhere": (
        "x-top: 1\n"
        "services:\n  app:\n    image: a\n    x-note: 2\n"
        "    deploy:\n      x-d: 3\n      resources:\n        x-r: 4\n"
        "    healthcheck:\n      x-h: 5\n      test: [CMD, 'true']\n"
        "    logging:\n      x-l: 6\n      driver: json-file\n"
        "networks:\n  net:\n    x-n: 7\nvolumes:\n  data:\n    x-v: 8\n"
        "x-reset: !reset 9\nx-tagged: !override {a: 1}\n",
        ["app"],
    ),
    "environment shapes": (
        "services:\n  app:\n    image: a\n    environment:\n      A:\n      B: null\n      C: 1\n"
        "  web:\n    image: a\n    environment: [A, B=2]\n",
        ["app", "web"],
    ),
    "ports shapes": (
        "services:\n  app:\n    image: a\n    ports:\n      - 8000\n      - '8001:80'\n"
        "      - target: 80\n        published: '8002'\n        protocol: tcp\n",
        ["app"],
    ),
}


def _parse(text: str) -> Compose:
    return parse_compose(text, "composes/c.yml")


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_valid_shape_parses_with_its_services(name):
    text, services = SHAPES[name]
    assert [s.name for s in _parse(text).services] == services


def _estate(tmp_path: Path, text: str, named: bool) -> Path:
    (tmp_path / "composes").mkdir()
    (tmp_path / "composes" / "c.yml").write_text(text, encoding="utf-8")
    (tmp_path / "composes" / "base.yml").write_text(
        "services:\n  base:\n    image: b\n", encoding="utf-8"
    )
    if named:
        (tmp_path / "guards.toml").write_text('composes = ["composes/*.yml"]\n', encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_valid_shape_is_checked_not_refused(capsys, tmp_path, name):
    root = _estate(tmp_path, SHAPES[name][0], named=True)
    result = run_guards(capsys, "check", "--root", str(root), "--no-cache")
    assert result.code in (0, 1), result.err
    assert "error" not in result.err


def test_without_composes_setting_a_file_without_services_is_not_a_compose(capsys, tmp_path):
    root = _estate(tmp_path, "include:\n  - base.yml\n", named=False)
    result = run_guards(capsys, "check", "--root", str(root), "--no-cache", "--verbose")
    assert result.code in (0, 1), result.err
    assert "1 compose" in result.out + result.err  # base.yml only


# -- what extends, !reset and !override make of the keys guards reads -------------------------


def _service(text: str, name: str = "app"):
    return next(s for s in _parse(text).services if s.name == name)


def test_extends_chain_inherits_image_and_keeps_the_base_lines():
    text = SHAPES["extends chain"][0]
    a, b, c = _parse(text).services
    assert a.value("image") == b.value("image") == c.value("image") == VLLM
    assert a.knob("image").line == 10  # where the base writes it
    assert a.value("max_model_len") == "4096" and b.value("max_model_len") is None
    assert sorted(a.environment) == ["B"]  # inherited from b


def test_extends_environment_merges_by_name_in_both_syntaxes():
    text = (
        "services:\n"
        "  base:\n    image: a\n    environment:\n      A: '1'\n      B: '2'\n      C:\n"
        "  app:\n    extends: base\n    environment: [B=3, D=4, C=!x]\n"
    )
    env = _service(text).environment
    assert {k: v.value for k, v in env.items()} == {"A": "1", "B": "3", "C": "!x", "D": "4"}
    assert env["B"].line == 10 and env["A"].line == 5


def test_extends_command_replaces_ports_append():
    text = (
        "services:\n"
        f"  base:\n    image: {VLLM}\n    command: --max-model-len 1024 --max-num-seqs 4\n"
        "    ports: ['8000:8000', '9000:9000']\n"
        "  app:\n    extends: base\n    command: --max-model-len 2048\n"
        "    ports: ['8000:8000', '8001:8001']\n"
    )
    app = _service(text)
    assert app.value("max_model_len") == "2048"
    assert app.value("max_num_seqs") is None  # the command is replaced, not merged
    # appended; the port the base has already takes the place of the base's entry
    assert [(p.shown, p.line) for p in app.ports] == [
        ('"8000:8000"', 9),
        ('"9000:9000"', 5),
        ('"8001:8001"', 9),
    ]


def test_extends_entrypoint_replaces():
    text = (
        "services:\n"
        "  base:\n    image: a\n    entrypoint: [bash, -c, 'echo base']\n"
        "  app:\n    extends: base\n    entrypoint: [sh, -c, 'echo app']\n"
    )
    script = _service(text).script
    assert script is not None
    assert [(line.number, line.raw) for line in script.lines] == [(7, "echo app")]


def test_extends_healthcheck_merges_but_its_test_is_replaced():
    text = (
        "services:\n"
        "  base:\n    image: a\n    healthcheck:\n      interval: 5s\n"
        "      test: [CMD, curl, http://localhost:8000/health, -f]\n"
        "  app:\n    extends: base\n    healthcheck:\n      test: curl http://localhost:9000/h\n"
    )
    health = _service(text).healthcheck
    assert health is not None and health.line == 10
    assert [p.port for p in health.probes] == [9000]


def test_extends_deploy_devices_append():
    text = (
        "services:\n"
        "  base:\n    image: a\n    deploy:\n      resources:\n        reservations:\n"
        "          devices:\n            - {driver: nvidia, count: 2, capabilities: [gpu]}\n"
        "  app:\n    extends: base\n    deploy:\n      resources:\n        limits: {cpus: '2'}\n"
    )
    app = _service(text)
    assert [d["count"] for d in app.devices] == ["2"]
    assert app.value("gpus") == "2"


def test_reset_clears_an_inherited_value_and_override_replaces_it():
    text = (
        "services:\n"
        f"  base:\n    image: {VLLM}\n    command: --max-model-len 1024\n"
        "    ports: ['8000:8000']\n    environment: {A: '1', B: '2'}\n"
        "    healthcheck:\n      test: curl http://localhost:8000/h\n"
        "  app:\n    extends: base\n    command: !reset []\n"
        "    ports: !override ['9000:9000']\n    environment:\n      A: !reset null\n"
        "    healthcheck: !reset null\n"
    )
    app = _service(text)
    assert app.value("max_model_len") is None
    assert [p.shown for p in app.ports] == ['"9000:9000"']
    assert sorted(app.environment) == ["B"]
    assert app.healthcheck is None


def test_reset_in_a_file_read_alone_drops_the_value():
    text = (
        f"services:\n  app:\n    image: {VLLM}\n    command: !reset --max-model-len 9\n"
        "    healthcheck:\n      test: !override curl http://localhost:8000/h\n"
    )
    app = _service(text)
    assert app.value("max_model_len") is None
    assert app.healthcheck is not None and [p.port for p in app.healthcheck.probes] == [8000]


def test_extends_another_file_keeps_the_service_as_written_and_says_so():
    compose = _parse(SHAPES["extends another file"][0])
    assert compose.services[0].value("image") == "a"
    assert [str(b) for b in compose.bases_elsewhere] == [
        "line 3: service `app` extends `base` of base.yml, which is not read here: "
        "`app` is checked as written"
    ]


def test_an_interpolated_extends_keeps_the_service_as_written_and_says_so():
    compose = _parse("services:\n  app:\n    image: a\n    extends: ${BASE:-base}\n")
    assert compose.services[0].value("image") == "a"
    assert [str(b) for b in compose.bases_elsewhere] == [
        "line 4: service `app` extends `${BASE:-base}` (a name set by interpolation), which is "
        "not read here: `app` is checked as written"
    ]


def test_merge_keys_and_extensions_are_read():
    assert _service(SHAPES["merge key"][0]).value("image") == "a"
    app = _service(SHAPES["merge key list"][0])
    assert app.value("image") == "a" and sorted(app.environment) == ["K"]
    compose = _parse(SHAPES["extensions everywhere"][0])
    assert compose.extensions == {"x-top": 1, "x-tagged": {"a": 1}}


# -- real errors stay errors ------------------------------------------------------------------

ERRORS = {
    "top-level list": ("- a\n", "composes/c.yml:1: top level is not a mapping"),
    "services list": ("services:\n  - a\n", "composes/c.yml:2: `services:` is not a mapping"),
    "services null": ("services:\n", "composes/c.yml:1: `services:` is not a mapping"),
    "no services": ("x-a: 1\n", "composes/c.yml:1: no top-level `services:` mapping"),
    "service string": (
        "services:\n  app: web\n",
        "composes/c.yml:2: service `app` is not a mapping",
    ),
    "service list": ("services:\n  app: [a]\n", "composes/c.yml:2: service `app` is not a mapping"),
    "duplicate key": (
        "services:\n  app:\n    image: a\n    image: b\n",
        "composes/c.yml:4:5: duplicate key `image` (first at line 3)",
    ),
    "interpolation": (
        "services:\n  app:\n    image: ${X:-a\n",
        "composes/c.yml:3:12: interpolation: unclosed `${`",
    ),
    "extends cycle": (
        "services:\n  a:\n    extends: b\n  b:\n    extends:\n      service: a\n",
        "composes/c.yml:5: `extends:` cycle: a -> b -> a",
    ),
    "extends itself": (
        "services:\n  a:\n    image: x\n    extends: a\n",
        "composes/c.yml:4: `extends:` cycle: a -> a",
    ),
    "extends nothing": (
        "services:\n  a:\n    extends: missing\n",
        "composes/c.yml:3: service `a` extends `missing`, which is not a service here",
    ),
    "extends a string": (
        "services:\n  a:\n    extends: b\n  b: web\n",
        "composes/c.yml:4: service `b` is not a mapping",
    ),
    "extends without service": (
        "services:\n  a:\n    extends:\n      file: other.yml\n",
        "composes/c.yml:3: `extends:` names no service (`service:` is required)",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_a_real_error_stays_one_located_error(name):
    text, message = ERRORS[name]
    with pytest.raises(GuardsError) as caught:
        _parse(text)
    assert str(caught.value) == message


def test_an_extends_cycle_stops_the_check_with_exit_2(capsys, tmp_path):
    root = _estate(tmp_path, ERRORS["extends cycle"][0], named=True)
    result = run_guards(capsys, "check", "--root", str(root), "--no-cache")
    assert result.code == 2
    assert "guards: error: composes/c.yml:5: `extends:` cycle: a -> b -> a" in result.err


def test_a_long_extends_chain_resolves_without_recursion():
    count = 3000
    body = "".join(f"  s{i}:\n    extends: s{i + 1}\n" for i in range(count))
    text = f"services:\n{body}  s{count}:\n    image: a\n"
    services = _parse(text).services
    assert len(services) == count + 1 and services[0].value("image") == "a"
