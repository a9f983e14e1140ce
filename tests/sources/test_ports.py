"""guards.sources.compose.ports: a service's healthcheck probes and port mappings, with where each is written."""

import pytest

from guards.errors import GuardsError
from guards.sources.compose.compose import parse_compose
from guards.sources.compose.ports import PortMapping


def service(body, env=None):
    compose = parse_compose("services:\n  svc:\n" + body, "c.yml", env)
    return compose.services[0]


def probes(test, env=None, extra=""):
    """(port, raw, line, column, note) of each probe of a healthcheck ``test:`` value."""
    health = service(f"{extra}    healthcheck:\n      test: {test}\n", env).healthcheck
    assert health is not None
    return [(p.port, p.raw, p.line, p.column, p.note) for p in health.probes]


def mappings(*entries, env=None):
    body = "    ports:\n" + "".join(f"      - {entry}\n" for entry in entries)
    return [(m.published, m.target, m.protocol) for m in service(body, env).ports]


# -- healthcheck forms ---------------------------------------------------------------------


def test_list_form_probes_with_their_file_positions():
    test = '["CMD", "curl", "-f", "http://localhost:8080/health"]'
    assert probes(test) == [(8080, "8080", 4, 53, None)]


def test_cmd_shell_and_plain_string_forms():
    shell = '["CMD-SHELL", "curl -sf http://127.0.0.1:8000/health || exit 1"]'
    assert probes(shell) == [(8000, "8000", 4, 54, None)]
    plain = "wget -qO- http://0.0.0.0:8001/v1/models"
    assert probes(plain) == [(8001, "8001", 4, 38, None)]


def test_none_disable_and_a_missing_test_are_no_healthcheck():
    assert service('    healthcheck:\n      test: ["NONE"]\n').healthcheck is None
    body = '    healthcheck:\n      disable: true\n      test: ["CMD", "true"]\n'
    assert service(body).healthcheck is None
    assert service("    healthcheck:\n      interval: 30s\n").healthcheck is None
    assert service("    image: x\n").healthcheck is None


def test_a_test_naming_no_local_port_has_no_probes():
    health = service('    healthcheck:\n      test: ["CMD", "/app/healthcheck.sh"]\n').healthcheck
    assert health is not None and health.probes == () and health.line == 4


def test_block_scalar_lines_map_to_file_lines():
    text = "|\n        curl -f http://localhost:8080/health &&\n        exec 3<>/dev/tcp/[::1]/9000"
    assert probes(text) == [(8080, "8080", 5, 34, None), (9000, "9000", 6, 32, None)]


# -- what counts as a local probe ----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "port"),
    [
        ("http://localhost:8080/health", 8080),
        ("https://LOCALHOST:8443", 8443),
        ("http://127.0.0.5:8080", 8080),
        ("http://[::1]:8080/health", 8080),
        ("localhost:8080/health", 8080),
        ("http://svc:8080/health", 8080),  # the service's own name
        ("http://box:8080/health", 8080),  # its hostname
        ("http://chat:8080/health", 8080),  # its container_name
        ("http://localhost/health", 80),  # the scheme's port
        ("https://localhost/health", 443),
        ("/dev/tcp/localhost/8080", 8080),
    ],
)
def test_local_addresses(url, port):
    extra = "    hostname: box\n    container_name: chat\n"
    found = probes(f'["CMD-SHELL", "{url}"]', extra=extra)
    assert [p[0] for p in found] == [port]


@pytest.mark.parametrize(
    "text",
    [
        "http://gateway:8080/health",
        "http://host.docker.internal:8020/health",
        "curl -H 'X-Time: 12:30' http://example.com/",
        "http://${HOST}:8080/health",
        "http://localhost:/health",
        "/dev/tcp/$$HOST/8080",
    ],
)
def test_other_hosts_and_unreadable_hosts_are_not_probes(text):
    assert probes(f'["CMD-SHELL", "{text}"]') == []


def test_a_url_without_a_port_marks_the_end_of_its_host():
    assert probes('["CMD", "curl", "http://localhost/health"]') == [(80, "", 4, 46, None)]


# -- ports as written: Compose variables, the container's shell ----------------------------


def test_compose_variables_are_interpolated_with_the_operator_overlay():
    test = '["CMD", "curl", "http://localhost:${PORT:-8020}/health"]'
    assert probes(test) == [(8020, "${PORT:-8020}", 4, 47, None)]
    overlaid = service(f"    healthcheck:\n      test: {test}\n", {"PORT": "9000"})
    probe = overlaid.healthcheck.probes[0]
    assert (probe.port, probe.from_env) == (9000, ("PORT",))


def test_nested_defaults_and_an_unset_variable():
    nested = '"curl http://localhost:${A:-${B:-8081}}/health"'
    assert probes(nested)[0][:2] == (8081, "${A:-${B:-8081}}")
    unset = probes('"curl http://localhost:${HEALTH_PORT}/health"')
    assert unset == [(None, "${HEALTH_PORT}", 4, 36, "HEALTH_PORT is unset and has no default")]


def test_the_container_shell_expands_what_environment_sets():
    extra = "    environment:\n      - LLAMA_ARG_PORT=${LLAMA_PORT:-8081}\n"
    health = service(
        extra + '    healthcheck:\n      test: "curl http://localhost:$${LLAMA_ARG_PORT}/h"\n',
        {"LLAMA_PORT": "9001"},
    ).healthcheck
    probe = health.probes[0]
    assert (probe.port, probe.raw, probe.from_env, probe.set_by) == (
        9001,
        "$${LLAMA_ARG_PORT}",
        ("LLAMA_PORT",),
        "$LLAMA_ARG_PORT set at line 4",
    )


def test_a_container_variable_the_compose_does_not_set_is_not_known():
    assert (
        probes('"curl http://localhost:$${P:-8080}/h"')[0][4] == "P is not set under environment:"
    )
    exec_form = probes('["CMD", "curl", "http://localhost:$$P/h"]')[0]
    assert exec_form[0] is None
    assert exec_form[4] == "`$P` is not expanded: the CMD form runs no shell"


@pytest.mark.parametrize(
    ("port", "text"), [("0", "0"), ("65536", "65536"), ("9" * 30, "9" * 30), ("${P:-80a}", "80a")]
)
def test_what_is_not_a_port_is_not_known(port, text):
    found = probes(f'"curl http://localhost:{port}/h"')
    assert [(p[0], p[4]) for p in found] == [(None, f"`{text}` is not a port")]


def test_a_bad_interpolation_is_an_error_at_its_place():
    with pytest.raises(GuardsError) as caught:
        probes('"curl http://localhost:${P!x}/h"')
    assert str(caught.value).startswith("c.yml:4:36: interpolation: invalid interpolation")


# -- ports: ----------------------------------------------------------------------------------


def test_short_syntax():
    assert mappings(
        '"8080"',
        '"8020:8080"',
        "8021:8080",  # unquoted: still the text as written
        '"127.0.0.1:8022:8080"',
        '"[::1]:8023:8080"',
        '"::1:8024:8080"',
        '"127.0.0.1::8080"',
        '"9000:9000/udp"',
        '"8000-8001:9000-9001/TCP"',
    ) == [
        (None, (8080, 8080), "tcp"),
        ((8020, 8020), (8080, 8080), "tcp"),
        ((8021, 8021), (8080, 8080), "tcp"),
        ((8022, 8022), (8080, 8080), "tcp"),
        ((8023, 8023), (8080, 8080), "tcp"),
        ((8024, 8024), (8080, 8080), "tcp"),
        (None, (8080, 8080), "tcp"),
        ((9000, 9000), (9000, 9000), "udp"),
        ((8000, 8001), (9000, 9001), "tcp"),
    ]


def test_interpolated_and_unreadable_entries():
    spec = '"${BIND_HOST:-0.0.0.0}:${ESTATE_PORT:-${PORT:-8073}}:8080"'
    assert mappings(spec) == [((8073, 8073), (8080, 8080), "tcp")]
    assert mappings(spec, env={"PORT": "9100"}) == [((9100, 9100), (8080, 8080), "tcp")]
    assert mappings('"${UNSET}:8080:"', '"abc:8080"', '"8080:x"', '"9-1:80"', '""') == []


def test_long_syntax():
    body = (
        "    ports:\n"
        "      - target: 8000\n"
        '        published: "${PORT:-8098}"\n'
        "        host_ip: 127.0.0.1\n"
        "      - target: 8001\n"
        "      - {target: 53, published: 5353, protocol: UDP}\n"
        "      - published: 9000\n"
    )
    found = service(body).ports
    assert [(m.shown, m.line, m.published, m.target, m.protocol) for m in found] == [
        ('{published: "${PORT:-8098}", target: 8000}', 4, (8098, 8098), (8000, 8000), "tcp"),
        ("{target: 8001}", 7, None, (8001, 8001), "tcp"),
        ('{published: "5353", target: 53}', 8, (5353, 5353), (53, 53), "udp"),
    ]


@pytest.mark.parametrize(
    ("published", "target", "port", "reached"),
    [
        ((8020, 8020), (8080, 8080), 8020, 8080),
        ((8020, 8020), (8080, 8080), 8080, None),
        ((8000, 8005), (9000, 9005), 8003, 9003),
        ((8000, 8005), (80, 80), 8004, 80),
        ((8000, 8005), (80, 81), 8001, None),  # ranges of different widths: Compose refuses
        (None, (8080, 8080), 8080, None),
    ],
)
def test_target_of(published, target, port, reached):
    assert PortMapping("", 1, published, target).target_of(port) == reached


def test_services_without_ports_or_with_a_non_list():
    assert service("    image: x\n").ports == []
    assert service("    ports: 8080\n").ports == []
