"""D002 comment-default: a comment that states a default states the one the code sets.

Why: comments drift from code like any prose. A maintainer wrote "⭐ W4A8 (int8 activations)
SHIPS ON" over ``W4A8=${W4A8:-0}``; env-override tables (``NP  parallel slots  (default: 1)``)
and "(the shipped default)" notes rot the same way. Statements recognised: env-table rows
``VAR  description  (default: X)`` (``A / B … (defaults: x / y)`` too), ``VAR default X``,
``name=X (the shipped default)`` / ``name is X (the shipped default)``, and ``VAR … SHIPS ON|OFF``.
They are compared with what the compose really defaults to: the ``${VAR:-x}`` defaults in the
YAML, and in an entrypoint script what the container sees. Ranges, recommendations and prose
values ("pinned b9570") are not statements of a default and are skipped; drafter depth
("defaults to N") is K003's. A variable an override table documents must also be read by the
compose (a ``${VAR}``, an ``environment:`` entry, a script line); with an ``env_file:`` any
variable may reach the engine by name, so that is not judged.

Bad:
    # Override defaults via .env or shell:
    #   CTX_SIZE   KV pool size     (default: 131072)
    #   NP         parallel slots   (default: 1 — do NOT raise on dual)
    services:
      llama:
        image: ghcr.io/ggml-org/llama.cpp:server-cuda-b9570
        command: -c ${CTX_SIZE:-262144} -np ${NP:-1}

Finds:
    composes/example.yml:2:43: D002 comment says CTX_SIZE: the default is 131072 (line 2), but the compose sets `${CTX_SIZE:-262144}` (line 7)

Good:
    # Override defaults via .env or shell:
    #   CTX_SIZE   KV pool size     (default: 262144 — native)
    #   NP         parallel slots   (default: 1 — do NOT raise on dual)
    services:
      llama:
        image: ghcr.io/ggml-org/llama.cpp:server-cuda-b9570
        command: -c ${CTX_SIZE:-262144} -np ${NP:-1}
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..facts.defaults import Site, variable_defaults
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.numbers import to_number
from .base import Context, Rule, written_end
from .options import RuleOptions

VAR = r"[A-Z][A-Z0-9_]{2,}"
TABLE_ROW = re.compile(  # "CTX_SIZE   KV pool size (default: X)", "A / B (defaults: x / y)"
    rf"^\s*(?P<vars>{VAR}(?:\s*/\s*{VAR})*)(?:\s{{2,}}[^(\n]*+|\s*)"
    r"\(defaults?:\s*(?P<values>[^)]*)\)"
)
VAR_DEFAULT = re.compile(rf"\b(?P<var>{VAR})\s+default\s+(?P<value>[^\s;,)]+)")
SHIPPED = re.compile(
    r"(?<![\w-])(?P<name>[A-Za-z_][\w-]*+)\s*+(?:=|\bis\b)\s*+(?P<value>[\w.]++)\s*+"
    r"\((?:the\s+)?shipped default\)",
    re.IGNORECASE,
)
SHIPS = re.compile(r"\bSHIPS\s+(?P<value>ON|OFF)\b")
FIRST_VAR = re.compile(rf"\b(?P<var>{VAR})\b")
RANGE = re.compile(r"^\d[\d.,]*\s*[-–]\s*\d")
OFF = {"0", "false", "off", "no", ""}
ENV_FILE = re.compile(r"^\s*env_file\s*:", re.MULTILINE)


class Statement(NamedTuple):
    subject: str  # a variable name or a knob name
    value: str
    column: int  # 0-based in the comment text
    truthy: bool = False  # SHIPS ON/OFF compares on/off, not the literal value
    override: bool = False  # a row of an override table: the compose must read the variable


def statements(text: str) -> list[Statement]:
    if "SHIPS" not in text and "default" not in text.lower():
        return []  # every statement says "default" (any case) or "SHIPS"
    found: list[Statement] = []
    row = TABLE_ROW.match(text)
    if row:
        names = [n.strip() for n in row.group("vars").split("/")]
        values = [v.strip() for v in row.group("values").split(" / ")]
        if len(values) < len(names):
            values = [row.group("values")] * len(names)
        found += [
            Statement(n, _first(v), row.start("values"), override=True)
            for n, v in zip(names, values, strict=False)
        ]
    found += [
        Statement(m.group("var"), m.group("value"), m.start("value"))
        for m in VAR_DEFAULT.finditer(text)
    ]
    found += [
        Statement(m.group("name"), m.group("value"), m.start("value"))
        for m in SHIPPED.finditer(text)
    ]
    ships = SHIPS.search(text)  # the first variable before "SHIPS ON|OFF" is its subject
    var = FIRST_VAR.search(text, 0, ships.start()) if ships else None
    if ships and var:
        found.append(
            Statement(var.group("var"), ships.group("value").lower(), ships.start("value"), True)
        )
    return found


def _first(value: str) -> str:
    return re.split(r"\s+[—–-]\s+|;|\s=|\s+\(|,\s", value.strip())[0].strip().rstrip(".")


def check(compose: Compose, context: Context) -> list[Finding] | None:
    stated = [(c, s) for c in compose.comments for s in statements(c.text)]
    if not stated:
        return []
    sites = variable_defaults(compose)
    knobs = {
        name.replace("_", "-"): knob
        for service in compose.shipped
        for name, knob in service.knobs.items()
    }
    findings = []
    code = _code(compose)
    for comment, statement in stated:
        if statement.override and _unread(statement.subject, code):
            findings.append(_unread_finding(compose, comment, statement))
            continue
        finding = _judge(compose, comment, statement, sites, knobs)
        if finding is not None:
            findings.append(finding)
    return findings


def _code(compose: Compose) -> str | None:
    """The compose without its comments, or None when a service passes an ``env_file`` whole
    (then any variable may reach the engine, read by name)."""
    cut = {c.line: c.column for c in compose.comments}
    lines = [line[: cut[n] - 1] if n in cut else line for n, line in enumerate(compose.lines, 1)]
    text = "\n".join(lines)
    return None if ENV_FILE.search(text) else text


def _unread(name: str, code: str | None) -> bool:
    return code is not None and re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", code) is None


def _unread_finding(compose: Compose, comment, statement: Statement) -> Finding:
    column = comment.column + 1 + comment.text.find(statement.subject)
    return RULE.at(
        compose.path,
        comment.line,
        column,
        f"comment documents {statement.subject} as an override (line {comment.line}), but "
        "nothing in the compose reads it",
        knob=statement.subject,
        hint=f"wire it into the command (`${{{statement.subject}:-…}}`), or drop the row",
        end_column=written_end(compose.lines, comment.line, column, statement.subject),
    )


def _judge(compose, comment, statement: Statement, sites: dict[str, list[Site]], knobs):
    stated = statement.value
    if not stated or RANGE.match(stated):
        return None
    if statement.subject in sites:
        actual = sites[statement.subject]
        values, where = {s.value for s in actual}, actual[0]
        shown = f"`{where.text}` (line {where.line})"
    else:
        knob = knobs.get(statement.subject.lower().replace("_", "-"))
        if knob is None or knob.value is None:
            return None
        values, shown = {knob.value}, f"{knob.value} ({knob.source} line {knob.line})"
    if not statement.truthy and not _value_like(stated, values):
        return None
    if any(_same(stated, v, statement.truthy) for v in values):
        return None
    said = f"SHIPS {stated.upper()}" if statement.truthy else f"the default is {stated}"
    column = comment.column + 1 + statement.column
    written = comment.text[statement.column :][: len(stated)]  # SHIPS ON: as written, in capitals
    return RULE.at(
        compose.path,
        comment.line,
        column,
        f"comment says {statement.subject}: {said} (line {comment.line}), but the "
        f"compose sets {shown}",
        knob=statement.subject,
        hint="fix the comment, or the default it describes",
        end_column=written_end(compose.lines, comment.line, column, written)
        if written.lower() == stated.lower()
        else 0,
    )


def _value_like(stated: str, actual: set[str]) -> bool:
    """A number, a path, an identifier with punctuation, or a word the code also uses as a
    value: "pinned b9570" against an image reference is prose, not a default."""
    if re.search(r"\s", stated.strip()):
        return False
    if re.search(r"[\d/._:]", stated) or stated.startswith(("…", "...")):
        return True
    return any(re.fullmatch(r"[A-Za-z]+", value or "") for value in actual)


def _same(stated: str, actual: str, truthy: bool) -> bool:
    if truthy:
        return (stated == "on") == (actual.strip().lower() not in OFF)
    if stated.startswith(("…", "...")):
        return actual.endswith(stated.lstrip("….").lstrip("/"))
    numbers = to_number(stated), to_number(actual)
    if None not in numbers:
        return numbers[0] == numbers[1]
    return stated.strip("`'\"").lower() == actual.lower()


RULE: Rule[RuleOptions] = Rule(
    id="D002",
    name="comment-default",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
