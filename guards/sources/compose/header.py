"""The leading comment block of a compose file: header fields, prose sections, flat lines.

Which block holds fields is the estate's header convention (:class:`Convention`, from the
``[header]`` settings): a marker line, then ``#   Key:   value`` fields whose deeper-indented
``#`` lines continue them, up to a ``# ----`` rule; then free-form prose sections and flat
``# Key-name: value`` lines that scripts read. The ``profile`` preset is the block real headers
of this domain write (see DOMAIN.md): an optional ``# ====`` rule and ``# Profile
(at-a-glance):``. Without a convention no block is read as fields: estates keep their headers
in many forms, and one file is no ground to guess which. Keys are free text; irregular lines
are kept as notes, never guessed into fields.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from .. import numbers
from ..markers import Marker, retraction_marker

RULE_LINE = re.compile(r"^#\s*(?:-{3,}|={3,})\s*$")
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


# -- the header convention ---------------------------------------------------------------------

VS16 = "\ufe0f"  # the variation selector that makes ⚠ render as the emoji ⚠️


@dataclass(frozen=True)
class Convention:
    """How an estate writes its header block: the marker line that opens it, the separator of
    its ``Key: value`` fields, the fields every block needs and the status vocabulary (each
    status name with the spellings a Status value may open with, the first one shown)."""

    marker: str
    separator: str = ":"
    required: tuple[str, ...] = ()
    statuses: tuple[tuple[str, tuple[str, ...]], ...] = ()
    caveats_field: str | None = None  # the field a status outside caveats-unless needs
    title: str = ""  # the marker line as messages show it (default: marker and separator)

    @property
    def shown(self) -> str:
        """The marker line as messages quote it: ``Profile (at-a-glance):``."""
        return self.title or f"{self.marker}{self.separator}"

    @property
    def block(self) -> str:
        """What messages call the block: ``profile``, ``model card``."""
        return self.marker.lower()

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.statuses]

    @cached_property
    def marker_line(self) -> re.Pattern[str]:
        """``#``, an optional symbol, the marker, an optional qualifier, the separator."""
        sep = re.escape(self.separator)
        edge = r"\b" if self.marker[-1:].isalnum() else ""
        return re.compile(
            rf"^#\s*(?:\W\s*)?{re.escape(self.marker)}{edge}[^{sep}]*{sep}\s*$", re.IGNORECASE
        )

    @cached_property
    def field_line(self) -> re.Pattern[str]:
        # A value is `\S(?:.*\S)?`: greedy up to its last non-space, so a long line with runs
        # of spaces inside is matched in linear time (a lazy `.*?` before `\s*$` is quadratic).
        sep = re.escape(self.separator)
        return re.compile(
            rf"^(\s+)([A-Za-z][A-Za-z0-9 ./+&()-]{{0,30}}?){sep}(?:\s+(\S(?:.*\S)?))?\s*$"
        )

    def status_of(self, value: str) -> str | None:
        """The status name a Status value opens with (``⚠️ Production w/ caveats`` ->
        ``caveats``); a spelling that ends in a letter must end a word there."""
        text = value.strip()
        for name, spellings in self.statuses:
            if any(_opens_with(text, spelling) for spelling in spellings):
                return name
        return None

    def missing_selector(self, value: str) -> str | None:
        """The emoji spelling a Status value uses without its U+FE0F selector, if any."""
        text = value.strip()
        for _, spellings in self.statuses:
            for emoji in spellings:
                bare = emoji.rstrip(VS16)
                if bare != emoji and text.startswith(bare) and not text.startswith(emoji):
                    return emoji
        return None


def _opens_with(text: str, spelling: str) -> bool:
    head, rest = text[: len(spelling)], text[len(spelling) :]
    if head.casefold() != spelling.casefold():
        return False
    return not (spelling[-1:].isalnum() and rest[:1].isalnum())


PRESETS = {
    "profile": Convention(
        marker="Profile",
        title="Profile (at-a-glance):",
        required=("Model", "Topology", "Drafter", "KV", "Status"),
        statuses=(
            ("production", ("✅",)),
            ("caveats", ("⚠" + VS16,)),
            ("experimental", ("🧪",)),
            ("incubating", ("🐣",)),
            ("preview", ("👁" + VS16,)),
            ("upstream-gated", ("⏸" + VS16,)),
            ("deprecated", ("🗑" + VS16,)),
        ),
        caveats_field="Caveats",
    )
}
PROFILE = PRESETS["profile"]
FIELD = PROFILE.field_line  # a ``Key: value`` line, for what reads fields in prose
NO_CAVEATS_NEEDED = ("production", "experimental")
# The preset's vocabulary by emoji, for what reads the domain's own status words (catalogs).
STATUSES = {spellings[0]: name for name, spellings in PROFILE.statuses}


def convention(values: Mapping[str, Any] | None) -> Convention | None:
    """The convention ``[header]`` settings declare (validated: guards.sources.settings): a
    preset's values, overridden by the keys given; None when they declare none."""
    if not values:
        return None
    preset = PRESETS.get(values.get("preset") or "")
    given = {k: v for k, v in values.items() if k != "preset" and v is not None}
    if "marker" in given:
        given["marker"] = given["marker"].strip().rstrip(":=").strip()
        given.setdefault("title", "")
    if "required" in given:
        given["required"] = tuple(given["required"])
    if "statuses" in given:
        given["statuses"] = tuple((n, tuple(s)) for n, s in given["statuses"].items())
    if preset is not None:
        return dataclasses.replace(preset, **given)
    return Convention(**given) if given.get("marker") else None


class HeaderLine(NamedTuple):
    number: int  # 1-based line in the file
    text: str  # the line without its leading ``#``
    column: int  # 1-based column where ``text`` starts


class HeaderField(NamedTuple):
    key: str
    value: str  # key-line value and continuations, joined by "\n"
    line: int
    end_line: int
    column: int  # where the value starts on the key line
    lines: tuple[HeaderLine, ...]  # the key line and its continuation lines

    @property
    def end_column(self) -> int:
        """Just after the value's text on the key line (``column`` when it has none there)."""
        head = self.lines[0]
        return max(head.column + len(head.text), self.column)

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


class HeaderSection(NamedTuple):
    title: str
    line: int
    end_line: int
    lines: tuple[HeaderLine, ...]
    retraction: Marker | None  # set when the section opens with a retraction marker


class FlatLine(NamedTuple):
    key: str
    value: str
    line: int
    column: int

    @property
    def end_column(self) -> int:
        return self.column + len(self.value)


class Header(NamedTuple):
    line: int = 0  # first and last line of the comment block (0: none)
    end_line: int = 0
    profile_line: int | None = None  # the convention's marker line (``Profile (at-a-glance):``)
    fields: tuple[HeaderField, ...] = ()
    notes: tuple[HeaderLine, ...] = ()  # irregular lines inside the profile block
    sections: tuple[HeaderSection, ...] = ()
    flat: tuple[FlatLine, ...] = ()
    convention: Convention | None = None  # how it was read; None: the estate declares none

    @property
    def present(self) -> bool:
        return self.line > 0

    def field(self, *keys: str) -> HeaderField | None:
        """The first field whose key matches one of ``keys`` (case and spacing folded)."""
        wanted = {_fold(k) for k in keys}
        return next((f for f in self.fields if _fold(f.key) in wanted), None)

    def flat_value(self, key: str) -> FlatLine | None:
        return next((f for f in self.flat if f.key.lower() == key.lower()), None)

    def status(self) -> str | None:
        """The status name the Status field opens with, in the estate's vocabulary."""
        found = self.field("Status")
        if found is None or self.convention is None:
            return None
        return self.convention.status_of(found.first_value)


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


def parse_header(lines: list[str], convention: Convention | None = PROFILE) -> Header:
    """The header of a compose's ``lines``, its fields read by ``convention`` (None: no block
    is read as fields; the lines are prose and flat lines)."""
    first, last = header_span(lines)
    if not first:
        return Header(convention=convention)
    block = [b for n in range(first, last + 1) if (b := _header_line(n, lines[n - 1]))]
    marker = convention.marker_line if convention is not None else None
    profile_at = next(
        (i for i, b in enumerate(block) if marker and marker.match("#" + b.text)), None
    )
    fields: list[HeaderField] = []
    notes: list[HeaderLine] = []
    prose_from = 0
    if profile_at is not None and convention is not None:
        fields, notes, prose_from = _profile(block, profile_at + 1, convention.field_line)
    flat = [f for f in (_flat(b) for b in block[prose_from:]) if f]
    return Header(
        first,
        last,
        block[profile_at].number if profile_at is not None else None,
        tuple(fields),
        tuple(notes),
        tuple(sections_of(block[prose_from:])),
        tuple(flat),
        convention,
    )


def _header_line(number: int, raw: str) -> HeaderLine | None:
    at = raw.find("#")
    if at < 0:
        return None
    return HeaderLine(number, raw[at + 1 :].rstrip(), at + 2)


def _profile(
    block: list[HeaderLine], start: int, field_line: re.Pattern[str]
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
        match = field_line.match(entry.text)
        if match and (key_indent is None or indent == key_indent):
            key_indent = indent
            _close(current, fields, field_line)
            current = [entry]
        elif current and key_indent is not None and indent > key_indent and entry.text.strip():
            current.append(entry)
        elif entry.text.strip():
            _close(current, fields, field_line)
            current = []
            notes.append(entry)
    else:
        index = len(block)
    _close(current, fields, field_line)
    return fields, notes, index


def _close(
    current: list[HeaderLine], fields: list[HeaderField], field_line: re.Pattern[str]
) -> None:
    if not current:
        return
    head = current[0]
    match = field_line.match(head.text)
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


def status_of(value: str) -> str | None:
    """The profile preset's status name for a Status value (catalogs write the domain's own
    vocabulary); a compose reads its estate's convention: :meth:`Header.status`."""
    return PROFILE.status_of(value)


def missing_selector(value: str) -> str | None:
    return PROFILE.missing_selector(value)
