"""The layouts of notes: tables, listings, shell examples, sentences (defaults, ports, GPUs,
hosts, what every variable of a compose is)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from ...sources.notes.notes import Block, Note
from ...sources.patterns import lazy
from ..knobwords import knob_of_flag, knob_of_words
from .base import VALUE, VAR, VARIABLE, Q, Sentences, Statement, value_of

PARAMETER = lazy(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")  # a request or config parameter
NAME_HEADER = lazy(r"^(?:container(?:\s+name)?|service(?:\s+name)?|model|name)$", re.I)
DEFAULT_HEADER = lazy(r"^(?:default(?:\s+value)?|value)$", re.IGNORECASE)
LISTING = lazy(rf"^(?P<name>{VAR})[ \t]{{2,}}(?P<value>\S+)\s*$")
MAPS_TO = lazy(rf"\bmaps\s+to\s+(?:the\s+)?[`'\"]?(?P<var>{VAR})\b", re.IGNORECASE)
SAID_DEFAULT = (
    lazy(
        rf"{Q}(?P<var>{VAR}){Q}\s+(?:is\s+set\s+to|defaults\s+to|is\s+by\s+default)\s+"
        rf"{Q}(?P<value>{VALUE}){Q}"
    ),
    lazy(rf"{Q}(?P<var>{VAR}){Q}\s*\(\s*defaults?(?::|\s+to|\s+is)?\s+{Q}(?P<value>{VALUE})"),
    lazy(
        rf"\bdefault\s+(?:value\s+)?(?:of|for)\s+{Q}(?P<var>{VAR}){Q}\s+is\s+{Q}(?P<value>{VALUE})"
    ),
)
LOCAL_PORT = lazy(r"\b(?:localhost|127\.0\.0\.1):(?P<value>\d{2,5})\b")
FLAG_VALUE = lazy(r"(?<![\w-])(?P<flag>--?[a-zA-Z][\w-]*)(?:=|\s+)(?P<value>[^\s\-'\"`][^\s'\"`]*)")
EXPORT = lazy(rf"^\s*export\s+(?P<var>{VAR})=(?P<value>[^\s;&|]*)")
GPU_IDS = lazy(
    r"\bGPUs?\s+(?P<value>\d{1,3}(?:\s*(?:,|and|&)\s*\d{1,3})*)\s*(?::|\bfor\b|->|→|=)\s*"
    r"(?P<subject>[^;,.()]+)",
    re.IGNORECASE,
)
GPU_COUNT = (
    lazy(r"\b(?:requires?|needs?|uses?|runs\s+on|reserves?)\s+(?P<value>\d{1,3})\s+GPUs?\b", re.I),
    lazy(r"(?<![\w-])(?P<value>\d{1,3})\s+GPUs?\s+(?:are\s+)?(?:required|needed)\b", re.I),
)
TENSOR_PARALLEL = (
    lazy(r"(?<![\w-])TP\s?(?P<value>\d{1,3})(?![\w.])"),
    lazy(
        r"\btensor[- ]parallel(?:ism)?(?:\s+size)?(?:\s+of|\s*[=:])?\s+(?P<value>\d{1,3})\b", re.I
    ),
)
HOST = (
    lazy(  # a count of one card model: ``2xH100``, ``3 x B200``, ``4x MI300X``
        r"(?<![\w.])(?P<value>\d{1,2})\s*[x×]\s*"
        r"(?:NVIDIA\s+)?[A-Z]{1,4}\d{2,4}[A-Za-z]*\b"
    ),
    lazy(
        r"\b(?:systems?|hosts?|machines?|nodes?|servers?)\s+with\s+(?P<value>\d{1,2})"
        r"(?P<more>\+)?\s*GPUs?\b",
        re.IGNORECASE,
    ),
    lazy(
        r"(?<![\w.])(?P<value>\d{1,2})-GPU\s+"
        r"(?:systems?|hosts?|machines?|nodes?|servers?|setups?)\b",
        re.IGNORECASE,
    ),
)
LOWER_BOUND = lazy(r"\b(?:minimum|at\s+least|or\s+more)\b", re.IGNORECASE)
EVERY = lazy(
    r"\b(?:all|every)\s+(?:of\s+)?(?:the\s+)?(?:environment\s+|env\s+)?"
    r"(?:variables?|vars|settings|knobs|entries)\b",
    re.IGNORECASE,
)
OVERRIDE_WORDS = lazy(r"\$\{|\.env\b|\boverrid|\binterpolat|\bconfigurable\b", re.I)
YAML_NAME = lazy(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.ya?ml)\b")


def note_statements(note: Note) -> list[Statement]:
    """Every statement a note makes, in every layout."""
    found: list[Statement] = []
    for block in note.blocks:
        if not block.current:
            continue
        if block.kind == "table":
            said = tables(note, block)
        elif block.kind == "code":
            said = blocks(note, block) + shell(note, block)
        elif block.kind == "paragraph":
            said = sentences(note, block) + gpu_sentences(note, block) + universal(note, block)
            said += hosts(note, block)
        else:
            continue
        found += [replace(s, section=block.section) for s in said]
    return found


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
        elif defaults and PARAMETER.match(first):
            headings = _headings(note, block.section)
            said = [_cell(note, line, first, headings, cells[i], i) for i in defaults[:1]]
            found += [replace(s, layout="parameter", mention=True) for s in said if s]
        elif not defaults and not VARIABLE.match(first):
            names = tuple(
                c.strip("`*") for i, c in enumerate(cells) if i and NAME_HEADER.match(header[i])
            )
            row = [_cell(note, line, k, first, cells[i], i) for i, k in knobs.items() if k]
            found += [replace(s, names=names) if s is not None and names else s for s in row]
    return [s for s in found if s is not None]


def _headings(note: Note, section: int) -> str:
    """The titles of the section at ``section`` and of the sections it is in, outermost
    first: what a table under them is about."""
    chain: list[str] = []
    level = 99
    for heading in reversed(note.sections[: section + 1]):
        if heading.level < level:
            chain.insert(0, heading.title)
            level = heading.level
    return " / ".join(chain)


def _cells(text: str) -> list[str]:
    return [cell.strip() for cell in text.split(" | ")]


def _cell(
    note: Note, line: int, knob: str, subject: str | None, cell: str, index: int
) -> Statement | None:
    value = value_of(cell)
    if value is None:
        return None
    raw = note.lines[line - 1]
    start = _nth(raw, "|", index + (1 if raw.lstrip().startswith("|") else 0))
    found = raw.find(value, start)
    column = found + 1 or start + 1
    end = found + 1 + len(value) if found >= 0 else 0
    return Statement(subject, knob, value, note.path, line, column, "table", end_column=end)


def _nth(text: str, char: str, n: int) -> int:
    at = 0
    for _ in range(n):
        found = text.find(char, at)
        if found < 0:
            return at
        at = found + 1
    return at


def blocks(note: Note, block: Block) -> list[Statement]:
    """``NAME  value`` listings: an env catalog restated in a code block, two entries or more."""
    entries = [(line, LISTING.match(text)) for line, text in block.line_texts]
    listed = [(line, m) for line, m in entries if m is not None]
    if len(listed) < 2:
        return []
    found = []
    texts = dict(block.line_texts)
    for line, match in listed:
        value = value_of(match.group("value"))
        if value is None:
            continue
        column = note.lines[line - 1].find(match.group("value")) + 1
        end = column + len(match.group("value")) if column else 0
        names = [match.group("name")]
        alias = _maps_to(texts, line)
        if alias is not None and alias != match.group("name"):
            names.append(alias)
        found += [
            Statement(None, name, value, note.path, line, column, "block", end_column=end)
            for name in names
        ]
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
                    end_column=export.end("value") + 1,
                )
            )
        for match in FLAG_VALUE.finditer(raw):
            knob = knob_of_flag(match.group("flag"))
            if knob is not None:
                column, end = match.start("value") + 1, match.end("value") + 1
                value = match.group("value")
                found.append(
                    Statement(None, knob, value, note.path, line, column, "shell", end_column=end)
                )
    return found


def _matches(
    note: Note, block: Block, patterns: tuple[re.Pattern[str], ...]
) -> Iterator[tuple[int, re.Pattern[str], re.Match[str]]]:
    """Each match of ``patterns`` in the block's source lines, line by line, pattern by pattern."""
    for line, _ in block.line_texts:
        raw = note.lines[line - 1]
        for pattern in patterns:
            for match in pattern.finditer(raw):
                yield line, pattern, match


def sentences(note: Note, block: Block) -> list[Statement]:
    """A variable's stated default, and a local port beside the service it opens."""
    found = []
    cut: Sentences | None = None  # cut on the first match
    for line, _ in block.line_texts:
        raw = note.lines[line - 1]
        for pattern in SAID_DEFAULT:
            for match in pattern.finditer(raw):
                value = value_of(match.group("value").rstrip(".:"))
                if value is not None:
                    column = match.start("value") + 1
                    found.append(
                        Statement(
                            None,
                            match.group("var"),
                            value,
                            note.path,
                            line,
                            column,
                            "sentence",
                            end_column=column + len(match.group("value").rstrip(".:")),
                        )
                    )
        for match in LOCAL_PORT.finditer(raw):
            passage = (cut := cut or Sentences(block)).at(line, match.group(0))
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
                    end_column=match.end("value") + 1,
                )
            )
    return found


def gpu_sentences(note: Note, block: Block) -> list[Statement]:
    """The cards a sentence gives a service (``GPU 1: chat-llm``: ids, the subject after the
    colon), and a count of GPUs or a tensor-parallel size (``requires 2 GPUs``, ``TP2``)
    about the one service the sentence names (a mention: the sentence is the subject)."""
    found = []
    cut: Sentences | None = None  # cut on the first match
    for line, _ in block.line_texts:
        raw = note.lines[line - 1]
        for match in GPU_IDS.finditer(raw):
            ids = ",".join(re.findall(r"\d+", match.group("value")))
            subject = match.group("subject").strip(" *`'\"")
            column, end = match.start("value") + 1, match.end("value") + 1
            found.append(
                Statement(
                    subject, "gpu_ids", ids, note.path, line, column, "sentence", end_column=end
                )
            )
        for knob, patterns in (("gpus", GPU_COUNT), ("tensor_parallel_size", TENSOR_PARALLEL)):
            for pattern in patterns:
                for match in pattern.finditer(raw):
                    passage = (cut := cut or Sentences(block)).at(line, match.group(0))
                    column, end = match.start("value") + 1, match.end("value") + 1
                    value = match.group("value")
                    found.append(
                        Statement(
                            passage,
                            knob,
                            value,
                            note.path,
                            line,
                            column,
                            "sentence",
                            True,
                            end_column=end,
                        )
                    )
    return found


def hosts(note: Note, block: Block) -> list[Statement]:
    """The size of the host a passage describes, in cards (layout ``host``, knob
    ``host_gpus``): ``on 2xH100 GPUs``, ``systems with 3 GPUs``, ``a 4-GPU node``. A lower
    bound (``3+ GPUs``, ``minimum 3xH100``, ``at least``) is written ``3+``: a host of that size
    or more, whose last card is not known."""
    found = []
    cut: Sentences | None = None  # cut on the first match
    for line, _, match in _matches(note, block, HOST):
        passage = (cut := cut or Sentences(block)).at(line, match.group(0))
        bound = match.groupdict().get("more") or LOWER_BOUND.search(passage)
        value = match.group("value") + ("+" if bound else "")
        column, end = match.start("value") + 1, match.end("value") + 1
        found.append(
            Statement(None, "host_gpus", value, note.path, line, column, "host", end_column=end)
        )
    return sorted(found, key=lambda s: (s.line, s.column))


def universal(note: Note, block: Block) -> list[Statement]:
    """A sentence saying every variable of a compose is set through interpolation ("All
    environment variables in `docker-compose.yml` use `${VAR:-default}`, so a `.env` overrides
    them"): the subject is the compose the sentence names, the knob ``interpolation``. Only
    "all variables" unqualified counts: "all GPU tuning knobs are configurable" is about some."""
    found = []
    cut: Sentences | None = None  # cut on the first match
    for line, _, match in _matches(note, block, (EVERY,)):
        passage = (cut := cut or Sentences(block)).at(line, match.group(0))
        names = YAML_NAME.findall(passage)
        if len(set(names)) != 1 or not OVERRIDE_WORDS.search(passage):
            continue
        column, end = match.start() + 1, match.end() + 1
        found.append(
            Statement(
                names[0],
                "interpolation",
                "every",
                note.path,
                line,
                column,
                "universal",
                end_column=end,
            )
        )
    return found
