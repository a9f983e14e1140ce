"""K005 healthcheck-port: a healthcheck probes the port the server listens on inside the container.

Why: a healthcheck runs inside the container, so ``curl http://localhost:${PORT:-8020}/health``
beside ``ports: ["${PORT:-8020}:8080"]`` probes a port nothing listens on: the host side of the
mapping exists only on the host. The container is marked unhealthy for as long as it runs, and
a service that depends on it being healthy never starts. The rule compares each local port the
healthcheck's ``test:`` connects to (curl, wget or any URL; bash ``/dev/tcp/HOST/PORT``; on
localhost, 127.0.0.1, 0.0.0.0, [::1] or the service's own name), with Compose variables
interpolated, against the port the engine listens on: its ``--port``, else llama.cpp's
``LLAMA_ARG_PORT``, else the engine's documented default (vLLM 8000, SGLang 30000, llama-server
8080, or 9931 in the builds that moved it). A port that cannot be resolved is a remark.

Bad:
    services:
      llama:
        image: ghcr.io/ggml-org/llama.cpp:server-cuda
        ports:
          - "${PORT:-8020}:8080"
        command: >-
          -m /models/model.gguf
          --host 0.0.0.0
          --port 8080
        healthcheck:
          test: ["CMD", "curl", "-f", "http://localhost:${PORT:-8020}/health"]

Finds:
    composes/example.yml:11:53: K005 healthcheck probes port 8020 (line 11), but llama-server listens on 8080 inside the container (--port, line 9); 8020 is the host side of the mapping "${PORT:-8020}:8080" (line 5)

Good:
    services:
      llama:
        image: ghcr.io/ggml-org/llama.cpp:server-cuda
        ports:
          - "${PORT:-8020}:8080"
        command: >-
          -m /models/model.gguf
          --host 0.0.0.0
          --port 8080
        healthcheck:
          test: ["CMD", "curl", "-f", "http://localhost:8080/health"]
"""

from __future__ import annotations

from typing import NamedTuple

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import LLAMACPP, SGLANG, UNKNOWN, VLLM
from ..sources.compose.ports import PortMapping, Probe, port_number
from .base import Context, Rule, provenance


class Server(NamedTuple):
    name: str  # how a message names it
    defaults: tuple[int, ...]  # the port it listens on when nothing sets one (by version)
    variable: str | None = None  # the environment variable that sets the port


# The documented defaults: vLLM's `vllm serve --port` (8000), SGLang's `--port` (30000),
# llama-server's `--port` / LLAMA_ARG_PORT (8080; 9931 in the builds after the switch that
# ggml-org/llama.cpp#26508 announced). The command line wins over the variable.
SERVERS = {
    VLLM: Server("vLLM", (8000,)),
    LLAMACPP: Server("llama-server", (8080, 9931), "LLAMA_ARG_PORT"),
    SGLANG: Server("SGLang", (30000,)),
}


class Listening(NamedTuple):
    ports: tuple[int, ...]  # several: the default differs between versions
    where: str


def check(compose: Compose, context: Context) -> list[Finding] | None:
    applies, findings = False, []
    for service in compose.services:
        listening = _listening(compose, service) if service.healthcheck else None
        if listening is None or service.healthcheck is None:
            continue
        applies = True
        if isinstance(listening, str):
            _remark(context, compose, service, f"{listening}; healthcheck not checked")
            continue
        if not service.healthcheck.probes:
            _remark(context, compose, service, "the healthcheck names no local port; not checked")
        for probe in service.healthcheck.probes:
            finding = _judge(compose, service, listening, probe, context)
            findings += [finding] if finding else []
    return findings if applies else None


def _listening(compose: Compose, service: Service) -> Listening | str | None:
    """The port(s) the server listens on; a string says why it is not known; None: the
    service runs no engine this rule knows."""
    server, knob = SERVERS.get(service.engine), service.knob("port")
    if knob is not None:
        port = port_number(knob.value)
        if port is None:
            return f"the port it listens on is not known: {knob.note or f'`{knob.value}`'}"
        where = f"{knob.flag or 'port'}, {_line(compose, knob.path, knob.line)}"
        return Listening((port,), where + provenance(knob))
    if server is None:
        return None if service.engine == UNKNOWN else f"no default port known for {service.engine}"
    entry = service.environment.get(server.variable) if server.variable else None
    if entry is not None and entry.value is not None and entry.interpolated is not None:
        port = port_number(entry.value) if entry.interpolated.resolved else None
        if port is None:
            return f"{entry.name} (line {entry.line}) is not a port: `{entry.value}`"
        where = f"{entry.name}, line {entry.line}{provenance(entry.interpolated)}"
        return Listening((port,), where)
    if _script_may_set(service, server):
        return "the entrypoint script may set the port it listens on"
    unset = "no --port" + (f", no {server.variable}" if server.variable else "")
    by_version = " by version" if len(server.defaults) > 1 else ""
    return Listening(server.defaults, f"its default{by_version}: {unset}")


def _script_may_set(service: Service, server: Server) -> bool:
    """The entrypoint names the flag or the variable itself (outside comments)."""
    names = ["--port"] + ([server.variable] if server.variable else [])
    lines = service.script.lines if service.script else []
    code = [line.text for line in lines if not line.text.lstrip().startswith("#")]
    return any(name in text for text in code for name in names)


def _judge(
    compose: Compose, service: Service, listening: Listening, probe: Probe, context: Context
) -> Finding | None:
    if probe.port is None:
        text = f"healthcheck port `{probe.raw}` (line {probe.line}) not known: {probe.note}"
        _remark(context, compose, service, text)
        return None
    server = SERVERS[service.engine].name if service.engine in SERVERS else service.engine
    ports = " or ".join(map(str, listening.ports))
    if probe.port in listening.ports:
        if len(listening.ports) > 1:
            text = f"healthcheck probes {_probed(probe)}, {server}'s default port in some "
            _remark(
                context, compose, service, text + f"versions only ({ports}); pin it with --port"
            )
        return None
    message = (
        f"healthcheck probes {_probed(probe)}, but {server} listens on {ports} inside the "
        f"container ({listening.where})"
    )
    hint = f"probe port {ports}, or make {server} listen on {probe.port}"
    mapping = next((m for m in service.ports if _reaches(m, probe.port)), None)
    if mapping is not None:
        target = mapping.target_of(probe.port)
        message += f"; {probe.port} is the host side of the mapping {mapping.shown} "
        message += f"({_line(compose, mapping.path, mapping.line)})"
        if target in listening.ports:
            hint = (
                f"probe port {target}: the healthcheck runs inside the container, where "
                f"nothing listens on {probe.port}"
            )
        else:
            message += f", to container port {target}"
    if len(listening.ports) > 1:
        hint = "pin the port with --port and probe that port"
    path = compose.file(probe.path)
    return RULE.at(
        path, probe.line, probe.column, message, hint=hint, knob="port", end_column=probe.end_column
    )


def _line(compose: Compose, path: str | None, line: int) -> str:
    """``line N``; in a stack of several files, naming the file it is in."""
    return f"{compose.file(path)} line {line}" if compose.stack else f"line {line}"


def _probed(probe: Probe) -> str:
    implied = "" if probe.raw else "implied by the URL, "
    chosen = f", from {', '.join(probe.from_env)} in the environment" if probe.from_env else ""
    set_by = f", {probe.set_by}" if probe.set_by else ""
    return f"port {probe.port} ({implied}line {probe.line}{set_by}{chosen})"


def _reaches(mapping: PortMapping, port: int) -> bool:
    return mapping.protocol == "tcp" and mapping.target_of(port) is not None


def _remark(context: Context, compose: Compose, service: Service, text: str) -> None:
    context.remark(RULE, compose.path, f"service {service.name}: {text}")


RULE: Rule = Rule(
    id="K005",
    name="healthcheck-port",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
