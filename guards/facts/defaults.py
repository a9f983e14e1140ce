"""What a variable defaults to, everywhere a compose consults it.

Compose-level sites (``${VAR:-x}`` in the YAML) default as Compose evaluates them with nothing
set. Bash-level sites (``$${VAR:-x}`` in an entrypoint script) default to what the container
sees: a name the service forwards under ``environment:`` carries the compose-level value
(``SPEC_N=${SPEC_N:-}`` forwards an empty string, so ``$${SPEC_N:-7}`` gives 7, while
``W4A8=${W4A8:-0}`` makes ``$${W4A8:-1}`` give 0).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple

from ..sources.compose.interpolate import TemplateError, closing_brace, interpolate

if TYPE_CHECKING:
    from ..sources.compose.compose import Compose

OPENING = re.compile(r"(\$?)\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-?+])?")


class Site(NamedTuple):
    value: str  # what the variable comes to when the operator does not set it
    line: int
    text: str  # the expression as written


def variable_defaults(compose: Compose) -> dict[str, list[Site]]:
    sites: dict[str, list[Site]] = {}
    script_lines: dict[int, Mapping[str, str]] = {}
    for service in compose.shipped:
        if service.script is not None:
            env = service.script.container_env()
            script_lines.update({line.number: env for line in service.script.lines})
    for number, line in enumerate(compose.lines, 1):
        if "${" not in line or line.lstrip().startswith("#"):
            continue
        for name, site in _sites(line, number, script_lines.get(number)):
            sites.setdefault(name, []).append(site)
    return sites


def _sites(
    line: str, number: int, container: Mapping[str, str] | None
) -> Iterator[tuple[str, Site]]:
    for match in OPENING.finditer(line):
        bash = match.group(1) == "$"
        if bash and container is None:
            continue  # `$${` outside a script is a literal for the container, not a default
        start = match.start() + (1 if bash else 0)
        end = closing_brace(line, start)
        if end < 0:
            continue
        expression = line[start : end + 1]
        if bash:
            expression = expression.replace("$$", "$")
        try:
            value = interpolate(expression, container or {}, unescape=not bash)
        except TemplateError:
            continue
        if value.resolved and (match.group(3) or "").endswith("-"):
            yield match.group(2), Site(value.text, number, line[match.start() : end + 1])
