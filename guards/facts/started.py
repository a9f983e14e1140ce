"""What a documented ``docker compose ... up`` starts, and the cards each service it starts
reserves by id.

Compose starts a service that has no ``profiles`` always, and one that has profiles when the
command enables one of them (``--profile``, ``COMPOSE_PROFILES``). A how-to runs its commands
after the ``export NAME=value`` lines above them, and Compose interpolates from the shell's
environment first: the compose is read again with those values over the estate's, so the ids
are the ones the operator who follows the page gets. A service merged from several files, or
a compose that cannot be read again, is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from ..errors import GuardsError
from ..sources.compose.compose import Compose, parse_compose
from ..sources.compose.services import Service


class Started(NamedTuple):
    """One service a command starts, with the card ids it reserves and where."""

    service: str
    ids: tuple[str, ...]
    line: int  # of its device request


def started(compose: Compose, profiles: tuple[str, ...], env: Mapping[str, str]) -> list[Started]:
    """The services of ``compose`` the profiles start, with their ``device_ids`` under
    ``env`` (a section's exports) over the compose's own interpolation env."""
    running = [s for s in compose.shipped if starts(s, profiles) and s.path is None]
    if not running or compose.stack:
        return []
    try:
        again = parse_compose(compose.text, compose.path, {**compose.env, **env}, None)
    except GuardsError:
        return []
    read = {s.name: s for s in again.services}
    found = []
    for service in running:
        ids = reserved_ids(read[service.name]) if service.name in read else ()
        if ids:
            found.append(Started(service.name, ids, _request_line(service)))
    return found


def starts(service: Service, profiles: tuple[str, ...]) -> bool:
    """Whether Compose starts ``service`` with ``profiles`` enabled."""
    return not service.profiles or bool(set(service.profiles) & set(profiles))


def reserved_ids(service: Service) -> tuple[str, ...]:
    """The ``device_ids`` of the service's first device request that names ids."""
    requests = [r for r in (*service.devices, *service.gpus) if r.get("device_ids")]
    return tuple(str(i) for i in requests[0]["device_ids"]) if requests else ()


def _request_line(service: Service) -> int:
    requests = [r for r in (*service.devices, *service.gpus) if r.get("device_ids")]
    return int(requests[0].get("line", service.line)) if requests else service.line
