"""A compose with files merged onto it (``-f base -f overlay``) and services extending another
file's: merged as Compose merges them, each value keeping the file and line it was written at."""

import pytest

from guards.errors import GuardsError
from guards.sources.compose.compose import parse_compose

BASE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--port, "9000", --tensor-parallel-size, "2"]
    environment:
      A: base
"""
OVERLAY = """\
# adds a host port and a card
services:
  vllm:
    ports: ["8000:9000"]
    environment:
      B: overlay
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["0", "1"], capabilities: [gpu]}]
"""


def test_an_overlay_is_merged_and_its_values_keep_their_file():
    compose = parse_compose(BASE, "c/base.yml", overlays=[("c/gpu.yml", OVERLAY)])
    (service,) = compose.services
    assert (service.name, service.line, service.path) == ("vllm", 2, None)
    assert sorted(service.environment) == ["A", "B"]
    port = service.knob("port")
    assert (port.value, port.line, port.path) == ("9000", 4, None)
    gpus = service.knob("gpus")
    assert (gpus.value, gpus.line, gpus.path) == ("2", 10, "c/gpu.yml")
    (mapping,) = service.ports
    assert (mapping.shown, mapping.line, mapping.path) == ('"8000:9000"', 4, "c/gpu.yml")
    assert compose.stack == ("c/gpu.yml",)
    assert compose.lines_of("c/gpu.yml")[0] == "# adds a host port and a card"
    assert compose.lines[0] == "services:"  # the text is the base's own


def test_a_command_the_overlay_replaces_is_read_from_the_overlay():
    overlay = (
        "services:\n  vllm:\n    command: >-\n      --port 8001\n      --tensor-parallel-size 4\n"
    )
    (service,) = parse_compose(BASE, "base.yml", overlays=[("tp4.yml", overlay)]).services
    tp = service.knob("tensor_parallel_size")
    assert (tp.value, tp.line, tp.column, tp.path) == ("4", 5, 30, "tp4.yml")
    assert service.knob("image").path is None


def test_an_error_in_an_overlay_names_the_overlay():
    with pytest.raises(GuardsError) as raised:
        parse_compose(BASE, "base.yml", overlays=[("bad.yml", "services: [\n")])
    assert str(raised.value).startswith("bad.yml:")


def test_a_fragment_is_known_by_its_shape():
    assert parse_compose(OVERLAY, "gpu.yml").fragment
    assert not parse_compose(BASE, "base.yml").fragment
    assert not parse_compose("services:\n  app:\n    build: .\n", "b.yml").fragment
    assert not parse_compose("services: {}\n", "e.yml").fragment


def test_extends_file_is_merged_from_the_file_the_reader_gives():
    text = "services:\n  app:\n    extends:\n      file: common.yml\n      service: vllm\n"
    asked = []

    def read(name, line):
        asked.append((name, line))
        return "c/common.yml", BASE

    (service,) = parse_compose(text, "c/app.yml", other_file=read).services
    assert asked == [("common.yml", 3)]
    port = service.knob("port")
    assert (port.value, port.path, service.path) == ("9000", "c/common.yml", None)


def test_extends_file_is_kept_as_written_without_a_reader():
    text = "services:\n  app:\n    extends: {file: common.yml, service: vllm}\n"
    compose = parse_compose(text, "app.yml")
    assert [b.file for b in compose.bases_elsewhere] == ["common.yml"]


def test_extends_file_naming_a_missing_service_is_an_error_at_the_extends_line():
    text = "services:\n  app:\n    extends: {file: common.yml, service: nope}\n"
    with pytest.raises(GuardsError) as raised:
        parse_compose(text, "app.yml", other_file=lambda name, line: ("common.yml", BASE))
    assert str(raised.value) == (
        "app.yml:3: `extends:` names `nope`, which is not a service of common.yml"
    )
