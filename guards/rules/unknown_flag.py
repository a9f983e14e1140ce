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

vLLM's ``--speculative-config`` value is judged too, against the same release
(:mod:`guards.facts.engines.speculative`, docs/engines.md): a ``method`` the release does not
take (a misspelling gets the release's nearest method as a hint; one added later or removed
earlier says when), no ``num_speculative_tokens`` where the release refuses a config without
one (not judged when the object names a ``model``, the method counts for itself, or another
word may set it), and a value that is not a JSON object. Other keys are not judged. A part
interpolation leaves unknown (``${VAR}`` unset, a script ``$var`` not evaluated) is never a
finding: the method is judged only when written out in full, the count not at all, and a
value unreadable once interpolated is a remark.

Operators paste the commands a README or docs page shows, so the flags of a documented engine
invocation are judged too, at the note's line and column (:mod:`guards.facts.invocations`
says what counts: ``vllm serve``, ``docker run vllm/vllm-openai:TAG``, a wrapper naming the
engine before flags it knows, in shell code blocks and inline code). Such a command meets the
release its ``docker run`` image names, else the one the estate's composes run, else the
newest known (what installing the engine today gives), said in the message. Package
installs, ``vllm --version``, a flag in prose and files of the ``history`` setting are not
read.

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
from collections.abc import Sequence

from ..facts.engines import EngineFacts, distance, speculative
from ..facts.engines.running import Running, engine_arguments, service_running
from ..facts.invocations import ALWAYS, documented_running, note_invocations
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.compose.engines import LLAMACPP, VLLM, Token
from ..sources.compose.script import Script
from ..sources.notes.notes import Note
from ..sources.patterns import glob_match
from .base import Context, Rule
from .options import RuleOptions, option


class Options(RuleOptions):
    extra_flags: list[str] = option(
        [], description="Flags a fork or a custom build adds, accepted as known."
    )


def check(target: Compose | Note, context: Context) -> list[Finding] | None:
    if isinstance(target, Note):
        return _check_note(target, context)
    compose, applies, findings = target, False, []
    versions = context.estate.config.engine_versions
    for service in compose.services:
        words = engine_arguments(service)
        run = service_running(service, versions) if words is not None else None
        if run is None or words is None:
            continue
        applies = True
        where = f"service {service.name}"
        if isinstance(run, str) or isinstance(words, str):
            why = run if isinstance(run, str) else words
            _remark(context, compose.path, where, f"{why}; flags not checked")
            continue
        script = service.launch.script
        findings += _judge_words(compose.path, where, words, run, context, script)
    return findings if applies else None


def _judge_words(
    path: str,
    where: str,
    words: Sequence[Token],
    run: Running,
    context: Context,
    script: Script | None = None,
) -> list[Finding]:
    """The flags among the engine's words, then the ``--speculative-config`` value: in the
    words, else (none there, or not readable) as the entrypoint script writes it."""
    findings = []
    for token in words:
        if token.is_flag and not token.unresolved:
            finding = _judge(path, where, token, run, context)
            findings += [finding] if finding else []
    verdicts = speculative.judge(words, run)
    if script is not None and all(v.unread for v in verdicts):
        verdicts = speculative.judge_script(script, run) or verdicts
    for verdict in verdicts:
        if verdict.certain:
            findings.append(
                RULE.at(
                    path,
                    verdict.line,
                    verdict.column,
                    verdict.message,
                    hint=verdict.hint,
                    end_column=verdict.end_column,
                )
            )
        else:
            _remark(context, path, where, verdict.remark)
    return findings


def _check_note(note: Note, context: Context) -> list[Finding] | None:
    """The flags of the engine invocations a note documents (history files record old
    commands on purpose)."""
    estate = context.estate
    if any(glob_match(note.path, pattern) for pattern in estate.config.history):
        return None
    found = note_invocations(note)
    findings = []
    for invocation in found:
        run = documented_running(invocation, estate.composes, estate.config.engine_versions)
        where = f"line {invocation.line}"
        if isinstance(run, str):
            _remark(context, note.path, where, f"{run}; flags not checked")
        elif run is not None:
            findings += _judge_words(note.path, where, invocation.words, run, context)
    return findings if found else None


def _judge(path: str, where: str, token: Token, run: Running, context: Context) -> Finding | None:
    extra = set(context.options(RULE).extra_flags)
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
        message = f"`{name}` {facts.when(entry.spans, max(run.releases))} ({run.how})"
        hint, certain = None, run.exact
        longer = _longer(facts, name, run.releases) if facts.engine != LLAMACPP else []
        if len(longer) == 1:
            hint = f"argparse now reads it as an abbreviation of `{longer[0]}`"
    if not certain:
        _remark(context, path, where, f"{message}: not certain, not a finding")
        return None
    column = token.column + token.quoted
    return RULE.at(
        path, token.line, column, message, hint=hint, end_column=_flag_end(token, column)
    )


def _flag_end(token: Token, column: int) -> int:
    """Just after the flag's name as written (``--name`` of ``--name=value``); the whole word
    when interpolation wrote it."""
    name = token.text.partition("=")[0]
    written = token.raw[token.quoted :]
    return column + len(name) if written.startswith(name) else token.end_column


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


def _did_you_mean(name: str, facts: EngineFacts, releases: tuple[int, ...]) -> str | None:
    """The closest flag of the release, when it is a misspelling away (two edits at most, at
    most one in four characters)."""
    known = facts.names_at(facts.flags, releases)
    import difflib  # only for a name not known

    close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
    near = [c for c in close if distance(name, c) <= min(2, len(name) // 4)]
    return f"did you mean `{near[0]}`?" if near else None


def _remark(context: Context, path: str, where: str, text: str) -> None:
    context.remark(RULE, path, f"{where}: {text}")


RULE: Rule[Options] = Rule(
    id="K006",
    name="unknown-flag",
    family="knobs",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
