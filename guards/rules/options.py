"""Per-rule options: each rule declares them as a frozen model; the config is validated
against it once per run, so a misspelt option or a wrong type is an error naming the TOML file
and line (yamllint's ``CONF``/``DEFAULT`` and ``validate_rule_conf``), never silently ignored.

Options are spelled in kebab-case in TOML (``default-ceiling``) and read in snake_case
(``options.default_ceiling``). Every rule accepts ``severity`` (``error`` | ``warning`` |
``info``): only error findings fail a check.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import GuardsError
from ..findings import Severity

if TYPE_CHECKING:
    from ..sources.config import Config
    from . import Rule


Place = Callable[[str, str], Path]  # (option, file name) -> the file, inside the root


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class RuleOptions(BaseModel):
    """The options every rule takes; a rule with more subclasses it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, alias_generator=_kebab)

    severity: Severity | None = Field(
        None,
        strict=False,  # TOML gives a string: "warning"
        description="Report this rule's findings at this severity instead of its own.",
    )

    def load(self, place: Place) -> Self:
        """Options naming files return a copy with those files read: ``place(option, name)``
        is the file ``name`` given as ``option``, under the path policy (inside the root, else
        an error at the option's line). Rules never read files themselves."""
        return self


def describe(options: type[RuleOptions]) -> list[tuple[str, str, str, str]]:
    """(TOML key, type, default, description) for every option, for ``guards explain``."""
    rows = []
    for name, info in options.model_fields.items():
        rows.append(
            (
                _kebab(name),
                _type_name(info.annotation),
                _default(info.get_default(call_default_factory=True)),
                info.description or "",
            )
        )
    return rows


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    text = text or str(annotation).replace("typing.", "")
    return text.replace("guards.findings.Severity", "severity").replace("Severity", "severity")


def _default(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list):
        return "[" + ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {v}" for k, v in value.items()) + "}"
    return f'"{value}"' if isinstance(value, str) else str(value)


def load_options(config: Config, rules: list[Rule]) -> dict[str, RuleOptions]:
    """Validate ``[rules.*]`` tables of the config against each rule's options, by rule id.

    An unknown rule table, an unknown option or a wrong type raises :class:`GuardsError`
    naming the config file and line."""
    by_key = {key: rule for rule in rules for key in (rule.id, rule.name)}
    validated: dict[str, RuleOptions] = {}
    for key, table in config.rules.items():
        rule = by_key.get(key)
        if rule is None:
            close = difflib.get_close_matches(key, sorted(by_key), n=1)
            also = f" (did you mean `{close[0]}`?)" if close else " (see `guards rules`)"
            raise GuardsError(
                f"rules.{key}: unknown rule{also}", config.source, config.line_of_option(key)
            )
        if rule.id in validated:
            raise GuardsError(
                f"rules.{key}: options for {rule.id} are given twice (by id and by name)",
                config.source,
                config.line_of_option(key),
            )
        validated[rule.id] = _validate(rule, key, table, config).load(_place(config, key))
    return validated


def _place(config: Config, key: str) -> Place:
    """Where the files that rule ``key``'s options name are (guards.sources.paths policy)."""

    def place(option: str, name: str) -> Path:
        line = config.line_of_option(key, option)
        return config.estate_path(f"rules.{key}.{option}", name, line)

    return place


def _validate(rule: Rule, key: str, table: dict[str, Any], config: Config) -> RuleOptions:
    try:
        return rule.options.model_validate(table)
    except ValidationError as exc:
        error = exc.errors()[0]
        option = str(error["loc"][0]) if error["loc"] else ""
        raise GuardsError(
            f"rules.{key}.{option}: {_problem(error, rule.options)}".rstrip("."),
            config.source,
            config.line_of_option(key, option),
        ) from None


def _problem(error: Any, options: type[RuleOptions]) -> str:
    if error["type"] == "extra_forbidden":
        known = ", ".join(row[0] for row in describe(options))
        return f"unknown option (known: {known})"
    message = error["msg"].removeprefix("Value error, ")
    return f"{message[:1].lower()}{message[1:]} (got {error['input']!r})"
