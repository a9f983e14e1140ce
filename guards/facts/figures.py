"""KV-pool figures quoted in comments, with the configuration each one was measured at.

A figure is a KV pool in tokens (``KV pool 212,977 tok``, ``KV pool: 806,821``, ``KV pool
~944K``, ``KV pool 14.68 GiB / 841,541 tok``, ``GPU KV cache size: 405,504 tokens``,
``1,795,289-token pool``) or a concurrency (``2.03× concurrency``, ``Maximum concurrency for
131,072 tokens per request: 5.10x``, ``6.85 × 262K sequences``).

Its qualifiers are what the same sentence says it was measured on:

- a GPU count or topology: ``TP=2``, ``2 cards``, ``2-GPU``, ``2×3090``, ``4x 24 GB``,
  ``dual card``, ``single 3090``, ``quad sibling``;
- a utilisation: ``@0.90``, ``at util 0.95``, ``0.90 util``, ``at 0.85``, ``90% util``;
- a context: ``at 128K``, ``@262144``, ``for 131,072 tokens``, ``128K context``
  (not a prompt or a speed: ``at 257,544 prompt tokens``, ``5,116 tok/s @10K``);
- a KV dtype: ``bf16 KV``, ``KV fp8_e4m3``, ``KV cache: q8_0``;
- a source: another compose of the estate named by its last two path parts
  (``dual/ultrafast spends its whole 212,977-token pool``), or a ``sibling`` or
  ``predecessor``: then the figure is that compose's, not this one's.

A sentence ends at ``.``, ``!``, ``?`` or ``;`` before a space, at `` · ``, and with its
paragraph: a blank comment line, a rule line, a header field's key line or a bullet start a
new one, and so does a gap between comment lines. When a sentence states one kind twice, the
one nearest the figure in its clause counts, else the nearest in the sentence (``KV pool 400K
tok on 2 cards at 0.90, KV pool 800K tok on 4 cards at 0.95``); a clause ends at a comma, a
parenthesis, a bracket or a spaced dash.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from ..sources.compose.engines import VLLM
from ..sources.compose.engines.kvtypes import KV_ALIASES, KV_NAMES, canonical_kv, same_kv
from ..sources.compose.engines.vllm import kv_dtype
from ..sources.compose.header import FIELD
from ..sources.compose.services import Service
from ..sources.numbers import read_count, readings, same_count, to_count, to_number
from ..sources.patterns import lazy
from .kv import GPU_MODEL

if TYPE_CHECKING:
    from ..sources.compose.compose import Compose

MAX_FIGURES = 64  # a comment block quoting more is not read further
VLLM_UTIL = 0.9  # vLLM's --gpu-memory-utilization when the compose does not set it

# Runs are possessive and numbers start only where a digit run starts: linear on any text.
NUM = r"(?<![0-9,.])(?P<n>[0-9]{1,3}(?:,[0-9]{3})++(?:\.[0-9]++)?|[0-9]++(?:\.[0-9]++)?)"
SUFFIX = r"(?P<k>[KkMm](?![A-Za-z]))?"
FACTOR = r"(?<![0-9.])(?P<x>[0-9]++(?:\.[0-9]++)?)\s*+[×xX]"
POOLS = [
    lazy(r"GPU KV cache size:?\s*+" + NUM + r"\s*+tokens", re.I),
    lazy(
        r"KV (?:cache )?pool(?: size)?(?:\s*+(?:at|@)\s*+(?:util\s*+)?[0-9.,]++[KkMm]?)?"
        r"\s*+(?:of|=|:|is|≈)?\s*+"
        r"(?:[0-9.]++\s*+Gi?B\s*+/\s*+)?~?\s*+" + NUM + r"\s*+" + SUFFIX + r"(?P<t>\s*+tok)?",
        re.I,
    ),
    lazy(NUM + r"\s*+" + SUFFIX + r"[- ]tokens?\s++(?:\w++\s++){0,2}(?:KV\s++)?pool", re.I),
]
MEMORY_UNIT = lazy(r"\s*+(?:[KMGT]i?B|%|[×x](?![A-Za-z]))", re.I)
CONCURRENCIES = [
    lazy(FACTOR + r"\s*+concurrency", re.I),
    lazy(
        r"Maximum concurrency for\s++" + NUM + r"\s*+tokens per request:?\s*+"
        r"(?P<x>[0-9]++(?:\.[0-9]++)?)",
        re.I,
    ),
    lazy(
        FACTOR + r"\s*+~?" + NUM + SUFFIX + r"(?:[- ]tok(?:en)?s?)?\s++"
        r"(?:full[- ]length\s++)?(?:sequences|requests|streams)\b",
        re.I,
    ),
]

WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "eight": 8}
WORDS |= {"single": 1, "dual": 2, "triple": 3, "quad": 4, "octa": 8}
COUNT = r"(?P<n>[1-9][0-9]?+|" + "|".join(WORDS) + ")"
DEVICE = r"(?:cards?|GPUs?|rig|box|setup|node|RTX)\b"
KV_NAME = "|".join(sorted({*KV_NAMES, *KV_ALIASES} - {"half"}, key=len, reverse=True))
QUALIFIERS: list[tuple[str, re.Pattern[str]]] = [
    (
        "tp",
        lazy(r"\b(?:TP|tensor[-_ ]parallel(?:[-_ ]size)?)\s*+[=:]?\s*+(?P<n>[1-9][0-9]?+)\b", re.I),
    ),
    ("gpus", lazy(r"(?<![\w.,])" + COUNT + r"[- ]?" + DEVICE, re.I)),
    ("gpus", lazy(r"(?<![\w.,])" + COUNT + r"[- ]?(?:" + GPU_MODEL.pattern + ")", re.I)),
    (
        "gpus",
        lazy(
            r"(?<![\w.,])(?P<n>[1-9][0-9]?+)\s*+[×xX]\s*+(?:RTX\s*+)?"
            r"(?:[0-9]{2,3}\s*+Gi?B\b|GPUs?\b|cards?\b|" + GPU_MODEL.pattern + ")",
            re.I,
        ),
    ),
    ("util", lazy(r"@\s*+(?P<u>0?\.[0-9]++|1\.0*+)(?![0-9])")),
    (
        "util",
        lazy(r"(?<![A-Za-z])util(?:i[sz]ation)?\s*+(?:=|:|of|at)?\s*+(?P<u>0?\.[0-9]++)", re.I),
    ),
    ("util", lazy(r"(?<![0-9.])(?P<u>0?\.[0-9]++)\s*+util", re.I)),
    ("util", lazy(r"\bat\s++(?P<u>0?\.[0-9]++)(?![0-9.]|\s*+(?:[×x%]|tok|G|M|s\b))", re.I)),
    ("util", lazy(r"(?<![0-9.])(?P<p>[1-9][0-9])\s*+%\s*+util", re.I)),
    ("context", lazy(r"(?:@|\bat\s++|\bfor\s++)~?\s*+" + NUM + r"\s*+" + SUFFIX, re.I)),
    ("context", lazy(NUM + r"\s*+" + SUFFIX + r"[- ]?(?:ctx|context)\b", re.I)),
    ("context", lazy(r"max[-_ ]model[-_ ]len\s*+[=:]?\s*+" + NUM + SUFFIX, re.I)),
    ("source", lazy(r"\b(?:sibling|predecessor)s?+(?:'s)?+\b", re.I)),
    ("kv", lazy(r"(?<![\w.])(?P<d>" + KV_NAME + r")[- ]KV\b", re.I)),
    (
        "kv",
        lazy(r"\bKV(?: cache)?(?: dtype)?\s*+[:=]?\s*+(?P<d>" + KV_NAME + r")(?![\w.])", re.I),
    ),
]
# Every figure pattern holds one of these words: text without them quotes no figure. A word of
# a line cannot continue on the next (lines are joined by a space), so a comment block none of
# whose lines holds one of the single words is skipped whole.
FIGURE_WORD = lazy(r"pool|kv cache size|concurrency|sequences|requests|streams", re.I)
LINE_WORD = lazy(r"pool|size|concurrency|sequences|requests|streams", re.I)
NOT_A_CONTEXT = lazy(r"\s*+(?:prompt|tok/s|t/s|gen\b|decode|prefill|fill|[×x%])", re.I)
SPEED = lazy(r"(?:tok/s|t/s|tps)\s*+$", re.I)
CLAUSE_END = lazy(r",(?![0-9])|[()\[\]]|\s[—–-]\s")  # "131,072" is one clause
DIMENSION = {"tp": "gpus"}  # TP=2 and "2 cards" say one thing: the nearest of them counts
SENTENCE_END = lazy(r"(?<=[.!?;])\s++|(?<!\s)\s++[·•|]\s++")
BULLET = lazy(r"\s*+(?:[-*•·]\s|[0-9]{1,2}[.)]\s|[⚠⭐❌✅🧪‼])")
RULE = lazy(r"\s*+(?:[-=#~]{3,}\s*+)?$")


class Qualifier(NamedTuple):
    kind: str  # "tp" | "gpus" | "util" | "context" | "kv" | "source"
    value: float | str  # a count, a fraction, tokens, or a canonical KV dtype
    text: str  # as written
    approximate: bool = False  # a context written with K or M: K may mean 1000 or 1024


class Figure(NamedTuple):
    kind: str  # "pool" (tokens) | "concurrency" (× a context)
    value: float  # tokens, or the concurrency factor
    unit: float  # the precision it was written with: 1 (212,977), 1000 (310K), 0.01 (2.03×)
    scaled: bool  # written with K or M, which may mean 1000 or 1024
    text: str  # the figure as written, whitespace folded
    line: int
    column: int  # of its number
    qualifiers: tuple[Qualifier, ...] = ()
    width: int = 0  # characters of its number as written (``944K``, ``2.03``)
    end_column: int = 0  # just after its number, when that is on the number's line (else 0)

    def qualifier(self, kind: str) -> Qualifier | None:
        return next((q for q in self.qualifiers if q.kind == kind), None)


class Setting(NamedTuple):
    """What a KV pool depends on, as a service runs it; None where it is not known."""

    tp: int | None = None
    gpus: int | None = None
    util: float | None = None
    context: int | None = None
    kv: str | None = None


# -- reading figures --------------------------------------------------------------------------


def find_figures(
    lines: Iterable[tuple[int, int, str]],
    names: frozenset[str] = frozenset(),
    own: Iterable[str] = (),
) -> list[Figure]:
    """Figures in comment lines given as (line number, column where ``text`` starts, text).
    ``names`` are how comments name the estate's composes (``dual/ultrafast``), ``own`` this
    compose's: a sentence naming another compose quotes that compose's figures."""
    lines = list(lines)
    if not any(LINE_WORD.search(text) for _, _, text in lines):
        return []
    found: list[Figure] = []
    naming = Naming(names, own)
    for paragraph in _paragraphs(lines):
        text, starts = _joined(paragraph)
        if not FIGURE_WORD.search(text):
            continue
        for start, end in _sentences(text):
            found += _in_sentence(text[start:end], start, starts, naming)
            if len(found) >= MAX_FIGURES:
                return found[:MAX_FIGURES]
    return found


class CommentFigures(NamedTuple):
    """A compose's figures, its header's and its other comments', each in text order."""

    header: tuple[Figure, ...]
    other: tuple[Figure, ...]


_READ: dict[int, tuple[Compose, CommentFigures]] = {}  # id(compose) -> (compose, figures)
_NAMES: list[frozenset[str]] = []  # the estate's names the kept figures were read with


def comment_figures(compose: Compose, names: frozenset[str]) -> CommentFigures:
    """The figures of a compose's comments (``names`` as for :func:`find_figures`), read once
    per compose of the estate: K002 asks for them per service, D007 for the header's. Kept for
    the estate's composes only: another estate's names start the memo over."""
    if not (_NAMES and _NAMES[0] is names):
        _READ.clear()
        _NAMES[:] = [names]
    kept = _READ.get(id(compose))
    if kept is not None and kept[0] is compose:
        return kept[1]
    own = compose_names(compose.path)
    read = CommentFigures(
        tuple(find_figures(_comment_lines(compose, header=True), names, own)),
        tuple(find_figures(_comment_lines(compose, header=False), names, own)),
    )
    _READ[id(compose)] = (compose, read)
    return read


def _comment_lines(compose: Compose, header: bool) -> list[tuple[int, int, str]]:
    """(line, column where the text starts, text) of the header's comments, or the others'."""
    comments = compose.comments
    return [(c.line, c.column + 1, c.text) for c in comments if (c.where == "header") == header]


def _paragraphs(lines: Iterable[tuple[int, int, str]]) -> list[list[tuple[int, int, str]]]:
    paragraphs: list[list[tuple[int, int, str]]] = []
    previous = None
    for number, column, text in lines:
        if RULE.match(text):
            previous = None
            continue
        starts = previous is None or number != previous + 1
        if starts or FIELD.match(text) or BULLET.match(text):
            paragraphs.append([])
        paragraphs[-1].append((number, column, text))
        previous = number
    return paragraphs


def _joined(lines: list[tuple[int, int, str]]) -> tuple[str, list[tuple[int, int, int]]]:
    """One text of the lines, joined by a space, and (offset, line, column) starts."""
    parts, starts, offset = [], [], 0
    for number, column, text in lines:
        starts.append((offset, number, column))
        parts.append(text)
        offset += len(text) + 1
    return " ".join(parts), starts


def _where(starts: list[tuple[int, int, int]], offset: int) -> tuple[int, int]:
    index = bisect_left(starts, (offset + 1,)) - 1
    start, number, column = starts[max(index, 0)]
    return number, column + offset - start


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for end in SENTENCE_END.finditer(text):
        spans.append((start, end.start()))
        start = end.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if e > s]


def _in_sentence(
    sentence: str,
    offset: int,
    starts: list[tuple[int, int, int]],
    naming: Naming,
) -> list[Figure]:
    matches = _figure_matches(sentence)
    if not matches:
        return []
    nearby = _qualifiers(sentence, {at for at, _, _ in matches}, naming)
    bounds = [0, *(m.end() for m in CLAUSE_END.finditer(sentence)), len(sentence) + 1]
    figures = []
    for at, figure, own in matches:
        line, column = _where(starts, offset + at)
        said = {DIMENSION.get(q.kind, q.kind) for q in own}
        index = bisect_right(bounds, at)
        clause = (bounds[index - 1], bounds[index])
        picked = [
            *own,
            *(_nearest(found, at, clause) for key, found in nearby.items() if key not in said),
        ]
        last_line, last = _where(starts, offset + at + max(figure.width, 1) - 1)
        end = last + 1 if figure.width and last_line == line else 0
        figures.append(
            figure._replace(line=line, column=column, qualifiers=tuple(picked), end_column=end)
        )
    return figures


def _figure_matches(sentence: str) -> list[tuple[int, Figure, list[Qualifier]]]:
    """(offset of the number, figure, qualifiers the figure states itself), in text order."""
    found: dict[int, tuple[int, Figure, list[Qualifier]]] = {}
    for pattern in POOLS:
        for match in pattern.finditer(sentence):
            figure = _pool(match, sentence)
            if figure and match.start("n") not in found:
                found[match.start("n")] = (match.start("n"), figure, [])
    for pattern in CONCURRENCIES:
        for match in pattern.finditer(sentence):
            figure = _concurrency(match)
            if figure and match.start("x") not in found:
                own = _own_context(match)
                found[match.start("x")] = (match.start("x"), figure, own)
    return [found[at] for at in sorted(found)]


def _pool(match: re.Match[str], sentence: str) -> Figure | None:
    count = read_count(match.group("n"), match.groupdict().get("k"))
    if count is None:
        return None
    written = match.groupdict()
    if not (written.get("t") or count.scaled or count.value >= 1000):
        return None
    if not written.get("k") and MEMORY_UNIT.match(sentence, match.end("n")):
        return None
    text = " ".join(match.group(0).split())
    width = (match.end("k") if written.get("k") else match.end("n")) - match.start("n")
    return Figure("pool", count.value, count.unit, count.scaled, text, 0, 0, width=width)


def _concurrency(match: re.Match[str]) -> Figure | None:
    count = read_count(match.group("x"))
    if count is None or count.value <= 0:
        return None
    text = " ".join(match.group(0).split())
    width = match.end("x") - match.start("x")
    return Figure("concurrency", count.value, count.unit, False, text, 0, 0, width=width)


def _own_context(match: re.Match[str]) -> list[Qualifier]:
    """A concurrency that names its context (``for 131,072 tokens``, ``× 262K sequences``)."""
    written = match.groupdict()
    if not written.get("n"):
        return []
    suffix = written.get("k") or ""
    context = _context(written["n"], suffix, written["n"] + suffix)
    return [context] if context else []


# -- qualifiers -------------------------------------------------------------------------------


def _qualifiers(
    sentence: str, figures: set[int], naming: Naming
) -> dict[str, list[tuple[int, Qualifier]]]:
    """Every qualifier of the sentence by kind, with its offset, in text order."""
    found: dict[str, list[tuple[int, Qualifier]]] = {}
    for kind, pattern in QUALIFIERS:
        for match in pattern.finditer(sentence):
            qualifier = _qualifier(kind, match, sentence)
            if qualifier is not None and match.start() not in figures:
                found.setdefault(DIMENSION.get(kind, kind), []).append((match.start(), qualifier))
    for at, name in naming.others(sentence):
        if at not in figures:
            found.setdefault("source", []).append((at, Qualifier("source", name, name)))
    return {kind: sorted(items, key=lambda item: item[0]) for kind, items in found.items()}


def _qualifier(kind: str, match: re.Match[str], sentence: str) -> Qualifier | None:
    text = " ".join(match.group(0).split())
    if kind == "source":
        return Qualifier(kind, text, text)
    if kind in ("tp", "gpus"):
        raw = match.group("n").lower()
        count = WORDS.get(raw) or to_count(raw)
        return Qualifier(kind, count, text) if count else None
    if kind == "util":
        percent = match.groupdict().get("p")
        util = to_number(percent or match.group("u"))
        util = util / 100 if util is not None and percent else util
        return Qualifier(kind, util, text) if util and 0 < util <= 1 else None
    if kind == "kv":
        return Qualifier(kind, canonical_kv(match.group("d")), text)
    before = sentence[max(0, match.start() - 12) : match.start()]
    if SPEED.search(before) or NOT_A_CONTEXT.match(sentence, match.end()):
        return None
    return _context(match.group("n"), match.group("k"), text)


def _context(digits: str, suffix: str | None, text: str) -> Qualifier | None:
    count = read_count(digits, suffix)
    if count is None:
        return None
    tokens = readings(count.value, count.scaled)[-1]  # a context's K is usually 1024
    if tokens < 1024 or (tokens != int(tokens) and not count.scaled):
        return None
    return Qualifier("context", int(tokens), " ".join(text.split()), count.scaled)


NAME = lazy(r"[\w.-]+/[\w.-]+")  # the names comments can mention
NAME_START = lazy(r"(?<![\w/.-])[\w.-]+/[\w.-]+")  # where a mention may start
NAME_END = lazy(r"\.|$")  # where it may end (not before a word character, / or -)
AFTER_NAME = lazy(r"[\w/-]")


class Naming:
    """Where a sentence names another compose of the estate (``dual/ultrafast``, any case, not
    inside a longer path or word): at each place a mention may start, the longest name that
    ends where a name may end. Time grows with the sentence, not with the estate."""

    def __init__(self, names: frozenset[str], own: Iterable[str]) -> None:
        """``names``: every compose's (``estate_names``), ``own``: this compose's."""
        self.names = names
        self.mine = frozenset(name.lower() for name in own)

    def others(self, sentence: str) -> Iterator[tuple[int, str]]:
        """(offset, name as written) of each mention of another compose."""
        at = 0
        while self.names and (found := NAME_START.search(sentence, at)):
            start = found.start()
            end = self._longest(sentence, start, found.group(0))
            if end is None:
                at = found.end()
                continue
            name = sentence[start:end]
            if name.lower() not in self.mine:
                yield start, name
            at = end

    def _longest(self, sentence: str, start: int, run: str) -> int | None:
        ends = sorted((m.start() for m in NAME_END.finditer(run)), reverse=True)
        for end in ends:
            if AFTER_NAME.match(sentence, start + end):
                continue
            said = run[:end].lower()
            if said in self.names or said in self.mine:
                return start + end
        return None


def estate_names(paths: Iterable[str]) -> frozenset[str]:
    """How comments name every compose of an estate, in lower case, as ``Naming`` takes them."""
    return frozenset(n.lower() for path in paths for n in compose_names(path) if NAME.fullmatch(n))


def compose_names(path: str) -> tuple[str, ...]:
    """How comments name a compose: its last two path parts without the extension
    (``composes/qwen3.8-27b/vllm/dual/ultrafast.yml`` -> ``dual/ultrafast``)."""
    parts = path.rsplit(".", 1)[0].split("/")
    return ("/".join(parts[-2:]),) if len(parts) >= 2 else ()


def _nearest(found: list[tuple[int, Qualifier]], at: int, clause: tuple[int, int]) -> Qualifier:
    """The qualifier nearest ``at`` in its clause, else in the sentence."""
    first = bisect_left(found, clause[0], key=lambda item: item[0])
    last = bisect_left(found, clause[1], key=lambda item: item[0])
    within = found[first:last] or found
    index = bisect_left(within, at, key=lambda item: item[0])
    around = within[max(index - 1, 0) : index + 1]
    return min(around, key=lambda item: abs(item[0] - at))[1]


# -- a figure against a service ---------------------------------------------------------------


def setting(service: Service) -> Setting:
    """What the service's pool depends on: TP, GPUs (TP x PP), utilisation, context, KV."""
    tp, pp = _count(service, "tensor_parallel_size"), _count(service, "pipeline_parallel_size")
    util = service.knob("gpu_memory_utilization")
    kv = kv_dtype(service.value("kv_cache_dtype") or "auto", service.value("dtype"))
    if service.engine != VLLM:  # llama.cpp splits layers, not heads: no TP to compare
        return Setting(context=_count(service, "max_model_len", None), kv=kv)
    return Setting(
        tp,
        tp * pp if tp and pp else None,
        (util.number if util else VLLM_UTIL) or None,
        _count(service, "max_model_len", None),
        kv if kv and kv != "auto" else None,
    )


def _count(service: Service, name: str, default: int | None = 1) -> int | None:
    knob = service.knob(name)
    if knob is None:
        return default
    number = knob.number
    return int(number) if number is not None and number >= 1 and number == int(number) else None


def measured_at(figure: Figure, shipped: Setting) -> Setting:
    """The setting a figure was measured at: what its qualifiers say, else the shipped one."""
    measured = shipped
    stages = shipped.gpus // shipped.tp if shipped.gpus and shipped.tp else 1  # PP
    for q in figure.qualifiers:
        if q.kind == "tp":
            measured = measured._replace(tp=int(q.value), gpus=int(q.value) * stages)
        elif q.kind == "gpus":
            measured = measured._replace(tp=max(1, int(q.value) // stages), gpus=int(q.value))
        elif q.kind == "util":
            measured = measured._replace(util=float(q.value))
        elif q.kind == "kv":
            measured = measured._replace(kv=str(q.value))
        elif not (shipped.context and same_context(q, shipped.context)):
            measured = measured._replace(context=int(q.value))
    return measured


def elsewhere(figure: Figure, shipped: Setting) -> Qualifier | None:
    """A qualifier saying the figure was measured on other GPUs or at another context than
    the compose ships: it is not this compose's figure."""
    for q in figure.qualifiers:
        if q.kind == "source":
            return q
        if q.kind in ("tp", "gpus") and getattr(shipped, q.kind) not in (None, q.value):
            return q
        if q.kind == "context" and shipped.context and not same_context(q, shipped.context):
            return q
    return None


def same_context(q: Qualifier, tokens: int) -> bool:
    """A context qualifier says ``tokens`` (within ``numbers.TOLERANCE``; K as 1024 or 1000)."""
    return same_count(int(q.value), tokens, binary=q.approximate)


def same_setting(a: Setting, b: Setting) -> bool:
    """Nothing known of both differs (contexts within the K rounding)."""
    for name in ("tp", "gpus", "util"):
        x, y = getattr(a, name), getattr(b, name)
        if x is not None and y is not None and abs(x - y) > 1e-9:
            return False
    if a.kv and b.kv and not same_kv(a.kv, b.kv):
        return False
    return not (a.context and b.context and not same_count(b.context, a.context))


def tokens(figure: Figure, measured: Setting) -> int | None:
    """The pool a figure states in tokens: a concurrency times the context it was taken at."""
    if figure.kind == "pool":
        return int(figure.value)
    return round(figure.value * measured.context) if measured.context else None
