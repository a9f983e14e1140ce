"""Which engine a service runs: the one vocabulary of engine images and launch commands.

An image names an engine only through its repository path, never through a substring: an
Ollama image or an NVIDIA NIM of a Llama model is not llama-server, and a model name inside a
repository (``nim/nvidia/llama-nemotron-embed-1b-v2``) says nothing about the server that runs
it. Where the names come from:

- vLLM: ``vllm/vllm-openai`` (docs.vllm.ai, "Using Docker"), ``vllm/vllm-openai-rocm`` and
  ``rocm/vllm`` / ``rocm/vllm-dev`` (the ROCm images vLLM's and AMD's install pages name),
  ``nvidia/vllm`` (the NGC container), ``intel/vllm`` (vLLM's XPU page);
- SGLang: ``lmsysorg/sglang`` (SGLang's install page), any repository named ``sglang``;
- llama.cpp: ``ggml-org/llama.cpp`` and ``ggerganov/llama.cpp`` (llama.cpp's
  ``docs/docker.md``: the ``server*`` tags run ``llama-server``, the ``full*`` tags its
  ``tools.sh``, the ``light*`` tags only ``llama-cli``); repositories named ``llama.cpp``,
  ``llama-cpp``, ``llamacpp`` or ``llama-server`` and the ik_llama.cpp builds
  (``ikawrakow/ik-llama-cpp``), whose server is the same ``llama-server``.

The launch commands are each engine's documented entry points: ``vllm serve`` and
``python -m vllm.entrypoints.openai.api_server``; ``python -m sglang.launch_server`` and
``sglang serve``; the ``llama-server`` binary at any path (``/app/llama-server`` in the
official images). ``python -m llama_cpp.server`` is llama-cpp-python, another server with
other flags, and is not llama.cpp.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from . import LLAMACPP, SGLANG, UNKNOWN, VLLM

# namespace/repository -> engine, whatever the registry
IMAGE_PATHS = {
    "vllm/vllm-openai": VLLM,
    "vllm/vllm-openai-rocm": VLLM,
    "rocm/vllm": VLLM,
    "rocm/vllm-dev": VLLM,
    "nvidia/vllm": VLLM,
    "intel/vllm": VLLM,
    "lmsysorg/sglang": SGLANG,
    "ggml-org/llama.cpp": LLAMACPP,
    "ggerganov/llama.cpp": LLAMACPP,
}
# the repository (last path component) -> engine, whatever the namespace
REPOSITORIES = {
    "vllm-openai": VLLM,
    "vllm-openai-rocm": VLLM,
    "sglang": SGLANG,
    "llama.cpp": LLAMACPP,
    "llama-cpp": LLAMACPP,
    "llamacpp": LLAMACPP,
    "llama-server": LLAMACPP,
    "ik_llama.cpp": LLAMACPP,
    "ik-llama.cpp": LLAMACPP,
    "ik-llama-cpp": LLAMACPP,
}
NO_SERVER_TAGS = {LLAMACPP: ("light",)}  # llama.cpp's :light images hold only llama-cli

# python -m MODULE -> engine
MODULES = {
    "vllm.entrypoints.openai.api_server": VLLM,
    "sglang.launch_server": SGLANG,
}
# PROGRAM SUBCOMMAND -> engine
SUBCOMMANDS = {("vllm", "serve"): VLLM, ("sglang", "serve"): SGLANG}
PROGRAMS = {"llama-server": LLAMACPP}  # the binary, at any path
# Commands that keep a container alive without serving anything.
IDLE = {"sleep", "tail", "true"}
# Programs a script runs around the server that are not servers themselves: a script made of
# these (and idle commands) serves nothing.
NOT_SERVERS = {
    "echo", "printf", ":", "true", "false", "test", "[", "[[", "cd", "export", "set", "unset",
    "umask", "exit", "wait", "trap", "read", "shift", "local", "readonly", "declare", "source",
    ".", "ls", "cat", "mkdir", "cp", "mv", "rm", "ln", "chmod", "chown", "touch", "pip",
    "pip3", "apt-get", "apt", "fi", "done", "esac", "case", "for", "in",
}  # fmt: skip
SHELLS = {"sh", "bash", "dash", "ash", "zsh"}
# Words before the program that do not change which program runs.
PREFIXES = {"exec", "env", "nohup", "command", "time", "tini", "dumb-init", "--"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


class ImageRef(NamedTuple):
    """``[registry/]namespace/.../repository[:tag][@digest]``, lower case."""

    registry: str  # "" for Docker Hub
    path: tuple[str, ...]
    tag: str
    digest: str

    @property
    def repository(self) -> str:
        return self.path[-1]

    @property
    def name(self) -> str:
        return "/".join(self.path)


class Launcher(NamedTuple):
    """An engine (or an idle command) found at the start of a command's words."""

    engine: str  # UNKNOWN for an idle command
    start: int  # index of the program word
    end: int  # index of the first argument
    idle: bool = False

    def shown(self, words: Sequence[str]) -> str:
        return " ".join(words[self.start : self.end])


def parse_image(text: str) -> ImageRef | None:
    """The parts of an image reference; components an unset variable left empty are
    dropped. None when no repository is left."""
    name, _, digest = text.strip().lower().partition("@")
    tag = ""
    if name.rfind(":") > name.rfind("/"):
        name, _, tag = name.rpartition(":")
    parts = name.split("/")
    registry = ""
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        registry = parts.pop(0)
    path = tuple(part for part in parts if part)
    return ImageRef(registry, path, tag, digest) if path else None


def image_engine(text: str) -> tuple[str, str]:
    """(engine, why) for an image reference; UNKNOWN for an image this vocabulary does not
    name."""
    ref = parse_image(text)
    if ref is None:
        return UNKNOWN, "no image repository"
    engine = IMAGE_PATHS.get("/".join(ref.path[-2:])) or REPOSITORIES.get(ref.repository)
    if engine is None:
        return UNKNOWN, f"image {ref.name} is not an engine image guards knows"
    if ref.tag.split("-")[0] in NO_SERVER_TAGS.get(engine, ()):
        return UNKNOWN, f"image {ref.name}:{ref.tag} holds no server"
    return engine, f"image {ref.name}"


def launcher(words: Sequence[str]) -> Launcher | None:
    """The engine (or idle command) the words start, after prefixes such as ``exec`` and
    ``FOO=1``; None when they start something else."""
    start = _program(words)
    if start >= len(words):
        return None
    program = words[start].rsplit("/", 1)[-1]
    following = words[start + 1] if start + 1 < len(words) else ""
    if (program, following) in SUBCOMMANDS:
        return Launcher(SUBCOMMANDS[program, following], start, start + 2)
    if program in PROGRAMS:
        return Launcher(PROGRAMS[program], start, start + 1)
    if PYTHON.match(program):
        return _module(words, start)
    if program in IDLE and (program != "tail" or any(w in ("-f", "-F") for w in words)):
        return Launcher(UNKNOWN, start, len(words), idle=True)
    return None


def shell_script(words: Sequence[str]) -> int | None:
    """The index of the script in ``sh -c SCRIPT [$0 $1 ...]`` (``bash -ec``, ``sh -o
    pipefail -c`` too), or None when the words do not start a shell with a script."""
    start = _program(words)
    if start >= len(words) or words[start].rsplit("/", 1)[-1] not in SHELLS:
        return None
    index = start + 1
    while index < len(words) and words[index].startswith("-"):
        if re.fullmatch(r"-[a-z]*c[a-z]*", words[index]):
            return index + 1 if index + 1 < len(words) else None
        index += 2 if words[index] in ("-o", "+o") else 1
    return None


def serves_nothing(words: Sequence[str]) -> bool:
    """The command runs no server: an idle or housekeeping program (or only assignments)."""
    start = _program(words)
    if start >= len(words):
        return True
    found = launcher(words)
    return (found is not None and found.idle) or words[start].rsplit("/", 1)[-1] in NOT_SERVERS


def _program(words: Sequence[str]) -> int:
    index = 0
    while index < len(words) and (
        words[index].rsplit("/", 1)[-1] in PREFIXES or ASSIGNMENT.match(words[index])
    ):
        index += 1
        while words[index - 1].endswith("env") and index < len(words) and words[index] == "-i":
            index += 1
    return index


def _module(words: Sequence[str], start: int) -> Launcher | None:
    """``python [-u ...] -m MODULE``."""
    index = start + 1
    while index < len(words) and words[index].startswith("-") and words[index] != "-m":
        index += 1
    if index + 1 < len(words) and words[index] == "-m" and words[index + 1] in MODULES:
        return Launcher(MODULES[words[index + 1]], start, index + 2)
    return None


def arguments(words: Sequence[str]) -> int:
    """How many leading words are the launcher (0 when the words do not start one)."""
    found = launcher(words)
    return found.end if found is not None and not found.idle else 0
