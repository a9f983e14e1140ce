"""Which engine release a service runs: the estate's ``engine-versions`` setting, else the
engine's own image tag, else the newest release the data knows, said so.

A tag is read only on the engine's own images (``vllm/vllm-openai:v0.27.1``,
``lmsysorg/sglang:v0.5.3-cu126``); ``latest``, a bare name or a nightly is the newest release
known. llama.cpp's ``server-bNNNN`` tags count builds, which the published sources do not
number: such an image is checked against every release known (a flag any of them has is
taken). A fork the vocabulary knows (ik_llama.cpp) has flags of its own and is checked only
when the setting maps it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import NamedTuple

from ...sources.compose.compose import Service
from ...sources.compose.engines import LLAMACPP, SGLANG, VLLM, Token
from ...sources.compose.engines.identity import arguments, parse_image
from ...sources.patterns import lazy
from . import SHOWN, EngineFacts, load, version_key

# The engines' own images, whose tags are their releases.
UPSTREAM = {
    VLLM: ("vllm/vllm-openai", "vllm/vllm-openai-rocm"),
    SGLANG: ("lmsysorg/sglang",),
    LLAMACPP: ("ggml-org/llama.cpp", "ggerganov/llama.cpp"),
}
FORKS = ("ik_llama", "ik-llama")  # repositories of forks with flags of their own
TAG = lazy(r"v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?post\d+)?)(rc\d+)?(?![\w.])")
SHELL_BREAKS = {"&&", "||", ";", "|", "&", ">", ">>", "<", "2>", "2>&1", "--"}
LATEST = lazy(r"^(latest|nightly|main|dev|server|full)?(-[a-z0-9]+)*$")


class Running(NamedTuple):
    """The releases a service may run (a flag any of them has is accepted) and how that is
    known; ``exact``: the release is known, so a flag it lacks is a finding even where an
    older or newer release has it."""

    facts: EngineFacts
    releases: tuple[int, ...]
    how: str
    exact: bool


def running(engine: str, image: str | None, versions: Mapping[str, str]) -> Running | str | None:
    """What the service runs; a string says why it is not known; None: no data for it."""
    facts = load(engine)
    if facts is None:
        return None
    text = (image or "").strip().lower()
    for glob, said in versions.items():
        if text and (fnmatchcase(text, glob) or fnmatchcase(text.partition(":")[0], glob)):
            return _mapped(facts, glob, said)
    ref = parse_image(text) if text else None
    newest = (facts.newest,)
    if ref is None:
        return Running(facts, newest, f"no image names the release: {_newest(facts)}", False)
    if any(fork in ref.repository for fork in FORKS):
        return f"image {ref.name} is a fork with flags of its own (map it in engine-versions)"
    if "/".join(ref.path[-2:]) not in UPSTREAM.get(engine, ()):
        how = f"image {ref.name} does not name its {SHOWN[engine]} release"
        return Running(facts, newest, f"{how}: {_newest(facts)}", False)
    return _tagged(facts, ref.name, ref.tag)


def _tagged(facts: EngineFacts, name: str, tag: str) -> Running | str:
    shown = f"{name}:{tag}" if tag else name
    build = re.search(r"(?:^|-)b(\d{3,6})(?:$|-)", tag)
    if facts.engine == LLAMACPP and build:
        every = tuple(range(len(facts.versions)))
        how = f"image {shown}: build b{build.group(1)} is not numbered in the sources"
        return Running(facts, every, how + ", checked against every release known", False)
    found = TAG.search(tag) if facts.engine != LLAMACPP else None
    if found is None:
        if LATEST.match(tag):
            return Running(facts, (facts.newest,), f"image {shown}: {_newest(facts)}", True)
        return Running(facts, (facts.newest,), f"image {shown}: {_newest(facts)}", False)
    index = facts.release(found.group(1))
    if index is None:
        return f"image {shown}: {found.group(1)} is older than the releases known"
    releases: tuple[int, ...] = (index,)
    same = (version_key(facts.versions[index]) or ())[:4] == (version_key(found.group(1)) or ())[:4]
    if found.group(2) and same:  # a candidate of a release known: it or the one before
        releases = (max(index - 1, 0), index)
    return Running(facts, releases, f"image {shown} runs {facts.shown(index)}", True)


def _mapped(facts: EngineFacts, glob: str, said: str) -> Running | str:
    engine, _, version = said.partition(" ")
    where = f'engine-versions "{glob}" = "{said}"'
    if engine != facts.engine:
        return f"{where} names {engine}, but the service runs {facts.engine}"
    index = facts.release(version)
    if index is None:
        return f"{where}: {version} is older than the releases known"
    return Running(facts, (index,), f"{where} gives {facts.shown(index)}", True)


def _newest(facts: EngineFacts) -> str:
    return f"the newest known, {facts.shown(facts.newest)}"


def service_running(service: Service, versions: Mapping[str, str]) -> Running | str | None:
    """:func:`running` for a service, from its image."""
    return running(service.engine, service.value("image"), versions)


def guessed(service: Service) -> bool:
    """The engine is a guess from the flags the command passes, not a launcher or an image."""
    return " runs `" not in service.launch.reason and "the command passes" in service.launch.reason


def engine_words(service: Service) -> list[Token] | str | None:
    """The flag words the engine parses, each resolved; a string says why they are not
    known; None: the service runs no engine with data."""
    words = engine_arguments(service)
    if words is None or isinstance(words, str):
        return words
    return [token for token in words if token.is_flag and not token.unresolved]


def engine_arguments(service: Service) -> list[Token] | str | None:
    """Every word the engine parses as its arguments, values and unresolved words too; a
    string says why they are not known; None: the service runs no engine with data."""
    launch = service.launch
    if launch.idle or load(service.engine) is None:
        return None
    if guessed(service):
        return None
    launched = " runs `" in launch.reason  # a launcher was found, first in the tokens
    if not launched and (launch.script is not None or launch.own_entrypoint):
        return "the command goes to an entrypoint of the compose's own, not to the engine"
    tokens = launch.tokens
    start = arguments([t.text for t in tokens]) if launched else 0
    words = []
    for token in tokens[start:]:
        if token.text in SHELL_BREAKS:
            break
        words.append(token)
    return words
