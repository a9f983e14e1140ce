"""C001 stale-claim: no compose or note still asserts a retracted or superseded claim.

Why: the founding incident. A header block claiming an "accumulated-context decode cliff" was
retracted on 2026-09-08 in learnings/ only, and survived verbatim in 20 composes, where
operators read it and turned their drafter off. The registry keeps each withdrawn claim's
wording (``text``) and distinctive ``match`` phrases; this guard finds them in compose
comments and notes however they were re-wrapped, lightly edited, truncated or split. A mention
inside a retraction context (a heading, callout or paragraph opening with Retracted /
Superseded / Corrected plus a date or claim id), struck-through text or a generated region is
a correct mention and passes. Each copy is reported once, at its first line.

Bad:
    --- claims.yaml
    claims:
      - id: decode-cliff-1096
        title: Accumulated-context decode cliff
        status: retracted
        retracted: 2026-09-08
        reason: A harness artefact (#1218), not the engine.
        text: Decode collapses once accumulated context passes ~21k on the spec tiers.
        match: ["accumulated-context decode cliff"]
        replacement: A steady spec-decode tax that scales with drafter depth (vllm#35387).
    --- composes/dual-max.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    # ---------------------------------------------------------------------------
    # ⚠️ ACCUMULATED-CONTEXT DECODE CLIFF: decode collapses once
    #   accumulated context passes ~21K on the spec tiers.
    services: {}

Finds:
    composes/dual-max.yml:4:1: C001 repeats withdrawn claim decode-cliff-1096 (lines 4-5), retracted 2026-09-08: A harness artefact (#1218), not the engine.

Good:
    --- claims.yaml
    claims:
      - id: decode-cliff-1096
        title: Accumulated-context decode cliff
        status: retracted
        retracted: 2026-09-08
        reason: A harness artefact (#1218), not the engine.
        text: Decode collapses once accumulated context passes ~21k on the spec tiers.
        match: ["accumulated-context decode cliff"]
        replacement: A steady spec-decode tax that scales with drafter depth (vllm#35387).
    --- composes/dual-max.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    # ---------------------------------------------------------------------------
    # ⚠️ RETRACTED 2026-09-08 (claim:decode-cliff-1096). This header previously said
    #   "accumulated-context decode cliff: decode collapses past ~21K". It was our
    #   harness (#1218). Decode gets slower as context grows: attention cost, expected.
    services: {}
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.notes.notes import Note
from .base import Context, Rule, summary
from .options import RuleOptions


def check(target: Compose | Note, context: Context) -> list[Finding] | None:
    withdrawn = [
        c for c in context.estate.registry.claims if c.is_withdrawn and (c.wordings or c.match)
    ]
    if not withdrawn:
        return None
    scan = context.estate.claim_scan
    findings = []
    for claim in withdrawn:
        copies = dict.fromkeys(scan.stale_copies(claim, target))
        if not copies:
            continue  # most targets repeat no claim: no message to prepare
        when = f"{claim.status} {claim.retracted}" if claim.retracted else claim.status
        why = f": {summary(claim.reason, 80)}" if claim.reason else ""
        hint = (
            f"say instead: {' '.join(claim.replacement.split())}"
            if claim.replacement
            else f"remove it, or quote it inside a `Retracted {claim.retracted or 'YYYY-MM-DD'} "
            f"(claim:{claim.id})` callout"
        )
        for copy in copies:
            lines = (
                f"lines {copy.line}-{copy.end_line}"
                if copy.end_line > copy.line
                else f"line {copy.line}"
            )
            findings.append(
                RULE.at(
                    target.path,
                    copy.line,
                    1,
                    f"repeats withdrawn claim {claim.id} ({lines}), {when}{why}",
                    hint=hint,
                    claim=claim.id,
                    end_line=copy.end_line,
                    end_column=len(target.lines[copy.end_line - 1]) + 1,
                )
            )
    return [finding.as_fixable() for finding in findings]  # guards fix: a claim region


RULE: Rule[RuleOptions] = Rule(
    id="C001",
    name="stale-claim",
    family="claims",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
