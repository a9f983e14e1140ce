"""D005 summary-drift: the summary line and "shipped default" notes restate the tier the body ships.

Why: the first prose line after the Profile block is what an operator skims when picking a
tier ("single 3090, MTP n=3, 160K ctx, fp8 KV, VISION ON"). It is written once and rarely
revisited, so when the body moves to 128K or switches the drafter off, the line keeps selling
the old tier. The line's context ("160K ctx", "200K default"), KV ("fp8 KV"), drafter depth
("MTP n=3", "no spec-decode") and vision ("VISION ON", "text-only") are compared with the body
as shipped; so is the parenthesis of a comment naming "the shipped default (combination)"
("the shipped default combination (W4A16 + MTP n=4)"). Prose is read like a profile field:
what a clause negates is not a claim, and figures with no ctx/KV/n= word beside them are not
read at all.

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

import re

from ..facts.statements import Disagreement, Stated, disagreements
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.compose.header import HeaderLine
from .base import Context, Rule
from .options import RuleOptions

SHIPPED = re.compile(
    r"\bshipped\s+default(?:\s+combination|\s+tier)?\s*(?:is\s*|:\s*)?"
    r"\((?P<items>[^()\n]*+)\)",
    re.IGNORECASE,
)


def check(compose: Compose, context: Context) -> list[Finding] | None:
    stated = tier_statements(compose)
    if not stated or not compose.shipped:
        return None
    service = compose.shipped[0]
    return [_at(compose, line, found) for line in stated for found in disagreements(line, service)]


def tier_statements(compose: Compose) -> list[Stated]:
    """The summary line, and the parenthesis of every "shipped default (…)" comment."""
    found = []
    summary = summary_line(compose)
    if summary is not None:
        found.append(Stated("summary line", summary.number, summary.text, summary.column))
    for comment in compose.comments:
        for match in SHIPPED.finditer(comment.text):
            column = comment.column + 1 + match.start("items")
            found.append(Stated("comment", comment.line, match.group("items"), column))
    return found


def summary_line(compose: Compose) -> HeaderLine | None:
    """The first prose line after the Profile block (not a generated region, not a
    retraction callout)."""
    header = compose.header
    if header.profile_line is None:
        return None
    end = max((f.end_line for f in header.fields), default=header.profile_line)
    for section in header.sections:
        if section.line > end and not compose.is_correction(section.line) and section.lines:
            return section.lines[0]
    return None


def _at(compose: Compose, line: Stated, found: Disagreement) -> Finding:
    knob = found.knob
    where = f" ({knob.source} line {knob.line})" if knob is not None else ""
    return RULE.at(
        compose.path,
        line.number,
        line.column + found.said.start(),
        f"{line.label} says {found.said.group(0).strip()} (line {line.number}), but "
        f"{found.actual}{where}",
        knob=knob.name if knob else None,
        hint="restate the tier the body ships, or change the body to match",
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
