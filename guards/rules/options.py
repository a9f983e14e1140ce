"""Per-rule options: each rule declares them as a class of :func:`option` fields; the config is
validated against it once per run, so a misspelt option or a wrong type is an error naming the
TOML file and line (yamllint's ``CONF``/``DEFAULT`` and ``validate_rule_conf``), never silently
ignored.

Options are spelled in kebab-case in TOML (``default-ceiling``) and read in snake_case
(``options.default_ceiling``). Every rule accepts ``severity`` (``error`` | ``warning`` |
``info``): only error findings fail a check.

The classes are plain: a run whose config has no ``[rules.*]`` table builds the defaults and
never imports pydantic. A table is validated by a pydantic model made from the declaration
when it is first needed (:func:`model_of`), or, when the cache kept what the same table
validated to, built from that data after a check of each value against its declared type and
bounds (anything else is a miss that validates the table again).
"""

from __future__ import annotations

import difflib
import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from ..errors import GuardsError
from ..findings import Severity
from ..sources import plain

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..sources.config import Config, Kept
    from . import Rule


Place = Callable[[str, str], Path]  # (option, file name) -> the file, inside the root


class Option:
    """One declared option: its default (or a factory of it), its description, and the
    bounds and strictness the validating model gives it."""

    __slots__ = ("default", "description", "factory", "ge", "gt", "le", "strict")

    def __init__(
        self,
        default: Any,
        factory: Callable[[], Any] | None,
        description: str,
        bounds: dict[str, float | None],
        strict: bool,
    ) -> None:
        self.default, self.factory, self.description = default, factory, description
        self.gt, self.ge, self.le = bounds["gt"], bounds["ge"], bounds["le"]
        self.strict = strict

    def value(self) -> Any:
        return self.factory() if self.factory is not None else self.default


def option(
    default: Any = None,
    *,
    factory: Callable[[], Any] | None = None,
    description: str = "",
    gt: float | None = None,
    ge: float | None = None,
    le: float | None = None,
    strict: bool = True,
) -> Any:
    """Declare an option of a :class:`RuleOptions` class (typed ``Any`` so the class's
    annotation is what a checker sees)."""
    return Option(default, factory, description, {"gt": gt, "ge": ge, "le": le}, strict)


def validator(*names: str) -> Callable[[Callable[[Any, Any], Any]], classmethod]:
    """Mark a classmethod ``(cls, value) -> value`` as a check of the options ``names``, run
    after their type is checked; a ValueError's message is the error shown."""

    def mark(function: Callable[[Any, Any], Any]) -> classmethod:
        function.validates = names  # type: ignore[attr-defined]
        return classmethod(function)

    return mark


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class RuleOptions:
    """The options every rule takes; a rule with more subclasses it."""

    # (The docstring is the JSON schema's description.) Instances are frozen: load() returns
    # a copy with the files its options name read.

    OPTIONS: ClassVar[dict[str, Option]]  # every option, the inherited first: _declared()
    severity: Severity | None = option(
        None,
        strict=False,  # TOML gives a string: "warning"
        description="Report this rule's findings at this severity instead of its own.",
    )

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.OPTIONS = _declared(cls)

    def __init__(self, **values: Any) -> None:
        unknown = values.keys() - self.OPTIONS.keys()
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown options {sorted(unknown)}")
        for name, declared in self.OPTIONS.items():
            value = values[name] if name in values else declared.value()
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_given", frozenset(values))

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.OPTIONS or name == "_given":
            raise AttributeError(f"{type(self).__name__}.{name} is frozen")
        object.__setattr__(self, name, value)  # what load() reads, on its own copy

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _compared(self) == _compared(other)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.OPTIONS)
        return f"{type(self).__name__}({shown})"

    @property
    def given(self) -> frozenset[str]:
        """The options the config set (the others have their defaults)."""
        given: frozenset[str] = vars(self)["_given"]
        return given

    def copy(self) -> Self:
        copied = object.__new__(type(self))
        for name, value in vars(self).items():
            object.__setattr__(copied, name, value)
        return copied

    def load(self, place: Place) -> Self:
        """Options naming files return a copy with those files read: ``place(option, name)``
        is the file ``name`` given as ``option``, under the path policy (inside the root, else
        an error at the option's line). Rules never read files themselves."""
        return self

    @classmethod
    def validate(cls, table: dict[str, Any]) -> Self:
        """The options of a TOML table; pydantic's ValidationError when it is not valid."""
        model = model_of(cls).model_validate(table)
        return cls(**{name: getattr(model, name) for name in model.model_fields_set})

    @classmethod
    def from_kept(cls, data: Any) -> Self | None:
        """The options of kept data (:meth:`to_kept` of options validated before), or None
        when any value is not of its declared type and bounds."""
        if type(data) is not dict or not data.keys() <= cls.OPTIONS.keys():
            return None
        hints = types_of(cls)
        try:
            values = {name: plain.build(hints[name], value) for name, value in data.items()}
        except (ValueError, TypeError):
            return None
        if not all(_bounded(cls.OPTIONS[name], value) for name, value in values.items()):
            return None
        return cls(**values)

    def to_kept(self) -> dict[str, Any]:
        """The options the config set, as JSON values."""
        return {name: getattr(self, name) for name in sorted(self.given)}


def _declared(options: type) -> dict[str, Option]:
    return {
        name: value
        for base in reversed(options.__mro__)
        for name, value in vars(base).items()
        if isinstance(value, Option)
    }


RuleOptions.OPTIONS = _declared(RuleOptions)


def _compared(options: RuleOptions) -> dict[str, Any]:
    """What two options are equal by: their values and what they read, not which were given."""
    return {name: value for name, value in vars(options).items() if name != "_given"}


# -- the declaration as types, and the validating model -----------------------------------------


_TYPES: dict[type, dict[str, Any]] = {}
_MODELS: dict[type, type[BaseModel]] = {}


def types_of(options: type[RuleOptions]) -> dict[str, Any]:
    """Each option's type, its annotation evaluated in its module."""
    if options not in _TYPES:
        hints = typing.get_type_hints(options)
        _TYPES[options] = {name: hints[name] for name in options.OPTIONS}
    return _TYPES[options]


def model_of(options: type[RuleOptions]) -> type[BaseModel]:
    """The pydantic model that validates a table of ``options`` (imported here, on first use)."""
    if options not in _MODELS:
        _MODELS[options] = _model(options)
    return _MODELS[options]


def _model(options: type[RuleOptions]) -> type[BaseModel]:
    from pydantic import ConfigDict, Field, create_model, field_validator

    fields: dict[str, Any] = {}
    for name, declared in options.OPTIONS.items():
        default: dict[str, Any] = (
            {"default_factory": declared.factory}
            if declared.factory is not None
            else {"default": declared.default}
        )
        bounds = {k: getattr(declared, k) for k in ("gt", "ge", "le")}
        bounds = {k: v for k, v in bounds.items() if v is not None}
        strict = {} if declared.strict else {"strict": False}
        field = Field(**default, description=declared.description, **bounds, **strict)  # type: ignore[call-overload]
        fields[name] = (types_of(options)[name], field)
    checks: dict[str, Any] = {}
    for attribute in dir(options):
        function = getattr(getattr(options, attribute), "__func__", None)
        names = getattr(function, "validates", None)
        if function is not None and names:
            checks[attribute] = field_validator(*names)(classmethod(function))
    config = ConfigDict(extra="forbid", frozen=True, strict=True, alias_generator=_kebab)
    model: type[BaseModel] = create_model(
        options.__name__,
        __config__=config,
        __doc__=options.__doc__,
        __validators__=checks,
        __module__=options.__module__,
        **fields,
    )
    return model


def _bounded(declared: Option, value: Any) -> bool:
    if type(value) not in (int, float):
        return True
    return not (
        (declared.gt is not None and value <= declared.gt)
        or (declared.ge is not None and value < declared.ge)
        or (declared.le is not None and value > declared.le)
    )


# -- a config's options --------------------------------------------------------------------------


def describe(options: type[RuleOptions]) -> list[tuple[str, str, str, str]]:
    """(TOML key, type, default, description) for every option, for ``guards explain``."""
    hints = types_of(options)
    return [
        (_kebab(name), _type_name(hints[name]), _default(declared.value()), declared.description)
        for name, declared in options.OPTIONS.items()
    ]


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


def load_options(
    config: Config, rules: list[Rule], kept: Kept | None = None
) -> dict[str, RuleOptions]:
    """Validate ``[rules.*]`` tables of the config against each rule's options, by rule id;
    ``kept`` holds what a table validated to before, by its JSON text.

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
        options = _kept_or_validated(rule, key, table, config, kept)
        validated[rule.id] = options.load(_place(config, key))
    return validated


def _kept_or_validated(
    rule: Rule, key: str, table: dict[str, Any], config: Config, kept: Kept | None
) -> RuleOptions:
    try:
        text = json.dumps([rule.id, table], sort_keys=True)
    except (TypeError, ValueError):  # a TOML date or time: validated each run
        text, kept = "", None
    found = rule.options.from_kept(kept.get(text)) if kept is not None else None
    if found is None:
        found = _validate(rule, key, table, config)
        if kept is not None:
            kept.put(text, found.to_kept())
    return found


def _place(config: Config, key: str) -> Place:
    """Where the files that rule ``key``'s options name are (guards.sources.paths policy)."""

    def place(option: str, name: str) -> Path:
        line = config.line_of_option(key, option)
        return config.estate_path(f"rules.{key}.{option}", name, line)

    return place


def _validate(rule: Rule, key: str, table: dict[str, Any], config: Config) -> RuleOptions:
    from pydantic import ValidationError

    try:
        return rule.options.validate(table)
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
