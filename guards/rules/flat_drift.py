"""D003 flat-drift: flat `# Tensor-parallel:` and `# Requires-min-gpu-count:` lines match the body.

Why: launchers and preflight scripts read ``# Tensor-parallel: 4`` and
``# Requires-min-gpu-count: 4`` instead of the YAML; when they drift from the body, the
launcher reserves the wrong cards and the compose fails - or worse, boots on fewer GPUs than it
was measured on. ``Tensor-parallel`` must equal ``--tensor-parallel-size`` (llama.cpp: the
number of ``-ts`` parts); ``Requires-min-gpu-count`` must equal the GPUs the service needs (TP ×
PP) and the GPUs it reserves when those are listed explicitly.

Bad:
    # Tensor-parallel: 2
    # Requires-min-gpu-count: 2
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--tensor-parallel-size, "4"]

Finds:
    composes/example.yml:1:20: D003 flat line Tensor-parallel: 2 (line 1) disagrees with the body: 4 (--tensor-parallel-size, line 6)
    composes/example.yml:2:27: D003 flat line Requires-min-gpu-count: 2 (line 2) disagrees with the body: 4 (--tensor-parallel-size, line 6)

Good:
    # Tensor-parallel: 4
    # Requires-min-gpu-count: 4
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--tensor-parallel-size, "4"]
"""

from __future__ import annotations

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import SGLANG, VLLM
from ..sources.compose.engines.sglang import data_parallel
from ..sources.compose.header import FlatLine
from ..sources.numbers import to_count
from .base import Context, Rule
from .options import RuleOptions


def check(compose: Compose, context: Context) -> list[Finding] | None:
    header = compose.header
    tp_line, gpus_line = (
        header.flat_value("Tensor-parallel"),
        header.flat_value("Requires-min-gpu-count"),
    )
    if not compose.shipped or (tp_line is None and gpus_line is None):
        return None
    service = compose.shipped[0]
    findings = []
    width, source = _parallel_width(service)
    if tp_line is not None and width is not None and tp_line.value != str(width):
        findings.append(_finding(compose, tp_line, str(width), source))
    needed, why = _gpus_needed(service)
    if gpus_line is not None and needed is not None and gpus_line.value != str(needed):
        findings.append(_finding(compose, gpus_line, str(needed), why))
    return findings


def _finding(compose: Compose, line: FlatLine, actual: str, source: str) -> Finding:
    return RULE.at(
        compose.path,
        line.line,
        line.column,
        f"flat line {line.key}: {line.value} "
        f"(line {line.line}) disagrees with the body: {actual} ({source})",
        hint=f"write `# {line.key}: {actual}`",
        end_column=line.end_column,
    )


def _parallel_width(service: Service) -> tuple[int | None, str]:
    if service.engine in (VLLM, SGLANG):
        knob = service.knob("tensor_parallel_size")
        width = to_count(knob.value) if knob else None
        if service.engine == SGLANG:  # named as written: --tp-size, --tp, ...
            if knob:
                return (width, f"{knob.flag}, line {knob.line}") if width else (None, "")
            return 1, "no --tp-size: SGLang runs TP=1"
        if knob and width:
            return width, f"--tensor-parallel-size, line {knob.line}"
        return 1, "no --tensor-parallel-size: vLLM runs TP=1"
    split = service.knob("tensor_split")
    if split and split.value:
        return len(split.value.split(",")), f"-ts {split.value}, line {split.line}"
    return None, ""


def _gpus_needed(service: Service) -> tuple[int | None, str]:
    gpus = service.knob("gpus")
    reserved = to_count(gpus.value) if gpus else None
    if gpus and reserved is not None:
        return reserved, f"reserved devices, line {gpus.line}"
    width, source = _parallel_width(service)
    if width is None:
        return None, ""
    pp = service.knob("pipeline_parallel_size")
    stages = (to_count(pp.value) if pp else None) or 1
    copies = data_parallel(service.knobs) if service.engine == SGLANG else 1
    if copies is None:
        return None, ""
    return width * stages * copies, (
        source
        + (f" × PP {stages}" if stages > 1 else "")
        + (f" × DP {copies}" if copies > 1 else "")
    )


RULE: Rule[RuleOptions] = Rule(
    id="D003",
    name="flat-drift",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
