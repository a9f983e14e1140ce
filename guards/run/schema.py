"""The JSON schema of the settings (``[tool.guards]`` in pyproject.toml, or ``guards.toml``), so
an editor validates and completes them as they are typed.

Made from the same sources the loader checks against: the top-level keys of
:mod:`guards.sources.config` and each rule's options model. ``guards schema`` prints it; the copy
shipped in the package (``guards/run/config.schema.json``) is this output, kept so by a test.
Draft-07, the newest draft editors' TOML support reads widely.
"""

from __future__ import annotations

import json
from typing import Any

from ..sources.compose.header import STATUSES
from ..sources.config import KNOWN_KEYS, TREATMENTS

INSIDE = {"type": "string", "pattern": r"^(?!/)(?!.*(^|/)\.\.(/|$))"}  # relative, no `..`
GLOBS = {"anyOf": [INSIDE, {"type": "array", "items": INSIDE}]}
TEXT = {"type": "string", "minLength": 1}
KEYS: dict[str, dict[str, Any]] = {
    "composes": {
        **GLOBS,
        "description": "Globs of the composes to check, relative to the root (default: every "
        "YAML file with a top-level `services:`).",
    },
    "notes": {**GLOBS, "description": "Globs of the markdown notes to check."},
    "exclude": {**GLOBS, "description": "Globs never checked."},
    "history": {
        **GLOBS,
        "description": "Files whose lines record what was said, not what is true now "
        "(changelogs): a mention there is history.",
    },
    "claims": {**TEXT, "description": "The claims registry, relative to the root."},
    "templates": {
        **INSIDE,
        "minLength": 1,
        "description": "The estate's region templates, tried before the built-in ones.",
    },
    "max-file-mb": {
        "type": "integer",
        "minimum": 1,
        "maximum": 4096,
        "description": "Files larger than this are reported, not read.",
    },
    "by-status": {
        "type": "object",
        "description": "How composes of a Status are treated: checked (the default), their "
        "findings reported as warnings, or skipped.",
        "propertyNames": {"enum": sorted(STATUSES.values())},
        "additionalProperties": {"enum": list(TREATMENTS)},
    },
    "rules-url": {
        "type": "string",
        "pattern": r"^https?://[^\s#]+$",
        "description": "Where your team publishes the rules reference; SARIF links each rule "
        "to it (default: the copy inside the package).",
    },
}


def config_schema() -> dict[str, Any]:
    from ..rules import all_rules

    rules = all_rules()
    defs: dict[str, Any] = {}
    rule_tables: dict[str, Any] = {}
    for rule in rules:
        options = rule.options.model_json_schema(
            by_alias=True, ref_template="#/definitions/{model}"
        )
        defs.update(options.pop("$defs", {}))
        options["title"] = f"{rule.id} {rule.name}"
        defs[rule.id] = options
        rule_tables[rule.id] = rule_tables[rule.name] = {"$ref": f"#/definitions/{rule.id}"}
    names = sorted({r.id for r in rules} | {r.name for r in rules})
    properties = {
        **KEYS,
        "select": _selectors("Rules to run: ids, names, id prefixes or families."),
        "ignore": _selectors("Rules to skip: ids, names, id prefixes or families."),
        "rules": {
            "type": "object",
            "description": "Per-rule options, by rule id or name; every rule takes `severity`.",
            "properties": rule_tables,
            "additionalProperties": False,
        },
        "per-path-ignores": {
            "type": "object",
            "description": "Rules waived in the files a glob matches; a reason is required.",
            "additionalProperties": _path_ignore(names),
        },
    }
    assert set(properties) == KNOWN_KEYS, "the schema and the loader must know the same keys"
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "guards settings ([tool.guards] in pyproject.toml, or guards.toml)",
        "type": "object",
        "properties": dict(sorted(properties.items())),
        "additionalProperties": False,
        "definitions": dict(sorted(defs.items())),
    }


def _selectors(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    }


def _path_ignore(names: list[str]) -> dict[str, Any]:
    rule = {"enum": names}
    return {
        "type": "object",
        "required": ["rules", "reason"],
        "additionalProperties": False,
        "properties": {
            "rules": {"anyOf": [rule, {"type": "array", "items": rule, "minItems": 1}]},
            "reason": {"type": "string", "pattern": r"\S", "description": "Why they are accepted."},
            "until": {
                "type": "string",
                "format": "date",
                "description": "After this day (YYYY-MM-DD) the findings are reported again.",
            },
        },
    }


def text() -> str:
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"
