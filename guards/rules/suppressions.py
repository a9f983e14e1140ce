"""X001 unused-suppression: every suppression still waives a finding.

Why: a ``guards: ignore[RULE]`` directive outlives the finding it was written for — the knob
was fixed, the copy rewritten — and then silently waives the next, unrelated finding on that
line. A directive naming a rule that ran and found nothing on its line or the line below is
dead; remove it (or the rule id). Rules that did not run (``--select``) are not judged.

Bad:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command:
          - --gpu-memory-utilization
          - "0.90"  # guards: ignore[K001] verified on the 24 GB cards (#412)

Finds:
    composes/example.yml:6:17: X001 suppression of K001 waives no finding

Good:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command:
          - --gpu-memory-utilization
          - "0.90"
"""

from __future__ import annotations

from collections.abc import Callable

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.config import Config
from ..sources.directives import Directive, directives, path_ignores
from ..sources.notes.notes import Note
from .base import Context, Rule
from .options import RuleOptions


def _about(directive: Directive) -> str:
    return f"suppression of {', '.join(directive.rules)}"


def check_unused(target: Compose | Note, context: Context) -> list[Finding] | None:
    found = [d for d in directives(target, context.rule_names) if d.applies(context.today)]
    if not found:
        return None
    used: dict[str, set[str]] = {}
    for result in context.earlier:
        for finding in result.waived:
            if finding.path == target.path and finding.waiver and finding.waiver.kind == "inline":
                used.setdefault(finding.waiver.where, set()).add(finding.rule)
    findings = []
    for directive in found:
        spent = used.get(f"{target.path}:{directive.line}", set())
        idle = [rule for rule in directive.rules if rule in context.ran and rule not in spent]
        if not idle:
            continue
        what = (
            _about(directive)
            if idle == list(directive.rules)
            else f"`{', '.join(idle)}` in this suppression"
        )
        findings.append(
            UNUSED.at(
                target.path,
                directive.line,
                directive.column,
                f"{what} waives no finding",
                hint="the finding it was written for is gone: remove the directive (or the rule id)",
                end_column=directive.end_column,
            )
        )
    return findings


REASON_DOC = """X002 suppression-reason: every suppression says why.

Why: a waived finding is a judgement someone made; the next maintainer needs to know what it
was to tell whether it still holds. A directive with no reason after its bracket is not
applied — the finding stays — and is reported here.

Bad:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command:
          - --max-num-seqs  # guards: ignore[K002]
          - "64"

Finds:
    composes/example.yml:5:25: X002 suppression of K002 gives no reason, so it is not applied

Good:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command:
          - --max-num-seqs  # guards: ignore[K002] a cap for bursts, not a reservation (#412)
          - "64"
"""


def check_reason(target: Compose | Note, context: Context) -> list[Finding] | None:
    return _each(
        REASON,
        target,
        context,
        lambda d: (
            None if d.problem or d.reason else f"{_about(d)} gives no reason, so it is not applied"
        ),
        "say why after the bracket: `guards: ignore[RULE] why this finding is accepted`",
    )


def _each(
    rule: Rule,
    target: Compose | Note,
    context: Context,
    problem: Callable[[Directive], str | None],
    hint: str,
) -> list[Finding] | None:
    """A finding of ``rule`` for each directive of ``target`` that ``problem`` has a message
    for; None when the target has no directive at all."""
    found = directives(target, context.rule_names)
    if not found:
        return None
    messages = [(d, problem(d)) for d in found]
    return [
        rule.at(target.path, d.line, d.column, m, hint=hint, end_column=d.end_column)
        for d, m in messages
        if m
    ]


INVALID_DOC = """X003 invalid-suppression: every `guards:` comment is a directive guards can read.

Why: a directive with a typo — an unknown rule id, a misspelt ``ignore``, an ``until=`` that is
not a date — waives nothing, while its author believes it does. It is reported here instead
of being skipped in silence. X001 cannot be named in a directive: it judges them.

Bad:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command:
          - --max-num-seqs  # guards: ignore[K020] a cap for bursts (#412)
          - "64"

Finds:
    composes/example.yml:5:25: X003 unknown rule `K020` (see `guards rules`); the directive is not applied

Good:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command:
          - --max-num-seqs  # guards: ignore[K002] a cap for bursts (#412)
          - "64"
"""


def check_invalid(target: Compose | Note, context: Context) -> list[Finding] | None:
    return _each(
        INVALID,
        target,
        context,
        lambda d: f"{d.problem}; the directive is not applied" if d.problem else None,
        "write `guards: ignore[RULE] reason`, optionally with `until=YYYY-MM-DD`",
    )


EXPIRED_DOC = """X004 expired-suppression: no suppression is past its `until=` date.

Why: ``until=YYYY-MM-DD`` is a promise to look again — the upstream fix lands, the benchmark
is re-run. After that day the directive (or ``per-path-ignores`` entry) no longer applies, the
finding it waived is reported again, and this rule says which promise came due.

Bad:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command:
          - --max-num-seqs  # guards: ignore[K002] until the 0.28 pool fix until=2001-01-31
          - "64"

Finds:
    composes/example.yml:5:25: X004 suppression of K002 expired on 2001-01-31; the finding is reported again

Good:
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command:
          - --max-num-seqs  # guards: ignore[K002] until the 0.28 pool fix until=2999-01-31
          - "64"
"""


def check_expired(target: Compose | Note | Config, context: Context) -> list[Finding] | None:
    if isinstance(target, Config):
        return _expired_ignores(target, context)
    found = [
        d
        for d in directives(target, context.rule_names)
        if d.problem is None and d.until is not None
    ]
    if not found:
        return None
    return [
        EXPIRED.at(
            target.path,
            d.line,
            d.column,
            f"{_about(d)} expired on {d.until}; the finding is reported again",
            hint="fix the finding, or renew the date with what was learnt",
            end_column=d.end_column,
        )
        for d in found
        if d.expired(context.today)
    ]


def _expired_ignores(config: Config, context: Context) -> list[Finding] | None:
    dated = [entry for entry in path_ignores(config, context.rule_names) if entry.until is not None]
    if not dated or config.source is None:
        return None
    return [
        EXPIRED.at(
            config.source,
            entry.line or 1,
            1,
            f"per-path ignore of {', '.join(entry.rules)} for {entry.pattern!r} expired on "
            f"{entry.until}; its findings are reported again",
            hint="fix the findings, or renew the date with what was learnt",
        )
        for entry in dated
        if entry.until is not None and entry.until < context.today
    ]


UNUSED: Rule[RuleOptions] = Rule(
    id="X001",
    name="unused-suppression",
    family="suppressions",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check_unused,
    doc=__doc__,
    after_others=True,
)
REASON: Rule[RuleOptions] = Rule(
    id="X002",
    name="suppression-reason",
    family="suppressions",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check_reason,
    doc=REASON_DOC,
)
INVALID: Rule[RuleOptions] = Rule(
    id="X003",
    name="invalid-suppression",
    family="suppressions",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check_invalid,
    doc=INVALID_DOC,
)
EXPIRED: Rule[RuleOptions] = Rule(
    id="X004",
    name="expired-suppression",
    family="suppressions",
    targets=("compose", "note", "config"),
    severity=Severity.ERROR,
    check=check_expired,
    doc=EXPIRED_DOC,
)

RULES = (UNUSED, REASON, INVALID, EXPIRED)
