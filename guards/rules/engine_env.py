"""K007 engine-env: every engine-prefixed variable in a service's environment is one its engine reads.

Why: an engine ignores a variable it does not read, silently: ``VLLM_ATTENTION_BACKEN`` or
``LLAMA_ARGS_CTX_SIZE`` leaves the setting at its default while the compose looks configured,
and a variable a release stopped reading does the same after an image bump. The rule compares
each variable of a vLLM, SGLang or llama-server service's ``environment:`` under the engine's
prefixes (``VLLM_``; ``SGLANG_`` and ``SGL_``; ``LLAMA_ARG_``) with the names that engine's
release reads, from its own sources (docs/engines.md), and a variable under another prefix
that differs from a known name only there (``LLAMA_ARGS_PORT``, edit distance 2 at most). The
release is found as K006 finds it. A variable the service's own command or script reads
(``$VLLM_MODEL``) is the estate's, never a finding.

Bad:
    services:
      llama:
        image: ghcr.io/ggml-org/llama.cpp:server
        environment:
          LLAMA_ARGS_CTX_SIZE: "8192"
        command: -m /models/m.gguf

Finds:
    composes/example.yml:5:7: K007 `LLAMA_ARGS_CTX_SIZE` is not a variable llama-server reads: the name it reads is `LLAMA_ARG_CTX_SIZE` (image ggml-org/llama.cpp:server: the newest known, the llama.cpp of llama-cpp-python 0.3.36, llama.cpp 0c1e57098)

Good:
    services:
      llama:
        image: ghcr.io/ggml-org/llama.cpp:server
        environment:
          LLAMA_ARG_CTX_SIZE: "8192"
        command: -m /models/m.gguf
"""

from __future__ import annotations

import re

from ..facts.engines import PREFIXES, SHOWN, EngineFacts, distance
from ..facts.engines.running import Running, guessed, service_running
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from .base import Context, Rule
from .options import RuleOptions, option

NEAR = 2  # the most edits between a prefix as written and the engine's


class Options(RuleOptions):
    extra_variables: list[str] = option(
        [], description="Variables a fork or a custom build reads, accepted as known."
    )


def check(compose: Compose, context: Context) -> list[Finding] | None:
    applies, findings = False, []
    versions = context.estate.config.engine_versions
    extra = set(context.options(RULE).extra_variables)
    for service in compose.services:
        skip = service.launch.idle or not service.environment or guessed(service)
        if service.engine not in PREFIXES or skip:
            continue
        run = service_running(service, versions)
        if run is None:
            continue
        applies = True
        if isinstance(run, str):
            context.remark(RULE, compose.path, f"service {service.name}: {run}; not checked")
            continue
        own = _read_by_the_service(service)
        for name, entry in service.environment.items():
            if name in extra or name in own:
                continue
            judged = _judge(name, run, service, compose, context)
            if judged:
                column, end = _name_at(compose, entry.line, name)
                findings.append(
                    RULE.at(
                        compose.path,
                        entry.line,
                        column,
                        judged[0],
                        hint=judged[1],
                        end_column=end,
                    )
                )
    return findings if applies else None


def _judge(
    name: str, run: Running, service: Service, compose: Compose, context: Context
) -> tuple[str, str | None] | None:
    facts, engine = run.facts, run.facts.engine
    server = SHOWN[engine]
    if not name.startswith(PREFIXES[engine]):
        known = _near_miss(name, facts, run.releases)
        if known is None:
            return None
        return f"`{name}` is not a variable {server} reads: the name it reads is `{known}` " + (
            f"({run.how})"
        ), None
    entry = facts.env.get(name)
    if entry is not None and any(entry.present(i) for i in run.releases):
        return None
    at = max(run.releases)
    if entry is None:
        message = f"`{name}` is not a variable {facts.shown(at)} reads, nor any release known"
        return f"{message} ({run.how})", _did_you_mean(name, facts, run.releases)
    last, first = entry.spans[-1][1], entry.spans[0][0]
    if last < at:
        when = f"is not read since {facts.shown(last + 1)} (last in {facts.versions[last]})"
    elif first > at:
        when = f"is read only from {facts.shown(first)}, after {facts.versions[at]}"
    else:
        when = f"is not read by {facts.shown(at)}"
    message = f"`{name}` {when} ({run.how})"
    if not run.exact:
        context.remark(RULE, compose.path, f"service {service.name}: {message}: not certain")
        return None
    return message, None


def _near_miss(name: str, facts: EngineFacts, releases: tuple[int, ...]) -> str | None:
    """A known name that ``name`` spells with another prefix: the same rest after an
    underscore, the part before it within ``NEAR`` edits of one of the engine's prefixes."""
    for cut in (m.end() for m in re.finditer("_", name)):
        written, rest = name[:cut], name[cut:]
        if len(rest) < 4:
            break
        for prefix in PREFIXES[facts.engine]:
            known = facts.env.get(prefix + rest)
            present = known is not None and any(known.present(i) for i in releases)
            if present and 0 < distance(written, prefix) <= NEAR:
                return prefix + rest
    return None


def _did_you_mean(name: str, facts: EngineFacts, releases: tuple[int, ...]) -> str | None:
    import difflib  # only for a name not known

    close = difflib.get_close_matches(name, facts.names_at(facts.env, releases), 1, 0.85)
    return f"did you mean `{close[0]}`?" if close else None


def _read_by_the_service(service: Service) -> set[str]:
    """Variables the service's own command, entrypoint or script reads (``$NAME``)."""
    words = [t.raw for t in service.launch.tokens]
    if service.script is not None:
        words += [line.text for line in service.script.lines]
    return set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", "\n".join(words)))


def _name_at(compose: Compose, line: int, name: str) -> tuple[int, int]:
    """The column of the entry on ``line`` and the end of the variable's name there (after an
    opening quote); 0 when the name is not written at the entry's start."""
    text = compose.lines[line - 1] if 0 < line <= len(compose.lines) else ""
    start = len(text) - len(text.lstrip(" -"))
    at = start + (text[start : start + 1] in ("'", '"'))
    end = at + len(name) + 1 if text.startswith(name, at) else 0
    return start + 1, end


RULE: Rule[Options] = Rule(
    id="K007",
    name="engine-env",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
