"""K001 utilisation-ceiling: `--gpu-memory-utilization` stays at or under its ceiling.

Why: the knob is a ceiling on what vLLM claims, not a target. Higher means a bigger KV pool and
less slack for transient prefill peaks: on qwen3.8-27b 0.95 OOMed at 16K prompts where the
shipped 0.90 did not. The ceiling comes from an active registry claim that applies to the
compose (``facts.gpu_memory_utilization_max``, quoted with its reason); without one, values
above ``default-ceiling`` fail (option, default 0.94: 0.95 and up is an error out of the box).
Checked on the effective value, so ``--env-file`` shows what an operator's overlay does. A
value guards cannot read (a variable nothing sets), or one above the ceiling of a claim for a
model when the service names no model, is not judged: neither a pass nor a finding, and
``--verbose`` says why.
Below the ceiling is vLLM's own range, (0, 1] (``CacheConfig`` in vllm/config/cache.py declares
``gt=0, le=1``): outside it vLLM refuses to start. That bound alone also holds for the
commands notes document (``vllm serve ... --gpu-memory-utilization 0``, read as K006 reads
them), reported at the note's line; the estate's ceiling is about what ships, not examples.

Bad:
    --- claims.yaml
    claims:
      - id: qwen38-27b-util-ceiling
        title: 0.90 is the utilisation ceiling for qwen3.8-27b
        status: active
        reason: The knob is a ceiling on what vLLM claims; higher leaves less slack for prefill.
        applies_to: {model: qwen3.8-27b}
        facts: {gpu_memory_utilization_max: 0.90}
    --- composes/dual.yml
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--served-model-name, qwen3.8-27b, --gpu-memory-utilization, "0.95"]

Finds:
    composes/dual.yml:4:75: K001 gpu-memory-utilization 0.95 is above the ceiling 0.90 (claim qwen38-27b-util-ceiling, claims.yaml:2: The knob is a ceiling on what vLLM claims; higher leaves less slack for prefill.)

Good:
    --- claims.yaml
    claims:
      - id: qwen38-27b-util-ceiling
        title: 0.90 is the utilisation ceiling for qwen3.8-27b
        status: active
        reason: The knob is a ceiling on what vLLM claims; higher leaves less slack for prefill.
        applies_to: {model: qwen3.8-27b}
        facts: {gpu_memory_utilization_max: 0.90}
    --- composes/dual.yml
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--served-model-name, qwen3.8-27b, --gpu-memory-utilization, "0.90"]
"""

from __future__ import annotations

from dataclasses import replace

from ..facts.invocations import Invocation, note_invocations
from ..facts.scope import applies, fact, model_names
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import SGLANG, VLLM, Knob, Token, split_flags
from ..sources.notes.notes import Note
from ..sources.numbers import to_number
from ..sources.patterns import glob_match
from .base import Context, Rule, provenance, summary, unreadable
from .options import RuleOptions, option

FLAGS = ("--gpu-memory-utilization", "--gpu_memory_utilization")


class Options(RuleOptions):
    default_ceiling: float = option(
        0.94, gt=0, le=1, description="The ceiling when no registry claim sets one for the model."
    )


def refused(engine: str, value: float) -> str | None:
    """Why the engine refuses to start with this utilisation; None when it takes it. vLLM
    declares the field ``gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)``
    (``CacheConfig``, vllm/config/cache.py) and rejects anything else before loading."""
    if engine == VLLM and not 0 < value <= 1:
        return "is outside vLLM's range (0, 1]: vLLM refuses to start"
    return None


def check(target: Compose | Note, context: Context) -> list[Finding] | None:
    if isinstance(target, Note):
        return _check_note(target, context)
    compose = target
    knobs = [
        (s, knob)
        for s in compose.services
        if s.engine in (VLLM, SGLANG) and (knob := s.knob("gpu_memory_utilization")) is not None
    ]
    if not knobs:
        return None
    findings = []
    for service, knob in knobs:
        value = knob.number
        if value is None:
            what = f"service {service.name}: {_flag(knob)} {unreadable(knob)}; not checked"
            context.not_judged(RULE, compose.path, what)
            continue
        why = refused(service.engine, value)
        if why is not None:
            findings.append(_refused(compose.file(knob.path), _place(knob), why, knob))
            continue
        finding = _above(compose, service, knob, value, context)
        findings += [finding] if finding else []
    return findings


def _above(
    compose: Compose, service: Service, knob: Knob, value: float, context: Context
) -> Finding | None:
    default = context.options(RULE).default_ceiling
    ceiling = fact(context.estate.registry, compose, service, "gpu_memory_utilization_max")
    limit = ceiling.value if ceiling else default
    if value <= limit + 1e-9:
        if ceiling is None:
            _unnamed_model(compose, service, knob, value, context)
        return None
    if ceiling:
        claim = ceiling.claim
        why = f": {summary(claim.reason)}" if claim.reason else ""
        source = f"claim {claim.id}, {context.estate.registry.path}:{claim.line}{why}"
    else:
        source = f"the default ceiling {default:g}; no registry claim sets one for this model"
    return RULE.at(
        compose.file(knob.path),
        knob.line,
        knob.column,
        f"{_flag(knob)} {knob.value}{provenance(knob)} is above the ceiling {limit:.2f} ({source})",
        knob="gpu_memory_utilization",
        claim=ceiling.claim.id if ceiling else None,
        hint=f"ship {limit:.2f} or lower; a bigger KV pool is not worth prefill OOMs",
        end_column=knob.end_column,
    )


def _unnamed_model(
    compose: Compose, service: Service, knob: Knob, value: float, context: Context
) -> None:
    """Not judged when the service names no model and a claim for a model would set a ceiling
    below ``value``: the default ceiling decides only where no claim may apply."""
    if model_names(compose, service):
        return
    for claim in context.estate.registry.claims:
        ceiling = claim.facts.gpu_memory_utilization_max
        if claim.status != "active" or not claim.applies_to.model or ceiling is None:
            continue
        anywhere = replace(claim, applies_to=replace(claim.applies_to, model=[]))
        if value > ceiling + 1e-9 and applies(anywhere, compose, service):
            context.not_judged(
                RULE,
                compose.path,
                f"service {service.name} names no model, so whether the ceiling {ceiling:.2f} of "
                f"claim {claim.id} (for {', '.join(claim.applies_to.model)}) applies to "
                f"{_flag(knob)} {knob.value} is unknown; not checked",
            )
            return


def _check_note(note: Note, context: Context) -> list[Finding] | None:
    """The engine's own bound on the utilisation a documented command passes (a ceiling of
    the estate's is about what ships, not about an example)."""
    if any(glob_match(note.path, pattern) for pattern in context.estate.config.history):
        return None
    documented = [i for i in note_invocations(note) if i.engine == VLLM]
    findings = [f for i in documented for f in _documented(note, i)]
    return findings if any(_values(i) for i in documented) else None


def _documented(note: Note, invocation: Invocation) -> list[Finding]:
    found = []
    for token in _values(invocation):
        value = to_number(token.text)
        why = refused(invocation.engine, value) if value is not None else None
        if why is not None:
            message = f"gpu-memory-utilization {token.text} {why} (a documented command)"
            found.append(_refused(note.path, _place(token), message, None))
    return found


def _values(invocation: Invocation) -> list[Token]:
    """The value words the invocation gives the utilisation flag (unresolved ones left out)."""
    flags = split_flags(list(invocation.words), set(FLAGS))
    return [
        f.value
        for f in flags
        if f.name in FLAGS and f.value is not None and "$" not in f.value.text
    ]


def _place(written: Knob | Token) -> tuple[int, int, int]:
    """Line, column and end column of a value as written."""
    return written.line, written.column, written.end_column


def _refused(path: str, place: tuple[int, int, int], why: str, knob: Knob | None) -> Finding:
    message = f"{_flag(knob)} {knob.value}{provenance(knob)} {why}" if knob else why
    line, column, end = place
    return RULE.at(
        path,
        line,
        column,
        message,
        knob="gpu_memory_utilization",
        hint="a fraction above 0 and at most 1: the share of GPU memory vLLM may claim",
        end_column=end,
    )


def _flag(knob: Knob) -> str:
    """The flag as the engine spells it: SGLang's --mem-fraction-static is the same ceiling."""
    return (knob.flag or "--gpu-memory-utilization").lstrip("-")


RULE = Rule(
    id="K001",
    name="utilisation-ceiling",
    family="knobs",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
    options=Options,
)
