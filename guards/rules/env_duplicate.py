"""D009 env-duplicate: a variable gets one value per service and one default per compose.

Why: the list form of ``environment:`` lets one service set a variable twice (``- A=0``, and
further down ``- A=true``). Compose keeps the last line; the earlier one is dead, and it is
usually the one a maintainer finds and edits. The same drift spreads across a compose when
one variable is written with two defaults (``N: ${N:-1}`` in ``environment:``, ``--tp
${N:-2}`` in ``command:``, or ``${N}`` with no default beside a ``${N:-1}``): with the
variable unset each place takes its own value, and the service runs with two settings of one
knob. A mapping that gives a key twice is already a YAML error, reported by the parser;
``${N:+alt}`` and ``${N:?msg}`` give no default and are not compared; ``${N:-}`` is the same
as ``${N}``. Only Compose interpolation counts: ``$${N:-7}`` is the container shell's.

Bad:
    services:
      embed:
        image: nim/embed:1.0
        environment:
          - OTEL_ENABLED=0
          - LOG_LEVEL=info
          - OTEL_ENABLED=true
      llm:
        image: vllm/vllm-openai:v0.27.1
        environment:
          TP: ${TP:-1}
        command: --tensor-parallel-size ${TP:-2}

Finds:
    composes/example.yml:7:9: D009 `OTEL_ENABLED` is set twice in the environment of `embed`: `OTEL_ENABLED=true` here wins over `OTEL_ENABLED=0` (line 5), which Compose ignores
    composes/example.yml:12:37: D009 `${TP:-2}` here defaults TP to 2, but `${TP:-1}` (line 11) defaults TP to 1

Good:
    services:
      embed:
        image: nim/embed:1.0
        environment:
          - OTEL_ENABLED=true
          - LOG_LEVEL=info
      llm:
        image: vllm/vllm-openai:v0.27.1
        environment:
          TP: ${TP:-2}
        command: --tensor-parallel-size ${TP:-2}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.compose.interpolate import NAME, closing_brace
from ..sources.compose.written import Scalar
from .base import Context, Rule, written_end
from .options import RuleOptions

BARE = None  # the "default" of ``${N}``, ``$N`` and ``${N:-}``: unset gives ""


class Reference(NamedTuple):
    """One ``${NAME...}`` Compose interpolates: where, as written, and the default it gives
    (``BARE`` for none; ``compared`` False for ``:+``, ``:?`` and their kin)."""

    name: str
    written: str
    default: str | None
    compared: bool
    line: int
    column: int


def check(compose: Compose, context: Context) -> list[Finding]:
    return _duplicates(compose) + _defaults(compose)


def _duplicates(compose: Compose) -> list[Finding]:
    """Two list entries of one ``environment:`` naming one variable with different values (an
    anchored list shared by several services is read once)."""
    findings = []
    for service, items in compose.written.environments:
        first: dict[str, Scalar] = {}
        for item in items:
            name = item.value.partition("=")[0].strip()
            earlier = first.setdefault(name, item)
            if earlier is not item and earlier.value.strip() != item.value.strip():
                findings.append(_duplicate(compose, service, name, earlier, item))
    return findings


def _duplicate(
    compose: Compose, service: str, name: str, earlier: Scalar, later: Scalar
) -> Finding:
    return RULE.at(
        compose.path,
        later.line,
        later.column,
        f"`{name}` is set twice in the environment of `{service}`: `{later.value.strip()}` "
        f"here wins over `{earlier.value.strip()}` (line {earlier.line}), "
        "which Compose ignores",
        hint="delete the line that does not hold the value you mean",
        knob=name,
        end_column=later.end_column,
    )


def _defaults(compose: Compose) -> list[Finding]:
    """Each default of a variable after its first, when it differs from the first."""
    first: dict[str, Reference] = {}
    reported: set[tuple[str, str | None]] = set()
    findings = []
    for ref in references(compose.written.interpolating, compose.lines):
        if not ref.compared:
            continue
        earlier = first.setdefault(ref.name, ref)
        if earlier.default == ref.default or (ref.name, ref.default) in reported:
            continue
        reported.add((ref.name, ref.default))
        findings.append(
            RULE.at(
                compose.path,
                ref.line,
                ref.column,
                f"`{ref.written}` here {_gives(ref)}, but `{earlier.written}` "
                f"(line {earlier.line}) {_gives(earlier)}",
                hint=f"give {ref.name} one default everywhere the compose reads it",
                knob=ref.name,
                end_column=written_end(compose.lines, ref.line, ref.column, ref.written),
            )
        )
    return findings


def _gives(ref: Reference) -> str:
    if ref.default is BARE:
        return f"has no default (unset, {ref.name} is empty)"
    return f"defaults {ref.name} to {ref.default}"


def references(values: tuple[Scalar, ...], lines: list[str]) -> Iterator[Reference]:
    """Every variable the compose interpolates, in the order written (``values``: its scalar
    values that hold a ``$``, each node once however many aliases name it)."""
    for node in values:
        at = (node.row, 0)
        for name, written, default, compared, first, last in scan(node.value):
            line, column = _place(lines, written, node.end_row, at)
            at = (line - 1, column)
            alone = compared and _alone(node.value, first, last)
            yield Reference(name, written, default, alone, line, column)


def scan(text: str) -> Iterator[tuple[str, str, str | None, bool, int, int]]:
    """(name, as written, default, compared, start, end) of each reference in ``text`` as
    Compose reads it: ``$$`` is a literal ``$``. A reference inside a default is read too,
    not compared: its default applies only when the outer one is taken."""
    i = 0
    while (dollar := text.find("$", i)) >= 0:
        nxt = text[dollar + 1 : dollar + 2]
        if nxt == "$":
            i = dollar + 2
        elif nxt == "{":
            end = closing_brace(text, dollar)
            if end < 0:
                return
            for ref in _braced(text[dollar : end + 1]):
                yield (*ref, dollar, end + 1)
            i = end + 1
        elif found := NAME.match(text, dollar + 1):
            yield found.group(), text[dollar : found.end()], BARE, True, dollar, found.end()
            i = found.end()
        else:
            i = dollar + 1


def _braced(written: str) -> Iterator[tuple[str, str, str | None, bool]]:
    body = written[2:-1]
    found = NAME.match(body)
    if found is None:
        return
    rest = body[found.end() :]
    if not rest:
        yield found.group(), written, BARE, True
        return
    operator = ":-" if rest.startswith(":-") else rest[:1]
    arg = rest[len(operator) :]
    # `${N:-}` is an explicit pass-through, `${N:+x}` and `${N:?x}` give no default
    default = _unquoted(arg)
    yield found.group(), written, default, operator in (":-", "-") and bool(default)
    for name, inner, _, _, _, _ in scan(arg):
        yield name, inner, None, False


def _unquoted(text: str) -> str:
    """A default in quotes is the same default (the shell or YAML around it drops them)."""
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _alone(text: str, start: int, end: int) -> bool:
    """The reference is a whole value or word (``N=${N:-1}``, ``--tp ${N:-2}``), not part of
    a URL, a path or a JSON payload, where its default is a piece of a larger value."""
    before, after = text[start - 1 : start], text[end : end + 1]
    opens = before in ("", "=", '"', "'") or before.isspace()
    closes = after in ("", '"', "'", ",") or after.isspace()
    return opens and closes


def _place(lines: list[str], written: str, end: int, at: tuple[int, int]) -> tuple[int, int]:
    """Line and column (1-based) of ``written`` in the node's lines, from ``at`` (0-based
    line and column where the search goes on: after the reference found before)."""
    first, column = at
    for index in range(first, min(end, len(lines) - 1) + 1):
        found = lines[index].find(written, column if index == first else 0)
        if found >= 0:
            return index + 1, found + 1
    return first + 1, 1


RULE: Rule[RuleOptions] = Rule(
    id="D009",
    name="env-duplicate",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__ or "",
)
