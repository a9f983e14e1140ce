"""Compose's merge rules (guards/sources/compose/merge.py), on services and whole files."""

from __future__ import annotations

import pytest

from guards.sources import yamlsrc
from guards.sources.compose import merge


def _node(text: str) -> yamlsrc.Node:
    node = yamlsrc.compose(text)
    assert node is not None
    return node


def _service(base: str, override: str):
    return yamlsrc.construct(merge.merge_service(_node(base), _node(override)))


@pytest.mark.parametrize(
    ("base", "override", "merged"),
    [
        ("image: a\nrestart: no", "image: b", {"image": "b", "restart": False}),
        ("command: [a, b]", "command: [c]", {"command": ["c"]}),
        ("entrypoint: a b", "entrypoint: [c]", {"entrypoint": ["c"]}),
        (
            "healthcheck: {test: [CMD, a], interval: 5s}",
            "healthcheck: {test: [CMD, b]}",
            {"healthcheck": {"test": ["CMD", "b"], "interval": "5s"}},
        ),
        ("ports: ['1:1', '2:2']", "ports: ['2:2', '3:3']", {"ports": ["1:1", "2:2", "3:3"]}),
        (
            "ports: [{target: 80, published: '8080'}]",
            "ports: [{target: 80, published: '8080', host_ip: 0.0.0.0}, {target: 81}]",
            {
                "ports": [
                    {"target": 80, "published": "8080", "host_ip": "0.0.0.0"},
                    {"target": 81},
                ]
            },
        ),
        ("profiles: [a, b]", "profiles: [b, c]", {"profiles": ["a", "b", "c"]}),
        ("dns: [a]", "dns: [a]", {"dns": ["a", "a"]}),  # the general rule: append
        (
            "environment: {A: '1', B: '2', C: null}",
            "environment: [B=3, D, A]",
            {"environment": {"A": None, "B": "3", "C": None, "D": None}},
        ),
        (
            "environment: [A=1, B=2]",
            "environment: {B: !reset null, C: '3'}",
            {"environment": {"A": "1", "C": "3"}},
        ),
        (
            "deploy: {resources: {reservations: {devices: [{count: 1}]}}}",
            "deploy: {resources: {reservations: {devices: [{count: 2}]}, limits: {cpus: '1'}}}",
            {
                "deploy": {
                    "resources": {
                        "reservations": {"devices": [{"count": 1}, {"count": 2}]},
                        "limits": {"cpus": "1"},
                    }
                }
            },
        ),
        (
            "logging: {driver: syslog, options: {a: 1}}",
            "logging: {driver: json-file, options: {b: 2}}",
            {"logging": {"driver": "json-file", "options": {"b": 2}}},
        ),
        (
            "logging: {driver: syslog, options: {a: 1}}",
            "logging: {options: {b: 2}}",
            {"logging": {"driver": "syslog", "options": {"a": 1, "b": 2}}},
        ),
        ("x-a: {k: 1, j: 2}", "x-a: {k: 3}", {"x-a": {"k": 3}}),
        ("volumes: [a:/a]", "volumes: null", {"volumes": ["a:/a"]}),
        ("image: a", "command: !reset [x]", {"image": "a"}),
        ("command: [x]\nimage: a", "command: !reset []", {"image": "a"}),
        ("ports: ['1:1']", "ports: !override ['2:2']", {"ports": ["2:2"]}),
        (
            "deploy: {resources: {limits: {cpus: '1'}}}",
            "deploy: !override {restart_policy: {condition: any}}",
            {"deploy": {"restart_policy": {"condition": "any"}}},
        ),
        (
            "deploy: {resources: {limits: {cpus: '1', memory: 1G}}}",
            "deploy: {resources: {limits: {memory: !reset null}}}",
            {"deploy": {"resources": {"limits": {"cpus": "1"}}}},
        ),
    ],
)
def test_a_service_merges_as_compose_merges_it(base, override, merged):
    assert _service(base, override) == merged


def test_a_merged_value_keeps_the_line_it_was_written_at():
    base = _node("image: a\ncommand: [x]\nenvironment: [A=1]\n")
    override = _node("\n\n\n\nenvironment: {B: '2'}\n")
    merged = merge.merge_service(base, override)
    assert {name: yamlsrc.line_of(value) for name, _, value in yamlsrc.items(merged)} == {
        "image": 1,
        "command": 2,
        "environment": 5,
    }
    env = yamlsrc.get(merged, "environment")
    assert [(name, yamlsrc.line_of(v)) for name, _, v in yamlsrc.items(env)] == [
        ("A", 3),
        ("B", 5),
    ]


def test_whole_files_merge_services_by_name_and_other_keys_as_mappings():
    base = _node(
        "name: one\nx-top: {a: 1}\n"
        "services:\n  app:\n    image: a\n    ports: ['1:1']\n  db:\n    image: pg\n"
        "networks:\n  net: {driver: bridge}\n"
    )
    override = _node(
        "name: two\nx-top: {b: 2}\n"
        "services:\n  app:\n    ports: ['2:2']\n    command: !reset []\n  cache:\n    image: r\n"
        "  db: !reset null\n"
        "networks:\n  net: {internal: true}\n  other: {}\n"
    )
    assert yamlsrc.construct(merge.merge_roots(base, override)) == {
        "name": "two",
        "x-top": {"b": 2},
        "services": {"app": {"image": "a", "ports": ["1:1", "2:2"]}, "cache": {"image": "r"}},
        "networks": {"net": {"driver": "bridge", "internal": True}, "other": {}},
    }


def test_a_file_stack_folds_left_to_right():
    files = [
        "services:\n  app:\n    image: a\n    environment: [A=1]\n",
        "services:\n  app:\n    environment: {B: '2'}\n",
        "services:\n  app:\n    image: b\n    environment: {A: !reset null}\n",
    ]
    merged = _node(files[0])
    for text in files[1:]:
        merged = merge.merge_roots(merged, _node(text))
    assert yamlsrc.construct(merged) == {
        "services": {"app": {"image": "b", "environment": {"B": "2"}}}
    }


def test_settle_drops_reset_entries_and_untags_override_values():
    node = _node("a: !reset 1\nb: !override 2\nc:\n  d: !reset x\n  e: [!override 3]\n")
    settled = merge.settle(node)
    assert yamlsrc.construct(settled) == {"b": 2, "c": {"e": [3]}}
    assert yamlsrc.get(settled, "b").tag == "tag:yaml.org,2002:int"


def test_settle_returns_a_tree_without_tags_as_it_is():
    node = _node("a: &x {b: 1}\nc: *x\n")
    assert merge.settle(node) is node


def test_tagged_values_read_as_plain_data():
    assert yamlsrc.data("a: !reset []\nb: !override '8000'\nc: !override 8000\n") == {
        "a": [],
        "b": "8000",
        "c": 8000,
    }
