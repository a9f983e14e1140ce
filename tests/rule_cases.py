"""Rule cases: each ``tests/rules/*.yml`` file holds cases for one rule.

A case is a small estate (``files``), optional ``[rules.*]`` tables (``options``), an optional
operator ``.env`` overlay (``env``), other rules to run beside it (``select``, for a rule that
judges the others' results), the other settings as the TOML of a guards.toml (``settings``;
default ``PRESET``, the header convention every case's headers are written in, so a case of
an estate without one says ``settings: ""``), and what ``guards check --verbose --select RULE``
prints for it
(``expect``): every finding with path, line, column, message and hint, then the suite total. ``remarks`` lists what the rule said it could not check (default: nothing), ``errors``
the inputs that could not be loaded (default: none). ``spans``, when given, lists where each of
the rule's findings starts and ends, in the order they are printed: ``path:line:column-end_line:
end_column`` (the end column just after the text the finding is about, as SARIF's
``endColumn``; a point repeats its start).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from guards.findings import Run
from guards.report.text import TextReporter
from guards.rules import all_rules, find
from guards.rules.options import load_options
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.config import Config
from guards.sources.settings import validate

HERE = Path(__file__).parent / "rules"
TODAY = date(2026, 11, 30)  # what the cases' `until=` dates are read against
CASE_KEYS = {
    "name",
    "files",
    "options",
    "env",
    "select",
    "settings",
    "expect",
    "remarks",
    "errors",
    "spans",
}
PRESET = '[header]\npreset = "profile"\n'


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    files: dict[str, str]
    expect: str
    options: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] | None = None
    select: list[str] = field(default_factory=list)
    settings: str = PRESET
    remarks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    spans: list[str] | None = None

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.name}"


@functools.cache
def load_cases(folder: Path = HERE) -> tuple[Case, ...]:
    """The cases of every file in ``folder``, read once per process (two test modules use
    them at collection), with libyaml (the same data as PyYAML's own reader, a tenth of the
    time)."""
    cases = []
    for path in sorted(folder.glob("*.yml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        rule = data["rule"]
        assert set(data) == {"rule", "cases"}, f"{path.name}: keys {sorted(data)}"
        assert path.name.startswith(f"{rule}-"), f"{path.name} holds cases for {rule}"
        for raw in data["cases"]:
            assert set(raw) <= CASE_KEYS, f"{path.name}: {raw.get('name')}: keys {sorted(raw)}"
            cases.append(Case(rule=rule, **raw))
    return tuple(cases)


def check(
    rule_id: str,
    files: dict[str, str],
    root: Path,
    options: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    also: list[str] | None = None,
    today: date | None = None,
    settings: str = PRESET,
) -> tuple[Run, list[str]]:
    """Write ``files`` under ``root``, load them as an estate and run one rule on it (and the
    rules in ``also``), with ``settings`` (TOML) beside the case's globs and ``options``.
    Returns the run and the load errors."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    table = tomllib.loads(settings)
    values = validate(table, lambda key, inner: (None, None))
    given = {name: values[name] for name in (key.replace("-", "_") for key in table)}
    globs = {"composes": ("composes/**/*.yml",), "notes": ("learnings/**/*.md",)}
    config = Config(root=root, **{**globs, **given, "rules": options or {}})
    rules = all_rules()
    settings = load_options(config, rules)
    estate = load_estate(config, env=env)
    chosen = [find(rules, name) for name in [rule_id, *(also or [])]]
    assert None not in chosen, f"no rule among {rule_id}, {also}"
    picked = [rule for rule in rules if rule in chosen]
    return run(estate, picked, settings, today), [str(error) for error in estate.errors]


def outcome(case: Case, root: Path) -> tuple[str, list[str], list[str]]:
    """What the user sees for a case: the text output, the rule's remarks, the load errors."""
    result, errors = run_case(case, root)
    remarks = [r for r in result.remarks if r.startswith(f"{case.rule} ")]
    return TextReporter(verbose=True).render(result), remarks, errors


def run_case(case: Case, root: Path) -> tuple[Run, list[str]]:
    return check(
        case.rule, case.files, root, case.options, case.env, case.select, TODAY, case.settings
    )


def spans(run: Run, rule: str) -> list[str]:
    """Where each of ``rule``'s findings starts and ends, as a case's ``spans`` lists them."""
    return [
        f"{f.path}:{f.line}:{f.column}-{f.end_line}:{f.end_column}"
        for f in run.findings
        if f.rule == rule
    ]
