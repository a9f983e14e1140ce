"""What an operator who follows a document's ``export NAME=value`` lines reserves.

A how-to that says ``export LLM_GPU_ID=2`` before ``docker compose up`` describes the compose
as the operator will run it, not as it ships. Compose interpolates from the shell's
environment first, so the exported values replace the estate's for every ``${NAME}`` they
name; the compose is read again with them and its device requests compared with what ships.
Only what that reading settles is reported: a request whose ``device_ids`` list then names one
card twice (``['${A:-1}', '${B:-2}']`` with ``A=2``), where the compose as shipped names each
card once; the count the compose reserves then silently drops. A service merged from several
files, or a compose that cannot be read again, is not evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from ..errors import GuardsError
from ..sources.compose.compose import Compose, parse_compose
from ..sources.compose.services import Service
from .said import Statement
from .subjects import Target

REFERENCE = re.compile(r"\$\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)")


class Doubled(NamedTuple):
    """A documented export under which a service's device request names a card twice."""

    export: Statement  # the export line of the variable that doubles the card
    compose: str
    service: str
    line: int  # of the device request
    shipped: tuple[str, ...]  # the request's ids as shipped
    then: tuple[str, ...]  # its ids with the section's exports applied


def request_line(service: Service) -> int:
    """The line of a service's first device request (``deploy`` devices, else ``gpus:``)."""
    requests = [*service.devices, *service.gpus]
    return int(requests[0].get("line", service.line)) if requests else service.line


def reads(target: Target, names: Iterable[str]) -> bool:
    """Whether the service's device requests name one of the variables ``names``."""
    return bool(_read_by(target.compose, target.service) & set(names))


def doubled(exports: list[Statement], composes: Iterable[Compose]) -> list[Doubled]:
    """Each service whose device ids name a card twice under one section's ``exports``."""
    env = {e.knob: e.value for e in exports}
    found = []
    for compose in composes:
        for service in compose.shipped:
            names = _read_by(compose, service) & set(env)
            if not names or service.path is not None or compose.stack:
                continue
            shipped = _ids(service)
            then = _ids_under(compose, service.name, env)
            if then is None or len(set(then)) == len(then) or len(set(shipped)) < len(shipped):
                continue
            export = [e for e in exports if e.knob in names][-1]
            found.append(
                Doubled(export, compose.path, service.name, request_line(service), shipped, then)
            )
    return found


def _ids(service: Service) -> tuple[str, ...]:
    requests = [r for r in (*service.devices, *service.gpus) if r.get("device_ids")]
    return tuple(requests[0]["device_ids"]) if requests else ()


def _ids_under(compose: Compose, name: str, env: dict[str, str]) -> tuple[str, ...] | None:
    """The service's device ids with ``env`` over the compose's own interpolation env."""
    try:
        again = parse_compose(compose.text, compose.path, {**compose.env, **env}, None)
    except GuardsError:
        return None
    service = next((s for s in again.services if s.name == name), None)
    return _ids(service) if service is not None else None


def _read_by(compose: Compose, service: Service) -> set[str]:
    """The variables the lines of a service's first device request name."""
    requests = [*service.devices, *service.gpus]
    if not requests or service.path is not None:
        return set()
    lines = compose.lines
    start = request_line(service)
    if not 0 < start <= len(lines):
        return set()
    indent = len(lines[start - 1]) - len(lines[start - 1].lstrip(" -"))
    names = set(REFERENCE.findall(lines[start - 1]))
    for text in lines[start:]:
        if text.strip() and len(text) - len(text.lstrip()) < indent:
            break
        if not text.lstrip().startswith("#"):
            names |= set(REFERENCE.findall(text))
    return names
