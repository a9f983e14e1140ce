"""The settings a run goes by (:class:`Config`), and reading the TOML they are written in.

:class:`Config` is the validated settings plus where they came from. The keys, their types,
defaults and checks have one home, :mod:`guards.sources.settings`; finding and loading the file
is :mod:`guards.sources.configfile`. This module needs no pydantic: a run with no settings file,
or a kept one, builds a Config from plain values.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import GuardsError, located

DEFAULT_CLAIMS = "claims.yaml"
DEFAULT_TEMPLATES = "templates"
VERSION_CONTROL = (".git", ".hg", ".svn")
# Folders tools make as they run (environments, caches, build output: ruff's default excludes
# and the test tools'): never estate content, and not even listed, so a type checker or a test
# run that makes one between two runs leaves the kept run valid (the listing is in its key).
TOOL_MADE = (
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    "__pycache__",
    "__pypackages__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".pytype",
    ".pyre",
    ".eggs",
    ".direnv",
    ".ipynb_checkpoints",
    "build",
    "dist",
)
ALWAYS_EXCLUDED = VERSION_CONTROL + TOOL_MADE
# Defaults the schema (guards.sources.settings) declares; here so a run with no settings file
# needs no pydantic.
DEFAULT_NOTES = ("learnings/**/*.md", "docs/**/*.md")
DEFAULT_HISTORY = ("**/CHANGELOG*", "**/HISTORY*", "**/changelog/**", "CHANGELOG*", "HISTORY*")


class Kept(Protocol):
    """What a file's text validated to before (its settings, its claims), as plain data, by
    that text; None when nothing is kept for it. The reader checks what it gets."""

    def get(self, text: str) -> Any: ...

    def put(self, text: str, values: Any) -> None: ...


@dataclass(frozen=True)
class Config:
    root: Path
    # -- the settings (guards.sources.settings.Settings, field by field) --
    composes: tuple[str, ...] | None = None  # None: discover YAML files with `services:`
    notes: tuple[str, ...] = DEFAULT_NOTES
    exclude: tuple[str, ...] = ()
    history: tuple[str, ...] = DEFAULT_HISTORY
    claims: str = DEFAULT_CLAIMS
    templates: str = DEFAULT_TEMPLATES  # the estate's region templates, before the built-ins
    # env files feeding interpolation instead of a compose's `.env`: for all, or by folder glob
    env_files: tuple[str, ...] | dict[str, tuple[str, ...]] = ()
    stacks: tuple[tuple[str, ...], ...] = ()  # `-f` combinations, the base first
    max_file_mb: int = 50  # files larger than this are reported, not read
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()  # added to what `select` picks, as ruff adds them
    extend_ignore: tuple[str, ...] = ()
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_path_ignores: dict[str, Any] = field(default_factory=dict)  # checked by guards.run.suppress
    rules_url: str | None = None  # where the team publishes the rules reference (SARIF links)
    header: dict[str, Any] | None = None  # the header convention's keys; None: none declared
    by_status: dict[str, str] = field(default_factory=dict)  # Status name -> check|warning|skip
    engine_versions: dict[str, str] = field(default_factory=dict)  # image glob -> "vllm 0.27"
    # -- where they came from --
    named: frozenset[str] = frozenset()  # the settings a config file gives
    source: str | None = None  # the file the settings came from
    source_text: str = ""

    @property
    def max_bytes(self) -> int:
        return self.max_file_mb * 1_000_000

    @property
    def claims_named(self) -> bool:
        """Whether a config file names the registry (then a missing one is an error)."""
        return "claims" in self.named

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
        return line_of(self.source_text, key) if self.source_text else None

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


def parse_toml(text: str, shown: str) -> dict[str, Any]:
    """A TOML document; errors name the file and line (one reader for every TOML input).
    Nesting past ``nesting.MAX_DEPTH`` (arrays, inline tables, dotted keys, table headers) is
    refused where it passes the limit: tomllib and the code reading its data recurse."""
    with located(shown):
        return _toml_data(text)


def _toml_data(text: str) -> dict[str, Any]:
    from .nesting import MAX_DEPTH, TOO_DEEP, deeper_than, toml_line

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(exc, text) from None
    except ValueError:  # an integer past Python's digit limit
        huge = re.search(r"[0-9_]{4000,}", text)
        line = text.count("\n", 0, huge.start()) + 1 if huge else 1
        raise GuardsError("invalid TOML: an integer too long to read", None, line) from None
    except RecursionError:  # nested past the parser's own limit
        data = None  # refused below, at the line where it passes ours
    if data is None or deeper_than(data, MAX_DEPTH):
        raise GuardsError(f"invalid TOML: {TOO_DEEP}", None, toml_line(text, MAX_DEPTH))
    return data


def _toml_error(exc: tomllib.TOMLDecodeError, text: str) -> GuardsError:
    """tomllib's message, with its "(at line L, column C)" as the error's location."""
    match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
    message = re.sub(r"\s*\(at (?:line \d+, column \d+|end of document)\)", "", str(exc))
    if match:
        return GuardsError(
            f"invalid TOML: {message}", None, int(match.group(1)), int(match.group(2))
        )
    end = text.count("\n") + 1  # where the end of the file is
    return GuardsError(f"invalid TOML: {message} at the end of the file", None, end)


def line_of(text: str, key: str) -> int | None:
    name = re.escape(key)
    pattern = re.compile(
        rf"^[ \t]*(?:\"{name}\"|{name})[ \t]*=|^[ \t]*\[.*\b{name}\b.*\]", re.MULTILINE
    )
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
        return line_of(text, "rules")
    start = text.count("\n", 0, found.start()) + 1
    if not option:
        return start
    end = re.compile(r"^\s*\[", re.MULTILINE).search(text, found.end())
    key = re.compile(rf"(?:^|[{{,.\s])(\"?{re.escape(option)}\"?)\s*=", re.MULTILINE)
    hit = key.search(text, found.start(), end.start() if end else len(text))
    return text.count("\n", 0, hit.start(1)) + 1 if hit else start
