"""The one schema of the settings: each key's name, type, default, description and checks.

:func:`validate` reads a config file's table against it (unknown keys and wrong values are
errors naming the key, for :mod:`guards.sources.config` to place at a line); ``guards schema``
derives the JSON schema editors use from it (:mod:`guards.run.schema`). Imported only when a
settings table must be validated: a kept run takes the validated values from the cache, so
pydantic stays off its path.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..errors import GuardsError
from .config import DEFAULT_CLAIMS, DEFAULT_HISTORY, DEFAULT_NOTES, DEFAULT_TEMPLATES
from .paths import not_relative

TREATMENTS = ("check", "warning", "skip")
INSIDE = r"^(?![/\\])(?!.*(^|/)\.\.(/|$))"  # relative to the root, without `..`
URL = r"^https?://[^\s#]+$"


def _problem(message: str, at: str | None = None) -> PydanticCustomError:
    """A problem with a value; ``at`` names the key inside its table whose line to show."""
    return PydanticCustomError("setting", message, {"at": at} if at else {})


def _string_list(value: Any) -> tuple[str, ...]:
    """A list of strings, or one string standing for a list of one."""
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _problem("must be a list of strings")
    return tuple(value)


def _inside(patterns: tuple[str, ...]) -> tuple[str, ...]:
    outside = next((p for p in patterns if not re.match(INSIDE, p)), None)
    if outside is not None:
        raise _problem(f"pattern {outside!r} reaches outside the root; patterns are relative to it")
    return patterns


def _estate_name(value: Any) -> str:
    if not isinstance(value, str):
        raise _problem("must be a path string")
    problem = not_relative(value)
    if problem:
        raise _problem(problem)
    return value


def _tables(value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise _problem("must be a table of per-rule option tables")
    return value


def _path_ignores(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _problem("must be a table of glob = {rules, reason}")
    return value  # each entry is checked where rule names are known (guards.run.suppress)


def _megabytes(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4096:
        raise _problem("must be a whole number of megabytes from 1 to 4096")
    return value


def _url(value: Any) -> str:
    if not isinstance(value, str) or not re.match(URL, value):
        raise _problem("must be an http(s) URL without a #fragment")
    return value


def _treatments(value: Any, info: ValidationInfo) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _problem("must be a table of status = treatment")
    if not value:
        return value  # the header parser is not needed to read the settings
    from .compose.header import convention

    header = info.data.get("header")
    declared = convention(header.model_dump(exclude_none=True) if header else None)
    if declared is None or not declared.statuses:
        raise _problem(
            "needs the statuses of a header convention (set `header.preset` or `header.statuses`)"
        )
    names = sorted(declared.names)
    for name, treatment in value.items():
        if name not in names:
            raise _problem(f"names an unknown status `{name}` (known: {', '.join(names)})", name)
        if treatment not in TREATMENTS:
            raise _problem(
                f"sets {name} to {treatment!r}, not one of {', '.join(TREATMENTS)}", name
            )
    return value


def _table(value: Any) -> Any:
    if not isinstance(value, dict):
        raise _problem("must be a table (`[header]` with `preset` or `marker`)")
    return value


def _marker(value: Any) -> str:
    if not isinstance(value, str) or not re.search(r"\w", value) or len(value) > 60:
        raise _problem("must be the words that open the header block, at most 60 characters")
    if not value.isprintable():
        raise _problem("must be one line of printable text")
    return value


def _vocabulary(value: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict) or not value:
        raise _problem("must be a table of status name = spellings")
    vocabulary = {}
    for name, spellings in value.items():
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            raise _problem(f"status name `{name}` must be lowercase kebab-case", name)
        listed = _string_list(spellings) if isinstance(spellings, str | list) else None
        if not listed or not all(s.strip() and s.isprintable() for s in listed):
            raise _problem(f"`{name}` must be a spelling or a list of non-empty spellings", name)
        vocabulary[name] = listed
    return vocabulary


def _one_or_list(item: dict[str, Any]) -> WithJsonSchema:
    return WithJsonSchema({"anyOf": [item, {"type": "array", "items": item}]})


def _env_files(value: Any) -> tuple[str, ...] | dict[str, tuple[str, ...]]:
    """Env files for every compose (a list), or per folder (a table of folder glob = list)."""
    if not isinstance(value, dict):
        return _env_names(value, None)
    for folder in value:
        if not re.match(INSIDE, folder):
            raise _problem(f"folder glob {folder!r} reaches outside the root", folder)
    return {folder: _env_names(names, folder) for folder, names in value.items()}


def _env_names(value: Any, at: str | None) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise _problem("must be a list of env files, or a table of folder glob = list", at)
    problem = next((p for p in map(not_relative, names) if p), None)
    if problem:
        raise _problem(problem, at)
    return tuple(names)


def _stacks(value: Any) -> tuple[tuple[str, ...], ...]:
    """The ``-f`` combinations: each a list of two or more files, the base first."""
    if not isinstance(value, list) or not all(isinstance(s, list) for s in value):
        raise _problem("must be a list of lists of compose files (the base first)")
    for stack in value:
        if len(stack) < 2 or not all(isinstance(name, str) for name in stack):
            raise _problem("each stack lists two or more compose files, the base first")
        problem = next((p for p in map(not_relative, stack) if p), None)
        if problem:
            raise _problem(problem)
    return tuple(tuple(stack) for stack in value)


ENGINE_VERSION = r"^(vllm|sglang|llama\.cpp) [0-9]+(\.[0-9]+){0,3}(\.?post[0-9]+)?$"


def _engine_versions(value: Any) -> dict[str, str]:
    """Image globs -> ``ENGINE VERSION``: the release a fork or a custom image runs."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _problem('must be a table of image glob = "ENGINE VERSION" ("vllm 0.27")')
    for image, said in value.items():
        if not re.match(ENGINE_VERSION, said.strip()):
            raise _problem(f'{said!r} is not "ENGINE VERSION" (vllm, sglang or llama.cpp)', image)
    return {image.lower(): said.strip() for image, said in value.items()}


# Each type says how a value is read and checked, and what JSON schema editors see.
Globs = Annotated[
    tuple[str, ...],
    BeforeValidator(_string_list),
    AfterValidator(_inside),
    _one_or_list({"type": "string", "pattern": INSIDE}),
]
Names = Annotated[tuple[str, ...], BeforeValidator(_string_list), _one_or_list({"type": "string"})]
EstateName = Annotated[
    str,
    BeforeValidator(_estate_name),
    WithJsonSchema({"type": "string", "minLength": 1, "pattern": INSIDE}),
]
Stacks = Annotated[
    tuple[tuple[str, ...], ...],
    BeforeValidator(_stacks),
    WithJsonSchema(
        {
            "type": "array",
            "items": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "pattern": INSIDE},
                "minItems": 2,
            },
        }
    ),
]
Megabytes = Annotated[
    int,
    BeforeValidator(_megabytes),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 4096}),
]
Url = Annotated[str, BeforeValidator(_url), WithJsonSchema({"type": "string", "pattern": URL})]
EnvFiles = Annotated[
    tuple[str, ...] | dict[str, tuple[str, ...]],
    BeforeValidator(_env_files),
    WithJsonSchema(
        {
            "anyOf": [
                *_one_or_list({"type": "string", "pattern": INSIDE}).json_schema["anyOf"],
                {
                    "type": "object",
                    "additionalProperties": _one_or_list(
                        {"type": "string", "pattern": INSIDE}
                    ).json_schema,
                },
            ]
        }
    ),
]
EngineVersions = Annotated[
    dict[str, str],
    BeforeValidator(_engine_versions),
    WithJsonSchema(
        {"type": "object", "additionalProperties": {"type": "string", "pattern": ENGINE_VERSION}}
    ),
]
Treatments = Annotated[
    dict[str, Literal["check", "warning", "skip"]],
    BeforeValidator(_treatments),
    WithJsonSchema({"type": "object", "additionalProperties": {"enum": list(TREATMENTS)}}),
]


def _kebab(name: str) -> str:
    return name.replace("_", "-")


Marker = Annotated[
    str,
    BeforeValidator(_marker),
    WithJsonSchema({"type": "string", "pattern": r"\w", "maxLength": 60}),
]
Vocabulary = Annotated[
    dict[str, tuple[str, ...]],
    BeforeValidator(_vocabulary),
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z][a-z0-9-]*$"},
            "additionalProperties": _one_or_list({"type": "string", "minLength": 1}).json_schema,
        }
    ),
]


class HeaderSettings(BaseModel):
    """``[header]``: how the estate writes the block of fields its composes open with."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=_kebab)

    preset: Literal["profile"] | None = Field(
        None,
        description="A convention to start from: `profile` is the `# Profile (at-a-glance):` "
        "block with Model, Topology, Drafter, KV and Status and the status emoji; the keys "
        "below override it.",
    )
    marker: Marker | None = Field(
        None,
        description="The words the block's first line opens with (`Model card` for "
        "`# Model card:`); the line may add a qualifier and ends with the separator.",
    )
    separator: Literal[":", "="] | None = Field(
        None, description="What separates a field's key from its value (default `:`)."
    )
    required: Names | None = Field(None, description="Fields every block must have (S003).")
    statuses: Vocabulary | None = Field(
        None,
        description="The Status vocabulary: each status name with the spellings a Status "
        "value may open with (S002, by-status).",
    )
    caveats_field: str | None = Field(
        None,
        description="The field a status outside required-fields' `caveats-unless` must have "
        "(the preset: Caveats).",
    )

    @model_validator(mode="after")
    def _declared(self) -> HeaderSettings:
        if self.preset is None and self.marker is None:
            raise _problem("needs `preset` or `marker`: the line that opens the block")
        return self


class Settings(BaseModel):
    """``[tool.guards]`` (or a guards.toml), key by key."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=_kebab)

    composes: Globs | None = Field(
        None,
        description="Globs of the composes to check, relative to the root (default: every "
        "YAML file with a top-level `services:`).",
    )
    notes: Globs = Field(DEFAULT_NOTES, description="Globs of the markdown notes to check.")
    exclude: Globs = Field((), description="Globs never checked.")
    history: Globs = Field(
        DEFAULT_HISTORY,
        description="Files whose lines record what was said, not what is true now "
        "(changelogs): a mention there is history.",
    )
    claims: EstateName = Field(
        DEFAULT_CLAIMS, description="The claims registry, relative to the root."
    )
    templates: EstateName = Field(
        DEFAULT_TEMPLATES,
        description="The estate's region templates, tried before the built-in ones.",
    )
    env_files: EnvFiles = Field(
        (),
        description="The env files that feed interpolation in place of each compose's own "
        "`.env`: a list for every compose, or a table of folder glob = list; paths relative to "
        "the root, later files overriding earlier ones.",
    )
    stacks: Stacks = Field(
        (),
        description="The `-f` combinations the estate runs, each a list of composes relative "
        "to the root, the base first: the later files are merged onto it as Compose merges "
        "them. Unset: Compose's own override file, and plain fragments, are merged.",
    )
    max_file_mb: Megabytes = Field(50, description="Files larger than this are reported, not read.")
    select: Names = Field((), description="Rules to run: ids, names, id prefixes or families.")
    ignore: Names = Field((), description="Rules to skip: ids, names, id prefixes or families.")
    extend_select: Names = Field(
        (),
        description="Rules to run besides those `select` picks (or every rule, without it); "
        "a more specific selector wins over a less specific one.",
    )
    extend_ignore: Names = Field((), description="Rules to skip besides those `ignore` names.")
    rules: Annotated[dict[str, dict[str, Any]], BeforeValidator(_tables)] = Field(
        {}, description="Per-rule options, by rule id or name; every rule takes `severity`."
    )
    per_path_ignores: Annotated[dict[str, Any], BeforeValidator(_path_ignores)] = Field(
        {}, description="Rules waived in the files a glob matches; a reason is required."
    )
    rules_url: Url | None = Field(
        None,
        description="Where your team publishes the rules reference; SARIF links each rule "
        "to it (default: docs/rules.md in the repository the package's metadata names; "
        "without one, no link).",
    )
    header: Annotated[HeaderSettings | None, BeforeValidator(_table)] = Field(
        None,
        description="The header convention: the block of fields composes open with. Unset, "
        "the header rules (S001-S005) are off.",
    )
    by_status: Treatments = Field(
        {},
        description="How composes of a Status are treated: checked (the default), their "
        "findings reported as warnings, or skipped.",
    )
    engine_versions: EngineVersions = Field(
        {},
        description="The engine release an image runs where its tag does not say (forks, "
        'custom builds): image glob = "ENGINE VERSION", e.g. `"ghcr.io/acme/vllm-*" = '
        '"vllm 0.27"` (K006, K007).',
    )


KEYS = tuple(_kebab(name) for name in Settings.model_fields)
TABLES = {"header": tuple(_kebab(name) for name in HeaderSettings.model_fields)}


def validate(table: dict[str, Any], where: Any) -> dict[str, Any]:
    """``table``'s settings as plain values by field name (every key, defaults filled in).
    A problem raises :class:`GuardsError` at ``where(key, inner)``: the file (or None, for
    the caller to place) and the line of ``key`` (or of ``inner`` inside its table)."""
    try:
        settings = Settings.model_validate(table)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = [str(part) for part in error["loc"]][:2]  # a key, and one inside its table
        inner = error.get("ctx", {}).get("at") or (loc[1] if len(loc) > 1 else None)
        file, line = where(loc[0] if loc else "", inner)
        if line is None and inner:
            file, line = where(loc[0], None)
        raise GuardsError(_message(error, ".".join(loc)), file, line) from None
    return {name: _plain(getattr(settings, name)) for name in Settings.model_fields}


def _plain(value: Any) -> Any:
    """A nested table's values as plain data (a Config, and the cache, hold no models)."""
    return value.model_dump(exclude_none=True) if isinstance(value, BaseModel) else value


def _message(error: Any, key: str) -> str:
    if error["type"] == "extra_forbidden":
        table, _, _ = key.rpartition(".")
        known = TABLES[table] if table else KEYS
        return f"unknown setting `{key}` (known: {', '.join(sorted(known))})"
    if error["type"] == "setting":
        return f"`{key}` {error['msg']}"
    message = error["msg"]
    return f"`{key}`: {message[:1].lower()}{message[1:]} (got {error['input']!r})"
