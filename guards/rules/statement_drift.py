"""D008 statement-drift: what notes and comments say a service ships is what it ships.

Why: estates say what their composes ship everywhere — a README's ``| Variable | Default |``
table, an env catalog restated as ``NAME  value`` lines, "X defaults to 4096" in a how-to, a
``localhost:3000`` next to the service it opens, "Enable NPU by default" over the entry it
describes — and none of it is re-read when the compose changes. Each statement (read by
``guards.facts.said``) names a knob (an engine flag, an environment variable, a knob word) and a
value, and a subject: the service a compose comment sits in, the services that read the
variable, or the one service a table row or a sentence names (its name, a compose path, a file
stem, a served model name; ``guards.facts.subjects``). It is compared with every place the
estate ships that service from — each file that defines it (a base and its overlays), its
``environment:`` after interpolation with the estate's env files, its ``${NAME:-default}``
defaults, its engine knobs, its published ports — and is drift only when it agrees with none of
them. Counts compare within the estate's rounding (``32K`` is 32000 or 32768), on/off words
and 1/0 alike, KV types by what they name. A table of request or config parameters
(``| max_tokens | ... | 32768 |`` under a Default column) is about the variable that sets the
parameter's default server-side: the one ``<PREFIX>_MAX_TOKENS`` whose prefix words the
headings above the table name (``LLM_MAX_TOKENS`` under "LLM parameters", not
``VLM_MAX_TOKENS``); no single such variable is a remark. A subject that names no service, or
several, is a remark; shell examples (instructions, not statements of what ships),
commented-out settings and an engine's own default quoted beside the compose's are not
compared.

GPU topology too: a table's GPU ids or count for a service, ``GPU 1: chat-llm``, ``requires 2
GPUs``, ``TP2`` against the cards the service reserves (``device_ids``, ``count``, after
interpolation) and its tensor-parallel size; a deployment's ``3 x H100`` is about no one
service. A document's ``export NAME=value`` lines are applied to the composes as Compose would:
a ``device_ids`` list that then names one card twice is a finding at the export, and a GPU
statement in the same section is about that choice (a remark). A documented ``docker compose
... up`` (``-f`` files, ``--profile``, ``COMPOSE_PROFILES``) under a passage giving the host's
size (``designed for 2xH100``, ``systems with 4 GPUs``; the last one before it in its section)
starts the services of those profiles: one that then reserves a card id the host does not have
(after the section's exports above the command) is a finding at the command. A lower bound
(``3+ GPUs``, ``at least``) gives no last card: not compared. A count in a file's name
(``llama3_48k.Modelfile``, ``chat-32k.yml``) is the context the file sets (an Ollama
Modelfile's ``num_ctx``, the one server's ``--max-model-len``), unless the model's own name
carries it.

Bad:
    --- composes/example.yml
    services:
      ollama:
        image: ollama/ollama:0.12.3
        environment:
          - OLLAMA_CONTEXT_LENGTH=${OLLAMA_CONTEXT_LENGTH:-16384}
    --- learnings/ollama.md
    | Variable | Default | Description |
    |---|---|---|
    | `OLLAMA_CONTEXT_LENGTH` | `4096` | context window |

Finds:
    learnings/ollama.md:3:30: D008 learnings/ollama.md says OLLAMA_CONTEXT_LENGTH defaults to 4096, but composes/example.yml ships 16384 (line 5)

Good:
    --- composes/example.yml
    services:
      ollama:
        image: ollama/ollama:0.12.3
        environment:
          - OLLAMA_CONTEXT_LENGTH=${OLLAMA_CONTEXT_LENGTH:-16384}
    --- learnings/ollama.md
    | Variable | Default | Description |
    |---|---|---|
    | `OLLAMA_CONTEXT_LENGTH` | `16384` | context window |
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from ..facts import accelerators, invocations, knobwords, overlay, started
from ..facts.said import Statement, compose_statements, modelfile_statements, note_statements
from ..facts.subjects import Subjects, Target, of_estate
from ..findings import Finding, Severity
from ..sources import numbers
from ..sources.compose.compose import Compose
from ..sources.compose.engines.kvtypes import same_kv
from ..sources.modelfile import Modelfile
from ..sources.notes.notes import Note
from .base import Context, Rule
from .options import RuleOptions

ON = {"1", "true", "on", "yes", "enabled", "enable", "y"}
OFF = {"0", "false", "off", "no", "disabled", "disable", "n"}
COMPARED = ("table", "parameter", "block", "sentence", "comment", "name")  # not shell examples
QUOTES = "'\"`"
ENGINE_DECIDES = {"", "none", "null", "auto", "default"}  # the compose leaves it to the engine
GPU_KNOBS = ("gpu_ids", "gpus", "tensor_parallel_size")
GPU_SAYS = {
    "gpu_ids": "is on GPU {}",
    "gpus": "needs {} GPUs",
    "tensor_parallel_size": "runs TP {}",
}


class Shipped(NamedTuple):
    """One value the estate ships for a statement's knob, and where."""

    value: str
    path: str
    line: int
    what: str  # "ships" | "publishes" | "sets"


def check(target: Compose | Note | Modelfile, context: Context) -> list[Finding] | None:
    if isinstance(target, Modelfile):
        return _modelfile(target)
    estate = context.estate
    known = of_estate(estate, estate.composes)
    if isinstance(target, Compose):
        statements = compose_statements(target)
    else:
        statements = note_statements(target)
    exports = _exports(statements)
    hosts = [s for s in statements if s.layout == "host"]
    starts = invocations.compose_starts(target) if hosts and isinstance(target, Note) else []
    statements = [s for s in statements if s.layout in COMPARED]
    if not statements and not exports and not starts:
        return None
    findings = [
        _doubled(d) for run in exports.values() for d in overlay.doubled(run, known.composes)
    ]
    findings += _beyond_hosts(target.path, starts, hosts, exports, known)
    for statement in statements:
        if statement.layout == "parameter":
            variable = known.parameter(statement.knob, statement.subject or "")
            if variable is None:
                context.remark(RULE, statement.path, _no_variable(statement))
                continue
            statement = replace(statement, subject=None, mention=False, key=variable)
        about = _about(statement, known, target if isinstance(target, Compose) else None)
        if about is None:
            context.remark(RULE, statement.path, _unresolved(statement))
            continue
        if statement.knob in GPU_KNOBS and _set_by(statement, exports, about):
            context.remark(RULE, statement.path, _overlaid(statement))
            continue
        shipped = [s for t in about for s in _shipped(statement, t, known)]
        if shipped and not any(_same(statement, s.value) for s in shipped):
            findings.append(_finding(statement, shipped[0], about[0].service.name))
    return findings


def _exports(statements: list[Statement]) -> dict[int, list[Statement]]:
    """A note's ``export NAME=value`` lines, by the section they are in, in order."""
    found: dict[int, list[Statement]] = {}
    for statement in statements:
        if statement.layout == "export":
            found.setdefault(statement.section, []).append(statement)
    return found


def _set_by(statement: Statement, exports: dict[int, list[Statement]], about: list[Target]) -> bool:
    """Whether the section of a GPU statement exports a variable the service's reservation
    reads: it then describes the cards the operator chooses, not the ones that ship."""
    names = {e.knob for e in exports.get(statement.section, [])}
    return any(overlay.reads(t, names) for t in about)


def _doubled(doubled: overlay.Doubled) -> Finding:
    export = doubled.export
    twice = next(card for card in doubled.then if doubled.then.count(card) > 1)
    return RULE.at(
        export.path,
        export.line,
        export.column,
        f"{export.path} sets {export.knob}={export.value}, which makes the device_ids of "
        f"`{doubled.service}` {','.join(doubled.then)} ({doubled.compose} line {doubled.line}): "
        f"GPU {twice} is listed twice, so {len(doubled.then)} ids reserve "
        f"{_cards_word(len(set(doubled.then)))} (as shipped: {','.join(doubled.shipped)})",
        knob="gpu_ids",
        hint="give each id its own value, or set every variable the device_ids list reads",
        end_column=export.end_column,
    )


def _beyond_hosts(
    path: str,
    starts: list[invocations.ComposeStart],
    hosts: list[Statement],
    exports: dict[int, list[Statement]],
    known: Subjects,
) -> list[Finding]:
    """A documented ``docker compose ... up`` under a passage giving the host's size, that
    starts a service reserving a card id the host does not have (after the exports above it)."""
    findings = []
    for start in starts:
        host = next((h for h in reversed(hosts) if _before(h, start.section, start.line)), None)
        if host is None or not host.value.isdigit():
            continue  # no size said here, or a lower bound ("3+ GPUs")
        size = int(host.value)
        env = {e.knob: e.value for e in exports.get(start.section, []) if e.line < start.line}
        for written in start.files:
            compose = known.compose(written)
            for each in started.started(compose, start.profiles, env) if compose else []:
                beyond = [i for i in each.ids if i.isdigit() and int(i) >= size]
                if beyond and compose is not None:
                    findings.append(_beyond(path, start, host, compose, each, beyond[0]))
    return findings


def _before(statement: Statement, section: int, line: int) -> bool:
    return statement.section == section and statement.line < line


def _beyond(
    path: str,
    start: invocations.ComposeStart,
    host: Statement,
    compose: Compose,
    each: started.Started,
    card: str,
) -> Finding:
    enabled = " ".join(f"--profile {p}" for p in start.profiles) or "no profile"
    return RULE.at(
        path,
        start.line,
        start.column,
        f"starts `{each.service}` ({enabled}) on the {host.value}-GPU host line {host.line} "
        f"describes, but {compose.path} reserves GPU {','.join(each.ids)} for it "
        f"(line {each.line}): the host has no GPU {card}",
        knob="gpu_ids",
        hint="give the service an id the host has (export its variable), or leave its profile out",
        end_column=start.end_column,
    )


def _cards_word(count: int) -> str:
    return "1 card" if count == 1 else f"{count} cards"


def _overlaid(statement: Statement) -> str:
    return (
        f"line {statement.line}: {statement.knob} {statement.value} is said of a setting the "
        "same section exports; not compared with what ships"
    )


def _modelfile(modelfile: Modelfile) -> list[Finding] | None:
    """A Modelfile's name against the ``PARAMETER`` its figure is about, in the same file."""
    statements = modelfile_statements(modelfile)
    if not statements:
        return None
    findings = []
    for statement in statements:
        value = Shipped(_value_at(modelfile, statement), modelfile.path, statement.line, "sets")
        if not _same(statement, value.value):
            findings.append(_finding(statement, value))
    return findings


def _value_at(modelfile: Modelfile, statement: Statement) -> str:
    """The value of the ``PARAMETER`` line a Modelfile's statement is placed at."""
    return next(p.value for p in modelfile.parameters if p.line == statement.line)


def _about(statement: Statement, known: Subjects, here: Compose | None) -> list[Target] | None:
    """The definitions of the service a statement is about, or None when it names none."""
    if statement.layout == "parameter":
        return known.readers(statement.key) or None
    if statement.subject is None:
        readers = known.readers(statement.knob) if statement.knob.isupper() else []
        return readers or None
    if here is not None:
        return known.targets.get(statement.subject)
    if statement.mention:
        return known.mentioned(statement.subject)
    named = [known.resolve(name) for name in (statement.subject, *statement.names)]
    services = {t.service.name for found in named if found for t in found}
    return next((found for found in named if found), None) if len(services) == 1 else None


def _shipped(statement: Statement, target: Target, known: Subjects) -> list[Shipped]:
    """What the estate ships for the statement's knob (a parameter's: its variable's)."""
    knob = statement.key if statement.layout == "parameter" else statement.knob
    return _shipped_knob(knob, target, known)


def _shipped_knob(knob: str, target: Target, known: Subjects) -> list[Shipped]:
    compose, service = target.compose, target.service
    if knob in ("port", "container_port"):
        return [
            Shipped(str(port), _file(compose, p), p.line, "publishes")
            for p in service.ports
            for port in _ports(p, knob)
        ]
    if knob in GPU_KNOBS:
        return _cards(knob, target)
    names = [knob] if knob.isupper() else sorted(_variables(knob))
    found = []
    for name in names:
        entry = service.environment.get(name)
        resolved = entry is not None and not (entry.interpolated and entry.interpolated.unresolved)
        if entry is not None and entry.value is not None and resolved:
            found.append(Shipped(entry.value, _file(compose, entry), entry.line, "ships"))
        for site in known.defaults(compose).get(name, []):
            found.append(Shipped(site.value, compose.path, site.line, "ships"))
    setting = service.knob(knob) if not knob.isupper() else None
    if setting is not None and setting.value is not None:
        found.append(Shipped(setting.value, _file(compose, setting), setting.line, "ships"))
    return [s for s in found if _plain(s.value) not in ENGINE_DECIDES]


def _cards(knob: str, target: Target) -> list[Shipped]:
    """The cards a service reserves, as ids or a count, and its tensor-parallel size (the
    size it sets, else the count it reserves: one shard a card)."""
    service = target.service
    placed = accelerators.accelerator(service)
    setting = service.knob(knob) if knob == "tensor_parallel_size" else None
    if setting is not None and setting.value is not None:
        return [Shipped(setting.value, _file(target.compose, setting), setting.line, "ships")]
    if placed.cards is accelerators.ALL or not placed.cards:
        return []
    if knob == "gpu_ids" and not placed.named:
        return []
    value = ",".join(sorted(placed.cards)) if knob == "gpu_ids" else str(len(placed.cards))
    line = overlay.request_line(service)
    return [Shipped(value, _file(target.compose, service), line, "reserves")]


def _file(compose: Compose, value: object) -> str:
    """The file a merged value is written in: an overlay's, or the compose's own."""
    return getattr(value, "path", None) or compose.path


def _ports(mapping: object, knob: str) -> list[int]:
    """A mapping's container port, and for a plain ``port`` its host port too: a local port in
    prose may be either side (a proxy, a shell inside the network)."""
    published, target = getattr(mapping, "published", None), getattr(mapping, "target", None)
    found = [target[0]] if target else []
    if knob == "port" and published:
        found.insert(0, published[0])
    return found


def _variables(knob: str) -> frozenset[str]:
    words = knobwords.vocabulary().get(knob)
    return words.variables if words is not None else frozenset()


def _same(statement: Statement, actual: str) -> bool:
    """Whether the stated value and a shipped one are the same setting."""
    said, real = _plain(statement.value), _plain(actual)
    if said == real:
        return True
    if (said in ON or said in OFF) and (real in ON or real in OFF):
        return (said in ON) == (real in ON)
    kind = "text" if statement.knob.isupper() else knobwords.kind(statement.knob)
    if kind == "kv":
        return same_kv(said, real)
    if kind == "ids":
        return set(said.replace(" ", "").split(",")) == set(real.split(","))
    said_count, real_count = _count(said), numbers.to_number(real)
    if said_count is not None and real_count is not None:
        if said_count.scaled:
            return numbers.same_count(said_count.value, real_count, binary=True)
        return said_count.value == real_count
    return False


def _plain(value: str) -> str:
    return value.strip().strip("`'\"").rstrip("/").lower()


def _count(text: str) -> numbers.Count | None:
    digits, suffix = text.rstrip("km"), text[len(text.rstrip("km")) :]
    if len(suffix) > 1:
        return None
    return numbers.read_count(digits, suffix or None, binary=True)


def _finding(statement: Statement, shipped: Shipped, service: str = "") -> Finding:
    source = "comment" if statement.layout == "comment" else statement.path
    who = service if statement.mention or statement.subject is None else statement.subject
    shown, knob = shipped.value.strip(QUOTES), statement.knob
    actual = f"{shipped.path} {shipped.what} {shown} (line {shipped.line})"
    if statement.layout == "name":
        said = f"the file name says {statement.knob} {statement.value}"
    elif statement.layout == "parameter":
        said = f"{source} says {statement.knob} defaults to {statement.value}"
        actual = (
            f"{shipped.path} ships {statement.key}={shown} (line {shipped.line}), "
            "the server's default for it"
        )
        knob = statement.key
    elif statement.knob in GPU_KNOBS:
        said = f"{source} says {who} {GPU_SAYS[statement.knob].format(statement.value)}"
    elif statement.knob in ("port", "container_port"):
        said = f"{source} says {_name(statement)} is on port {statement.value}"
    elif statement.knob.isupper():
        said = f"{source} says {statement.knob} defaults to {statement.value}"
    else:
        said = f"{source} says {statement.subject} ships {statement.knob} {statement.value}"
    return RULE.at(
        statement.path,
        statement.line,
        statement.column,
        f"{said}, but {actual}",
        knob=knob,
        hint=f"update the statement, or the value {shipped.path} ships",
        end_column=statement.end_column,
    )


def _name(statement: Statement) -> str:
    if statement.subject is None or statement.mention:
        return "the service"
    return statement.subject


def _no_variable(statement: Statement) -> str:
    return (
        f"line {statement.line}: no single variable sets the parameter {statement.knob}; "
        f"{statement.value} not compared"
    )


def _unresolved(statement: Statement) -> str:
    if statement.subject is None:
        return (
            f"line {statement.line}: no compose ships a value for {statement.knob}; "
            f"{statement.value} not compared"
        )
    subject = " ".join(statement.subject.split())[:60]
    return (
        f"line {statement.line}: `{subject}` names no single service; "
        f"{statement.knob} {statement.value} not compared"
    )


RULE: Rule[RuleOptions] = Rule(
    id="D008",
    name="statement-drift",
    family="drift",
    targets=("compose", "note", "modelfile"),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
