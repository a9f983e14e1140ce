"""C003 unknown-claim: every claim id a compose or note cites exists in the registry.

Why: a citation is a promise that the registry holds the claim with its evidence. A typo or a
claim that was never registered breaks that link silently: a later retraction will not find
this file, and ``guards claims show`` will not list it. Front-matter ``claims:`` and
``retracts:`` ids count as citations.

Bad:
    --- claims.yaml
    claims:
      - id: spec-tax-35387
        title: Speculative decoding pays a steady, depth-scaled tax
        status: active
    --- learnings/qwen3.8-27b.md
    The spec tax scales with drafter depth (claim:spec-tax-35378).

Finds:
    learnings/qwen3.8-27b.md:1:41: C003 cites claim spec-tax-35378, which claims.yaml does not define

Good:
    --- claims.yaml
    claims:
      - id: spec-tax-35387
        title: Speculative decoding pays a steady, depth-scaled tax
        status: active
    --- learnings/qwen3.8-27b.md
    The spec tax scales with drafter depth (claim:spec-tax-35387).
"""

from __future__ import annotations

import difflib

from ..findings import Finding, Severity
from .base import Context, Rule
from .options import RuleOptions


def check(target, context: Context) -> list[Finding] | None:
    registry = context.estate.registry
    if not registry.claims:
        return None  # no registry yet: every citation would be "unknown"
    findings, known, nearest = [], sorted(registry.ids), {}
    for citation in target.citations:
        if registry.get(citation.claim_id) is not None:
            continue
        if citation.claim_id not in nearest:  # once per id: a note may cite one id 20,000 times
            nearest[citation.claim_id] = difflib.get_close_matches(citation.claim_id, known, n=1)
        close = nearest[citation.claim_id]
        hint = (
            f"did you mean claim:{close[0]}?"
            if close
            else f"add the claim to {registry.path} or fix the id"
        )
        findings.append(
            RULE.at(
                target.path,
                citation.line,
                citation.column,
                f"cites claim {citation.claim_id}, which {registry.path} does not define",
                hint=hint,
                claim=citation.claim_id,
                end_column=citation.end_column,
            )
        )
    return findings


RULE: Rule[RuleOptions] = Rule(
    id="C003",
    name="unknown-claim",
    family="claims",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
