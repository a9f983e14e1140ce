"""C004 retraction-incomplete: a withdrawn claim has a date, a reason, a replacement and its wording.

Why: the registry is what every other claim guard reads. A retracted claim without a
retraction date cannot be told apart from an old typo; without a replacement (or, for a
superseded claim, ``superseded_by``) the stale-claim guard can only say "remove this" and the
header's author has nothing to write instead; without ``text`` or ``match`` its stale copies
cannot be found at all.

Bad:
    --- claims.yaml
    claims:
      - id: decode-cliff-1096
        title: Accumulated-context decode cliff
        status: retracted
        text: Decode collapses once accumulated context passes ~21k.

Finds:
    claims.yaml:2:1: C004 claim decode-cliff-1096 is retracted but lacks a retraction date (`retracted:`), a reason, a `replacement`

Good:
    --- claims.yaml
    claims:
      - id: decode-cliff-1096
        title: Accumulated-context decode cliff
        status: retracted
        retracted: 2026-09-08
        reason: A harness artefact (#1218), not the engine.
        text: Decode collapses once accumulated context passes ~21k.
        replacement: A steady spec-decode tax that scales with drafter depth (vllm#35387).
"""

from __future__ import annotations

from ..claims.scan import places
from ..findings import Finding, Severity
from ..sources.registry import Claim
from .base import Context, Rule
from .options import RuleOptions


def check(claim: Claim, context: Context) -> list[Finding] | None:
    if not claim.is_withdrawn:
        return None
    missing = []
    if claim.retracted is None:
        missing.append("a retraction date (`retracted:`)")
    if claim.reason is None:
        missing.append("a reason")
    if claim.replacement is None and not (claim.status == "superseded" and claim.superseded_by):
        missing.append("a `replacement`")
    if not (claim.text or claim.match):
        missing.append("its wording (`text` or `match`), so stale copies cannot be found")
    if not missing:
        return []
    cited = places(context.estate, claim, stale=False)
    where = f"; cited at {cited[0].path}:{cited[0].line}" if cited else ""
    return [
        RULE.at(
            context.estate.registry.path,
            claim.line,
            1,
            f"claim {claim.id} is {claim.status} but lacks {', '.join(missing)}{where}",
            claim=claim.id,
            hint="fill them in with `guards claims retract`, or edit claims.yaml",
        )
    ]


RULE: Rule[RuleOptions] = Rule(
    id="C004",
    name="retraction-incomplete",
    family="claims",
    targets=("claim",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
