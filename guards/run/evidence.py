"""Evidence from the engine: a vLLM ``/metrics`` scrape -> the figures claims are made of.

A scrape is Prometheus text, read with ``prometheus_client``'s parser. One scrape gives totals
since the server started; two, taken before and after a run, give what happened in between
(counters and histogram sums and counts as deltas, gauges as the second scrape reads them).
Figures are per served model (the ``model_name`` label), summed over engine indexes (KV cache
usage: the fullest engine's).

The metric names and types are vLLM's own, as it documents and registers them: the "v1
Metrics" list of https://docs.vllm.ai/en/latest/design/metrics.html (docs/design/metrics.md),
the Production Metrics page https://docs.vllm.ai/en/stable/usage/metrics/, and their
registration in vllm/v1/metrics/loggers.py (``PrometheusStatLogger``: every metric labelled
``model_name`` and ``engine``; ``vllm:gpu_cache_usage_perc``, deprecated in 0.9, is the older
name of ``vllm:kv_cache_usage_perc``) and vllm/v1/spec_decode/metrics.py (``SpecDecodingProm``:
acceptance rate = accepted / draft tokens, mean acceptance length = 1 + accepted / drafts).
prometheus_client exposes a counter ``X`` as ``X_total`` (and ``X_created``). None of these
carries the engine's version: it comes from the compose's image or the command line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client.parser import text_string_to_metric_families

from ..errors import GuardsError, printable
from ..sources.numbers import LIMIT, to_count

if TYPE_CHECKING:
    from ..facts.capacity import Capacity
    from ..rules.options import RuleOptions
    from ..sources.compose.compose import Compose, Service
    from .estate import Estate

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
K002 = "K002"  # the rule whose options hold the estate's memory figures and sequence length
FULL = 0.95  # KV cache usage at which the pool counts as full
MAX_SHOWN = 2_000  # characters of a printed line (a model name may be 10,000)
PARSE_ERRORS = (ValueError, IndexError, KeyError, TypeError, OverflowError)
# Characters of a scrape line. vLLM's longest (cache_config_info, lora_requests_info) are a few
# hundred; past this, the parser's quadratic scans of one line cost more than a whole page.
MAX_LINE = 10_000


@dataclass(frozen=True)
class Sample:
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
    lines = text.split("\n")
    _check_text(text, lines, shown)
    try:
        samples, types = _samples(text, lines)
    except PARSE_ERRORS as exc:
        line, reason = _bad_line(lines, exc)
        raise GuardsError(f"not Prometheus text: {reason}", shown, line) from None
    scrape = Scrape(shown, lines, samples, types)
    if not any(s.name.startswith("vllm:") for s in samples):
        raise GuardsError("no vllm: metric in it: not a vLLM server's /metrics", shown)
    _check(scrape)
    return scrape


def _check_text(text: str, lines: list[str], shown: str) -> None:
    """What is plainly not a scrape, before the parser reads it. A line longer than
    ``MAX_LINE`` is refused: the parser's time grows with the square of a line's length."""
    if not text.strip():
        raise GuardsError("empty: no metrics in it (a scrape is what /metrics answers)", shown)
    first = next(i for i, line in enumerate(lines) if line.strip())
    head = lines[first].lstrip()
    if head[:1] == "<":
        raise GuardsError(
            "an HTML or XML page, not Prometheus text (scrape the server's /metrics)",
            shown,
            first + 1,
        )
    if head[:1] in "{[":
        raise GuardsError(
            "JSON, not Prometheus text (scrape the server's /metrics)", shown, first + 1
        )
    if not text.endswith("\n"):
        raise GuardsError(
            "the last line has no line break: the scrape looks truncated", shown, len(lines)
        )
    long = next((n for n, line in enumerate(lines, 1) if len(line) > MAX_LINE), None)
    if long is not None:
        raise GuardsError(
            f"a line of {len(lines[long - 1]):,} characters: longer than a /metrics line "
            f"({MAX_LINE:,} at most)",
            shown,
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
                scrape.shown,
                _type_line(scrape, names),
            )
    for sample in scrape.samples:
        problem = _implausible(sample, scrape)
        if problem:
            raise GuardsError(
                f"{sample.name} is {_written(scrape, sample)}: {problem}",
                scrape.shown,
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
                    scrape.shown,
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
                        f"histogram {base}{_braces(labels)} has no {part}: the scrape is "
                        "incomplete",
                        scrape.shown,
                        near.line,
                    )


def _braces(labels: tuple[tuple[str, str], ...]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}" if labels else ""


# -- figures ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """What one scrape (since start) or a pair (in between) says about one served model."""

    model: str
    since_start: bool
    request_tokens: float | None = None  # generated by the requests that finished
    decode_seconds: float | None = None  # their decode time, in-engine
    finished: float | None = None  # requests that finished
    generated: float | None = None  # all generated tokens
    preemptions: float | None = None
    kv_usage: float | None = None  # 0-1, from the (second) scrape
    kv_metric: str | None = None
    running: float | None = None
    waiting: float | None = None
    drafts: float | None = None
    draft_tokens: float | None = None
    accepted: float | None = None
    pool: tuple[int, int] | None = None  # (blocks, tokens per block) from vllm:cache_config_info

    @property
    def decode_tok_s(self) -> float | None:
        if self.request_tokens is None or not self.decode_seconds:
            return None
        return self.request_tokens / self.decode_seconds

    @property
    def acceptance(self) -> float | None:
        if self.accepted is None or not self.draft_tokens:
            return None
        return self.accepted / self.draft_tokens

    @property
    def accepted_length(self) -> float | None:
        if self.accepted is None or not self.drafts:
            return None
        return 1 + self.accepted / self.drafts

    @property
    def pool_full(self) -> bool:
        return (self.kv_usage or 0) >= FULL and (self.waiting or 0) > 0

    def numbers(self) -> dict[str, float]:
        """The figures an evidence entry records: counts whole, rates rounded as printed."""
        pool = self.pool[0] * self.pool[1] if self.pool else None
        values = (
            ("decode_tok_s", self.decode_tok_s, 1),
            ("requests_finished", self.finished, 0),
            ("generated_tokens", self.generated, 0),
            ("preemptions", self.preemptions, 0),
            ("kv_cache_usage_pct", _pct(self.kv_usage), 1),
            ("requests_running", self.running, 0),
            ("requests_waiting", self.waiting, 0),
            ("spec_acceptance_pct", _pct(self.acceptance), 1),
            ("spec_mean_accepted_length", self.accepted_length, 2),
            ("kv_pool_tokens", pool, 0),
        )
        return {
            name: round(value, digits) if digits else round(value)
            for name, value, digits in values
            if value is not None and math.isfinite(value)
        }


def _pct(value: float | None) -> float | None:
    return None if value is None else value * 100


def figures(after: Scrape, before: Scrape | None = None, model: str | None = None) -> list[Figures]:
    """The figures for each model the scrape serves (or the one asked for)."""
    if before is not None:
        _same_server(before, after)
    models = after.models
    if model is not None:
        if model not in models:
            raise GuardsError(
                f"no model {model!r} in the scrape (it serves {_names(models)})", after.shown
            )
        models = [model]
    return [_figures(after, before, name) for name in models]


def _names(models: Iterable[str]) -> str:
    return ", ".join(m or "(no model_name label)" for m in models)


def _figures(after: Scrape, before: Scrape | None, model: str) -> Figures:
    def delta(name: str) -> float | None:
        now = after.total(name, model)
        if now is None or before is None:
            return now
        return now - (before.total(name, model) or 0.0)

    kv_metric = next((name for name in KV_USAGE if after.values(name, model)), None)
    kv = after.values(kv_metric, model) if kv_metric else []
    return Figures(
        model=model,
        since_start=before is None,
        request_tokens=delta(REQUEST_TOKENS + "_sum"),
        decode_seconds=delta(DECODE_TIME + "_sum"),
        finished=delta(DECODE_TIME + "_count"),
        generated=delta(GENERATED + "_total"),
        preemptions=delta(PREEMPTIONS + "_total"),
        kv_usage=max(s.value for s in kv) if kv else None,
        kv_metric=kv_metric,
        running=after.total(RUNNING, model),
        waiting=after.total(WAITING, model),
        drafts=delta(DRAFTS + "_total"),
        draft_tokens=delta(DRAFT_TOKENS + "_total"),
        accepted=delta(ACCEPTED + "_total"),
        pool=_pool(after) if len(after.models) == 1 else None,  # its labels name no model
    )


def _pool(scrape: Scrape) -> tuple[int, int] | None:
    """(blocks, tokens per block) from the cache config; its labels were checked on reading."""
    for sample in scrape.samples:
        if sample.name == CACHE_INFO:
            labels = dict(sample.labels)
            blocks = to_count(labels.get("num_gpu_blocks"))
            size = to_count(labels.get("block_size"))
            if blocks is not None and size is not None:
                return blocks, size
    return None


def _same_server(before: Scrape, after: Scrape) -> None:
    """Counters only grow while a server runs: one that went down, or a creation time that
    changed, means it restarted between the scrapes and the deltas mean nothing."""
    earlier = {(s.name, s.labels): s.value for s in before.samples if s.name.startswith("vllm:")}
    for sample in after.samples:
        old = earlier.get((sample.name, sample.labels))
        if old is None or not (math.isfinite(old) and math.isfinite(sample.value)):
            continue  # a value the figures do not read (those were bounded) compares to nothing
        created = sample.name.endswith("_created") and sample.value != old
        if created or (_monotonic(after, sample.name) and sample.value < old):
            what = "was created again" if created else f"went down from {old:g} to {sample.value:g}"
            swapped = "" if created else " (or the two are swapped: BEFORE comes first)"
            raise GuardsError(
                f"{sample.name}{_braces(sample.labels)} {what} since {before.shown}: the server "
                f"restarted between the scrapes{swapped}; take both from one run",
                after.shown,
                sample.line,
            )


def _monotonic(scrape: Scrape, name: str) -> bool:
    kind = scrape.types.get(name)
    if kind == "counter":
        return True
    return kind == "histogram" and name.endswith(("_sum", "_count", "_bucket"))


# -- set beside a compose ---------------------------------------------------------------------


@dataclass(frozen=True)
class Beside:
    """The figures of one model set beside the compose that serves it."""

    compose: str
    service: str
    image: str | None
    model: str
    k002: str  # confirmed | not-confirmed | not-k002 | agrees | not-judged
    lines: list[str] = field(default_factory=list)


def beside(
    found: list[Figures], estate: Estate, options: dict[str, RuleOptions], named: str | None
) -> tuple[Figures, Beside]:
    """The model the estate's one loaded compose serves, and what its figures say about it."""
    from ..sources.compose.engines import VLLM

    compose = estate.composes[0]
    services = [s for s in compose.services if s.engine == VLLM]
    if not services:
        raise GuardsError(
            "no vLLM service in this compose; the scrape is a vLLM server's", compose.path
        )
    pairs = [(f, s) for f in found for s in services if len(services) == 1 or _serves(s, f.model)]
    if len(found) > 1 and named is None:
        pairs = [(f, s) for f, s in pairs if _serves(s, f.model)]
    if len(pairs) != 1:
        names = ", ".join(s.name for s in services)
        raise GuardsError(
            f"cannot tell which model of the scrape ({_names(f.model for f in found)}) the "
            f"compose's service ({names}) serves: name it with --model",
            compose.path,
        )
    figures_, service = pairs[0]
    kind, line = compare(figures_, capacity(compose, service, estate, options), service)
    image = service.value("image")
    return figures_, Beside(compose.path, service.name, image, figures_.model, kind, [line])


def _serves(service: Service, model: str) -> bool:
    names = {service.value("served_model_name"), service.value("model")}
    return model.lower() in {n.lower() for n in names if n}


def capacity(
    compose: Compose, service: Service, estate: Estate, options: Mapping[str, RuleOptions]
) -> Capacity | str:
    """K002's count for the service, as the rule reaches it (``guards.facts.capacity`` with
    K002's options), or why there is none."""
    from ..facts.capacity import Planning, whole_number
    from ..facts.capacity import capacity as sequences

    planning = Planning.of(options.get(K002))
    found = sequences(compose, service, estate.registry, estate.compose_names, planning)
    if found is None:
        knob = "max-num-seqs" if whole_number(service, "max_num_seqs") is None else "max-model-len"
        return f"the compose sets no --{knob}"
    if found.pool is None:
        return "no measured KV pool in its comments and no registry facts to compute one"
    return found


def compare(found: Figures, judged: Capacity | str, service: Service) -> tuple[str, str]:
    """What the preemption count says about K002 on this compose: (kind, line)."""
    from ..rules.base import provenance

    if isinstance(judged, str):
        return "not-judged", f"K002 not judged: {judged}"
    if found.preemptions is None:
        return "not-judged", f"K002 not judged: no {PREEMPTIONS}_total in the scrape"
    c, pool = judged, judged.pool
    assert pool is not None
    where = f"line {pool.line}" if pool.line else "computed"
    note = f", {pool.note}" if pool.note else ""
    plural = "s" if c.holds != 1 else ""
    holds = (
        f"the {c.holds} sequence{plural} of {c.per_sequence:,} tokens ({c.label}) that the KV "
        f"pool of {pool.tokens:,} tokens ({pool.text}, {where}{note}) holds"
    )
    seqs = f"max-num-seqs {c.seqs}{provenance(service.knob('max_num_seqs'))}"
    count = counted(found.preemptions, "preemption") + (" since start" if found.since_start else "")
    if c.seqs > c.holds and found.preemptions > 0:
        return "confirmed", f"confirms K002: {count}, and {seqs} exceeds {holds}"
    if c.seqs > c.holds:
        return (
            "not-confirmed",
            f"K002 not confirmed here: no preemption, though {seqs} exceeds {holds}",
        )
    if found.preemptions > 0:
        return (
            "not-k002",
            f"{count}, but {seqs} is within {holds}: not K002's oversized max-num-seqs",
        )
    return "agrees", f"no preemption, and {seqs} is within {holds} (K002 agrees)"


def counted(value: float, noun: str) -> str:
    return f"{value:,.0f} {noun}{'s' if value != 1 else ''}"


# -- text -------------------------------------------------------------------------------------


def heading(before: Scrape | None, after: Scrape) -> str:
    if before is None:
        return f"{_path(after.shown)}: one scrape: counters are totals since the server started"
    return f"{_path(before.shown)} -> {after.shown}: what changed between the two scrapes"


def _path(shown: str) -> str:
    """A scrape's name at the start of a line: ``./`` before one starting ``::``, which a CI
    runner would read as a workflow command (GitHub's ignores the blanks before it)."""
    return f"./{shown}" if shown.lstrip().startswith("::") else shown


def describe(found: Figures) -> list[str]:
    """The figures, one per line, with their units (``label  value``)."""
    since = " since start" if found.since_start else ""
    rows: list[tuple[str, str]] = []
    rate = found.decode_tok_s
    if rate is not None:
        finished = counted(found.finished or 0, "request")
        rows.append(
            (
                "decode",
                f"{rate:.1f} tok/s{since} ({found.request_tokens:,.0f} tokens in "
                f"{found.decode_seconds:,.1f} s of decode, {finished} finished; engine-side)",
            )
        )
    elif found.decode_seconds is not None or found.request_tokens is not None:
        rows.append(("decode", f"no request finished{since or ' between the scrapes'}"))
    if found.generated is not None:
        rows.append(("generated", f"{found.generated:,.0f} tokens{since}"))
    if found.preemptions is not None:
        rows.append(("preemptions", f"{found.preemptions:,.0f}{since}"))
    at = "" if found.since_start else ", at the second scrape"
    if found.kv_usage is not None:
        rows.append(("KV cache usage", f"{found.kv_usage * 100:.1f}% ({found.kv_metric}{at})"))
    if found.running is not None or found.waiting is not None:
        rows.append(
            (
                "requests",
                f"{_plain(found.running)} running, {_plain(found.waiting)} waiting"
                + (f" ({at[2:]})" if at else ""),
            )
        )
    if found.acceptance is not None:
        length = found.accepted_length
        mean = f"; mean accepted length {length:.2f}" if length is not None else ""
        rows.append(
            (
                "spec decode",
                f"{found.acceptance * 100:.1f}% of {found.draft_tokens:,.0f} draft tokens "
                f"accepted{since}{mean}",
            )
        )
    if found.pool:
        blocks, size = found.pool
        rows.append(
            ("KV pool", f"{blocks:,} blocks × {size} = {blocks * size:,} tokens ({CACHE_INFO})")
        )
    width = max((len(label) for label, _ in rows), default=0)
    lines = [f"  {label:<{width}}  {value}" for label, value in rows]
    if found.pool_full:
        used = (found.kv_usage or 0) * 100
        waiting = counted(found.waiting or 0, "request")
        lines.append(f"  the KV pool is the limit: {used:.1f}% of it in use with {waiting} waiting")
    return lines


def _plain(value: float | None) -> str:
    return "?" if value is None else f"{value:,.0f}"


def text(before: Scrape | None, after: Scrape, found: list[Figures], side: Beside | None) -> str:
    """What ``guards evidence read`` prints. Model names, paths, images and the compose's
    comments come from files: each line is shown escaped (a newline or a terminal escape in
    a label cannot start a line of its own) and cut at ``MAX_SHOWN`` characters."""
    out = [heading(before, after)]
    for figures_ in found:
        out.append(f"model {figures_.model or '(no model_name label)'}")
        out += describe(figures_)
    if side is not None:
        image = f", image {side.image}" if side.image else ""
        out.append(f"compose {side.compose}: service {side.service}{image}")
        out += [f"  {line}" for line in side.lines]
    return "".join(printable(line, MAX_SHOWN) + "\n" for line in out)


def document(
    before: Scrape | None, after: Scrape, found: list[Figures], side: Beside | None
) -> dict:
    """``--format json``: version 1; keys are only ever added."""
    return {
        "version": 1,
        "scrapes": [s.shown for s in (before, after) if s is not None],
        "since_start": before is None,
        "models": [
            {
                "model": f.model,
                "figures": f.numbers(),
                "kv_metric": f.kv_metric,
                "kv_pool_is_the_limit": f.pool_full,
            }
            for f in found
        ],
        "compose": None
        if side is None
        else {
            "path": side.compose,
            "service": side.service,
            "image": side.image,
            "model": side.model,
            "k002": side.k002,
            "lines": side.lines,
        },
    }


def load_pair(first: Path, second: Path | None) -> tuple[Scrape | None, Scrape]:
    """One scrape (``None`` before it), or the pair in the order taken."""
    one = read(first, str(first))
    return (None, one) if second is None else (one, read(second, str(second)))
