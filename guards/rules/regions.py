"""G001 region-current: each generated region holds what its template renders now.

Why: a region (``# >>> guards:NAME ARGS`` … ``# <<< guards:NAME (checksum: HEX)``) is text
that follows the registry and the compose body — a claim's current wording, the profile's
facts. When the claim is retracted or ``--max-model-len`` changes, the region is out of date
until ``guards regen`` rewrites it. A region that cannot be rendered at all (no template, an
unknown claim id, an undefined name) is reported here too.

Bad:
    # >>> guards:profile
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Drafter:   none
    #   Max ctx:   65536
    #   Engine:    vllm/vllm-openai:v0.27.1
    #   Status:    ✅ Production
    # <<< guards:profile (checksum: e21a3544)
    x-guards:
      model: Qwen3.8-27B (AutoRound INT4)
      status: ✅ Production
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "131072"]

Finds:
    composes/example.yml:1:1: G001 region guards:profile is out of date: it renders differently now

Good:
    # >>> guards:profile
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Drafter:   none
    #   Max ctx:   131072
    #   Engine:    vllm/vllm-openai:v0.27.1
    #   Status:    ✅ Production
    # <<< guards:profile (checksum: 0363768d)
    x-guards:
      model: Qwen3.8-27B (AutoRound INT4)
      status: ✅ Production
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "131072"]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from .base import Context, Rule, line_end
from .options import RuleOptions

if TYPE_CHECKING:
    from ..facts.regions import Rendered


def check_current(compose: Compose, context: Context) -> list[Finding] | None:
    if not compose.regions or compose.marker_problems:
        return None
    rendered = context.estate.rendered_regions(compose)
    if not isinstance(rendered, list):
        in_template = rendered.path != compose.path
        return [
            CURRENT.at(
                compose.path,
                rendered.region_line,
                1,
                f"region cannot be rendered: {rendered if in_template else rendered.message}",
                hint="fix the template, the compose's x-guards data or the region's arguments",
                end_column=line_end(compose.lines, rendered.region_line),
            )
        ]
    stale = [
        CURRENT.at(
            compose.path,
            r.region.line,
            1,
            f"region {_label(r)} is out of date: it renders differently now",
            hint="run `guards regen` (`guards regen --diff` shows the change)",
            end_column=line_end(compose.lines, r.region.line),
        )
        for r in rendered
        if r.stale and not r.edited_by_hand
    ]
    return [finding.as_fixable() for finding in stale]  # guards regen renders it again


def check_intact(compose: Compose, context: Context) -> list[Finding] | None:
    if not any(r.checksum for r in compose.regions) or compose.marker_problems:
        return None
    rendered = context.estate.rendered_regions(compose)
    if not isinstance(rendered, list):
        return []  # G001 reports it
    return [
        INTACT.at(
            compose.path,
            r.region.line,
            1,
            f"region {_label(r)} was edited by hand: its text no longer matches the checksum "
            f"{r.region.checksum} its closing marker (line {r.region.end_line}) recorded",
            hint="move the edit into the template or the compose's x-guards data, then run "
            "`guards regen --force`",
            end_column=line_end(compose.lines, r.region.line),
        )
        for r in rendered
        if r.edited_by_hand
    ]


def check_markers(compose: Compose, context: Context) -> list[Finding] | None:
    if not compose.regions and not compose.marker_problems:
        return None
    return [
        MARKERS.at(
            compose.path,
            problem.line,
            1,
            problem.message,
            hint="every `# >>> guards:NAME` needs its own `# <<< guards:NAME` below it; "
            "regions do not nest",
            end_column=line_end(compose.lines, problem.line),
        )
        for problem in compose.marker_problems
    ]


INTACT_DOC = """G002 region-intact: no generated region was edited by hand since it was generated.

Why: the closing marker records a checksum of what ``guards regen`` wrote. An edit inside the
region would be overwritten at the next run — and the operator who made it would not know —
so the edit is reported, and ``guards regen`` refuses the file until it is moved into the
template or the compose's ``x-guards`` data (or ``--force`` discards it).

Bad:
    # >>> guards:profile
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Drafter:   none
    #   Max ctx:   131072
    #   Engine:    vllm/vllm-openai:v0.27.1
    #   Status:    ✅ Production (since May)
    # <<< guards:profile (checksum: 0363768d)
    x-guards:
      model: Qwen3.8-27B (AutoRound INT4)
      status: ✅ Production
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "131072"]

Finds:
    composes/example.yml:1:1: G002 region guards:profile was edited by hand: its text no longer matches the checksum 0363768d its closing marker (line 8) recorded

Good:
    # >>> guards:profile
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    #   Drafter:   none
    #   Max ctx:   131072
    #   Engine:    vllm/vllm-openai:v0.27.1
    #   Status:    ✅ Production
    # <<< guards:profile (checksum: 0363768d)
    x-guards:
      model: Qwen3.8-27B (AutoRound INT4)
      status: ✅ Production
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "131072"]
"""

MARKERS_DOC = """G003 region-markers: region markers pair up: each `>>>` has its `<<<`, and regions do not nest.

Why: the markers are what tells ``guards regen`` (and a reader) which lines are generated. An
opening marker without its closing one, a closing one without an opening one, or a region
opened inside another leaves that unclear, so ``regen`` stops at the file and ``check``
reports the marker.

Bad:
    # >>> guards:profile
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B (AutoRound INT4)
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1

Finds:
    composes/example.yml:1:1: G003 generated region guards:profile is never closed

Good:
    # >>> guards:profile
    # <<< guards:profile
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
"""


def _label(rendered: Rendered) -> str:
    region = rendered.region
    return f"guards:{region.name}" + (f" {region.args}" if region.args else "")


CURRENT: Rule[RuleOptions] = Rule(
    id="G001",
    name="region-current",
    family="regions",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check_current,
    doc=__doc__,
)
INTACT: Rule[RuleOptions] = Rule(
    id="G002",
    name="region-intact",
    family="regions",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check_intact,
    doc=INTACT_DOC,
)
MARKERS: Rule[RuleOptions] = Rule(
    id="G003",
    name="region-markers",
    family="regions",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check_markers,
    doc=MARKERS_DOC,
)

RULES = (CURRENT, INTACT, MARKERS)
