"""What a service's container runs: which engine, started with which words, from where.

Compose joins ``entrypoint:`` and ``command:`` into the container's argv (the image's
entrypoint runs ``command:`` when the compose sets no ``entrypoint:``). The engine is the one
that argv launches — directly (``vllm serve``, ``/app/llama-server``, ``python3 -m
sglang.launch_server``, after ``exec`` or ``FOO=1``) or from a shell script
(``bash -c SCRIPT $0 $1 ...``, in either key), where ``"$@"`` is the words after ``$0``. An
argv that launches nothing known leaves the engine to the image, then to the flags the
command passes. An idle command (``sleep infinity``, ``tail -f /dev/null``), or a script made
only of housekeeping, runs no engine whatever the image.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import pairwise

from .engines import LLAMACPP, SGLANG, UNKNOWN, VLLM, Token
from .engines.identity import image_engine, launcher, serves_nothing, shell_script
from .script import Script

SGLANG_FLAGS = {"--mem-fraction-static", "--context-length", "--tp-size", "--max-running-requests"}


@dataclass(frozen=True)
class Launch:
    """The engine a service runs, and why guards says so."""

    engine: str  # VLLM, SGLANG, LLAMACPP or UNKNOWN
    reason: str  # how the engine was identified, or why it is not known
    tokens: list[Token] = field(default_factory=list)  # the engine's words, launcher first
    script: Script | None = None  # the shell script the container runs, if any
    idle: bool = False  # the command replaces the server: no engine runs, whatever the image
    # the compose's own entrypoint, no launcher, runs the command: its words may not be the
    # engine's
    own_entrypoint: bool = False


def find(
    entry: list[Token] | None,
    command: list[Token],
    scripts: Callable[[Token], Script],
    image: str | None,
) -> Launch:
    """``entry`` is None when the compose sets no ``entrypoint:``; ``scripts`` makes the
    :class:`Script` of the word after ``-c``."""
    argv = (entry or []) + command
    words = [t.text for t in argv]
    at = shell_script(words)
    if at is not None:
        where = "entrypoint" if entry and at < len(entry) else "command"
        script = scripts(argv[at])
        found = _in_script(script, argv[at + 2 :], where)
        if found is not None:
            return found
        return _fallback(image, command, script, f"the {where} script launches no known engine")
    found_launcher = launcher(words)
    if found_launcher is None:
        return replace(_fallback(image, command, None, ""), own_entrypoint=bool(entry))
    shown = found_launcher.shown(words)
    where = "entrypoint" if entry else "command"
    if found_launcher.idle:
        return Launch(UNKNOWN, f"the {where} runs `{shown}`, not a server", idle=True)
    tokens = argv[found_launcher.start :]
    return Launch(found_launcher.engine, f"the {where} runs `{shown}`", tokens)


def _in_script(script: Script, positional: list[Token], where: str) -> Launch | None:
    """The first command of the script that launches an engine; an idle Launch when the
    script serves nothing; None when it runs something else."""
    idle = True
    for command in script.commands():
        words = script.expand(command, positional)
        texts = [w.text for w in words]
        found = launcher(texts)
        if found is not None and not found.idle:
            reason = f"the {where} script runs `{found.shown(texts)}`"
            return Launch(found.engine, reason, words[found.start :], script)
        idle = idle and serves_nothing(texts)
    if not idle:
        return None
    return Launch(UNKNOWN, f"the {where} script runs no server", script=script, idle=True)


def _fallback(image: str | None, command: list[Token], script: Script | None, why: str) -> Launch:
    """No launcher in the argv: the image's engine, else the flags the command passes."""
    engine, reason = image_engine(image) if image is not None else (UNKNOWN, "no image")
    if engine == UNKNOWN and script is not None:
        engine = _script_engine(script)
        reason = f"the script names {engine}" if engine != UNKNOWN else reason
    if engine == UNKNOWN:
        engine = _flags_engine(command)
        reason = f"the command passes {engine} flags" if engine != UNKNOWN else reason
    return Launch(engine, "; ".join(filter(None, (why, reason))), command, script)


def _script_engine(script: Script) -> str:
    """An engine the script names where its commands could not be read."""
    if script.runs("sglang.launch_server") or script.runs("sglang serve"):
        return SGLANG
    if script.runs("vllm serve"):
        return VLLM
    return LLAMACPP if script.runs("llama-server") else UNKNOWN


def _flags_engine(tokens: list[Token]) -> str:
    texts = {t.text.partition("=")[0] for t in tokens}  # --flag=value counts as --flag
    launches = {f"{a.text.rsplit('/', 1)[-1]} {b.text}" for a, b in pairwise(tokens)}
    if texts & (SGLANG_FLAGS | {"--pp-size", "sglang.launch_server"}) or "sglang serve" in launches:
        return SGLANG  # before vLLM: SGLang takes --tensor-parallel-size too
    if texts & {"--max-model-len", "--gpu-memory-utilization", "--tensor-parallel-size"}:
        return VLLM
    if texts & {"-c", "--ctx-size", "-ngl", "-np"}:
        return LLAMACPP
    return UNKNOWN
