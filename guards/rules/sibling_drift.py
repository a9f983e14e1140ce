"""D006 sibling-drift: what a comment says another compose ships is what that compose ships.

Why: composes of one model describe each other — "the dual-max sibling ships fp8 KV", a tier
table listing "dual/max.yml: 262K, MTP n=3" — and nobody re-reads those lines when the sibling
changes. A reference is a compose path (relative to this compose, to the root, or with ``…``
for the middle: ``dual/…/fp8-mtp.yml``) or "the NAME sibling" (``dual-max`` is ``dual/max.yml``
beside this compose's tier folder, or ``NAME.yml`` in its own folder). It must name exactly one
compose of the estate; what follows it on the line, up to the next reference, is compared with
that compose as shipped — context, KV, drafter depth and vision, read as in D005 (in a tier
table a bare ``262K`` is the context). ``(this)`` after a path means this compose. A change list
— "same as X / as X / like X, plus --a, without --b, except --c 8", X a path, an elided path or
a stem — is checked against both composes' flags, read through the engine's dialect (``-c`` and
``--ctx-size`` are one knob): a flag said to be added that this compose does not set, or that X
already ships with the same value; said to be removed that this compose still sets; said to
differ whose value this compose does not set. A note's change lists (a sentence, a table row)
are read the same way, each about the one compose its line names before the list (``b.yml is
the same as a.yml, plus --enforce-eager``; a row whose first cell is ``b.yml``). An X that
names no single compose, a line that names no single compose before its list, and a flag no
engine knows, are remarks.

Bad:
    --- composes/m/vllm/single/fast.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    # Tiers: dual/max.yml — 262K, MTP n=3 · single/fast.yml (this) — 64K, MTP n=2
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "65536",
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":2}']
    --- composes/m/vllm/dual/max.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "262144",
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":4}']

Finds:
    composes/m/vllm/single/fast.yml:3:35: D006 comment says dual/max.yml ships n=3 (line 3), but in composes/m/vllm/dual/max.yml the default drafter depth is 4 (command line 7)

Good:
    --- composes/m/vllm/single/fast.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    # Tiers: dual/max.yml — 262K, MTP n=4 · single/fast.yml (this) — 64K, MTP n=2
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "65536",
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":2}']
    --- composes/m/vllm/dual/max.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "262144",
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":4}']
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import NamedTuple

from ..facts.changelists import Change, ChangeList, change_lists
from ..facts.engines import load as engine_facts
from ..facts.knobwords import knob_of_flag
from ..facts.statements import Disagreement, Stated, disagreements
from ..findings import Finding, Severity
from ..sources.catalog import number_readings
from ..sources.compose.compose import Compose, Service
from ..sources.compose.engines import LLAMACPP, SGLANG, UNKNOWN, VLLM, llamacpp, sglang, split_flags
from ..sources.compose.engines import vllm as vllm_dialect
from ..sources.notes.notes import Note
from ..sources.numbers import to_number
from .base import Context, Rule
from .options import RuleOptions

YAML_END = re.compile(r"\.ya?ml\b")
SIBLING_WORD = re.compile(r"\bsibling\b", re.IGNORECASE)
NAME_BEFORE = re.compile(r"\b([a-z0-9]+(?:[-/][a-z0-9]+)+)\s+$", re.IGNORECASE)
PATH_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/…")
THIS = re.compile(r"\s*\(this\)")
ELLIPSIS = re.compile(r"/?(?:…|\.\.\.)/?")
DIALECTS = {  # an engine's flags -> knobs, and the flags that take a value
    VLLM: (vllm_dialect.FLAGS, vllm_dialect.TAKES_VALUE),
    LLAMACPP: (llamacpp.FLAGS, llamacpp.TAKES_VALUE),
    SGLANG: ({**sglang.FLAGS, **sglang.SWITCHES}, sglang.TAKES_VALUE),
}


class Reference(NamedTuple):
    ref: str  # as written
    start: int  # where it starts in the comment text
    end: int  # where the statement about it starts
    table: bool  # a path (a tier table's row), not a "sibling" phrase
    this: bool = False


def check(target: Compose | Note, context: Context) -> list[Finding] | None:
    composes = context.estate.composes_by_path
    if isinstance(target, Note):
        return _note_change_lists(target, composes, context)
    return _comments(target, composes, context)


def _comments(
    compose: Compose, composes: Mapping[str, Compose], context: Context
) -> list[Finding] | None:
    """What a compose's comments say of the composes they name, and their change lists."""
    findings, referenced = [], False
    for comment in compose.comments:
        lists = change_lists(comment.text)
        refs = references(comment.text)
        listed = {listed.start for listed in lists}  # what follows says what this one changes
        for index, ref in enumerate(refs):
            if ref.start in listed:
                continue
            other = compose if ref.this else resolve(ref, compose.path, composes)
            if other is None:
                context.remark(
                    RULE, compose.path, f"line {comment.line}: `{ref.ref}` names no single compose"
                )
                continue
            if not other.shipped:
                continue
            referenced = True
            stop = refs[index + 1].start if index + 1 < len(refs) else None
            text = comment.text[ref.end : stop]
            stated = Stated("comment", comment.line, text, comment.column + 1 + ref.end, ref.table)
            findings += [
                _at(compose, stated, ref, other, found)
                for found in disagreements(stated, other.shipped[0])
            ]
        for each in lists:
            at = Place(compose.path, comment.line, comment.column + 1, "comment", "this compose")
            found = _change_list(compose, at, each, composes, context)
            referenced = referenced or found is not None
            findings += found or []
    return findings if referenced else None


def references(text: str) -> list[Reference]:
    """Compose paths (scanned back from each ``.yml``) and "NAME sibling" phrases, in order."""
    found = []
    for match in YAML_END.finditer(text):
        start = match.start()
        while start > 0 and text[start - 1] in PATH_CHARS:
            start -= 1
        if start == match.start():
            continue
        this = THIS.match(text, match.end())
        end = this.end() if this else match.end()
        found.append(Reference(text[start : match.end()], start, end, True, this is not None))
    for match in SIBLING_WORD.finditer(text):
        window = max(0, match.start() - 80)
        name = NAME_BEFORE.search(text, window, match.start())
        if name is not None:
            found.append(Reference(name.group(1), name.start(1), match.end(), False))
    return sorted(found, key=lambda r: r.start)


def resolve(ref: Reference, here: str, composes: Mapping[str, Compose]) -> Compose | None:
    """The one compose a reference names, or None."""
    folder = posixpath.dirname(here)
    if ref.table:
        parts = ELLIPSIS.split(ref.ref)
        if len(parts) > 1:
            return _only(
                [p for p in composes if parts[0] in p and p.endswith("/" + parts[-1])], composes
            )
        tried = [posixpath.normpath(posixpath.join(folder, ref.ref)), posixpath.normpath(ref.ref)]
        exact = [p for p in tried if p in composes]
        if exact:
            return composes[exact[0]]
        return _only([p for p in composes if p.endswith("/" + ref.ref.lstrip("./"))], composes)
    name = ref.ref.lower()
    tier_root = posixpath.dirname(folder)
    tried = [
        posixpath.join(folder, f"{name}.yml"),
        posixpath.join(tier_root, name.replace("-", "/", 1) + ".yml"),
        posixpath.join(tier_root, f"{name}.yml"),
    ]
    return next((composes[p] for p in tried if p in composes and p != here), None)


def _only(paths: list[str], composes: Mapping[str, Compose]) -> Compose | None:
    return composes[paths[0]] if len(paths) == 1 else None


def _at(
    compose: Compose, stated: Stated, ref: Reference, target: Compose, found: Disagreement
) -> Finding:
    knob = found.knob
    where = f" ({knob.source} line {knob.line})" if knob is not None else ""
    subject = "this compose" if ref.this else ref.ref
    inside = "" if ref.this else f"in {target.path} "
    return RULE.at(
        compose.path,
        stated.number,
        stated.column + found.said.start(),
        f"comment says {subject} ships {found.said.group(0).strip()} (line {stated.number}), but "
        f"{inside}{found.actual}{where}",
        knob=knob.name if knob else None,
        hint=f"update what this comment says of {subject}, or the compose it describes",
        end_column=stated.column + found.said.end(),
    )


# --- change lists: "same as X, plus --a, without --b, except --c 8" --------------------------


class Place(NamedTuple):
    """Where a change list is written, and how a message names its writer and its compose."""

    path: str
    line: int
    column: int  # where the text the list was read from starts
    writer: str  # "comment", or the note's path
    name: str  # "this compose", or the compose the note's line describes


class Setting(NamedTuple):
    """What a service does with one flag: whether it sets it, to what, on which line."""

    set: bool
    value: str | None = None
    line: int | None = None


def _change_list(
    compose: Compose,
    at: Place,
    listed: ChangeList,
    composes: Mapping[str, Compose],
    context: Context,
) -> list[Finding] | None:
    """Each listed flag against this compose and the sibling; None: not compared (remarked)."""
    where = f"line {at.line}"
    sibling = _sibling(listed.ref, compose.path, composes)
    if sibling is None:
        context.remark(RULE, at.path, f"{where}: `{listed.ref}` names no single compose")
        return None
    mine, theirs = _engine_service(compose), _engine_service(sibling)
    if mine is None or theirs is None:
        context.remark(RULE, at.path, f"{where}: no single engine service to compare")
        return None
    findings = []
    for change in listed.changes:
        here, there = _setting(mine, change.flag), _setting(theirs, change.flag)
        if isinstance(here, str) or isinstance(there, str):
            context.remark(RULE, at.path, f"{where}: `{change.flag}` {here or there}")
            continue
        problem = _judge(change, here, there, sibling.path, at.name)
        if problem is not None:
            findings.append(_listed_at(at, listed, change, problem))
    return findings


def _note_change_lists(
    note: Note, composes: Mapping[str, Compose], context: Context
) -> list[Finding] | None:
    """The change lists of a note's prose and table rows, each about the one compose its line
    names before the list (``b.yml — as a.yml, plus --enforce-eager``, a row's first cell)."""
    findings: list[Finding] | None = None
    for block in note.blocks:
        if block.kind not in ("paragraph", "table") or block.retraction or block.quoted:
            continue
        for line, _ in block.line_texts:
            raw = note.lines[line - 1]
            for listed in change_lists(raw):
                described = _described(raw, listed, composes)
                if described is None:
                    context.remark(RULE, note.path, f"line {line}: no single compose is described")
                    continue
                at = Place(note.path, line, 1, note.path, described.path)
                found = _change_list(described, at, listed, composes, context)
                if found is not None:
                    findings = (findings or []) + found
    return findings


def _described(text: str, listed: ChangeList, composes: Mapping[str, Compose]) -> Compose | None:
    """The one compose ``text`` names before the change list's reference."""
    named = {
        found.path
        for ref in references(text[: listed.start])
        if ref.table and (found := resolve(ref, "", composes)) is not None
    }
    return composes[named.pop()] if len(named) == 1 else None


def _sibling(ref: str, here: str, composes: Mapping[str, Compose]) -> Compose | None:
    """The compose a change list's reference names: a path, an elided path or a stem."""
    table = YAML_END.search(ref) is not None
    found = resolve(Reference(ref, 0, 0, table), here, composes)
    if found is None and not table:
        stems = [c for p, c in composes.items() if posixpath.basename(p).rsplit(".", 1)[0] == ref]
        found = _only([c.path for c in stems], composes)
    return found if found is not None and found.path != here else None


def _engine_service(compose: Compose) -> Service | None:
    engines = [s for s in compose.shipped if s.engine != UNKNOWN]
    return engines[0] if len(engines) == 1 else None


def _setting(service: Service, flag: str) -> Setting | str:
    """How ``service`` sets ``flag``: through the knob its engine's dialect reads (``-c`` and
    ``--ctx-size`` are one), else as a word its engine's release declares; a string: why not
    known."""
    table, takes_value = DIALECTS.get(service.engine, ({}, set()))
    name = table.get(flag) or knob_of_flag(flag)
    if name is not None and name in table.values():
        knob = service.knob(name)
        if knob is None or knob.source == "engine-default":
            return Setting(False)
        if knob.value is None:
            return f"cannot be resolved in {service.name}"
        return Setting(True, knob.value, knob.line)
    facts = engine_facts(service.engine)
    known = facts.flags.get(flag) if facts is not None else None
    if known is None:
        return "is a flag no engine dialect knows"
    names = {flag, known.alias_of or flag}
    for given in split_flags(service.launch.tokens, set(takes_value)):
        if given.name in names:
            value = given.value.text if given.value is not None else None
            return Setting(True, value, given.token.line)
    return Setting(False)


def _same(stated: str, value: str | None) -> bool:
    number = to_number(value)
    if number is not None:
        return number in (number_readings(stated) or ())
    return value is not None and stated.strip("`'\"").lower() == value.lower()


def _judge(
    change: Change, here: Setting, there: Setting, sibling: str, name: str = "this compose"
) -> str | None:
    """What is wrong with one listed change, or None; ``name`` is how the message names the
    compose the list describes."""
    line = f" (line {here.line})" if here.line else ""
    shown = f"{change.flag} {here.value}" if here.value is not None else change.flag
    if change.kind == "without":
        return f"{name} still sets {shown}{line}" if here.set else None
    if change.kind == "except" and change.value is None:
        return None  # nothing said of the value
    if not here.set:
        return f"{name} does not set {change.flag}"
    if change.value is not None and not _same(change.value, here.value):
        return f"{name} sets {shown}{line}"
    same = there.set and (here.value == there.value or _same(here.value or "", there.value))
    if change.kind == "plus" and same:
        return f"{sibling} already ships {shown} (line {there.line})"
    return None


def _listed_at(at: Place, listed: ChangeList, change: Change, problem: str) -> Finding:
    flag = f"{change.flag} {change.value}" if change.value is not None else change.flag
    said = {
        "plus": f"adds {flag} to {listed.ref}",
        "without": f"drops {flag} from {listed.ref}",
        "except": f"differs from {listed.ref} in {flag}",
    }[change.kind]
    return RULE.at(
        at.path,
        at.line,
        at.column + change.start,
        f"{at.writer} says {at.name} {said} (line {at.line}), but {problem}",
        hint=f"update the change list against {listed.ref}, or the flags {at.name} sets",
        end_column=at.column + change.start + len(change.flag),
    )


RULE: Rule[RuleOptions] = Rule(
    id="D006",
    name="sibling-drift",
    family="drift",
    targets=("compose", "note"),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
