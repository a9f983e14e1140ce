"""What notes and compose comments say a compose ships: :class:`Statement` per knob, per layout.

A statement is (subject, knob, value, where). The knob is a canonical knob name
(``max_model_len``, ``port``: :mod:`guards.facts.knobwords`) or an environment variable as
written (``OLLAMA_CONTEXT_LENGTH``: upper case tells them apart); the subject is the text that
names what the statement is about (a compose, a service, a model), or None when the knob names
it (a variable is about the composes that read it; a compose comment is about its service).
Readers only read: who the subject is (:mod:`guards.facts.subjects`) and whether the value is
what ships (rule D008) are decided later. One reader per layout, each for one class of text:

- :func:`tables`: markdown tables whose header names a ``Default`` (or ``Value``) column, with a
  variable in each row's first cell, or whose header cells name knobs, with a subject in each
  row's first cell;
- :func:`blocks`: ``NAME  value`` listings in code blocks (two or more such lines: an env
  catalog restated), where a comment above an entry saying it "maps to" another variable makes
  the entry a statement about that variable too;
- :func:`sentences`: prose naming a variable and its default (``X defaults to 4096``, ``X is
  set to Y``, ``X (default: Y)``), and a ``localhost:PORT`` beside the service it opens;
- :func:`shell`: shell examples passing engine flags, and ``export NAME=value`` lines (an
  instruction, not a statement of what ships: D008 compares no value with them, but applies a
  section's exports to the composes to see what the operator who follows them gets);
- :func:`gpu_sentences`: the GPUs a sentence gives one service: ``GPU 0: embedder; GPU 1:
  chat-llm`` (card ids per service), ``chat-llm requires 2 GPUs``, ``TP2``, ``tensor parallel
  2``; a count of cards of a model (``3 x H100``) is a deployment's, about no one service;
- :func:`compose_comments`: in a compose, the comment lines above or under an ``environment:``
  entry that say what it defaults to (``Enable X by default``, ``default: 1``), and a comment
  on or just above a flag that names the flag's knob and a count (``# 32K context``);
- :func:`name_figure`: a count with a unit suffix in a file's name (``llama3_48k.Modelfile``,
  ``qwen-32k.yml``): the context length the file sets (a Modelfile's ``num_ctx``, a service's
  ``--max-model-len``), unless the model the file names carries the same figure (a
  ``phi3-128k`` model served with a shorter context says nothing about the file's setting).

Commented-out settings (``# OLLAMA_NUM_PARALLEL=4``) are not statements: a comment that is a
setting is advice, not a claim about the shipped value.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..sources.compose.compose import Compose
from ..sources.compose.services import Service
from ..sources.modelfile import Modelfile
from ..sources.notes.notes import Block, Note
from .knobwords import knob_of_flag, knob_of_key, knob_of_words

VAR = r"[A-Z][A-Z0-9]*_[A-Z0-9_]+"
VARIABLE = re.compile(rf"^{VAR}$")
VALUE = r"[^\s`'\"*|,;()]+"
NAME_HEADER = re.compile(r"^(?:container(?:\s+name)?|service(?:\s+name)?|model|name)$", re.I)
DEFAULT_HEADER = re.compile(r"^(?:default(?:\s+value)?|value)$", re.IGNORECASE)
PLACEHOLDER = re.compile(r"^(?:[-—–]+|n/?a|none|unset|empty|\(.*\)|<.*>|\.\.\.|…)$", re.I)
LISTING = re.compile(rf"^(?P<name>{VAR})[ \t]{{2,}}(?P<value>\S+)\s*$")
MAPS_TO = re.compile(rf"\bmaps\s+to\s+(?:the\s+)?[`'\"]?(?P<var>{VAR})\b", re.IGNORECASE)
Q = r"[`'\"*]*"
SAID_DEFAULT = (
    re.compile(
        rf"{Q}(?P<var>{VAR}){Q}\s+(?:is\s+set\s+to|defaults\s+to|is\s+by\s+default)\s+"
        rf"{Q}(?P<value>{VALUE}){Q}"
    ),
    re.compile(rf"{Q}(?P<var>{VAR}){Q}\s*\(\s*defaults?(?::|\s+to|\s+is)?\s+{Q}(?P<value>{VALUE})"),
    re.compile(
        rf"\bdefault\s+(?:value\s+)?(?:of|for)\s+{Q}(?P<var>{VAR}){Q}\s+is\s+{Q}(?P<value>{VALUE})"
    ),
)
LOCAL_PORT = re.compile(r"\b(?:localhost|127\.0\.0\.1):(?P<value>\d{2,5})\b")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`*])")
FLAG_VALUE = re.compile(
    r"(?<![\w-])(?P<flag>--?[a-zA-Z][\w-]*)(?:=|\s+)(?P<value>[^\s\-'\"`][^\s'\"`]*)"
)
ENABLE = re.compile(r"\b(?P<word>enable|disable)[sd]?\b(?:(?!\bnot\b).)*\bby\s+default\b", re.I)
COMMENT_DEFAULT = re.compile(
    rf"\bdefaults?\s*(?:\bis\b|:|\bto\b|=)\s*{Q}(?P<value>{VALUE}){Q}", re.I
)
SETTING = re.compile(rf"^\s*(?:-\s*)?(?:export\s+)?{VAR}\s*[=:]|^\s*-{{1,2}}[a-z]", re.I)
RULER = re.compile(r"^[\s#]*[-=─━*_~]{3,}")
EXPORT = re.compile(rf"^\s*export\s+(?P<var>{VAR})=(?P<value>[^\s;&|]*)")
GPU_IDS = re.compile(
    r"\bGPUs?\s+(?P<value>\d{1,3}(?:\s*(?:,|and|&)\s*\d{1,3})*)\s*(?::|\bfor\b|->|→|=)\s*"
    r"(?P<subject>[^;,.()]+)",
    re.IGNORECASE,
)
GPU_COUNT = (
    re.compile(
        r"\b(?:requires?|needs?|uses?|runs\s+on|reserves?)\s+(?P<value>\d{1,3})\s+GPUs?\b", re.I
    ),
    re.compile(r"(?<![\w-])(?P<value>\d{1,3})\s+GPUs?\s+(?:are\s+)?(?:required|needed)\b", re.I),
)
TENSOR_PARALLEL = (
    re.compile(r"(?<![\w-])TP\s?(?P<value>\d{1,3})(?![\w.])"),
    re.compile(
        r"\btensor[- ]parallel(?:ism)?(?:\s+size)?(?:\s+of|\s*[=:])?\s+(?P<value>\d{1,3})\b", re.I
    ),
)
COUNT = re.compile(r"(?<![\w.])(?P<value>\d[\d,]*(?:\.\d+)?\s*[KkM]?)(?![\w.])")
NAME_FIGURE = re.compile(r"(?<![^_.-])(?P<value>\d+[kKmM])(?![^_.-])")
NAME_KNOB = "max_model_len"  # what a bare ``48k`` in a file name counts


@dataclass(frozen=True)
class Statement:
    subject: str | None  # the text naming what it is about; None: the knob or file says
    knob: str  # a canonical knob name, or an environment variable as written
    value: str  # as written, quotes and backticks removed
    path: str
    line: int
    column: int  # 1-based, at the value
    layout: str  # table | block | sentence | shell | comment | name
    mention: bool = False  # ``subject`` is a passage to find one name in, not a name
    names: tuple[str, ...] = ()  # other names of the subject (a table's container column)
    section: int = -1  # in a note, the index of its section (-1: before the first heading)


def note_statements(note: Note) -> list[Statement]:
    """Every statement a note makes, in every layout."""
    found: list[Statement] = []
    for block in note.blocks:
        if block.retraction is not None or block.quoted:
            continue
        if block.kind == "table":
            said = tables(note, block)
        elif block.kind == "code":
            said = blocks(note, block) + shell(note, block)
        elif block.kind == "paragraph":
            said = sentences(note, block) + gpu_sentences(note, block)
        else:
            continue
        found += [replace(s, section=block.section) for s in said]
    return found


# --- notes: tables ---------------------------------------------------------------------------


def tables(note: Note, block: Block) -> list[Statement]:
    """A table of variable defaults (``| Variable | Default | ... |``: the first cell of a row
    names a variable) or of knobs (a header cell names a knob: the first cell names a subject)."""
    rows = [(line, _cells(text)) for line, text in block.line_texts]
    if len(rows) < 2:
        return []
    header = rows[0][1]
    defaults = [i for i, cell in enumerate(header) if DEFAULT_HEADER.match(cell)]
    knobs = {i: knob_of_words(cell) for i, cell in enumerate(header) if i and not defaults}
    found = []
    for line, cells in rows[1:]:
        if len(cells) != len(header) or not cells[0]:
            continue
        first = cells[0].strip("`*")
        if defaults and VARIABLE.match(first):
            found += [_cell(note, line, first, None, cells[i], i) for i in defaults[:1]]
        elif not defaults and not VARIABLE.match(first):
            names = tuple(
                c.strip("`*") for i, c in enumerate(cells) if i and NAME_HEADER.match(header[i])
            )
            row = [_cell(note, line, k, first, cells[i], i) for i, k in knobs.items() if k]
            found += [replace(s, names=names) if s is not None and names else s for s in row]
    return [s for s in found if s is not None]


def _cells(text: str) -> list[str]:
    return [cell.strip() for cell in text.split(" | ")]


def _cell(
    note: Note, line: int, knob: str, subject: str | None, cell: str, index: int
) -> Statement | None:
    value = _value(cell)
    if value is None:
        return None
    raw = note.lines[line - 1]
    start = _nth(raw, "|", index + (1 if raw.lstrip().startswith("|") else 0))
    column = raw.find(value, start) + 1 or start + 1
    return Statement(subject, knob, value, note.path, line, column, "table")


def _nth(text: str, char: str, n: int) -> int:
    at = 0
    for _ in range(n):
        found = text.find(char, at)
        if found < 0:
            return at
        at = found + 1
    return at


def _value(cell: str) -> str | None:
    """The value a cell or a listing gives: one word, not a placeholder."""
    value = cell.strip().strip("`*'\"").strip()
    if not value or " " in value or PLACEHOLDER.match(value):
        return None
    return value


# --- notes: listings and shell examples ------------------------------------------------------


def blocks(note: Note, block: Block) -> list[Statement]:
    """``NAME  value`` listings: an env catalog restated in a code block, two entries or more."""
    entries = [(line, LISTING.match(text)) for line, text in block.line_texts]
    listed = [(line, m) for line, m in entries if m is not None]
    if len(listed) < 2:
        return []
    found = []
    texts = dict(block.line_texts)
    for line, match in listed:
        value = _value(match.group("value"))
        if value is None:
            continue
        column = note.lines[line - 1].find(match.group("value")) + 1
        found.append(Statement(None, match.group("name"), value, note.path, line, column, "block"))
        alias = _maps_to(texts, line)
        if alias is not None and alias != match.group("name"):
            found.append(Statement(None, alias, value, note.path, line, column, "block"))
    return found


def _maps_to(texts: dict[int, str], line: int) -> str | None:
    """The variable the comment lines just above ``line`` say the entry maps to."""
    above = line - 1
    while above in texts and texts[above].lstrip().startswith("#"):
        found = MAPS_TO.search(texts[above])
        if found is not None:
            return found.group("var")
        above -= 1
    return None


def shell(note: Note, block: Block) -> list[Statement]:
    """Engine flags with their values in a shell example (``--max-model-len 32768``), and the
    variables it exports (``export GPU_ID=1,2``: the variable as knob)."""
    found = []
    for line, text in block.line_texts:
        if text.lstrip().startswith("#"):
            continue
        raw = note.lines[line - 1]
        export = EXPORT.match(raw)
        if export is not None:
            value = export.group("value").strip("'\"")
            column = export.start("value") + 1
            found.append(
                Statement(
                    str(block.section),
                    export.group("var"),
                    value,
                    note.path,
                    line,
                    column,
                    "export",
                )
            )
        for match in FLAG_VALUE.finditer(raw):
            knob = knob_of_flag(match.group("flag"))
            if knob is not None:
                column = match.start("value") + 1
                value = match.group("value")
                found.append(Statement(None, knob, value, note.path, line, column, "shell"))
    return found


# --- notes: sentences ------------------------------------------------------------------------


def sentences(note: Note, block: Block) -> list[Statement]:
    """A variable's stated default, and a local port beside the service it opens."""
    found = []
    for line, _ in block.line_texts:
        raw = note.lines[line - 1]
        for pattern in SAID_DEFAULT:
            for match in pattern.finditer(raw):
                value = _value(match.group("value").rstrip(".:"))
                if value is not None:
                    column = match.start("value") + 1
                    found.append(
                        Statement(
                            None, match.group("var"), value, note.path, line, column, "sentence"
                        )
                    )
        for match in LOCAL_PORT.finditer(raw):
            passage = _sentence_at(block, line, match.group(0))
            found.append(
                Statement(
                    passage,
                    "port",
                    match.group("value"),
                    note.path,
                    line,
                    match.start("value") + 1,
                    "sentence",
                    mention=True,
                )
            )
    return found


def gpu_sentences(note: Note, block: Block) -> list[Statement]:
    """The cards a sentence gives a service (``GPU 1: chat-llm``: ids, the subject after the
    colon), and a count of GPUs or a tensor-parallel size (``requires 2 GPUs``, ``TP2``)
    about the one service the sentence names (a mention: the sentence is the subject)."""
    found = []
    for line, _ in block.line_texts:
        raw = note.lines[line - 1]
        for match in GPU_IDS.finditer(raw):
            ids = ",".join(re.findall(r"\d+", match.group("value")))
            subject = match.group("subject").strip(" *`'\"")
            column = match.start("value") + 1
            found.append(Statement(subject, "gpu_ids", ids, note.path, line, column, "sentence"))
        for knob, patterns in (("gpus", GPU_COUNT), ("tensor_parallel_size", TENSOR_PARALLEL)):
            for pattern in patterns:
                for match in pattern.finditer(raw):
                    passage = _sentence_at(block, line, match.group(0))
                    column = match.start("value") + 1
                    value = match.group("value")
                    found.append(
                        Statement(passage, knob, value, note.path, line, column, "sentence", True)
                    )
    return found


def _sentence_at(block: Block, line: int, text: str) -> str:
    """The sentence of ``block`` holding ``text`` written on ``line`` (a sentence may run over
    several lines)."""
    flat = " ".join(t for _, t in block.line_texts)
    before = " ".join(t for n, t in block.line_texts if n < line)
    here = dict(block.line_texts).get(line, "")
    at = len(before) + (1 if before else 0) + max(here.find(text), 0)
    start = max((m.end() for m in SENTENCE_END.finditer(flat, 0, at)), default=0)
    end = SENTENCE_END.search(flat, at)
    return flat[start : end.start() if end else len(flat)]


# --- composes --------------------------------------------------------------------------------


def compose_statements(compose: Compose) -> list[Statement]:
    """What the comments of a compose say its services' entries and flags default to."""
    found: list[Statement] = []
    for service in compose.shipped:
        found += _entry_comments(compose, service)
        found += _flag_comments(compose, service)
    return found + _name_statements(compose)


def _entry_comments(compose: Compose, service: Service) -> list[Statement]:
    lines = compose.lines
    found = []
    for name, entry in service.environment.items():
        raw = lines[entry.line - 1] if 0 < entry.line <= len(lines) else ""
        if "${" + name not in raw or raw.lstrip().startswith("#"):
            # From an env_file, or hard-coded: a "default" beside a value the operator cannot
            # change is the engine's own default, not the compose's.
            continue
        for number in _comments_about(lines, entry.line):
            text = lines[number - 1]
            said = _entry_default(text, name)
            if said is not None:
                value, column = said
                found.append(
                    Statement(service.name, name, value, compose.path, number, column, "comment")
                )
    return found


def _comments_about(lines: list[str], line: int) -> Iterator[int]:
    """The comment lines about the entry on ``line``: the run just above it at its indent,
    and the run just under it indented deeper (both end at a blank line or a ruler)."""
    indent = _indent(lines[line - 1])
    above = line - 1
    while above >= 1 and _is_comment(lines[above - 1]) and _indent(lines[above - 1]) == indent:
        yield above
        above -= 1
    below = line + 1
    while (
        below <= len(lines) and _is_comment(lines[below - 1]) and _indent(lines[below - 1]) > indent
    ):
        yield below
        below += 1


def _is_comment(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith("#") and not RULER.match(text)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _entry_default(text: str, name: str) -> tuple[str, int] | None:
    """(value, column) a comment line says the entry defaults to; None when it says nothing of
    its default, is a setting itself, or is about another variable."""
    body = text.lstrip().lstrip("#")
    if SETTING.match(body) or any(v != name for v in re.findall(rf"\b{VAR}\b", body)):
        return None
    enable = ENABLE.search(text)
    if enable is not None:
        return ("on" if enable.group("word").lower() == "enable" else "off"), enable.start() + 1
    said = COMMENT_DEFAULT.search(text)
    if said is not None:
        value = _value(said.group("value").rstrip(".:"))
        if value is not None:
            return value, said.start("value") + 1
    return None


def _flag_comments(compose: Compose, service: Service) -> list[Statement]:
    """``--max-model-len 32768  # 32K context``: a comment on the flag's line, or alone on the
    line above, naming the flag's knob and one count."""
    found = []
    lines = compose.lines
    for knob in service.knobs.values():
        if knob.flag is None or knob.source not in ("command", "entrypoint"):
            continue
        for number in (knob.line, knob.line - 1):
            if not 0 < number <= len(lines):
                continue
            text = lines[number - 1]
            hash_at = text.find("#", knob.column if number == knob.line else 0)
            if hash_at < 0 or (number != knob.line and not _is_comment(text)):
                continue
            comment = text[hash_at + 1 :]
            counts = list(COUNT.finditer(comment))
            if len(counts) != 1 or knob_of_words(comment) != knob.name:
                continue
            value = counts[0].group("value").replace(" ", "")
            column = hash_at + 2 + counts[0].start("value")
            found.append(
                Statement(service.name, knob.name, value, compose.path, number, column, "comment")
            )
            break
    return found


# --- file names ------------------------------------------------------------------------------


def name_figure(path: str, model: str) -> str | None:
    """The one count with a unit suffix a file's stem carries (``48k`` of
    ``llama3.1_q6k_48k.Modelfile``), or None: none, several, or one the ``model`` the file
    serves carries too (then the figure names the model, not a setting)."""
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    figures = [m.group("value") for m in NAME_FIGURE.finditer(stem)]
    if len(figures) != 1 or _carries(model, figures[0]):
        return None
    return figures[0]


def _carries(text: str, figure: str) -> bool:
    return (
        re.search(rf"(?<![a-z0-9]){re.escape(figure.lower())}(?![a-z0-9])", text.lower())
        is not None
    )


def modelfile_statements(modelfile: Modelfile) -> list[Statement]:
    """What a Modelfile's name says of the context it sets, placed at the ``PARAMETER`` line
    that sets it (the last one: Ollama keeps the last value)."""
    figure = name_figure(modelfile.path, modelfile.base or "")
    setting = [p for p in modelfile.parameters if knob_of_key(p.key) == NAME_KNOB]
    if figure is None or not setting:
        return []
    at = setting[-1]
    return [Statement(None, NAME_KNOB, figure, modelfile.path, at.line, at.column, "name")]


def _name_statements(compose: Compose) -> list[Statement]:
    """What a compose's name says of the context its one server sets (``qwen-32k.yml`` over
    ``--max-model-len``), at the flag; nothing when several services set it."""
    setting = [s for s in compose.shipped if (k := s.knob(NAME_KNOB)) and k.flag is not None]
    if len(setting) != 1:
        return []
    service = setting[0]
    models = " ".join(service.value(k) or "" for k in ("model", "served_model_name", "image"))
    figure = name_figure(compose.path, models)
    knob = service.knob(NAME_KNOB)
    if figure is None or knob is None:
        return []
    column = knob.column
    return [Statement(service.name, NAME_KNOB, figure, compose.path, knob.line, column, "name")]
