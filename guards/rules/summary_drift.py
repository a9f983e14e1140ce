"""D005 summary-drift: the summary line and "shipped default" notes restate the tier the body ships.

Why: the first prose line after the Profile block is what an operator skims when picking a
tier ("single 3090, MTP n=3, 160K ctx, fp8 KV, VISION ON"). It is written once and rarely
revisited, so when the body moves to 128K or switches the drafter off, the line keeps selling
the old tier. The line's context ("160K ctx", "200K default"), KV ("fp8 KV"), drafter depth
("MTP n=3", "no spec-decode") and vision ("VISION ON", "text-only") are compared with the body
as shipped; so is the parenthesis of a comment naming "the shipped default (combination)"
("the shipped default combination (W4A16 + MTP n=4)"). Prose is read like a profile field:
what a clause negates is not a claim, and figures with no ctx/KV/n= word beside them are not
read at all. The lines are one layout of the statement reader
(``guards.facts.said.tier_statements``).

Bad:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    # ---------------------------------------------------------------------------
    # THE SINGLE FAST TIER — one 3090, MTP n=3, 160K ctx, fp8 KV, VISION ON.
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "131072", --kv-cache-dtype, fp8_e4m3,
                  --language-model-only,
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":2}']

Finds:
    composes/example.yml:4:40: D005 summary line says n=3 (line 4), but the default drafter depth is 2 (command line 10)
    composes/example.yml:4:45: D005 summary line says 160K ctx (line 4), but --max-model-len is 131072 (command line 8)
    composes/example.yml:4:63: D005 summary line says VISION ON (line 4), but --language-model-only turns image input off (command line 9)

Good:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    # ---------------------------------------------------------------------------
    # THE SINGLE FAST TIER — one 3090, MTP n=2, 128K ctx, fp8 KV, text-only.
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "131072", --kv-cache-dtype, fp8_e4m3,
                  --language-model-only,
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":2}']
"""

from __future__ import annotations

from ..facts.said import Statement, tier_lines, tier_statements
from ..facts.statements import contradiction
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.compose.engines import Knob
from .base import Context, Rule
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding] | None:
    if not compose.shipped or not tier_lines(compose):
        return None
    service = compose.shipped[0]
    findings = []
    for statement in tier_statements(compose):
        against = contradiction(statement.knob, statement.value, service)
        if against is not None:
            findings.append(_at(statement, *against))
    return findings


def _at(statement: Statement, actual: str, knob: Knob | None) -> Finding:
    where = f" ({knob.source} line {knob.line})" if knob is not None else ""
    return RULE.at(
        statement.path,
        statement.line,
        statement.column,
        f"{statement.key} says {statement.said} (line {statement.line}), but {actual}{where}",
        knob=knob.name if knob else None,
        hint="restate the tier the body ships, or change the body to match",
        end_column=statement.end_column,
    )


RULE: Rule[RuleOptions] = Rule(
    id="D005",
    name="summary-drift",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
