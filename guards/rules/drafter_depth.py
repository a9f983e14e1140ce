"""K003 drafter-depth: the drafter depth agrees with the header, comments and the validated maximum.

Why: a maintainer misread his own default when a comment said "this compose defaults to 4" a
few lines above ``_spec_n="$${SPEC_N:-7}"``, and a user ran SPEC_N=7 believing that is what
ships. The depth the compose really sets by default (vLLM: the entrypoint's SPEC_N default or
``num_speculative_tokens``; llama.cpp: ``--spec-draft-n-max`` or ik_llama's ``n_max=`` - the
entrypoint's ``$${SPEC_N:-1}`` there is only an on/off switch) must match the header's
``Drafter: … n=K`` and every comment saying "defaults to K". The effective depth (with an
``--env-file`` overlay) must not exceed the deepest depth an active registry claim validated for
that drafter on that topology (``facts.drafter_depth_max``): the spec-decode tax grows with
depth (vllm#35387). A depth guards cannot read (a variable nothing sets, a drafter flag left
to the engine) against a depth the header, a comment or a claim states is not judged:
neither a pass nor a finding, and ``--verbose`` says why.

Bad:
    # Profile (at-a-glance):
    #   Drafter:   DFlash2 n=5
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        environment: ["SPEC_N=${SPEC_N:-}"]
        entrypoint:
          - bash
          - -c
          - |
            #   SPEC_N=<n>  drafter depth (this compose defaults to 4)
            _spec_n="$${SPEC_N:-7}"
            exec vllm serve "$$@" --speculative-config "{\\"method\\":\\"dflash\\",\\"num_speculative_tokens\\":$$_spec_n}"

Finds:
    composes/example.yml:2:24: K003 header Drafter says n=5 (line 2), but the compose defaults to depth 7 (entrypoint line 12: `$${SPEC_N:-7}`)
    composes/example.yml:11:53: K003 comment says the compose defaults to 4 (line 11), but the default depth is 7 (entrypoint line 12: `$${SPEC_N:-7}`)

Good:
    # Profile (at-a-glance):
    #   Drafter:   DFlash2 n=7
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        environment: ["SPEC_N=${SPEC_N:-}"]
        entrypoint:
          - bash
          - -c
          - |
            #   SPEC_N=<n>  drafter depth (this compose defaults to 7)
            _spec_n="$${SPEC_N:-7}"
            exec vllm serve "$$@" --speculative-config "{\\"method\\":\\"dflash\\",\\"num_speculative_tokens\\":$$_spec_n}"
"""

from __future__ import annotations

import re

from ..facts.scope import depth_limit, topology
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import Knob
from ..sources.patterns import lazy
from .base import Context, Rule, provenance, unreadable
from .options import RuleOptions

HEADER_DEPTH = lazy(r"\bn\s*=\s*(\d+)\b")
NO_DRAFTER = lazy(r"^\s*(none|no|off|n/a)\b", re.IGNORECASE)
STATED = lazy(r"\bdefaults?\s+to\s+(\d+)\b", re.IGNORECASE)
ABOUT_DEPTH = lazy(r"SPEC_N|depth|draft tokens|n_max|num_speculative", re.IGNORECASE)
OTHER_VARIANT = lazy(r"\b(sibling|siblings|other|instead|vs\.?|tier)\b", re.IGNORECASE)


def check(compose: Compose, context: Context) -> list[Finding] | None:
    findings: list[Finding] = []
    checked = False
    for shipped, service in zip(compose.shipped, compose.services, strict=False):
        depth = shipped.knob("drafter_depth")
        if depth is None and compose.header.field("Drafter") is None:
            continue
        checked = True
        if depth is not None and depth.value is None:
            _unknown(compose, depth, context)
        else:
            findings += _header(compose, depth)
            findings += _comments(compose, depth) if depth is not None else []
        findings += _validated(compose, service, context)
    return findings if checked else None


def _unknown(compose: Compose, depth: Knob, context: Context) -> None:
    """A default depth guards cannot read: not judged when the header or a comment states a
    depth to hold it against, else only a remark."""
    note = f"drafter depth not known: {depth.note or depth.raw.strip()}"
    stated = []
    field = compose.header.field("Drafter")
    if field and (NO_DRAFTER.match(field.lead) or field.search(HEADER_DEPTH)):
        stated.append(f"the header's Drafter (line {field.line})")
    lines = [c.line for c in compose.comments if _states_default(c.text)]
    stated += [f"the comment on line {line}" for line in lines[:1]]
    if stated:
        context.not_judged(RULE, compose.path, f"{note}; not checked against {', '.join(stated)}")
    elif depth.note:
        context.remark(RULE, compose.path, note)


def _states_default(text: str) -> bool:
    """Whether a comment states the compose's default depth (not a sibling's)."""
    return bool(STATED.search(text) and ABOUT_DEPTH.search(text) and not OTHER_VARIANT.search(text))


def _where(knob: Knob) -> str:
    return f"{knob.source} line {knob.line}: `{knob.raw.strip()}`"


def _header(compose: Compose, depth: Knob | None) -> list[Finding]:
    field = compose.header.field("Drafter")
    if field is None:
        return []
    says_none = NO_DRAFTER.match(field.lead) is not None
    found = None if says_none else field.search(HEADER_DEPTH)
    at, stated = found if found else (0, None)
    actual = depth.value if depth else None
    if stated and depth is not None and actual is not None and stated.group(1) != actual:
        return [
            RULE.at(
                compose.path,
                field.line,
                field.column + at + stated.start(),
                f"header Drafter says n={stated.group(1)} (line {field.line}), but the "
                f"compose defaults to depth {actual} ({_where(depth)})",
                knob="drafter_depth",
                hint=f"write n={actual} in the header, or change the default to match",
                end_column=field.column + at + stated.end(),
            )
        ]
    if stated and depth is None:
        return [
            RULE.at(
                compose.path,
                field.line,
                field.column + at + stated.start(),
                f"header Drafter says n={stated.group(1)} (line {field.line}), but the "
                "compose configures no drafter",
                hint="write Drafter: none in the header, or configure the drafter it describes",
                knob="drafter_depth",
                end_column=field.column + at + stated.end(),
            )
        ]
    if says_none and depth is not None and actual not in (None, "0"):
        return [
            RULE.at(
                compose.path,
                field.line,
                field.column,
                f"header Drafter says none (line {field.line}), but the compose "
                f"defaults to depth {actual} ({_where(depth)})",
                hint=f"write n={actual} in the header, or switch the drafter off by default",
                knob="drafter_depth",
                end_column=field.end_column,
            )
        ]
    return []


def _comments(compose: Compose, depth: Knob) -> list[Finding]:
    findings = []
    for comment in compose.comments:
        stated = STATED.search(comment.text)
        if not stated or not _states_default(comment.text) or stated.group(1) == depth.value:
            continue
        findings.append(
            RULE.at(
                compose.path,
                comment.line,
                comment.column + 1 + stated.start(),
                f"comment says the compose {stated.group(0)} (line "
                f"{comment.line}), but the default depth is {depth.value} "
                f"({_where(depth)})",
                knob="drafter_depth",
                hint=f"make the comment say {depth.value}",
                end_column=comment.column + 1 + stated.end(),
            )
        )
    return findings


def _validated(compose: Compose, service: Service, context: Context) -> list[Finding]:
    depth, method = service.knob("drafter_depth"), service.value("drafter_method")
    if depth is None:
        return []
    found = depth_limit(context.estate.registry, compose, service, method)
    if found is None:
        return []
    limit, claim = found
    if depth.number is None:
        context.not_judged(
            RULE,
            compose.path,
            f"service {service.name}: drafter depth {unreadable(depth)}; not checked "
            f"against n={limit} (claim {claim.id})",
        )
        return []
    if depth.number <= limit:
        return []
    where = topology(compose, service)
    return [
        RULE.at(
            compose.file(depth.path),
            depth.line,
            depth.column,
            f"drafter depth {depth.value}{provenance(depth)} exceeds the deepest "
            f"validated {method} depth{' on ' + where if where else ''}, n={limit} "
            f"(claim {claim.id}, {context.estate.registry.path}:{claim.line}); the "
            "spec-decode tax grows with depth",
            knob="drafter_depth",
            claim=claim.id,
            hint=f"ship n={limit} or less, or validate the deeper width and record it "
            "in the registry",
            end_column=depth.end_column,
        )
    ]


RULE: Rule[RuleOptions] = Rule(
    id="K003",
    name="drafter-depth",
    family="knobs",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
