"""C002 registry-drift: notes and headers agree with the registry on which claims are withdrawn.

Why: a retraction written in a note but not in ``claims.yaml`` leaves every guard that reads
the registry defending the dead claim; a note or header that cites a withdrawn claim as current
sends readers to it. Both sides are named so either can be fixed: a file that retracts a claim
(front matter ``retracts:`` or a dated Retracted callout citing it) the registry lists as
active or disputed, and a file that cites a retracted or superseded claim outside any
retraction context.

Bad:
    --- claims.yaml
    claims:
      - id: decode-cliff-1096
        title: Accumulated-context decode cliff
        status: active
    --- learnings/qwen3.8-27b.md
    ## Retracted 2026-09-08: the decode cliff (claim:decode-cliff-1096)

    It was our harness (#1218), not the engine.

Finds:
    learnings/qwen3.8-27b.md:1:44: C002 retracts claim decode-cliff-1096, but claims.yaml:2 lists it as active

Good:
    --- claims.yaml
    claims:
      - id: decode-cliff-1096
        title: Accumulated-context decode cliff
        status: retracted
        retracted: 2026-09-08
        replacement: A steady spec-decode tax that scales with drafter depth.
    --- learnings/qwen3.8-27b.md
    ## Retracted 2026-09-08: the decode cliff (claim:decode-cliff-1096)

    It was our harness (#1218), not the engine.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.markers import Citation
from ..sources.notes.notes import Note
from ..sources.registry import Claim
from .base import Context, Rule
from .options import RuleOptions


def check(target: Compose | Note, context: Context) -> list[Finding] | None:
    registry = context.estate.registry
    if not registry.claims:
        return None
    findings = []
    for citation in target.citations:
        claim = registry.get(citation.claim_id)
        if claim is None:
            continue
        if citation.claim_id in target.retracted_ids and not claim.is_withdrawn:
            findings.append(_unrecorded(target, citation, claim, registry.path))
        elif claim.is_withdrawn and not citation.in_retraction:
            # guards fix marks the citation as withdrawn
            findings.append(_still_cited(target, citation, claim, registry.path).as_fixable())
    return list(dict.fromkeys(findings))  # an id listed twice in front matter is one finding


def _unrecorded(target: Compose | Note, citation: Citation, claim: Claim, path: str) -> Finding:
    return RULE.at(
        target.path,
        citation.line,
        citation.column,
        f"retracts claim {claim.id}, but {path}:{claim.line} lists it as {claim.status}",
        claim=claim.id,
        hint=f"record the retraction: guards claims retract {claim.id} --date YYYY-MM-DD "
        "--reason TEXT --replacement-file FILE",
        end_column=citation.end_column,
    )


def _still_cited(target: Compose | Note, citation: Citation, claim: Claim, path: str) -> Finding:
    successor = f"cite claim:{claim.superseded_by} instead, or " if claim.superseded_by else ""
    if citation.front_matter:
        hint = f"move {claim.id} from `claims:` to `retracts:` in the front matter"
        if claim.superseded_by:
            hint += f", and list {claim.superseded_by} under `claims:`"
    else:
        hint = f"{successor}move the mention into a dated Retracted callout"
    when = f" on {claim.retracted}" if claim.retracted else ""
    return RULE.at(
        target.path,
        citation.line,
        citation.column,
        f"cites claim {claim.id} as current, but {path}:{claim.line} lists it as "
        f"{claim.status}{when}",
        claim=claim.id,
        hint=hint,
        end_column=citation.end_column,
    )


RULE: Rule[RuleOptions] = Rule(
    id="C002",
    name="registry-drift",
    family="claims",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
