"""A vLLM ``/metrics`` scrape -> :class:`Scrape`: its samples by metric and labels, each with its
line, checked as a server writes them (numbers in plausible ranges, declared types, histograms
whole); anything else is a located error. Read with ``prometheus_client``'s own parser.

The metric names and types are vLLM's own, as it documents and registers them: the "v1
Metrics" list of https://docs.vllm.ai/en/latest/design/metrics.html (docs/design/metrics.md),
the Production Metrics page https://docs.vllm.ai/en/stable/usage/metrics/, and their
registration in vllm/v1/metrics/loggers.py (``PrometheusStatLogger``: every metric labelled
``model_name`` and ``engine``; ``vllm:gpu_cache_usage_perc``, deprecated in 0.9, is the older
name of ``vllm:kv_cache_usage_perc``) and vllm/v1/spec_decode/metrics.py (``SpecDecodingProm``:
acceptance rate = accepted / draft tokens, mean acceptance length = 1 + accepted / drafts).
prometheus_client exposes a counter ``X`` as ``X_total`` (and ``X_created``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from prometheus_client.parser import text_string_to_metric_families

from ..errors import GuardsError, located
from .numbers import LIMIT, to_count

GENERATED = "vllm:generation_tokens"  # counter: tokens generated, running requests included
PREEMPTIONS = "vllm:num_preemptions"  # counter
DRAFTS = "vllm:spec_decode_num_drafts"  # counter
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"  # counter
ACCEPTED = "vllm:spec_decode_num_accepted_tokens"  # counter
REQUEST_TOKENS = "vllm:request_generation_tokens"  # histogram over finished requests
DECODE_TIME = "vllm:request_decode_time_seconds"  # histogram: first to last token, in-engine
KV_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")  # gauges, 1 = 100%
RUNNING = "vllm:num_requests_running"  # gauge
WAITING = "vllm:num_requests_waiting"  # gauge
CACHE_INFO = "vllm:cache_config_info"  # gauge set to 1; the cache config in its labels
TYPES = {
    **dict.fromkeys((GENERATED, PREEMPTIONS, DRAFTS, DRAFT_TOKENS, ACCEPTED), "counter"),
    **dict.fromkeys((REQUEST_TOKENS, DECODE_TIME), "histogram"),
    **dict.fromkeys((*KV_USAGE, RUNNING, WAITING, CACHE_INFO), "gauge"),
}
FULL = 0.95  # KV cache usage at which the pool counts as full
MAX_SHOWN = 2_000  # characters of a printed line (a model name may be 10,000)
PARSE_ERRORS = (ValueError, IndexError, KeyError, TypeError, OverflowError)
# Characters of a scrape line. vLLM's longest (cache_config_info, lora_requests_info) are a few
# hundred; past this, the parser's quadratic scans of one line cost more than a whole page.
MAX_LINE = 10_000


class Sample(NamedTuple):
    name: str
    labels: tuple[tuple[str, str], ...]
    value: float
    line: int | None = None  # its line in the scrape

    @property
    def model(self) -> str:
        return dict(self.labels).get("model_name", "")


@dataclass
class Scrape:
    """One scrape's samples, indexed once by metric name and model, so reading a figure for
    each of thousands of models (or checking thousands of series) stays linear."""

    shown: str
    lines: list[str]
    samples: list[Sample]
    types: dict[str, str]  # sample name -> the type its family declares
    by_model: dict[tuple[str, str], list[Sample]] = field(init=False, repr=False)
    models: list[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_model = {}
        for sample in self.samples:
            self.by_model.setdefault((sample.name, sample.model), []).append(sample)
        served = {model for name, model in self.by_model if name.startswith("vllm:")}
        self.models = sorted(served - {""}) or [""]

    def values(self, name: str, model: str) -> list[Sample]:
        return self.by_model.get((name, model), [])

    def total(self, name: str, model: str) -> float | None:
        found = self.values(name, model)
        return sum(s.value for s in found) if found else None


def read(path: Path, shown: str) -> Scrape:
    """Read and check one scrape; any problem raises GuardsError naming the file and line."""
    from ..sources.yamlsrc import read_text

    return parse(read_text(path, shown), shown)


def parse(text: str, shown: str) -> Scrape:
    """The scrape ``text``, known as ``shown``: the errors of the checks below, raised without
    a file, are placed here."""
    lines = text.split("\n")
    with located(shown):
        scrape = Scrape(shown, lines, *_samples_of(text, lines))
        _check(scrape)
    return scrape


def _samples_of(text: str, lines: list[str]) -> tuple[list[Sample], dict[str, str]]:
    _check_text(text, lines)
    try:
        samples, types = _samples(text, lines)
    except PARSE_ERRORS as exc:
        line, reason = _bad_line(lines, exc)
        raise GuardsError(f"not Prometheus text: {reason}", None, line) from None
    if not any(s.name.startswith("vllm:") for s in samples):
        raise GuardsError("no vllm: metric in it: not a vLLM server's /metrics")
    return samples, types


def _check_text(text: str, lines: list[str]) -> None:
    """What is plainly not a scrape, before the parser reads it. A line longer than
    ``MAX_LINE`` is refused: the parser's time grows with the square of a line's length."""
    if not text.strip():
        raise GuardsError("empty: no metrics in it (a scrape is what /metrics answers)")
    first = next(i for i, line in enumerate(lines) if line.strip())
    head = lines[first].lstrip()
    if head[:1] == "<":
        raise GuardsError(
            "an HTML or XML page, not Prometheus text (scrape the server's /metrics)",
            None,
            first + 1,
        )
    if head[:1] in "{[":
        raise GuardsError(
            "JSON, not Prometheus text (scrape the server's /metrics)", None, first + 1
        )
    if not text.endswith("\n"):
        raise GuardsError(
            "the last line has no line break: the scrape looks truncated", None, len(lines)
        )
    long = next((n for n, line in enumerate(lines, 1) if len(line) > MAX_LINE), None)
    if long is not None:
        raise GuardsError(
            f"a line of {len(lines[long - 1]):,} characters: longer than a /metrics line "
            f"({MAX_LINE:,} at most)",
            None,
            long,
        )


def _samples(text: str, lines: list[str]) -> tuple[list[Sample], dict[str, str]]:
    """Every sample with its line, and the type each sample name's family declares. The
    parser gives one sample per line that is neither blank nor a comment, in order."""
    found: list[tuple[str, dict[str, str], float | int]] = []
    types: dict[str, str] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found.append((s.name, s.labels, s.value))
            types.setdefault(s.name, family.type)
    numbers = [n for n, line in enumerate(lines, 1) if line.strip()[:1] not in ("", "#")]
    at: list[int | None] = list(numbers) if len(numbers) == len(found) else [None] * len(found)
    samples = [
        Sample(name, tuple(sorted(labels.items())), _float(value), line)
        for (name, labels, value), line in zip(found, at, strict=True)
    ]
    return samples, types


def _float(value: float | int) -> float:
    """The parser reads ``1`` as an int, of any length: one past a float's range is infinite."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _bad_line(lines: list[str], exc: Exception) -> tuple[int | None, str]:
    """The first line the parser refuses on its own, and why (the parser does not say)."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            list(text_string_to_metric_families(line + "\n"))
        except PARSE_ERRORS as alone:
            return number, _reason(alone, line)
    return None, _reason(exc, "")


def _reason(exc: Exception, line: str) -> str:
    text = str(exc)
    head, brace, rest = line.partition("}")
    if isinstance(exc, OverflowError):  # a timestamp past a float's range
        return "a number in it is too large to read"
    if "{" in head and not brace:
        return "its labels are malformed (an unclosed `{` or quote)"
    if len((rest if brace else line).split()) > (2 if brace else 3):
        return "it is neither a sample (`name{labels} value`) nor a `#` comment"
    if text.startswith("could not convert string to float: "):
        return f"the value {text.split(': ', 1)[1]} is not a number"
    if text.startswith(("Invalid labels", "missing close quote", "unexpected text")):
        return "its labels are malformed (an unclosed `{` or quote)"
    if text.startswith("invalid metric name"):
        return "it is neither a sample (`name{labels} value`) nor a `#` comment"
    return f"the parser refuses it ({text or type(exc).__name__})"


def _check(scrape: Scrape) -> None:
    """The metrics guards reads have vLLM's types and plausible values, and every histogram
    series has both its ``_sum`` and its ``_count``."""
    for name, kind in TYPES.items():
        names = [name + "_total", name + "_sum", name + "_count", name + "_bucket", name]
        declared = {scrape.types[n] for n in names if n in scrape.types} - {"unknown", "untyped"}
        if declared and declared != {kind}:
            raise GuardsError(
                f"{name} is declared {'/'.join(sorted(declared))}; vLLM exports it as a {kind}",
                None,
                _type_line(scrape, names),
            )
    for sample in scrape.samples:
        problem = _implausible(sample, scrape)
        if problem:
            raise GuardsError(
                f"{sample.name} is {_written(scrape, sample)}: {problem}",
                None,
                sample.line,
            )
    _check_cache_info(scrape)
    _check_histograms(scrape)


def _implausible(sample: Sample, scrape: Scrape) -> str | None:
    """Why a sample's value cannot be what vLLM reports, or None. Only the metrics guards
    reads are bounded (a count below ``LIMIT``, a fraction for KV usage); any other vllm:
    counter may only not be negative. Python's float reads ``١٦`` as 16; Prometheus does not."""
    monotonic = sample.name.endswith(("_total", "_count", "_bucket"))
    if monotonic and sample.name.startswith("vllm:") and sample.value < 0:
        return "a counter is never negative"
    read = sample.name in TYPES or sample.name.rpartition("_")[0] in TYPES
    value = sample.value
    if read and not (math.isfinite(value) and 0 <= value < LIMIT):
        return "out of range for a server's figure (finite, from 0 to 10^15)"
    if sample.name in KV_USAGE and value > 1:
        return "KV cache usage is a fraction (1 means 100%)"
    line = scrape.lines[sample.line - 1] if sample.line is not None else ""
    if not line.isascii() and not _value_text(scrape, sample).isascii():
        return "not a number (Prometheus writes values in ASCII digits)"
    return None


def _value_text(scrape: Scrape, sample: Sample) -> str:
    """The value as the scrape writes it (after the labels, before any timestamp)."""
    line = scrape.lines[sample.line - 1] if sample.line is not None else ""
    words = (line.rpartition("}")[2] if "{" in line else line.strip().partition(" ")[2]).split()
    return words[0] if words else f"{sample.value:g}"


def _written(scrape: Scrape, sample: Sample) -> str:
    """A value as a message shows it: ``%g`` when finite and ASCII, else as written, cut."""
    raw = _value_text(scrape, sample)
    return f"{sample.value:g}" if math.isfinite(sample.value) and raw.isascii() else _cut(raw)


def _cut(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:20]}… ({len(text):,} characters)"


def _check_cache_info(scrape: Scrape) -> None:
    """The pool's labels, when given, are whole numbers below ``LIMIT`` (``None`` while the
    engine has not sized its pool)."""
    for sample in scrape.samples:
        if sample.name != CACHE_INFO:
            continue
        labels = dict(sample.labels)
        for key in ("num_gpu_blocks", "block_size"):
            value = labels.get(key, "None")
            if value not in ("None", "") and to_count(value, int(LIMIT) - 1) is None:
                raise GuardsError(
                    f'{CACHE_INFO} {key}="{_cut(value)}" is not a whole number below 10^15',
                    None,
                    sample.line,
                )


def _type_line(scrape: Scrape, names: list[str]) -> int | None:
    for number, line in enumerate(scrape.lines, 1):
        parts = line.split()
        if parts[:2] == ["#", "TYPE"] and len(parts) > 2 and parts[2] in names:
            return number
    return None


def _check_histograms(scrape: Scrape) -> None:
    """Every series of a histogram (its labels but ``le``) has a ``_sum`` and a ``_count``."""
    series: dict[str, dict[tuple[tuple[str, str], ...], Sample]] = {}
    given: dict[tuple[str, tuple[tuple[str, str], ...]], Sample] = {}
    for sample in scrape.samples:
        given.setdefault((sample.name, sample.labels), sample)
        base, _, end = sample.name.rpartition("_")
        if end in ("bucket", "sum", "count") and scrape.types.get(sample.name) == "histogram":
            labels = tuple((k, v) for k, v in sample.labels if k != "le")
            series.setdefault(base, {}).setdefault(labels, sample)
    for base, found in sorted(series.items()):
        for labels, first in found.items():
            ends = {part: given.get((base + part, labels)) for part in ("_sum", "_count")}
            for part, end_sample in ends.items():
                if end_sample is None:
                    near = ends["_sum"] or ends["_count"] or first  # where it belongs
                    raise GuardsError(
                        f"histogram {base}{braces(labels)} has no {part}: the scrape is incomplete",
                        None,
                        near.line,
                    )


def braces(labels: tuple[tuple[str, str], ...]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}" if labels else ""
