"""Inputs for the write commands' properties: registries and composes in the layouts a command
must edit without disturbing anything else, and one command to run on them.

Shared by ``tests/write/test_write_props.py`` (bounded, in CI) and ``tools/fuzz_campaign.py
--writes`` (long runs on demand). The layouts are those of hand-kept files: comments between
list items and between keys, flow and block lists and mappings, block scalars holding ``#``
lines, CRLF, a BOM, no final line break, trailing spaces and tabs, line separators in values and
comments, stale copies with hand-written lines inside them or in a trailing comment. Every
comment a generator writes carries a mark (``note N:``), so a property can tell that none was
lost. Values given on the command line come from ``ARGUMENTS``: words YAML 1.1 and 1.2 read
differently, indicators, line breaks of every kind.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from .cli_helpers import STALE_COPY
from .fuzz_strategies import EstateCase, base_config, estates, one_in, sampled

SCRAPES = Path(__file__).parent / "fixtures" / "scrapes"
DATE = "2026-11-30"
CONFIG = 'composes = ["composes/**/*.yml"]\nnotes = ["learnings/**/*.md"]\n'

# --- values ---------------------------------------------------------------------------------

# Given on the command line (--title, --reason, --match, --engine, --note): what must come back
# from every YAML reader as it was typed (surrounding whitespace aside).
PLAIN_ARGUMENTS = (
    "Decode cliff on the spec tiers",
    "KV pool holds 5 sequences",
    "v0.27.1",
    "vllm/vllm-openai:v0.28.0",
    "fp8 costs 32,768 bytes per token (measured)",
)
ARGUMENTS = (
    *PLAIN_ARGUMENTS,
    "on",
    "yes",
    "No",
    "null",
    "~",
    "true",
    "1e3",
    "6.02e23",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "12:30:45",
    "2026-01-01",
    "2026-01-01 10:00:00",
    ".inf",
    "-.5",
    "+1",
    "=",
    "<<",
    "- dash first",
    "-",
    "? question",
    ": colon first",
    "key: value",
    "a #not a comment",
    "#hash first",
    "'single'",
    '"double"',
    "|",
    ">-",
    "*alias",
    "&anchor",
    "!tag",
    "%percent",
    "@at",
    "`tick`",
    "[flow, list]",
    "{flow: map}",
    "a, b",
    "tab\tinside",
    "  padded  ",
    "trailing space ",
    "é ü 名 ⚠️ ×",
    "line\u2028separator",
    "next\x85line",
    "para\u2029graph",
    "back\\slash",
    "x" * 300,
)
# The content of --text-file / --replacement-file (read as guards reads files: every line
# break, U+2028 included, is a line break).
PLAIN_WORDINGS = (
    "Decode is flat with context.\n",
    "Decode slows with context:\nattention cost, expected.\n",
)
WORDINGS = (
    *PLAIN_WORDINGS,
    "one line, no break",
    "  indented first line\nsecond line\n",
    "first\n\n\nafter blank lines\n",
    "# not a comment\n- not a list\nkey: not a mapping\n",
    "trailing spaces   \nand a tab\t\n",
    "\tleading tab\nsecond\n",
    "crlf\r\nfile\r\n",
    "separator\u2028inside\n",
    "middle\n   \nwhitespace-only line\n",
    "---\n...\n",
    "on\n",
    "1e3",
    "é 名 ⚠️\n",
)

# Values inside the generated files (titles, reasons, list items), each in a style YAML allows.
FILE_VALUES = (
    "Decode cliff",
    "KV bytes",
    "Spec tax: 35387",
    "a #b",
    "tab\tinside",
    "é 名 ⚠️",
    "line\u2028sep",
    "nel\x85x",
    "quote ' and \"",
    "x" * 90,
    "on",
    "1e3",
)
PLAIN_SAFE = frozenset(("Decode cliff", "KV bytes", "é 名 ⚠️", "x" * 90))
# Ids, statuses, model names and dates: plain wherever they stand (YAML 1.1 words excluded).
PLAIN_WORD = re.compile(r"[a-z]+(?:[-.][a-z0-9]+)*|qwen3\.8-27b|\d{4}-\d{2}-\d{2}")
YAML11_WORDS = frozenset(("on", "off", "yes", "no", "y", "n", "true", "false", "null"))
COMMENT_TEXT = (
    "keep me",
    "measured on 2×3090",
    "tab\tinside",
    "trailing spaces   ",
    "é 名 ⚠️",
    "a: b - c [d] {e}",
    "quote ' \"",
    "#double hash",
    "ends with a line separator\u2028",
    "ends with NEL\x85",
    "",
)


def double_quoted(value: str) -> str:
    escapes = {
        "\\": "\\\\",
        '"': '\\"',
        "\n": "\\n",
        "\u2028": "\\L",
        "\x85": "\\N",
        "\u2029": "\\P",
    }
    return '"' + "".join(escapes.get(ch, ch) for ch in value) + '"'


def scalar(draw, value: str) -> str:
    """``value`` as a YAML flow scalar, in a style chosen among those that can hold it."""
    styles = ["double"]
    if value in PLAIN_SAFE or (PLAIN_WORD.fullmatch(value) and value not in YAML11_WORDS):
        styles.append("plain")
    if not any(ch in value for ch in "\n\u2028\x85\u2029\t"):
        styles.append("single")
    style = draw(sampled(styles))
    if style == "plain":
        return value
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    return double_quoted(value)


# --- layout ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """How a file's text is laid out in bytes."""

    crlf: bool = False
    bom: bool = False
    final_break: bool = True

    def encode(self, text: str) -> bytes:
        if not self.final_break:
            text = text.rstrip("\n")
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return (("\ufeff" if self.bom else "") + text).encode("utf-8")


def layouts() -> st.SearchStrategy[Layout]:
    return st.builds(Layout, st.booleans(), st.booleans(), st.booleans())


class Marks:
    """Numbered comment marks (``note N:``): every one written must be in the file after."""

    def __init__(self) -> None:
        self.count = 0

    def comment(self, draw, indent: int = 0) -> str:
        self.count += 1
        return f"{' ' * indent}# note {self.count}: {draw(sampled(COMMENT_TEXT))}"

    def trailing(self, draw) -> str:
        if not one_in(draw, 3):
            return ""
        gap = draw(sampled(("  ", " ", "   ")))
        return gap + self.comment(draw)


def _spaces(draw, line: str) -> str:
    """A line, now and then with trailing spaces (or a tab, which only libyaml reads)."""
    if line.endswith(("\u2028", "\x85")):  # the spaces would open the next line
        return line
    return line + draw(sampled(("",) * 10 + ("  ", " ", "\t")))


# --- registries -----------------------------------------------------------------------------


def claim_values(draw, index: int, status: str) -> dict:
    """A claim's fields (in the registry's order, a few left out), as Python values."""
    claim: dict = {"id": f"claim-{index}", "title": draw(sampled(FILE_VALUES))}
    claim["status"] = status
    if draw(st.booleans()):
        claim["asserted"] = "2026-08-25"
    if status in ("retracted", "superseded"):
        claim["retracted"] = "2026-09-08"
    if draw(st.booleans()) or status != "active":
        claim["reason"] = draw(
            st.sampled_from(
                (
                    "A harness artefact.",
                    "Measured twice:\nboth agree.",
                    "x" * 140,
                    "line\u2028sep",
                    "#1218, not the engine",
                )
            )
        )
    if draw(st.booleans()):
        claim["text"] = draw(
            st.sampled_from(
                (
                    f"The pool on rig {index} holds {index + 3} sequences.",
                    "# a heading, not a comment\nwrapped wording  \nover lines",
                    "  indented first line\nsecond",
                )
            )
        )
    for key in ("variants", "match", "not_match"):
        if one_in(draw, 3):
            claim[key] = draw(st.lists(st.sampled_from(FILE_VALUES), min_size=1, max_size=3))
    if status != "active":
        claim["replacement"] = "Decode is flat with context."
    if one_in(draw, 3):
        claim["refs"] = ["#1052", "vllm#35387"][: draw(st.integers(1, 2))]
    if one_in(draw, 2):
        claim["evidence"] = [
            {"source": draw(sampled(FILE_VALUES)), "date": "2026-08-26"}
            for _ in range(draw(st.integers(1, 2)))
        ]
    if one_in(draw, 3):
        claim["applies_to"] = {"model": "qwen3.8-27b", "engine": "vllm"}
    return claim


def _block_scalar(draw, value: str, column: int) -> list[str]:
    """A ``|``/``|-``/``>-`` block: the indicator (after the key), then the content lines."""
    lines = value.split("\n")
    pad = " " * column
    if lines[0].startswith(" "):
        return ["|2-", *(pad + line if line else "" for line in lines)]
    style = draw(sampled(("|-", "|-", "|", ">-"))) if "#" not in value else "|-"
    if style == ">-":  # folded: a blank line between lines keeps the break
        return [">-", *(pad + line if line else "" for line in "\n\n".join(lines).split("\n"))]
    if style == "|":
        lines.append("")
    return [style, *(pad + line if line else "" for line in lines)]


def _value(draw, marks: Marks, value, column: int) -> list[str]:
    """YAML for ``value`` after ``key:``: the rest of the key's line, then continuation lines
    (already indented). ``column`` is the key's column."""
    if isinstance(value, str):
        if "\n" in value:
            head, *body = _block_scalar(draw, value, column + 2)
            return [" " + head + marks.trailing(draw), *body]
        return [" " + scalar(draw, value) + marks.trailing(draw)]
    if isinstance(value, dict):
        if draw(st.booleans()):
            return [" " + _flow_item(draw, value) + marks.trailing(draw)]
        pad = " " * (column + 2)
        return [
            marks.trailing(draw),
            *(f"{pad}{k}: {_flow_item(draw, v)}" for k, v in value.items()),
        ]
    return _list(draw, marks, value, column)


def _list(draw, marks: Marks, items: list, column: int) -> list[str]:
    style = draw(sampled(("flow", "flow-lines", "block", "block-compact")))
    if len(items) == 1 and isinstance(items[0], str) and one_in(draw, 5):
        return [" " + scalar(draw, items[0])]  # a bare string stands for a list of one
    if style == "flow":
        return [" [" + ", ".join(_flow_item(draw, i) for i in items) + "]" + marks.trailing(draw)]
    pad = " " * (column + 2)
    if style == "flow-lines":
        rows = [" [" + marks.trailing(draw)]
        for item in items:
            if one_in(draw, 3):
                rows.append(marks.comment(draw, column + 2))
            rows.append(f"{pad}{_flow_item(draw, item)},{marks.trailing(draw)}")
        return [*rows, f"{pad}]"]
    dash = pad if style == "block" else " " * column
    rows = [marks.trailing(draw)]
    for item in items:
        if one_in(draw, 3):
            rows.append(marks.comment(draw, draw(sampled((0, column, len(dash))))))
        if isinstance(item, dict):
            rows += _block_item(draw, marks, item, len(dash))
        else:
            rows.append(f"{dash}- {scalar(draw, item)}{marks.trailing(draw)}")
    return rows


def _flow_item(draw, item) -> str:
    """A value in flow style: ``{k: v}``, ``[a, b]`` or a scalar."""
    if isinstance(item, dict):
        return "{" + ", ".join(f"{k}: {_flow_item(draw, v)}" for k, v in item.items()) + "}"
    if isinstance(item, list):
        return "[" + ", ".join(_flow_item(draw, v) for v in item) + "]"
    return scalar(draw, item)


def _block_item(draw, marks: Marks, item: dict, dash: int) -> list[str]:
    """A mapping as a block-list item: ``- key: value`` and its further keys below."""
    if one_in(draw, 4):
        return [" " * dash + "- " + _flow_item(draw, item) + marks.trailing(draw)]
    gap = draw(sampled((1, 1, 3)))
    column = dash + 1 + gap
    rows: list[str] = []
    for n, (key, value) in enumerate(item.items()):
        first, *rest = _value(draw, marks, value, column)
        lead = " " * dash + "-" + " " * gap if n == 0 else " " * column
        rows += [f"{lead}{key}:{first}", *rest]
    return rows


def claim_lines(draw, marks: Marks, claim: dict, dash: int) -> list[str]:
    """One claim as an item of the block list ``claims:`` (its ``-`` at column ``dash``)."""
    if one_in(draw, 10):
        return [" " * dash + "- " + _flow_item(draw, claim) + marks.trailing(draw)]
    gap = draw(sampled((1, 1, 1, 3)))
    column = dash + 1 + gap
    rows: list[str] = []
    for n, (key, value) in enumerate(claim.items()):
        if n and one_in(draw, 6):
            rows.append(marks.comment(draw, draw(sampled((0, column)))))
        if n and one_in(draw, 10):
            rows.append("")
        first, *rest = _value(draw, marks, value, column)
        lead = " " * dash + "-" + " " * gap if n == 0 else " " * column
        rows += [_spaces(draw, f"{lead}{key}:{first}"), *rest]
    return rows


def registry_text(draw, marks: Marks, claims: list[dict], flow_list: bool = False) -> str:
    """A registry holding ``claims``, laid out as hand-kept registries are."""
    rows = [marks.comment(draw) for _ in range(draw(st.integers(0, 2)))]
    version = draw(sampled(("first", "first", "last", "none")))
    if version == "first":
        rows.append("version: 1" + marks.trailing(draw))
    if flow_list:
        rows.append("claims: [" + ", ".join(_flow_item(draw, c) for c in claims) + "]")
    else:
        rows.append("claims:" + marks.trailing(draw))
        dash = draw(sampled((0, 2, 2)))
        for claim in claims:
            for _ in range(draw(st.integers(0, 2)) if one_in(draw, 2) else 0):
                rows.append(marks.comment(draw, draw(sampled((0, dash, dash + 2)))))
            if one_in(draw, 3):
                rows.append("")
            rows += claim_lines(draw, marks, claim, dash)
        rows += [marks.comment(draw, dash) for _ in range(draw(st.integers(0, 1)))]
    if version == "last":
        rows.append("version: 1")
    return "\n".join(rows) + "\n"


@st.composite
def claim_sets(draw, required: tuple[dict, ...] = ()) -> list[dict]:
    """``required`` claims and up to four generated ones, in a drawn order."""
    statuses = ("active", "active", "retracted", "superseded", "disputed")
    count = draw(st.integers(0 if required else 1, 4))
    claims = [*required]
    for index in range(count):
        claims.append(claim_values(draw, index, draw(sampled(statuses))))
    return draw(st.permutations(claims)) if len(claims) > 1 and one_in(draw, 3) else claims


OLD_CLIFF = {
    "id": "old-cliff",
    "title": "Decode cliff",
    "status": "retracted",
    "retracted": "2026-09-08",
    "reason": "A harness artefact.",
    "text": "Decode collapses once accumulated context passes ~21k on the spec tiers.",
    "match": ["accumulated-context decode cliff"],
    "replacement": "Decode is flat with context.",
}
KV_BYTES = {
    "id": "kv-bytes",
    "title": "KV bytes",
    "status": "active",
    "text": "fp8 KV costs 32,768 bytes per token.",
}


# --- one command on one estate --------------------------------------------------------------


@dataclass(repr=False)
class WriteCase:
    """An estate (``files`` under ``root/``, ``outside`` beside it, ``inputs`` the files named
    on the command line), the links planted in it (``root/PATH`` -> relative target), and
    one write command run in ``root``. ``expect`` holds what the command means to do."""

    command: str  # add | retract | confirm | dismiss | evidence | fix | regen | baseline
    files: dict[str, bytes]
    args: tuple[str, ...]
    inputs: dict[str, bytes] = field(default_factory=dict)
    outside: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    expect: dict = field(default_factory=dict)
    marks: int = 0  # how many ``note N:`` comments the files hold

    def size(self) -> int:
        return sum(map(len, self.files.values())) + sum(map(len, self.inputs.values()))

    def __repr__(self) -> str:  # hypothesis prints it; shown() is the whole case
        return f"WriteCase({self.command}, {len(self.files)} files, args={self.args!r})"

    def _repr_pretty_(self, printer, cycle) -> None:  # hypothesis's printer asks for this
        printer.text(repr(self))

    def shown(self) -> str:
        """The command and every file (a scrape by its size only), for a failure message."""
        files = {**self.files, **{f"../inputs/{k}": v for k, v in self.inputs.items()}}
        lines = [
            f"--- {name}\n{data.decode('utf-8', 'replace')!r}"
            if not name.endswith(".prom")
            else f"--- {name} ({len(data):,} bytes, tests/fixtures/scrapes/{name.rsplit('/', 1)[-1]})"
            for name, data in files.items()
        ]
        lines += [f"--- link {name} -> {target}" for name, target in self.links.items()]
        return "\n".join([f"guards {' '.join(map(repr, self.args))}", *lines])


def _config(draw) -> dict[str, bytes]:
    """Settings naming the registry, or none (the default name)."""
    return {"guards.toml": b'claims = "claims.yaml"\n'} if draw(st.booleans()) else {}


def _link_registry(draw, case: WriteCase) -> WriteCase:
    """Now and then, the registry is a committed link to a file outside the root."""
    if one_in(draw, 8):
        case.outside["claims.yaml"] = case.files.pop("claims.yaml")
        case.links["claims.yaml"] = "../outside/claims.yaml"
        case.expect["linked"] = True
    return case


@st.composite
def registries(draw, required: tuple[dict, ...] = ()) -> tuple[str, list[dict], Layout, int]:
    marks = Marks()
    claims = draw(claim_sets(required))
    text = registry_text(draw, marks, claims, flow_list=one_in(draw, 12))
    return text, claims, draw(layouts()), marks.count


def _plain(draw, values: tuple[str, ...], plain: tuple[str, ...]) -> tuple[str, bool]:
    value = draw(sampled(plain if draw(st.booleans()) else values))
    return value, value in plain


@st.composite
def add_cases(draw) -> WriteCase:
    text, claims, layout, marks = draw(registries())
    ids = [c["id"] for c in claims]
    new_id = draw(sampled(("new-claim", "n", "new-claim-2", *ids[:1], "Bad_Id")))
    title, plain_title = _plain(draw, ARGUMENTS, PLAIN_ARGUMENTS)
    wording, plain_wording = _plain(draw, WORDINGS, PLAIN_WORDINGS)
    matches = draw(st.lists(st.sampled_from(ARGUMENTS), max_size=2))
    args = ["claims", "add", new_id, f"--title={title}", "--text-file", "../inputs/text.txt"]
    args += ["--date", DATE, *(f"--match={m}" for m in matches)]
    plain = plain_title and plain_wording and set(matches) <= set(PLAIN_ARGUMENTS)
    case = WriteCase(
        "add",
        {"claims.yaml": layout.encode(text), **_config(draw)},
        tuple(args),
        inputs={"text.txt": wording.encode()},
        expect={
            "id": new_id,
            "title": title,
            "text": wording,
            "match": matches,
            "plain": plain and new_id not in ids and new_id != "Bad_Id",
        },
        marks=marks,
    )
    return _link_registry(draw, case)


@st.composite
def retract_cases(draw) -> WriteCase:
    text, claims, layout, marks = draw(registries())
    target = draw(
        st.sampled_from([*claims, {"id": "no-such-claim"}] if one_in(draw, 8) else claims)
    )
    reason, plain_reason = _plain(draw, ARGUMENTS, PLAIN_ARGUMENTS)
    wording, plain_wording = _plain(draw, WORDINGS, PLAIN_WORDINGS)
    force = draw(st.booleans())
    date = DATE if not one_in(draw, 10) else "2026-02-30"
    args = ["claims", "retract", target["id"], "--date", date, f"--reason={reason}"]
    args += ["--replacement-file", "../inputs/replacement.txt", *(["--force"] if force else [])]
    withdrawn = target.get("status") in ("retracted", "superseded")
    case = WriteCase(
        "retract",
        {"claims.yaml": layout.encode(text), **_config(draw)},
        tuple(args),
        inputs={"replacement.txt": wording.encode()},
        expect={
            "id": target["id"],
            "date": date,
            "reason": reason,
            "replacement": wording,
            "force": force,
            "plain": plain_reason
            and plain_wording
            and date == DATE
            and "status" in target
            and (force or not withdrawn),
        },
        marks=marks,
    )
    return _link_registry(draw, case)


# A note whose paragraphs restate the claims the find cases register, for `find` to rank.
FIND_NOTE = """\
# Findings

The accumulated-context decode cliff: decode collapses once accumulated context passes
~21k on the spec tiers.

Decode collapses past ~21k on the spec-decode tiers, we thought.

fp8 KV costs 32,768 bytes per token on this model.
"""


@st.composite
def find_cases(draw) -> WriteCase:
    text, _, layout, marks = draw(registries(required=(OLD_CLIFF, KV_BYTES)))
    target = draw(sampled(("old-cliff", "kv-bytes")))
    mode = draw(sampled(("confirm", "dismiss")))
    note = FIND_NOTE.replace("\n", "\r\n") if draw(st.booleans()) else FIND_NOTE
    compose = STALE_COPY + BODY
    files = {
        "claims.yaml": layout.encode(text),
        "guards.toml": CONFIG.encode(),
        "learnings/n.md": note.encode(),
        "composes/c.yml": compose.encode(),
    }
    case = WriteCase(
        mode,
        files,
        ("claims", "find", target, f"--{mode}", "{PASSAGE}"),
        expect={"id": target, "pick": draw(st.integers(0, 20)), "plain": True},
        marks=marks,
    )
    return _link_registry(draw, case)


SCRAPE_PAIRS = (
    ("retest-before.prom", "retest-after.prom"),
    ("slow-before.prom", "slow-after.prom"),
    ("slow-after.prom",),
    ("two-models.prom",),
)


@st.composite
def evidence_cases(draw) -> WriteCase:
    text, claims, layout, marks = draw(registries())
    target = draw(sampled([c["id"] for c in claims]))
    scrapes = draw(sampled(SCRAPE_PAIRS))
    engine, plain_engine = _plain(draw, ARGUMENTS, PLAIN_ARGUMENTS)
    note = draw(sampled((None, *ARGUMENTS)))
    args = ["claims", "evidence", "add", target, "--scrape", f"../inputs/{scrapes[0]}"]
    args += [f"../inputs/{s}" for s in scrapes[1:]]
    args += [f"--engine={engine}", "--date", DATE]
    model = "qwen3.8-27b" if scrapes == ("two-models.prom",) else None
    args += ["--model", model] if model else []
    args += [f"--note={note}"] if note is not None else []
    inputs = {name: (SCRAPES / name).read_bytes() for name in scrapes}
    case = WriteCase(
        "evidence",
        {"claims.yaml": layout.encode(text), **_config(draw)},
        tuple(args),
        inputs=inputs,
        expect={
            "id": target,
            "engine": engine,
            "note": note,
            "scrapes": [f"../inputs/{s}" for s in scrapes],
            "model": model,
            "plain": plain_engine and note in (None, *PLAIN_ARGUMENTS),
        },
        marks=marks,
    )
    return _link_registry(draw, case)


# --- composes with stale copies and regions -------------------------------------------------

BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
COPY_LINES = STALE_COPY.rstrip("\n").split("\n")
HAND_LINE = "hand-written, between the copy's lines"


@dataclass
class Copy:
    """A stale copy planted in a compose: its 0-based lines, and whether fix may replace it
    (whole comment lines) or must leave it (a trailing comment, a line of a script)."""

    lines: list[int]
    whole: bool
    plain: bool  # two comment lines as the registry's wording has them: fix must replace it


def _copy_rows(draw, marks: Marks, indent: int) -> tuple[list[str], list[int], bool]:
    """The copy's comment lines at ``indent``; which of them are the copy (a hand-written line
    may sit between them); whether it is the plain form."""
    pad = " " * indent
    first, second = COPY_LINES
    hand = one_in(draw, 3)
    tabs = one_in(draw, 5)
    if tabs:
        second = second.replace("#   ", "#\t")
    rows = [_spaces(draw, pad + first)]
    if hand:
        rows.append(marks.comment(draw, indent).replace(": ", f": {HAND_LINE} ", 1))
    rows.append(_spaces(draw, pad + second))
    copy = [0, 2] if hand else [0, 1]
    return rows, copy, not hand and not tabs and rows[0] == pad + first and rows[-1] == pad + second


@st.composite
def fix_composes(draw, marks: Marks) -> tuple[str, list[Copy]]:
    """A compose holding one or two stale copies, in comment lines at the top, inside the
    service, between the items of a block list or a flow list, in a trailing comment, or
    inside a script."""
    slots = draw(
        st.lists(
            st.sampled_from(("top", "service", "list", "flow", "trailing", "script")),
            min_size=1,
            max_size=2,
            unique=True,
        )
    )
    rows: list[str] = [marks.comment(draw) for _ in range(draw(st.integers(0, 2)))]
    copies: list[Copy] = []

    def plant(indent: int) -> None:
        found, lines, plain = _copy_rows(draw, marks, indent)
        copies.append(Copy([len(rows) + n for n in lines], True, plain))
        rows.extend(found)

    if "top" in slots:
        plant(0)
    rows += ["services:", "  vllm:"]
    if "service" in slots:
        plant(4)
    if "trailing" in slots:
        copies.append(Copy([len(rows)], False, False))
        rows.append("    image: vllm/vllm-openai:v0.27.1  " + " ".join(COPY_LINES))
    else:
        rows.append("    image: vllm/vllm-openai:v0.27.1" + marks.trailing(draw))
    if "flow" in slots:
        rows.append('    command: [ "--max-model-len",' + marks.trailing(draw))
        plant(6)
        rows += ['      "131072", "--max-num-seqs", "4" ]']
    else:
        rows.append("    command:" + marks.trailing(draw))
        rows += ["      - --max-model-len", '      - "131072"']
        if "list" in slots:
            plant(6)
        else:
            rows.append(marks.comment(draw, 6))
        rows += ["      - --max-num-seqs", "      - '4'" + marks.trailing(draw)]
    rows += ["    environment:", f"      NOTE: {scalar(draw, draw(sampled(FILE_VALUES)))}"]
    if "script" in slots:
        rows += ["    entrypoint:", "      - /bin/sh", "      - -c", "      - |"]
        copies.append(Copy([len(rows), len(rows) + 1], False, False))
        rows += ["        " + line for line in COPY_LINES]
        rows.append("        exec vllm serve")
    whole = all(c.whole for c in copies)
    for copy in copies:  # near another copy, C001 may report the two as one passage
        near = {
            n + d for other in copies if other is not copy for n in other.lines for d in (-1, 1)
        }
        copy.plain = copy.plain and whole and not near & set(copy.lines)
    return "\n".join(rows) + "\n", copies


@st.composite
def fix_cases(draw) -> WriteCase:
    text, _, layout, registry_marks = draw(registries(required=(OLD_CLIFF, KV_BYTES)))
    marks = Marks()
    marks.count = registry_marks
    composes: dict[str, bytes] = {}
    copies: dict[str, list[Copy]] = {}
    for index in range(draw(st.integers(1, 2))):
        compose, found = draw(fix_composes(marks))
        name = f"composes/c{index}.yml"
        composes[name] = draw(layouts()).encode(compose)
        copies[name] = found
    files = {"claims.yaml": layout.encode(text), **composes}
    if one_in(draw, 4):
        files["learnings/n.md"] = ("# Notes\n\n" + " ".join(COPY_LINES) + "\n").encode()
    files["guards.toml"] = base_config(dict.fromkeys(files, "")).encode()
    args = ("fix", "--diff") if one_in(draw, 6) else ("fix",)
    case = WriteCase("fix", files, args, expect={"copies": copies}, marks=marks.count)
    if one_in(draw, 8):  # a compose that is a committed link to one outside
        outside, _ = draw(fix_composes(Marks()))
        case.outside["linked.yml"] = outside.encode()
        case.links["composes/linked.yml"] = "../../outside/linked.yml"
    return _link_registry(draw, case)


ODD_TITLE = "tab\tand line\u2028separator ⚠️"
NOTE_TEMPLATE = "{{ args | join(' ') }}: {{ claim('kv-bytes').title }}\n"
REGION_NAMES = ("claim kv-bytes", "claim old-cliff", "claim odd-title", "note a b")


@st.composite
def region_rows(draw, indent: int) -> tuple[list[str], str, str]:
    """A region: its marker lines and body as written (empty, stale words, or edited by hand:
    a body its recorded checksum does not match); its name; its body's kind."""
    pad = " " * indent
    name = draw(sampled(REGION_NAMES))
    body = draw(sampled(("empty", "stale", "edited")))
    rows = [f"{pad}# >>> guards:{name}"]
    if body != "empty":
        rows.append(f"{pad}# stale words")
    checksum = " (checksum: 00000000)" if body == "edited" else ""
    rows.append(f"{pad}# <<< guards:{name.split()[0]}{checksum}")
    return rows, name, body


@dataclass
class Regions:
    """What a compose's regions need: their names, whether one was edited by hand, whether
    markers sit inside a script."""

    names: list[str] = field(default_factory=list)
    edited: bool = False
    script: bool = False


@st.composite
def regen_composes(draw, marks: Marks) -> tuple[str, Regions]:
    """A compose with regions at the top, inside the service, between list items, or marker
    lines inside a script."""
    slots = draw(
        st.lists(
            st.sampled_from(("top", "service", "list", "script")),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    rows: list[str] = [marks.comment(draw) for _ in range(draw(st.integers(0, 2)))]
    found = Regions(script="script" in slots)

    def plant(indent: int) -> None:
        lines, name, body = draw(region_rows(indent))
        found.names.append(name)
        found.edited = found.edited or body == "edited"
        rows.extend(lines)

    if "top" in slots:
        plant(0)
    rows += ["x-data:", f"  k: {scalar(draw, draw(sampled(FILE_VALUES)))}"]
    rows += ["services:", "  vllm:"]
    if "service" in slots:
        plant(4)
    rows += ["    image: vllm/vllm-openai:v0.27.1" + marks.trailing(draw), "    command:"]
    rows.append("      - --max-model-len")
    if "list" in slots:
        plant(6)
    rows.append('      - "131072"' + marks.trailing(draw))
    if "script" in slots:
        rows += ["    entrypoint: |", "      #!/bin/sh", "      # >>> guards:claim kv-bytes"]
        rows += ["      # <<< guards:claim", "      exec vllm serve"]
    return "\n".join(rows) + "\n", found


ODD = {"id": "odd-title", "title": ODD_TITLE, "status": "active"}


@st.composite
def regen_cases(draw) -> WriteCase:
    text, _, layout, registry_marks = draw(registries(required=(OLD_CLIFF, KV_BYTES, ODD)))
    marks = Marks()
    marks.count = registry_marks
    files = {
        "claims.yaml": layout.encode(text),
        "guards.toml": base_config({"composes/": ""}).encode(),
    }
    regions: dict[str, Regions] = {}
    for index in range(draw(st.integers(1, 2))):
        compose, found = draw(regen_composes(marks))
        name = f"composes/r{index}.yml"
        files[name] = draw(layouts()).encode(compose)
        regions[name] = found
    mode = draw(sampled(("", "", "--force", "--force", "--check", "--diff")))
    force = mode == "--force"
    templates = draw(sampled(("none", "inside", "inside", "none", "inside", "link")))
    case = WriteCase(
        "regen",
        files,
        ("regen", *([mode] if mode else [])),
        expect={"regions": regions, "force": force, "templates": templates},
        marks=marks.count,
    )
    if templates == "inside":
        case.files["templates/note.j2"] = NOTE_TEMPLATE.encode()
    elif templates == "link":  # a committed link to a templates folder outside the root
        case.outside["templates/note.j2"] = NOTE_TEMPLATE.encode()
        case.links["templates"] = "../outside/templates"
    return _link_registry(draw, case)


@st.composite
def baseline_cases(draw) -> WriteCase:
    """An estate of the fuzz corpus (a rule case or fixture estate, now and then mutated),
    baselined; the baseline now and then a committed link out of the root."""
    estate: EstateCase = draw(estates(mutate=one_in(draw, 3)))
    at = estate.args.index("--config") if "--config" in estate.args else len(estate.args)
    config = list(estate.args[at : at + 2])
    where = draw(sampled(("default", "default", "output", "link", "dangling", "out-link")))
    args = ["baseline", *config]
    case = WriteCase("baseline", dict(estate.files), (), expect={"where": where})
    target = ".guards-baseline.json"
    if where == "output":
        target = "reports/baseline.json"
        args += ["--output", target]
    elif where == "link":  # the default baseline is a committed link to a file outside
        case.outside["baseline.json"] = b'{"version": 1, "tool": "guards", "entries": []}\n'
        case.links[target] = "../outside/baseline.json"
    elif where == "dangling":  # ... to a file outside that does not exist yet
        case.links[target] = "../outside/new-baseline.json"
    elif where == "out-link":  # --output names a committed link that leads out
        target = "out.json"
        case.outside["out.json"] = b"{}\n"
        case.links[target] = "../outside/out.json"
        args += ["--output", target]
    if where == "output":
        case.files["reports/.keep"] = b""
    case.args = tuple(args)
    case.expect["target"] = target
    return case


CASES = {
    "add": add_cases,
    "retract": retract_cases,
    "find": find_cases,
    "evidence": evidence_cases,
    "fix": fix_cases,
    "regen": regen_cases,
    "baseline": baseline_cases,
}


def registry_for_races(claims: int) -> str:
    """A valid registry of ``claims`` active claims, in block style with comments: large
    enough that a command's read-verify-write span takes a while."""
    rows = ["version: 1", "claims:"]
    for i in range(claims):
        rows += [
            f"  # note {i + 1}: claim {i}",
            f"  - id: seed-{i}",
            f"    title: {json.dumps(f'Seed claim {i}')}",
            "    status: active",
            f"    text: The pool on rig {i} holds {i % 7 + 1} sequences.",
        ]
    return "\n".join(rows) + "\n"
