"""S001 header-present: every compose opens with a header holding the estate's header block.

Why: operators do not read the docs folder; they read the comment block at the top of the
compose they launch. A compose without the block the estate's header convention declares
(``[header]`` in the settings; the ``profile`` preset: ``# Profile (at-a-glance):``) tells them
nothing, and every other header guard has nothing to check. With no convention declared, this
rule and the other header rules (S002-S005) are off: estates keep their headers in many forms
(free prose, a copyright line, a banner), and one file is no ground to guess which. The
examples use the ``profile`` preset.

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
from .base import Context, Rule, line_end
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding] | None:
    header, convention = compose.header, compose.header.convention
    if convention is None:
        return None  # the estate declares no header block
    marker = f"`# {convention.shown}`"
    if not header.present:
        return [
            RULE.at(
                compose.path,
                1,
                1,
                "no header: the file does not open with a comment block",
                hint=f"start the file with {marker} and its fields",
                end_column=line_end(compose.lines, 1),
            )
        ]
    if header.profile_line is None:
        return [
            RULE.at(
                compose.path,
                header.line,
                1,
                f"header has no {marker} block",
                hint=f"add the {convention.block} block{_with(convention.required)}",
                end_column=line_end(compose.lines, header.line),
            )
        ]
    return []


def _with(fields: tuple[str, ...]) -> str:
    if not fields:
        return " and its fields"
    listed = ", ".join(fields[:-1]) + " and " if len(fields) > 1 else ""
    return f" with {listed}{fields[-1]} field{'s' if len(fields) > 1 else ''}"


RULE: Rule[RuleOptions] = Rule(
    id="S001",
    name="header-present",
    family="schema",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
