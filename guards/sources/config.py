"""Settings: ``[tool.guards]`` in pyproject.toml, ``guards.toml``, or ``--config FILE``.

A config file's top-level keys are those of ``[tool.guards]``. Unknown keys and wrong types
are errors naming the file and line, so a typo never silently disables a guard.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import GuardsError

DEFAULT_NOTES = ("learnings/**/*.md", "docs/**/*.md")
DEFAULT_CLAIMS = "claims.yaml"
DEFAULT_TEMPLATES = "templates"
# Files whose lines record what was said, not what is true now: a mention there is history.
DEFAULT_HISTORY = ("**/CHANGELOG*", "**/HISTORY*", "**/changelog/**", "CHANGELOG*", "HISTORY*")
ALWAYS_EXCLUDED = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    "build",
    "dist",
)
LIST_KEYS = ("composes", "notes", "exclude", "select", "ignore", "history")
KNOWN_KEYS = set(LIST_KEYS) | {
    "claims",
    "rules",
    "max-file-mb",
    "templates",
    "per-path-ignores",
    "rules-url",
    "by-status",
}
GLOB_KEYS = ("composes", "notes", "exclude", "history")


@dataclass(frozen=True)
class Config:
    root: Path
    composes: tuple[str, ...] | None = None  # None: discover YAML files with `services:`
    notes: tuple[str, ...] = DEFAULT_NOTES
    exclude: tuple[str, ...] = ()
    history: tuple[str, ...] = DEFAULT_HISTORY
    max_bytes: int = 50_000_000  # files larger than this are reported, not read
    claims: str = DEFAULT_CLAIMS
    templates: str = DEFAULT_TEMPLATES  # the estate's region templates, before the built-ins
    claims_named: bool = False  # True when a config file names the registry
    named: frozenset[str] = frozenset()  # the settings a config file gives
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_path_ignores: dict[str, Any] = field(default_factory=dict)  # checked by guards.run.suppress
    rules_url: str | None = None  # where the team publishes the rules reference (SARIF links)
    by_status: dict[str, str] = field(default_factory=dict)  # Status name -> check|warning|skip
    source: str | None = None  # the file the settings came from
    source_text: str = ""

    @property
    def claims_path(self) -> Path:
        """The registry file, under the path policy (:mod:`guards.sources.paths`)."""
        return self.estate_path("claims", self.claims)

    @property
    def templates_path(self) -> Path:
        """The estate's templates folder, under the path policy."""
        return self.estate_path("templates", self.templates)

    def estate_path(self, setting: str, name: str, line: int | None = None) -> Path:
        """``name``, a file a setting (or a rule option, ``line`` giving where) names, as a
        path inside the root; a name that leads out is an error at the line that names it."""
        from .paths import estate_file

        if line is None and setting in self.named:
            line = self.line_of(setting)
        where = self.source if line is not None or setting in self.named else None
        return estate_file(self.root, name, setting, where, line)

    def line_of(self, key: str) -> int | None:
        """The line of the config file that sets ``key`` (for error messages)."""
        return _line_of(self.source_text, key) if self.source_text else None

    def line_of_table(self, table: str, key: str) -> int | None:
        """The line that opens ``key`` of ``table`` (``[table."key"]`` or ``"key" = {…}``)."""
        if not self.source_text:
            return None
        quoted = re.compile(rf"^[^#\n]*[\"']{re.escape(key)}[\"']", re.MULTILINE)
        match = quoted.search(self.source_text)
        return self.source_text.count("\n", 0, match.start()) + 1 if match else self.line_of(table)

    def line_of_option(self, rule: str, option: str = "") -> int | None:
        """The line that sets ``option`` in the options of ``rule`` (or the table's line)."""
        return _line_of_option(self.source_text, rule, option) if self.source_text else None


def load_config(root: Path, config_file: Path | None = None) -> Config:
    """Settings from ``--config FILE``, else ``[tool.guards]`` in pyproject.toml, else
    ``guards.toml``. A guards.toml or ``--config`` file takes the keys at its top level or,
    pasted from pyproject.toml, under ``[tool.guards]``."""
    if config_file is not None:
        return _standalone(root, config_file, str(config_file))
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        text = _read_text(pyproject, "pyproject.toml")
        table = _tool_table(parse_toml(text, "pyproject.toml"), "pyproject.toml", text)
        if table is not None:
            return _build(root, table, "pyproject.toml", text)
    standalone = root / "guards.toml"
    if standalone.is_file():
        return _standalone(root, standalone, "guards.toml")
    return Config(root=root)


def _standalone(root: Path, path: Path, shown: str) -> Config:
    text = _read_text(path, shown)
    data = parse_toml(text, shown)
    table = _tool_table(data, shown, text)
    if table is not None and set(data) != {"tool"}:
        raise GuardsError(
            "settings both at the top level and under [tool.guards]; keep one",
            shown,
            _line_of(text, "tool"),
        )
    return _build(root, table if table is not None else data, shown, text)


def _tool_table(data: dict[str, Any], shown: str, text: str) -> dict[str, Any] | None:
    tool = data.get("tool")
    if tool is None:
        return None
    table = tool.get("guards") if isinstance(tool, dict) else None
    if (tool is not None and not isinstance(tool, dict)) or (
        table is not None and not isinstance(table, dict)
    ):
        raise GuardsError("`tool.guards` must be a table", shown, _line_of(text, "tool"))
    return table


def _read_text(path: Path, shown: str) -> str:
    from .edit import check_path, read

    if not check_path(path, shown).exists():
        raise GuardsError("config file not found", shown)
    return read(path, shown).text


def parse_toml(text: str, shown: str) -> dict[str, Any]:
    """A TOML document; errors name the file and line (one reader for every TOML input).
    Nesting past ``nesting.MAX_DEPTH`` (arrays, inline tables, dotted keys, table headers) is
    refused where it passes the limit: tomllib and the code reading its data recurse."""
    from .nesting import MAX_DEPTH, TOO_DEEP, deeper_than, toml_line

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(exc, text, shown) from None
    except ValueError:  # an integer past Python's digit limit
        huge = re.search(r"[0-9_]{4000,}", text)
        line = text.count("\n", 0, huge.start()) + 1 if huge else 1
        raise GuardsError("invalid TOML: an integer too long to read", shown, line) from None
    except RecursionError:  # nested past the parser's own limit
        data = None  # refused below, at the line where it passes ours
    if data is None or deeper_than(data, MAX_DEPTH):
        raise GuardsError(f"invalid TOML: {TOO_DEEP}", shown, toml_line(text, MAX_DEPTH))
    return data


def _toml_error(exc: tomllib.TOMLDecodeError, text: str, shown: str) -> GuardsError:
    """tomllib's message, with its "(at line L, column C)" as the error's location."""
    match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
    message = re.sub(r"\s*\(at (?:line \d+, column \d+|end of document)\)", "", str(exc))
    if match:
        return GuardsError(
            f"invalid TOML: {message}", shown, int(match.group(1)), int(match.group(2))
        )
    end = text.count("\n") + 1  # where the end of the file is
    return GuardsError(f"invalid TOML: {message} at the end of the file", shown, end)


def _build(root: Path, table: dict[str, Any], shown: str, text: str) -> Config:
    for key in table:
        if key not in KNOWN_KEYS:
            raise GuardsError(
                f"unknown setting `{key}` (known: {', '.join(sorted(KNOWN_KEYS))})",
                shown,
                _line_of(text, key),
            )
    lists = {key: _string_list(table[key], key, shown, text) for key in LIST_KEYS if key in table}
    claims = _file_name(table, "claims", DEFAULT_CLAIMS, shown, text)
    templates = _file_name(table, "templates", DEFAULT_TEMPLATES, shown, text)
    rules = table.get("rules", {})
    if not isinstance(rules, dict) or not all(isinstance(v, dict) for v in rules.values()):
        raise GuardsError(
            "`rules` must be a table of per-rule option tables", shown, _line_of(text, "rules")
        )
    ignores = table.get("per-path-ignores", {})
    if not isinstance(ignores, dict):
        raise GuardsError(
            "`per-path-ignores` must be a table of glob = {rules, reason}",
            shown,
            _line_of(text, "per-path-ignores"),
        )
    rules_url = table.get("rules-url")
    if rules_url is not None and (
        not isinstance(rules_url, str) or not re.fullmatch(r"https?://[^\s#]+", rules_url)
    ):
        raise GuardsError(
            "`rules-url` must be an http(s) URL without a #fragment",
            shown,
            _line_of(text, "rules-url"),
        )
    by_status = _by_status(table.get("by-status", {}), shown, text)
    megabytes = table.get("max-file-mb", 50)
    if isinstance(megabytes, bool) or not isinstance(megabytes, int) or not 1 <= megabytes <= 4096:
        raise GuardsError(
            "`max-file-mb` must be a whole number of megabytes from 1 to 4096",
            shown,
            _line_of(text, "max-file-mb"),
        )
    return Config(
        root=root,
        max_bytes=megabytes * 1_000_000,
        composes=lists.get("composes"),
        notes=lists.get("notes", DEFAULT_NOTES),
        exclude=lists.get("exclude", ()),
        history=lists.get("history", DEFAULT_HISTORY),
        claims=claims,
        templates=templates,
        claims_named="claims" in table,
        named=frozenset(table),
        select=lists.get("select", ()),
        ignore=lists.get("ignore", ()),
        rules=rules,
        per_path_ignores=ignores,
        rules_url=rules_url,
        by_status=by_status,
        source=shown,
        source_text=text,
    )


def _file_name(table: dict[str, Any], key: str, default: str, shown: str, text: str) -> str:
    """A setting naming a file or folder of the estate: a relative path (guards.sources.paths)."""
    from .paths import relative_name

    name = table.get(key, default)
    if not isinstance(name, str):
        raise GuardsError(f"`{key}` must be a path string", shown, _line_of(text, key))
    return relative_name(name, key, shown, _line_of(text, key))


TREATMENTS = ("check", "warning", "skip")


def _by_status(table: Any, shown: str, text: str) -> dict[str, str]:
    """``by-status``: how composes of a Status are treated (``deprecated = "skip"``)."""
    if not isinstance(table, dict):
        raise GuardsError(
            "`by-status` must be a table of status = treatment", shown, _line_of(text, "by-status")
        )
    if not table:
        return {}  # the header parser is not needed to read the settings
    from .compose.header import STATUSES

    names = sorted(STATUSES.values())
    for name, treatment in table.items():
        if name not in names:
            raise GuardsError(
                f"by-status: unknown status `{name}` (known: {', '.join(names)})",
                shown,
                _line_of(text, name),
            )
        if treatment not in TREATMENTS:
            raise GuardsError(
                f"by-status.{name}: {treatment!r} is not one of {', '.join(TREATMENTS)}",
                shown,
                _line_of(text, name),
            )
    return dict(table)


def _string_list(value: Any, key: str, shown: str, text: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GuardsError(f"`{key}` must be a list of strings", shown, _line_of(text, key))
    if key in GLOB_KEYS:
        outside = next(
            (p for p in value if p.startswith(("/", "\\")) or ".." in p.split("/")), None
        )
        if outside is not None:
            raise GuardsError(
                f"`{key}` pattern {outside!r} reaches outside the root; patterns are relative "
                "to it",
                shown,
                _line_of(text, key),
            )
    return tuple(value)


def _line_of(text: str, key: str) -> int | None:
    name = re.escape(key)
    pattern = re.compile(rf"^\s*(?:\"{name}\"|{name})\s*=|^\s*\[.*\b{name}\b.*\]", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _line_of_option(text: str, rule: str, option: str) -> int | None:
    """The line of ``option`` inside the options table of ``rule``: a ``[...rules.RULE]``
    table, an inline ``RULE = {...}`` table, or dotted keys; else the table's own line."""
    name = rf'(?:"{re.escape(rule)}"|{re.escape(rule)})'
    header = re.compile(rf"^\s*\[\s*(?:tool\.guards\.)?rules\.{name}\s*\]", re.MULTILINE)
    inline = re.compile(rf"^\s*(?:rules\.)?{name}\s*=", re.MULTILINE)
    found = header.search(text) or inline.search(text)
    if found is None:
        return _line_of(text, "rules")
    start = text.count("\n", 0, found.start()) + 1
    if not option:
        return start
    end = re.compile(r"^\s*\[", re.MULTILINE).search(text, found.end())
    key = re.compile(rf"(?:^|[{{,.\s])(\"?{re.escape(option)}\"?)\s*=", re.MULTILINE)
    hit = key.search(text, found.start(), end.start() if end else len(text))
    return text.count("\n", 0, hit.start(1)) + 1 if hit else start
