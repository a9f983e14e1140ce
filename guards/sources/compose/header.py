"""The leading comment block of a compose file: profile fields, prose sections, flat lines.

Real headers (see DOMAIN.md) open with an optional ``# ====`` rule and ``# Profile
(at-a-glance):``, then ``#   Key:   value`` fields whose deeper-indented ``#`` lines continue
them, a ``# ----`` rule, free-form prose sections, and flat ``# Key-name: value`` lines that
scripts read. Keys are free text; irregular lines are kept as notes, never guessed into fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import numbers
from ..markers import Marker, retraction_marker

RULE_LINE = re.compile(r"^#\s*(?:-{3,}|={3,})\s*$")
PROFILE_LINE = re.compile(r"^#\s*(?:\W\s*)?profile\b[^:]*:\s*$", re.IGNORECASE)
# A value is `\S(?:.*\S)?`: greedy up to its last non-space, so a long line with runs of
# spaces inside is matched in linear time (a lazy `.*?` before `\s*$` is quadratic).
FIELD = re.compile(r"^(\s+)([A-Za-z][A-Za-z0-9 ./+&()-]{0,30}?):(?:\s+(\S(?:.*\S)?))?\s*$")
FLAT = re.compile(r"^# ?([A-Za-z][A-Za-z0-9]*+(?:-[A-Za-z0-9]++)++):\s+(\S(?:.*\S)?)\s*$")
SECTION_START = re.compile(r"^\s?(?:⚠|⭐|❌|✅|🧪|‼|\*\*)")
# A field value's asides: what follows a parenthesis, a bracket, a spaced dash or a semicolon
# is context for its leading statement; a clause that negates states nothing about the value.
ASIDE = re.compile(r"[(\[;]|\s[—–-]\s")
CLAUSE = re.compile(r"(?:[^()\[\];,—–]|,(?!\s))+")  # "1,1" and "131,072" are not two clauses
NEGATION = re.compile(  # negates what follows it: "can't do fp8", "fp8 instead of bf16"
    r"\b(?:not|no|never|without|instead\s+of|rather\s+than|"
    r"can'?t|cannot|don'?t|doesn'?t|won'?t|isn'?t|aren'?t)\b",
    re.IGNORECASE,
)
REJECTION = re.compile(  # negates what precedes it: "MTP REJECTED", "n=3 dropped"
    r"\b(?:rejected|dropped|unsupported|removed|abandoned)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class HeaderLine:
    number: int  # 1-based line in the file
    text: str  # the line without its leading ``#``
    column: int  # 1-based column where ``text`` starts


@dataclass(frozen=True)
class HeaderField:
    key: str
    value: str  # key-line value and continuations, joined by "\n"
    line: int
    end_line: int
    column: int  # where the value starts on the key line
    lines: tuple[HeaderLine, ...]  # the key line and its continuation lines

    @property
    def first_value(self) -> str:
        return self.value.split("\n", 1)[0]

    @property
    def lead(self) -> str:
        """The leading statement of the value: up to the first aside (a parenthesis, a
        spaced dash, a semicolon). ``none — MTP REJECTED (n=2 …)`` -> ``none``."""
        found = ASIDE.search(self.first_value)
        return self.first_value[: found.start()] if found else self.first_value

    def statements(self) -> list[tuple[int, str]]:
        """Where the field states its value, in the order to read them: the leading statement,
        then the clauses of its asides, each with its offset in ``first_value``
        (:func:`affirmed`)."""
        return affirmed(self.first_value, len(self.lead))

    def search(self, pattern: re.Pattern[str]) -> tuple[int, re.Match[str]] | None:
        """The first match of ``pattern`` in the field's statements, with the offset of the
        statement it is in (add ``match.start()`` for the column)."""
        for at, clause in self.statements():
            found = pattern.search(clause)
            if found is not None:
                return at, found
        return None


@dataclass(frozen=True)
class HeaderSection:
    title: str
    line: int
    end_line: int
    lines: tuple[HeaderLine, ...]
    retraction: Marker | None  # set when the section opens with a retraction marker


@dataclass(frozen=True)
class FlatLine:
    key: str
    value: str
    line: int
    column: int


@dataclass(frozen=True)
class Header:
    line: int = 0  # first and last line of the comment block (0: none)
    end_line: int = 0
    profile_line: int | None = None  # the ``Profile (at-a-glance):`` line
    fields: tuple[HeaderField, ...] = ()
    notes: tuple[HeaderLine, ...] = ()  # irregular lines inside the profile block
    sections: tuple[HeaderSection, ...] = ()
    flat: tuple[FlatLine, ...] = ()

    @property
    def present(self) -> bool:
        return self.line > 0

    def field(self, *keys: str) -> HeaderField | None:
        """The first field whose key matches one of ``keys`` (case and spacing folded)."""
        wanted = {_fold(k) for k in keys}
        return next((f for f in self.fields if _fold(f.key) in wanted), None)

    def flat_value(self, key: str) -> FlatLine | None:
        return next((f for f in self.flat if f.key.lower() == key.lower()), None)


def affirmed(text: str, lead: int = 0) -> list[tuple[int, str]]:
    """The clauses of ``text`` that state something, with their offsets: ``text[:lead]`` as
    one clause, then the rest split at parentheses, brackets, dashes, semicolons and commas.
    What a clause negates (``can't do fp8``, ``fp8 instead of bf16``, ``MTP REJECTED``) states
    nothing, and neither does what follows it (its own asides)."""
    text = text.replace(" - ", " — ")  # same length: offsets hold
    clauses = [(0, text[:lead])] if lead else []
    clauses += [(m.start(), m.group()) for m in CLAUSE.finditer(text, lead)]
    stated = []
    for at, clause in clauses:
        negated = NEGATION.search(clause)
        kept = "" if REJECTION.search(clause) else clause[: negated.start() if negated else None]
        if kept.strip():
            stated.append((at, kept))
        if negated or kept != clause:
            break
    return stated


def _fold(key: str) -> str:
    return " ".join(key.lower().split())


def header_span(lines: list[str]) -> tuple[int, int]:
    """1-based (first, last) line of the leading comment block, or (0, 0)."""
    first = last = 0
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        first = first or number
        last = number
    return first, last


def parse_header(lines: list[str]) -> Header:
    first, last = header_span(lines)
    if not first:
        return Header()
    block = [b for n in range(first, last + 1) if (b := _header_line(n, lines[n - 1]))]
    profile_at = next((i for i, b in enumerate(block) if PROFILE_LINE.match("#" + b.text)), None)
    fields: list[HeaderField] = []
    notes: list[HeaderLine] = []
    prose_from = 0
    if profile_at is not None:
        fields, notes, prose_from = _profile(block, profile_at + 1)
    flat = [f for f in (_flat(b) for b in block[prose_from:]) if f]
    return Header(
        first,
        last,
        block[profile_at].number if profile_at is not None else None,
        tuple(fields),
        tuple(notes),
        tuple(sections_of(block[prose_from:])),
        tuple(flat),
    )


def _header_line(number: int, raw: str) -> HeaderLine | None:
    at = raw.find("#")
    if at < 0:
        return None
    return HeaderLine(number, raw[at + 1 :].rstrip(), at + 2)


def _profile(
    block: list[HeaderLine], start: int
) -> tuple[list[HeaderField], list[HeaderLine], int]:
    fields: list[HeaderField] = []
    notes: list[HeaderLine] = []
    current: list[HeaderLine] = []
    key_indent = None
    index = start
    for index in range(start, len(block)):
        entry = block[index]
        if RULE_LINE.match("#" + entry.text):
            break
        indent = len(entry.text) - len(entry.text.lstrip())
        match = FIELD.match(entry.text)
        if match and (key_indent is None or indent == key_indent):
            key_indent = indent
            _close(current, fields)
            current = [entry]
        elif current and key_indent is not None and indent > key_indent and entry.text.strip():
            current.append(entry)
        elif entry.text.strip():
            _close(current, fields)
            current = []
            notes.append(entry)
    else:
        index = len(block)
    _close(current, fields)
    return fields, notes, index


def _close(current: list[HeaderLine], fields: list[HeaderField]) -> None:
    if not current:
        return
    head = current[0]
    match = FIELD.match(head.text)
    assert match is not None
    first_value = match.group(3) or ""
    rest = [line.text.strip() for line in current[1:]]
    column = head.column + (match.start(3) if match.group(3) else len(head.text))
    fields.append(
        HeaderField(
            match.group(2).strip(),
            "\n".join([first_value, *rest]).strip("\n"),
            head.number,
            current[-1].number,
            column,
            tuple(current),
        )
    )


def _flat(entry: HeaderLine) -> FlatLine | None:
    match = FLAT.match("#" + entry.text)
    if not match:
        return None
    return FlatLine(
        match.group(1),
        match.group(2),
        entry.number,
        entry.column + ("#" + entry.text).index(match.group(2)) - 1,
    )


def sections_of(block: list[HeaderLine]) -> list[HeaderSection]:
    """Prose sections of consecutive comment lines: split at blank ``#`` lines and rules, and
    where a line opens with a warning emoji or a retraction marker."""
    sections: list[HeaderSection] = []
    current: list[HeaderLine] = []
    for entry in block:
        text = entry.text
        if not text.strip() or RULE_LINE.match("#" + text):
            _section(current, sections)
            current = []
            continue
        starts_anew = (
            SECTION_START.match(text) is not None
            or retraction_marker(text, at_start=True) is not None
        )
        if current and starts_anew and len(text) - len(text.lstrip()) <= 1:
            _section(current, sections)
            current = []
        current.append(entry)
    _section(current, sections)
    return sections


def _section(current: list[HeaderLine], sections: list[HeaderSection]) -> None:
    if current:
        sections.append(
            HeaderSection(
                current[0].text.strip(),
                current[0].number,
                current[-1].number,
                tuple(current),
                retraction_marker(current[0].text, at_start=True),
            )
        )


# -- numbers as headers write them -----------------------------------------------------------

COUNT = re.compile(
    r"(?<![\w.])~?([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+(?:\.[0-9]+)?)\s*([KkMm])?(?![\w.])"
)


def first_count(text: str) -> tuple[int, bool] | None:
    """The first token count in a header value: ``204800 (~200K)`` -> (204800, exact);
    ``262K`` -> (268288, approximate: K may mean 1000 or 1024)."""
    match = COUNT.search(text)
    count = numbers.read_count(match.group(1), match.group(2), binary=True) if match else None
    if count is None:
        return None
    return int(count.value), count.scaled


def same_count(stated: tuple[int, bool], actual: int) -> bool:
    """Exact values must match exactly; ``262K``/``256K``/``~200K`` match within
    ``numbers.TOLERANCE``, their K read as 1024 or 1000."""
    value, approximate = stated
    if not approximate:
        return value == actual
    return numbers.same_count(value, actual, binary=True)


# -- the Status enum --------------------------------------------------------------------------

VS16 = "\ufe0f"  # the variation selector that makes ⚠ render as the emoji ⚠️
STATUSES = {
    "✅": "production",
    "⚠" + VS16: "caveats",
    "🧪": "experimental",
    "🐣": "incubating",
    "👁" + VS16: "preview",
    "⏸" + VS16: "upstream-gated",
    "🗑" + VS16: "deprecated",
}
NO_CAVEATS_NEEDED = ("production", "experimental")


def status_of(value: str) -> str | None:
    """The enum name for a Status value (``⚠️ Production w/ caveats`` -> ``caveats``)."""
    text = value.strip()
    return next((name for emoji, name in STATUSES.items() if text.startswith(emoji)), None)


def missing_selector(value: str) -> str | None:
    """The emoji a Status value uses without its required U+FE0F selector, if any."""
    text = value.strip()
    for emoji in STATUSES:
        bare = emoji.rstrip(VS16)
        if bare != emoji and text.startswith(bare) and not text.startswith(emoji):
            return emoji
    return None
