"""K006 unknown-flag: every flag a service passes its engine is one that engine's release accepts.

Why: vLLM, SGLang and llama-server refuse an argument they do not know and exit at start, so
a flag renamed or removed upstream (``--device`` left vLLM; ``--max-tokens`` was never a
llama-server option) turns the next image bump into a crash loop. The rule reads the words the
engine is started with (the command, an entrypoint script's launch line) and compares each flag
with the flags the engine's release declares, from the engines' own sources
(docs/engines.md): the release is the one the image tag names, else the estate's
``engine-versions`` setting, else the newest release known, said in the message. Where the
release is not known for certain (an image that does not name it), a flag only other releases
have, or a new name with no near match (a custom build may add it), is a remark. Unresolved
``${VAR}`` words, abbreviations argparse accepts (vLLM, SGLang), vLLM's ``--no-FLAG``,
``--flag.key`` and ``-O3`` forms are never findings; the ``extra-flags`` option lists flags a
fork adds.

Bad:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: --model /models/m --max-model-len 32768 --device cuda --max-num-sequences 8

Finds:
    composes/example.yml:4:54: K006 `--device` was removed in vLLM 0.10.0 (last in 0.9.2) (image vllm/vllm-openai:v0.27.1 runs vLLM 0.27.1)
    composes/example.yml:4:68: K006 `--max-num-sequences` is not a flag of vLLM 0.27.1, nor of any release known (image vllm/vllm-openai:v0.27.1 runs vLLM 0.27.1)

Good:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: --model /models/m --max-model-len 32768 --max-num-seqs 8
"""

from __future__ import annotations

import re

from pydantic import Field

from ..facts.engines import EngineFacts, distance
from ..facts.engines.running import Running, engine_words, service_running
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import LLAMACPP, VLLM, Token
from .base import Context, Rule
from .options import RuleOptions

ALWAYS = {"-h", "--help", "--version"}  # argparse's and llama-server's own


class Options(RuleOptions):
    extra_flags: list[str] = Field(
        [], description="Flags a fork or a custom build adds, accepted as known."
    )


def check(compose: Compose, context: Context) -> list[Finding] | None:
    applies, findings = False, []
    versions = context.estate.config.engine_versions
    for service in compose.services:
        words = engine_words(service)
        run = service_running(service, versions) if words is not None else None
        if run is None or words is None:
            continue
        applies = True
        if isinstance(run, str) or isinstance(words, str):
            why = run if isinstance(run, str) else words
            _remark(context, compose, service, f"{why}; flags not checked")
            continue
        extra = set(context.options(RULE).extra_flags)
        for token in words:
            finding = _judge(compose, service, token, run, extra, context)
            findings += [finding] if finding else []
    return findings if applies else None


def _judge(
    compose: Compose, service: Service, token: Token, run: Running, extra: set, context: Context
) -> Finding | None:
    name = _name(token.text, run.facts.engine)
    if name is None or name in extra or _accepted(name, run):
        return None
    facts = run.facts
    entry = facts.flags.get(name)
    shown = facts.shown(max(run.releases))
    if entry is None:
        message = f"`{name}` is not a flag of {shown}, nor of any release known ({run.how})"
        hint = _did_you_mean(name, facts, run.releases)
        certain = run.exact or hint is not None  # a build of its own may add a new name
    else:
        message = f"`{name}` {_when(facts, entry.spans, max(run.releases))} ({run.how})"
        hint, certain = None, run.exact
        longer = _longer(facts, name, run.releases) if facts.engine != LLAMACPP else []
        if len(longer) == 1:
            hint = f"argparse now reads it as an abbreviation of `{longer[0]}`"
    if not certain:
        _remark(context, compose, service, f"{message}: not certain, not a finding")
        return None
    column = token.column + token.quoted
    return RULE.at(compose.path, token.line, column, message, hint=hint)


def _name(text: str, engine: str) -> str | None:
    """The option a flag word names, as the engine's parser reads it; None for a word that
    is not one to judge."""
    name = text.partition("=")[0]
    if "$" in name or "`" in name or not re.fullmatch(r"--?[A-Za-z][\w.\-]*", name):
        return None
    if engine == VLLM:
        if re.fullmatch(r"-O(\d.*|\..*)?", name):
            return None  # -O3, -O.level: the compilation config's shorthand
        name = name.split(".")[0]  # --compilation-config.level
        name = name[:2] + name[2:].replace("_", "-") if name.startswith("--") else name
    return name


def _accepted(name: str, run: Running) -> bool:
    facts = run.facts
    if name in ALWAYS or _present(facts, name, run.releases):
        return True
    if facts.engine == VLLM and name.startswith("--no-"):
        return _present(facts, "--" + name[5:], run.releases)
    if facts.engine != LLAMACPP and name not in facts.flags and len(name) > 3:
        # argparse takes an unambiguous prefix; one of any flag is never judged (a flag of
        # other releases is judged as that flag: it is what was meant)
        return bool(_longer(facts, name, run.releases))
    return False


def _longer(facts: EngineFacts, name: str, releases: tuple[int, ...]) -> list[str]:
    return [f for f in facts.names_at(facts.flags, releases) if f.startswith(name) and f != name]


def _present(facts: EngineFacts, name: str, releases: tuple[int, ...]) -> bool:
    entry = facts.flags.get(name)
    return entry is not None and any(entry.present(i) for i in releases)


def _when(facts: EngineFacts, spans: tuple[tuple[int, int], ...], at: int) -> str:
    """When a known name left or joined the releases, seen from release ``at``."""
    if spans[-1][1] < at:
        last = spans[-1][1]
        return f"was removed in {facts.shown(last + 1)} (last in {facts.versions[last]})"
    if spans[0][0] > at:
        return f"was added in {facts.shown(spans[0][0])}, after {facts.versions[at]}"
    return f"is not in {facts.shown(at)}"


def _did_you_mean(name: str, facts: EngineFacts, releases: tuple[int, ...]) -> str | None:
    """The closest flag of the release, when it is a misspelling away (two edits at most, at
    most one in four characters)."""
    known = facts.names_at(facts.flags, releases)
    import difflib  # only for a name not known

    close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
    near = [c for c in close if distance(name, c) <= min(2, len(name) // 4)]
    return f"did you mean `{near[0]}`?" if near else None


def _remark(context: Context, compose: Compose, service: Service, text: str) -> None:
    context.remark(RULE, compose.path, f"service {service.name}: {text}")


RULE: Rule[Options] = Rule(
    id="K006",
    name="unknown-flag",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
