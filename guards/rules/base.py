"""What every rule is built from: ``Rule`` (id, name, family, targets, severity, the check,
its docstring, its options), the ``Context`` a check reads, and the helpers their messages
share. Rule modules import this module, never the package, which registers them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..errors import MAX_PATH, printable
from ..findings import CheckResult, Finding, Severity
from .options import RuleOptions

if TYPE_CHECKING:
    from ..run.estate import Estate

MAX_FINDING = 1000  # characters of a finding's message or hint (they may quote input)
OptionsT = TypeVar("OptionsT", bound=RuleOptions)


@dataclass(frozen=True, kw_only=True)
class Rule(Generic[OptionsT]):
    """One rule, declared by keyword: nine fields in a row are too easy to swap by position.

    Its one-line description is not a field: it is the docstring's first line, so the line
    ``guards rules``, SARIF and the reference print cannot drift from the one ``explain`` opens
    with.
    """

    id: str
    name: str
    family: str  # "schema" | "claims" | "knobs" | "drift" | "regions" | "suppressions"
    targets: tuple[str, ...]  # any of "compose", "note", "claim", "config", "modelfile"
    severity: Severity
    check: Callable[[Any, Context], Iterable[Finding] | None]
    doc: str  # "ID name: one line" alone on its first line, then Why / Bad / Finds / Good
    options: type[OptionsT] = RuleOptions  # type: ignore[assignment]
    after_others: bool = False  # judges the other rules' results: runs after them

    def __post_init__(self) -> None:
        head, _, rest = self.doc.strip().partition("\n")
        if not head.startswith(f"{self.id} {self.name}: ") or rest[:1] not in ("", "\n"):
            raise ValueError(
                f"rule {self.id}: its docstring must open with `{self.id} {self.name}: ` and "
                "a summary on a line of its own"
            )

    @property
    def summary(self) -> str:
        """What the rule checks, in one line: the docstring's first, after ``ID name: ``."""
        head = self.doc.strip().partition("\n")[0]
        return head.removeprefix(f"{self.id} {self.name}: ")

    def at(
        self,
        path: str,
        line: int,
        column: int,
        message: str,
        *,
        hint: str | None = None,
        claim: str | None = None,
        knob: str | None = None,
        end_line: int = 0,
        end_column: int = 0,
    ) -> Finding:
        return Finding(
            rule=self.id,
            severity=self.severity,
            path=path,  # as on disk: a reporter escapes it where it must
            line=line,
            column=column,
            message=printable(message, MAX_FINDING),
            hint=printable(hint, MAX_FINDING) if hint is not None else None,
            claim=printable(claim, MAX_PATH) if claim is not None else None,
            knob=knob,
            end_line=end_line,
            end_column=end_column,
        )


@dataclass(frozen=True)
class Context:
    """What a check may read: the estate, the validated rule options, and lists for remarks.

    Rules never write into the estate; what they could not check goes to ``remarks`` and from
    there into the check's result, and why they could not decide a check that applies goes to
    ``undecided`` too, so it is reported as not judged instead of passing in silence.
    """

    estate: Estate
    settings: Mapping[str, RuleOptions] = field(default_factory=dict)
    remarks: list[str] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    today: date = field(default_factory=date.today)  # what `until=` dates are read against
    earlier: tuple[CheckResult, ...] = ()  # the other rules' results, for an after_others rule
    ran: frozenset[str] = frozenset()  # the ids of every rule in the run
    # every rule by id and name -> (id, judges the directives): what directives may name
    rule_names: Mapping[str, tuple[str, bool]] = field(default_factory=dict)

    def options(self, rule: Rule[OptionsT]) -> OptionsT:
        found = self.settings.get(rule.id)
        return found if isinstance(found, rule.options) else rule.options()

    def remark(self, rule: Rule, path: str, text: str) -> None:
        """Something a rule could not check, for ``--verbose`` (never a guess)."""
        self.remarks.append(f"{rule.id} {path}: {text}")

    def not_judged(self, rule: Rule, path: str, why: str) -> None:
        """The rule applies to the target but cannot decide it (a value it cannot resolve, a
        figure it cannot compute): the check neither passes nor fails, and ``--verbose`` says
        why. Not for a target the rule does not apply to: that check returns None."""
        self.remark(rule, path, why)
        self.undecided.append(why)


def line_end(lines: list[str] | None, line: int) -> int:
    """The end column of a finding about the whole of ``line`` (just after its text), or 0
    (a point) when its lines are not known."""
    if lines is None or not 1 <= line <= len(lines):
        return 0
    return len(lines[line - 1]) + 1


def written_end(lines: list[str] | None, line: int, column: int, text: str) -> int:
    """The end column of ``text`` where it is written at ``line``:``column``, or 0 (a point)
    when the line does not hold it there (a figure read across lines, a value rewritten)."""
    if not text or lines is None or not 1 <= line <= len(lines):
        return 0
    return column + len(text) if lines[line - 1].startswith(text, column - 1) else 0


def summary(text: str, limit: int = 200) -> str:
    """Whole sentences of ``text`` up to ``limit`` characters (at least one, cut at a clause)."""
    flat = " ".join(text.split())
    sentences = re.split(r"(?<=[.!?])\s+", flat)
    out = sentences[0]
    for sentence in sentences[1:]:
        if len(out) >= limit // 2:
            break
        out += " " + sentence
    if len(out) <= limit:
        return out
    cut = max(out.rfind(mark, 0, limit) for mark in (" — ", "; ", ", "))
    return (out[:cut] if cut > 0 else out[: limit - 1]).rstrip(" ,;—") + "…"


def provenance(knob: Any) -> str:
    """Where an effective value came from, when it is not the compose's own default."""
    if knob.from_env:
        return f" (from {', '.join(knob.from_env)} in the environment)"
    return ""


def unreadable(knob: Any) -> str:
    """How a not-judged remark names a value guards cannot read, and why when it is known."""
    if knob.value is not None:  # resolved, to a word: where from says more than the raw text
        return f"`{knob.value}`{provenance(knob)} is not a number guards can read"
    why = f" ({knob.note})" if knob.note else ""
    return f"`{knob.raw.strip()}` is not a number guards can read{why}"
