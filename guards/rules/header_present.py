"""S001 header-present: every compose opens with a header holding a Profile block.

Why: operators do not read the docs folder; they read the comment block at the top of the
compose they launch. A compose without a ``# Profile (at-a-glance):`` block tells them nothing,
and every other header guard has nothing to check.

Bad:
    # vLLM for qwen3.8-27b
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1

Finds:
    composes/example.yml:1:1: S001 header has no `# Profile (at-a-glance):` block

Good:
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Status:    ✅ Production
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from .base import Context, Rule
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding]:
    header = compose.header
    if not header.present:
        return [
            RULE.at(
                compose.path,
                1,
                1,
                "no header: the file does not open with a comment block",
                hint="start the file with `# Profile (at-a-glance):` and its fields",
            )
        ]
    if header.profile_line is None:
        return [
            RULE.at(
                compose.path,
                header.line,
                1,
                "header has no `# Profile (at-a-glance):` block",
                hint="add the profile block with Model, Topology, Drafter, KV and Status fields",
            )
        ]
    return []


RULE: Rule[RuleOptions] = Rule(
    id="S001",
    name="header-present",
    family="schema",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
