"""The JSON schema of the settings (``[tool.guards]`` in pyproject.toml, or ``guards.toml``), so
an editor validates and completes them as they are typed.

Derived from the models the loader validates against: the settings model
(:mod:`guards.sources.settings`) and each rule's options model. ``guards schema`` prints it; the copy
shipped in the package (``guards/run/config.schema.json``) is this output, kept so by a test.
Draft-07, the newest draft editors' TOML support reads widely.
"""

from __future__ import annotations

import json
from typing import Any

from ..sources.compose.header import STATUSES
from ..sources.settings import KEYS, Settings


def config_schema() -> dict[str, Any]:
    from ..rules import all_rules
    from ..rules.options import model_of

    rules = all_rules()
    defs: dict[str, Any] = {}
    rule_tables: dict[str, Any] = {}
    for rule in rules:
        options = model_of(rule.options).model_json_schema(
            by_alias=True, ref_template="#/definitions/{model}"
        )
        defs.update(options.pop("$defs", {}))
        options["title"] = f"{rule.id} {rule.name}"
        defs[rule.id] = options
        rule_tables[rule.id] = rule_tables[rule.name] = {"$ref": f"#/definitions/{rule.id}"}
    names = sorted({r.id for r in rules} | {r.name for r in rules})
    properties = _settings()
    # What the settings model cannot know: the rules, their options and the status names.
    properties["rules"].update(properties=rule_tables, additionalProperties=False)
    properties["per-path-ignores"]["additionalProperties"] = _path_ignore(names)
    properties["by-status"]["propertyNames"] = {"enum": sorted(STATUSES.values())}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "guards settings ([tool.guards] in pyproject.toml, or guards.toml)",
        "type": "object",
        "properties": dict(sorted(properties.items())),
        "additionalProperties": False,
        "definitions": dict(sorted(defs.items())),
    }


def _settings() -> dict[str, dict[str, Any]]:
    """Each key's schema, from the settings model: no titles (the key is the title), no
    ``null`` (TOML has none; an unset key takes its default)."""
    model = Settings.model_json_schema(by_alias=True)
    return {key: _key(model["properties"][key], model.get("$defs", {})) for key in KEYS}


def _key(derived: dict[str, Any], tables: dict[str, Any]) -> dict[str, Any]:
    """One key's schema; a nested table (``header``) inline, its keys the same way."""
    schema = {k: v for k, v in derived.items() if k != "title"}
    branches = schema.pop("anyOf", None)
    if branches is not None:
        kept = [b for b in branches if b != {"type": "null"}]
        schema.update(kept[0] if len(kept) == 1 else {"anyOf": kept})
    if schema.get("default") is None:
        schema.pop("default", None)
    table = tables.get(schema.pop("$ref", "").rpartition("/")[2])
    if table is not None:
        keys = {k: _key(v, tables) for k, v in table["properties"].items()}
        schema.update(type="object", properties=keys, additionalProperties=False)
    return schema


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
