"""K008 healthcheck-ineffective: a healthcheck can fail, and fails when the server answers an error.

Why: Docker marks a container healthy when its healthcheck ``test:`` exits 0, and
``depends_on: condition: service_healthy`` and operators trust that. A test that cannot exit
non-zero calls a server that refuses connections, or answers 503 while it loads, healthy. The
rule works out which exit statuses the test can end with, as it runs: the ``CMD`` words, or
``CMD-SHELL`` and a plain string through ``/bin/sh -c`` (``sh -c``/``bash -c`` inside are
followed), with ``&&``, ``||``, ``;``, line ends, pipelines (the last command decides), ``!``
and ``exit N``. It finds a failure that is swallowed (``|| exit 0``, ``|| true``, ``|| :``,
``|| echo ...``, a last ``exit 0``), and a success decided by a probe that succeeds whatever
the HTTP status: ``curl`` without ``-f``/``--fail``/``--fail-with-body`` (by default curl
does not treat an HTTP status as a failure; with them it exits 22 on 400 or more: curl(1)),
and ``python -c`` code that only calls ``requests`` or ``httpx`` (``get()`` raises when it
cannot connect, and on an error status only through ``Response.raise_for_status()``). A probe
piped into ``grep``, compared in the shell (``[ "$(curl -w '%{http_code}' ...)" = 200 ]``)
or followed by a command that can fail does not decide. ``wget`` (exit status 8, "server
issued an error response", ``--spider`` too: the wget manual, Exit Status) and
``urllib.request.urlopen`` (raises ``HTTPError``) fail on an error status. ``disable: true``
and ``["NONE"]`` turn the check off on purpose. A test that probes nothing (``["CMD",
"true"]``), and one whose status ``set -e``, a background ``&``, a here-document or options in
a variable (``curl $OPTS``) make unknown, is a remark. Which port a probe reaches is K005's.

Bad:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        healthcheck:
          test: ["CMD", "curl", "-s", "http://localhost:8000/health"]
      llama:
        image: ghcr.io/ggml-org/llama.cpp:server-cuda
        healthcheck:
          test: curl -f http://localhost:8080/health || exit 0

Finds:
    composes/example.yml:5:22: K008 healthcheck's curl has no --fail: curl exits 0 on an HTTP error status, so the container is healthy while the server answers 503
    composes/example.yml:9:13: K008 healthcheck cannot fail: `|| exit 0` turns a failed `curl` into exit status 0, so the container is healthy whether or not the check passes

Good:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        healthcheck:
          test: ["CMD", "curl", "-sf", "http://localhost:8000/health"]
      llama:
        image: ghcr.io/ggml-org/llama.cpp:server-cuda
        healthcheck:
          test: curl -f http://localhost:8080/health || exit 1
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import Token
from ..sources.compose.script import shell_words
from .base import Context, Rule

OK, FAIL, EXIT_OK, EXIT_FAIL = "ok", "fail", "exit 0", "exit non-zero"
SUCCESS = {OK, EXIT_OK}
LIST_OPERATORS = {"&&", "||", ";", "&"}
PIPES = {"|", "|&"}
OPENERS = {"(": ")", "{": "}", "if": "fi", "case": "esac", "for": "done", "while": "done"}
OPENERS |= {"until": "done", "select": "done"}
COMPOUND = "{...}"  # a group, subshell, if, case or loop: read as one command that may do anything
SHELLS = {"sh", "bash", "dash", "ash", "ksh", "zsh"}
PYTHON = re.compile(r"python[0-9.]*")
ALWAYS_OK = {"true", ":", "echo"}
WRAPPERS = {"exec", "command", "nohup"}  # run the next word, ending as it ends
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
CURL_FAIL = {"--fail": True, "--fail-with-body": True, "--no-fail": False}
CURL_VALUE = set("AbcCdDeEFhHmoPQrtTuUwxXyYz")  # curl's short options that take a value
HTTP_CALLS = {f"{m}.{f}" for m in ("requests", "httpx") for f in ("get", "head", "post", "put")}
HTTP_CALLS |= {f"{m}.{f}" for m in ("requests", "httpx") for f in ("request", "options")}
MAX_SHOWN = 60  # characters of a command quoted in a message
MAX_DEPTH = 4  # `sh -c` inside `sh -c` ...


class Unjudged(Exception):
    """What makes the test's exit status unknown here: a remark, never a finding."""


class Blind(NamedTuple):
    """A probe that succeeds whatever HTTP status the server answers."""

    message: str
    hint: str


State = tuple[str, Blind | None]  # how a run may end, and the blind probe that decided it
MAYBE: frozenset[State] = frozenset({(OK, None), (FAIL, None)})
ANY: frozenset[State] = MAYBE | {(EXIT_OK, None), (EXIT_FAIL, None)}


class Step(NamedTuple):
    """One pipeline of a list, with the operator before it."""

    operator: str
    shown: str


class Run(NamedTuple):
    """How a command, a pipeline or a list may end."""

    ends: frozenset[State]
    failing: str = ""  # the first command in it that can fail (a probe), by its program
    swallowed: Step | None = None  # the step that turns a failure into exit status 0

    @property
    def can_fail(self) -> bool:
        return any(kind not in SUCCESS for kind, _ in self.ends)

    @property
    def blind(self) -> list[Blind]:
        found = {blind for kind, blind in self.ends if kind in SUCCESS and blind is not None}
        return sorted(found, key=lambda b: b.message)


def ending(words: list[str], shell: bool) -> Run:
    """How a test ends: ``words`` are its ``CMD`` argv, or with ``shell`` its script first."""
    return _script(words[0], 0) if shell else _process(_command(words, 0))


def _process(run: Run) -> Run:
    """A process's ending as its parent sees it: an ``exit`` is its status."""
    plain = frozenset((OK if k in SUCCESS else FAIL, b) for k, b in run.ends)
    return Run(plain, run.failing, run.swallowed)


def _script(text: str, depth: int) -> Run:
    """A shell script, run by ``sh -c``: its list of pipelines, left to right."""
    words = shell_words(text)
    if words is None:
        raise Unjudged("a quote in its shell command is left open")
    states: frozenset[State] = frozenset({(OK, None)})
    failing, swallowed = "", None
    for step, commands, negated in _steps(words):
        run = _pipeline(commands, negated, depth)
        states = _sequence(states, step.operator, run)
        failing = failing or run.failing
        if step.operator != "&&" and not run.can_fail:
            swallowed = step
        swallowed = run.swallowed or swallowed
    return _process(Run(states, failing, swallowed))


def _steps(words: list[str]) -> list[tuple[Step, list[list[str]], bool]]:
    """The pipelines of a list: (the operator before it and its words, its commands, ``!``)."""
    steps: list[tuple[str, list[list[str]], bool]] = []
    operator, commands, negated = ";", [], False
    command: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in LIST_OPERATORS or word in PIPES:
            if word == "&":
                raise Unjudged("it runs a command in the background")
            commands.append(command)
            command = []
            if word in LIST_OPERATORS:
                steps.append((operator, [c for c in commands if c], negated))
                operator, commands, negated = word, [], False
        elif word == "!" and not command and not commands:
            negated = not negated
        elif set(word) <= set("<>&|") and ("<" in word or ">" in word):
            if word == "<<" or word == "<<-":
                raise Unjudged("it reads a here-document")
            index += 1  # the redirection's target
        elif word in OPENERS and not command:
            index, command = _closing(words, index), [COMPOUND]
        elif word.endswith("$") and words[index + 1 : index + 2] == ["("]:
            index = _closing(words, index + 1)
            command.append(word + "(...)")
        elif word in ("(", ")") or (not command and word in OPENERS.values()):
            raise Unjudged(f"`{word}` stands where this rule reads no shell syntax")
        else:
            command.append(word)
        index += 1
    commands.append(command)
    steps.append((operator, [c for c in commands if c], negated))
    return [
        (Step(op, _shown(pipeline)), pipeline, negated)
        for op, pipeline, negated in steps
        if pipeline
    ]


def _shown(pipeline: list[list[str]]) -> str:
    text = " | ".join(" ".join(command) for command in pipeline)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _closing(words: list[str], start: int) -> int:
    """Where the group, command substitution, ``if``, ``case`` or loop opened at ``start``
    closes."""
    stack: list[str] = []
    for index in range(start, len(words)):
        word = words[index]
        if stack and stack[-1] == "esac" and word not in ("case", "esac"):
            continue  # the `)` of a case pattern
        if word in OPENERS:
            stack.append(OPENERS[word])
        elif stack and word == stack[-1]:
            stack.pop()
            if not stack:
                return index
    raise Unjudged(f"the `{words[start]}` it opens does not close where this rule can see")


def _pipeline(commands: list[list[str]], negated: bool, depth: int) -> Run:
    """The last command decides; in a pipeline of several, each runs in a subshell."""
    runs = [_command(command, depth) for command in commands]
    last = runs[-1] if len(runs) == 1 else _process(runs[-1])
    ends = last.ends
    if negated:
        flip = {OK: FAIL, FAIL: OK}
        ends = frozenset((flip.get(kind, kind), None) for kind, _ in ends)
    failing = next((run.failing for run in runs if run.failing), "")
    return Run(ends, failing, last.swallowed)


def _sequence(states: frozenset[State], operator: str, run: Run) -> frozenset[State]:
    """The endings after ``operator`` and the pipeline ``run``: ``;`` always runs it, ``&&``
    after a success, ``||`` after a failure; an ``exit`` ends the list. A success a blind
    probe decided stays so through ``&& echo ok``, which cannot fail."""
    out: set[State] = set()
    keeps = operator == "&&" and not run.can_fail
    for kind, blind in states:
        runs = operator == ";" or (operator == "&&") == (kind == OK)
        if kind in (EXIT_OK, EXIT_FAIL) or not runs:
            out.add((kind, blind))
        else:
            out |= {(k, b or (blind if keeps else None)) for k, b in run.ends}
    return frozenset(out)


def _command(words: list[str], depth: int) -> Run:
    """One simple command: builtins that cannot fail or that exit, a shell with ``-c``, the
    HTTP probes this rule reads, and any other program (it may succeed or fail)."""
    words = _unwrapped(words)
    if not words:
        return Run(MAYBE)  # only assignments: `x=$(curl ...)` ends as its substitution
    if words[0] == COMPOUND:
        return Run(ANY, COMPOUND)
    program = words[0].rsplit("/", 1)[-1]
    if program in ALWAYS_OK:
        return Run(frozenset({(OK, None)}))
    if program == "exit":
        return Run(_exit(words[1:]))
    if program == "set":
        _set(words[1:])
        return Run(frozenset({(OK, None)}))
    if program in SHELLS:
        return _shell(words, depth)
    blind = _curl(words) if program == "curl" else None
    if PYTHON.fullmatch(program):
        blind = _python(words)
    return Run(frozenset({(OK, blind), (FAIL, None)}), program)


def _unwrapped(words: list[str]) -> list[str]:
    """The command ``exec``, ``command``, ``env`` or ``timeout`` runs, and assignments off."""
    while words:
        if ASSIGNMENT.match(words[0]) or words[0] in WRAPPERS:
            words = words[1:]
        elif words[0] in ("env", "timeout"):
            rest = words[1:]
            while rest and (rest[0].startswith("-") or ASSIGNMENT.match(rest[0])):
                rest = rest[1:]
            words = rest[1:] if words[0] == "timeout" else rest  # timeout's duration
        else:
            break
    return words


def _exit(args: list[str]) -> frozenset[State]:
    if args and re.fullmatch(r"[0-9]{1,9}", args[0]):
        return frozenset({(EXIT_OK if int(args[0]) % 256 == 0 else EXIT_FAIL, None)})
    return frozenset({(EXIT_OK, None), (EXIT_FAIL, None)})  # `exit` or `exit $?`: the last status


def _set(args: list[str]) -> None:
    for arg in args:
        short = arg.startswith("-") and not arg.startswith("--")
        if arg in ("errexit", "pipefail") or (short and ("e" in arg or "o" in arg)):
            raise Unjudged(f"`set {arg}` changes which command's status ends it")


def _shell(words: list[str], depth: int) -> Run:
    """``sh -c SCRIPT``: the script, a process of its own; ``sh FILE``: a script not seen."""
    if depth >= MAX_DEPTH:
        raise Unjudged("its shells nest too deep")
    for index, word in enumerate(words[1:], 1):
        if not word.startswith("-") or word == "-":
            break
        if not word.startswith("--") and ("e" in word or "o" in word):
            raise Unjudged(f"`{words[0]} {word}` changes which command's status ends it")
        if not word.startswith("--") and "c" in word:
            script = words[index + 1 : index + 2]
            return _script(script[0], depth + 1) if script else Run(MAYBE)
    return Run(MAYBE, words[0])


def _curl(words: list[str]) -> Blind | None:
    """curl exits 0 on any HTTP answer unless ``-f``/``--fail``/``--fail-with-body``: then 22
    on a status of 400 or more (curl(1), ``--fail``)."""
    fails, value_next = False, False
    for word in words[1:]:
        if value_next or word == "--":
            value_next = False
            continue
        if word.startswith(("$", "`")):
            raise Unjudged(f"curl's options come from `{word}`")
        if word == "--config":
            raise Unjudged("curl reads options from a config file (--config)")
        fails = CURL_FAIL.get(word, fails)
        if word.startswith("-") and not word.startswith("--"):
            for index, letter in enumerate(word[1:], 1):
                fails = fails or letter == "f"
                if letter == "K":
                    raise Unjudged("curl reads options from a config file (-K)")
                if letter in CURL_VALUE:
                    value_next = index == len(word) - 1
                    break
    if fails:
        return None
    return Blind(
        "healthcheck's curl has no --fail: curl exits 0 on an HTTP error status, so the "
        "container is healthy while the server answers 503",
        "add -f (--fail): curl then exits 22 when the server answers 400 or more",
    )


def _python(words: list[str]) -> Blind | None:
    """``python -c CODE`` whose code only calls an HTTP client that does not raise on an
    error status (requests, httpx: ``raise_for_status()`` does)."""
    args, code = words[1:], None
    while args and args[0].startswith("-") and args[0] != "-":
        if args[0] == "-c":
            code = args[1] if len(args) > 1 else None
            break
        args = args[2:] if args[0] in ("-W", "-X", "-m") else args[1:]
    call = _bare_request(code) if code is not None else None
    if call is None:
        return None
    client = call.split(".")[0]
    return Blind(
        f"healthcheck's {words[0]} -c calls {call}() and checks no status: {client} raises "
        "only when it cannot connect, so the container is healthy while the server answers 503",
        f"check the answer: `{call}(url, timeout=5).raise_for_status()`, or "
        "urllib.request.urlopen(url), which raises on an error status",
    )


def _bare_request(code: str) -> str | None:
    """The HTTP call the code makes when it is all the code does (imports aside), or None."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: dict[str, str] = {}
    calls = []
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            names |= {a.asname or a.name: a.name for a in statement.names if "." not in a.name}
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
            module = statement.module
            names |= {a.asname or a.name: f"{module}.{a.name}" for a in statement.names}
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            calls.append(_called(statement.value.func, names))
        else:
            return None
    return calls[-1] if calls and all(call in HTTP_CALLS for call in calls) else None


def _called(function: ast.expr, names: dict[str, str]) -> str:
    if isinstance(function, ast.Name):
        return names.get(function.id, "")
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
        module = names.get(function.value.id)
        return f"{module}.{function.attr}" if module else ""
    return ""


def check(compose: Compose, context: Context) -> list[Finding] | None:
    applies, findings = False, []
    for service in compose.services:
        health = service.healthcheck
        if health is None or not health.words:
            continue
        applies = True
        try:
            run = ending([word.text for word in health.words], health.shell)
        except Unjudged as exc:
            _remark(context, compose, service, str(exc))
            continue
        finding = _judge(compose, service, run, context)
        unset = [u.variable for word in health.words for u in word.unresolved]
        if finding is not None and unset:
            text = f"{', '.join(dict.fromkeys(unset))} is not set, and may change it"
            _remark(context, compose, service, text)
            continue
        findings += [finding] if finding else []
    return findings if applies else None


def _judge(compose: Compose, service: Service, run: Run, context: Context) -> Finding | None:
    health = service.healthcheck
    assert health is not None
    word = health.words[0]
    where = (compose.file(health.path), word.line, word.column + word.quoted)
    end = _test_end(health.words)
    if not run.can_fail and run.failing:
        message, hint = _swallowed(run)
        return RULE.at(*where, message, hint=hint, end_column=end)
    if run.blind:
        blind = run.blind[0]
        return RULE.at(*where, blind.message, hint=blind.hint, end_column=end)
    if not run.can_fail:
        _remark(context, compose, service, "it runs nothing that can fail (no probe)")
    return None


def _swallowed(run: Run) -> tuple[str, str]:
    step, failing = run.swallowed, f"`{run.failing}`"
    if step is None:
        message, hint = f"it exits 0 whatever {failing} returns", "end the test with its probe"
    elif step.operator == "||":
        message = f"`|| {step.shown}` turns a failed {failing} into exit status 0"
        hint = f"drop `|| {step.shown}`, or end the test with `|| exit 1`"
    else:
        message = f"`{step.shown}` runs after {failing} whatever it returned"
        hint = f"drop `{step.shown}`: the test then ends with its probe's status"
    tail = "so the container is healthy whether or not the check passes"
    return f"healthcheck cannot fail: {message}, {tail}", hint


def _remark(context: Context, compose: Compose, service: Service, text: str) -> None:
    context.remark(RULE, compose.path, f"service {service.name}: healthcheck not judged: {text}")


def _test_end(words: tuple[Token, ...]) -> int:
    """Just after the test as written on the line of its first word (its last word there,
    a closing quote left out); 0 when that is not known."""
    on_line = [w for w in words if w.line == words[0].line]
    last = on_line[-1]
    return last.end_column - last.quoted if last.end_column else 0


RULE: Rule = Rule(
    id="K008",
    name="healthcheck-ineffective",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
