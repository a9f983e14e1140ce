"""Where claims live in an estate: stale copies of withdrawn wording, and citations.

Shared by the claim guards and ``guards claims``. Every compose comment run and every note
section becomes a :class:`Passage` of **units** - the pieces a reader takes in one go: a table
row, a list item, a paragraph, a comment section (split at blank ``#`` lines, rules, bullets and
warning-emoji lines). A match of a withdrawn claim (``guards.claims.textmatch``) is a stale copy unless
the units it touches say otherwise:

- **history**: a changelog line (a commit subject with its hash) or a file the config names as
  history (``history`` globs) records what was said, it does not say it again;
- **a correction in place**: a retraction marker anywhere in the unit ("RETRACTED 2026-06-03",
  "did NOT reproduce", "superseded by measurement", "RESTORED to 8192 on 2026-08-02";
  ``guards.sources.markers.correction``), or in the unit that starts on the line right after it; a
  marker that names claim ids withdraws those claims only;
- **a retraction context that covers this claim**: a heading, callout or paragraph opening
  with a dated marker covers the claims it cites (``claim:<id>``), the claims withdrawn on the
  date it carries, and the claims its own opening line quotes - not every claim it happens to
  contain;
- **closer to the replacement than to the claim**: a sentence of the unit leans on words only
  the replacement or the reason use ("unavailable on *stock* vLLM - a packaging limit") more
  than on words only the claim uses.

Generated regions are left out: their text is maintained by ``guards regen``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from ..sources.markers import COMMIT_REF, Marker, correction, covered_parts, strip_struck
from ..sources.notes.notes import Note
from . import followup
from .textmatch import (
    DISTINCTIVE,
    MIN_STATEMENT,
    ROUNDING,
    CandidateIndex,
    ClaimMatcher,
    Match,
    shingles,
    statements,
    words,
)
from .tokens import Tokens, tokenize
from .vocabulary import Vocabulary

if TYPE_CHECKING:
    from ..run.estate import Estate
    from ..sources.compose.compose import Compose
    from ..sources.markers import Citation
    from ..sources.registry import Claim

UNIT_START = re.compile(r"^\s*(?:[-*•⤷→▸]|\d+[.)])\s|^\s?(?:⚠|⭐|❌|✅|🧪|‼)")
MIN_CORRECTIVE = 3  # distinctive replacement-only words that make a sentence a correction


class Scope(NamedTuple):
    """An enclosing retraction context: its marker and the text of its opening line."""

    marker: Marker
    opening: str

    def covers(self, claim: Claim, matcher: ClaimMatcher) -> bool:
        if claim.id in self.marker.claim_ids:
            return True
        if self.marker.date is not None and self.marker.date == str(claim.retracted or ""):
            return True
        units = [[(0, self.opening)]]
        return bool(matcher.find(tokenize(units)))


@dataclass(frozen=True)
class Unit:
    lines: tuple[tuple[int, str], ...]
    scope: Scope | None = None  # the retraction context around it, if any
    history: bool = False
    row: bool = False  # a row of a note's table

    @property
    def text(self) -> str:
        return " ".join(text for _, text in self.lines)

    @cached_property
    def corrects(self) -> tuple[str, ...] | None:
        """What a retraction marker in the unit withdraws: the claim ids it names, ``()`` for
        whatever the unit says, ``None`` when it carries no marker."""
        return correction(self.text)

    def withdraws(self, claim: Claim) -> bool:
        return self.corrects is not None and (not self.corrects or claim.id in self.corrects)

    @cached_property
    def parts(self) -> list[tuple[str, tuple[str, ...] | None]]:
        """The sentences, bullets and fields a marker covers, with what each withdraws."""
        return covered_parts([text for _, text in self.lines])

    def uncorrected(self, claim: Claim) -> str | None:
        """The unit's text without the parts that withdraw ``claim``; None when none does."""
        kept = [text for text, ids in self.parts if ids is None or (ids and claim.id not in ids)]
        return None if len(kept) == len(self.parts) else "\n".join(kept)

    @property
    def opening(self) -> str:
        return self.lines[0][1]


@dataclass
class Passage:
    units: list[Unit]

    @cached_property
    def tokens(self) -> Tokens:
        return tokenize([list(u.lines) for u in self.units])

    def sentences(self, unit: int) -> list[tuple[str, ...]]:
        return self.tokens.unit_sentences.get(unit, [])


class Copy(NamedTuple):
    """A stale copy of a claim: its first and last source line."""

    line: int
    end_line: int
    phrase: bool


class Place(NamedTuple):
    path: str
    line: int
    column: int
    how: str  # "stale copy" | "cites" | "cites in a retraction" | "retracts"


# -- passages ---------------------------------------------------------------------------------


def passages(target: Compose | Note, history: bool = False) -> list[Passage]:
    if isinstance(target, Note):
        return _note_passages(target, history)
    return _compose_passages(target)


def _compose_passages(compose: Compose) -> list[Passage]:
    runs: list[list[tuple[int, str]]] = []
    previous = None
    for comment in compose.comments:
        if any(comment.line in region for region in compose.regions):
            previous = None
            continue
        text = strip_struck(comment.text)[0]
        if (
            previous is not None
            and previous.line == comment.line - 1
            and previous.where == comment.where
        ):
            runs[-1].append((comment.line, text))
        else:
            runs.append([(comment.line, text)])
        previous = comment
    return [Passage([_compose_unit(compose, u) for u in _units(run)]) for run in runs]


def _units(run: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Split a comment run where a reader sees a new piece: blank lines, rules, bullets,
    warning emoji."""
    units: list[list[tuple[int, str]]] = []
    for line, text in run:
        if not text.strip() or set(text.strip()) <= set("-=#"):
            units.append([])
            continue
        if not units or (UNIT_START.match(text) and units[-1]):
            units.append([])
        units[-1].append((line, text))
    return [u for u in units if u]


def _compose_unit(compose: Compose, lines: list[tuple[int, str]]) -> Unit:
    callout = compose.callout(lines[0][0])
    scope = None
    if callout is not None:
        opening = compose.lines[callout.line - 1].lstrip().lstrip("#")
        # a callout opened by a bullet covers that bullet, not the next one of its list
        if lines[0][0] == callout.line or not _siblings(opening, lines[0][1]):
            scope = Scope(callout.marker, opening)
    history = any(COMMIT_REF.search(text) for _, text in lines)
    return Unit(tuple(lines), scope, history)


def _note_passages(note: Note, history: bool) -> list[Passage]:
    found: list[Passage] = []
    previous = None
    for block in note.blocks:
        scope = None
        if block.retraction is not None:
            opening = note.lines[block.retraction.line - 1] if note.lines else ""
            scope = Scope(block.retraction.marker, opening)
        rows = (
            [[row] for row in block.line_texts]
            if block.kind in ("table", "code")
            else [list(block.line_texts)]
        )
        units = [
            Unit(
                tuple(r),
                scope,
                history or any(COMMIT_REF.search(t) for _, t in r),
                block.kind == "table",
            )
            for r in rows
            if r
        ]
        if previous is not None and previous.section == block.section:
            found[-1].units.extend(units)
        else:
            found.append(Passage(units))
        previous = block
    return found


# -- the scan ---------------------------------------------------------------------------------


class ClaimScan:
    """The estate read for claims once per run: passages, the vocabulary, one matcher per
    claim, and which passages each claim can match at all (``CandidateIndex``): the withdrawn
    claims are indexed together, any other claim asked about on its own."""

    def __init__(self, estate: Estate) -> None:
        self.estate = estate
        self._passages: dict[int, list[Passage]] = {}
        self._matchers: dict[str, ClaimMatcher] = {}
        self._side_cache: dict[str, tuple[set[str], set[str], set[tuple[str, ...]]]] = {}
        self._indexes: dict[str | None, _Placed] = {}  # None: the withdrawn claims

    def passages(self, target: Compose | Note) -> list[Passage]:
        key = id(target)
        if key not in self._passages:
            self._passages[key] = passages(target, self.is_history(target.path))
        return self._passages[key]

    def is_history(self, path: str) -> bool:
        from ..sources.patterns import glob_match

        return any(glob_match(path, pattern) for pattern in self.estate.config.history)

    def prepare(self) -> None:
        """The vocabulary and index the withdrawn claims are matched with, built now."""
        if self._withdrawn:
            self._index(None)

    @cached_property
    def vocabulary(self) -> Vocabulary:
        units = (
            tuple(unit)
            for target in targets(self.estate)
            for passage in self.passages(target)
            for unit in passage.tokens.unit_words
        )
        return Vocabulary(units)

    def matcher(self, claim: Claim) -> ClaimMatcher:
        if claim.id not in self._matchers:
            self._matchers[claim.id] = ClaimMatcher(
                claim.wordings, claim.match, claim.not_match, self.vocabulary.weight
            )
        return self._matchers[claim.id]

    @cached_property
    def _withdrawn(self) -> dict[str, Claim]:
        """The claims whose stale copies are looked for, by id."""
        claims = self.estate.registry.claims
        return {c.id: c for c in claims if c.is_withdrawn and (c.wordings or c.match)}

    def candidates(self, claim: Claim, target: Compose | Note) -> list[Passage]:
        """The passages of ``target`` that can match ``claim`` at all, in order: its matcher
        finds nothing in the others. Each target's passages are placed once for every claim
        indexed with this one."""
        placed = self._index(None if claim.id in self._withdrawn else claim)
        return placed.passages(claim.id, target, self.passages(target))

    def _index(self, claim: Claim | None) -> _Placed:
        """The index of one claim, or (None) of the withdrawn claims together."""
        key = claim.id if claim else None
        if key not in self._indexes:
            group = [claim] if claim else self._withdrawn.values()
            matchers = {c.id: self.matcher(c) for c in group}
            frequency = self.vocabulary.frequency.__getitem__
            self._indexes[key] = _Placed(CandidateIndex(matchers, frequency))
        return self._indexes[key]

    def stale_copies(self, claim: Claim, target: Compose | Note) -> list[Copy]:
        """Copies of a withdrawn claim's wording that still assert it."""
        if not claim.is_withdrawn or not (claim.wordings or claim.match):
            return []
        matcher = self.matcher(claim)
        found = []
        for passage in self.candidates(claim, target):
            for match in matcher.find(passage.tokens):
                if self._asserts(claim, matcher, passage, match):
                    tokens = passage.tokens
                    found.append(
                        Copy(tokens[match.start].line, tokens[match.end].line, match.phrase)
                    )
        return found

    def _asserts(self, claim: Claim, matcher: ClaimMatcher, passage: Passage, match: Match) -> bool:
        first, last = passage.tokens[match.start].unit, passage.tokens[match.end].unit
        touched = passage.units[first : last + 1]
        following = passage.units[last + 1] if last + 1 < len(passage.units) else None
        if any(u.history for u in touched) or self._corrected(claim, matcher, touched):
            return False
        if (
            following is not None
            and following.withdraws(claim)
            and following.lines[0][0] == touched[-1].lines[-1][0] + 1
            and not (touched[-1].row and following.row)
            and not _siblings(touched[-1].opening, following.opening)
        ):
            return False
        if any(u.scope is not None and u.scope.covers(claim, matcher) for u in touched):
            return False
        sentences = [s for i in range(first, last + 1) for s in passage.sentences(i)]
        return not any(self._corrective(claim, s) for s in sentences)

    @staticmethod
    def _corrected(claim: Claim, matcher: ClaimMatcher, touched: list[Unit]) -> bool:
        """A marker in the units withdraws the claim and what is left of them once the
        sentences, bullets or fields it covers are taken out no longer repeats the claim: a
        marker covers the part that holds it and what that part quotes, not the whole unit."""
        left = [u.uncorrected(claim) for u in touched]
        if all(text is None for text in left):
            return False
        rest = [text if text is not None else u.text for u, text in zip(touched, left, strict=True)]
        return not matcher.find(tokenize([[(0, text)] for text in rest]))

    def _corrective(self, claim: Claim, sentence: tuple[str, ...]) -> bool:
        """The sentence says what the replacement says where it differs from the claim: it
        shares a phrase only the replacement has, around a word only the replacement uses ("on
        STOCK vLLM"), or holds several distinctive words only the replacement uses ("util was
        the binding knob ... 0.85 ... 0.92") and they outweigh the words only the claim uses."""
        said, instead, phrases = self._sides(claim)
        weight = self.vocabulary.weight
        for phrase in shingles(sentence) & phrases:
            if instead.intersection(phrase) and max(map(weight, phrase)) >= DISTINCTIVE:
                return True
        terms = set(sentence)
        corrective = [t for t in terms & instead if weight(t) >= DISTINCTIVE]
        assertive = sum(weight(t) for t in terms & said)
        return len(corrective) >= MIN_CORRECTIVE and sum(map(weight, corrective)) > assertive

    def _sides(self, claim: Claim) -> tuple[set[str], set[str], set[tuple[str, ...]]]:
        if claim.id not in self._side_cache:
            self._side_cache[claim.id] = self._compute_sides(claim)
        return self._side_cache[claim.id]

    def _compute_sides(self, claim: Claim) -> tuple[set[str], set[str], set[tuple[str, ...]]]:
        """Words only the claim uses, words only its replacement uses, and the replacement's
        3-word phrases that no wording of the claim has. (The reason is left out: it tells the
        evidence - cards, measurements - that stale passages cite too.)"""
        said = {w for wording in claim.wordings + claim.match for w in words(wording)}
        replacement = words(claim.replacement or "")
        claimed = {s for wording in claim.wordings for s in shingles(words(wording))}
        return said - set(replacement), set(replacement) - said, shingles(replacement) - claimed


def _siblings(first: str, second: str) -> bool:
    """Two lines open pieces of the same rank: bullets of one list, rows of one table. A
    correction on the next line covers the line above only as its continuation (an arrow, an
    indented note), not as the next item."""
    a, b = first.lstrip("#"), second.lstrip("#")
    if a.lstrip().startswith("|") and b.lstrip().startswith("|"):
        return True
    lead = len(a) - len(a.lstrip())
    return (
        lead == len(b) - len(b.lstrip())
        and a.lstrip()[:2] == b.lstrip()[:2]
        and bool(UNIT_START.match(a.lstrip()))
    )


@dataclass
class _Placed:
    """A candidate index and, per target, the passages each of its claims can match."""

    index: CandidateIndex
    targets: dict[int, dict[str, list[Passage]]] = field(default_factory=dict)

    def passages(self, claim_id: str, target: object, passages: list[Passage]) -> list[Passage]:
        key = id(target)
        if key not in self.targets:
            placed: dict[str, list[Passage]] = {}
            for passage in passages:
                for candidate in self.index.candidates(passage.tokens):
                    placed.setdefault(candidate, []).append(passage)
            self.targets[key] = placed
        return self.targets[key].get(claim_id, [])


def targets(estate: Estate) -> Iterator[Compose | Note]:
    yield from estate.composes
    yield from estate.notes


def places(estate: Estate, claim: Claim, stale: bool = True) -> list[Place]:
    """Every place that cites, retracts or (with ``stale``) still asserts ``claim``."""
    found: list[Place] = []
    for target in targets(estate):
        for citation in target.citations:
            if citation.claim_id == claim.id:
                found.append(
                    Place(target.path, citation.line, citation.column, _how(target, citation))
                )
        if stale:
            found += [
                Place(target.path, copy.line, 1, "stale copy")
                for copy in estate.claim_scan.stale_copies(claim, target)
            ]
    return sorted(set(found), key=lambda p: (p.path, p.line, p.column))


def _how(target: Compose | Note, citation: Citation) -> str:
    if citation.in_retraction and citation.claim_id in target.retracted_ids:
        return "retracts"
    return "cites in a retraction" if citation.in_retraction else "cites"


# -- triage: every passage ranked by similarity to a claim -------------------------------------


class Candidate(NamedTuple):
    """A unit of the estate ranked against a claim, with why."""

    path: str
    line: int
    end_line: int
    score: float  # the largest share of a claim statement's weight the unit holds
    weight: float  # the weight of all the claim's words it holds (ties: more is closer)
    status: str  # "stale" | "correction" | "copy" | "cites" | "follow-up" | "candidate"
    shared: tuple[str, ...]  # the claim's most distinctive words it holds
    phrases: tuple[str, ...]  # 3-word runs of the claim it repeats
    text: str
    condition: str = ""  # a follow-up's: what it waits for ("when 1096 recovers")


def rank(scan: ClaimScan, claim: Claim, limit: int | None = None) -> list[Candidate]:
    """Every unit of the estate that shares distinctive words with ``claim``, most similar
    first, for ``guards claims find``; the follow-ups that act on it come right below its
    restatements."""
    matcher = scan.matcher(claim)
    statements = [(s, t) for s, t in _statements(scan, claim) if t >= MIN_STATEMENT]
    found: list[Candidate] = []
    for target in targets(scan.estate):
        matchable = {id(passage) for passage in scan.candidates(claim, target)}
        cited = any(c.claim_id == claim.id for c in target.citations)
        for passage in scan.passages(target):
            matched = id(passage) in matchable  # elsewhere the matcher finds nothing
            if not (matched or cited) and _below(scan, statements, passage):
                continue
            judged = _judged_units(scan, claim, matcher, passage) if matched else {}
            found += _candidates(scan, claim, matcher, statements, target, passage, judged)
    found.sort(key=lambda c: (-c.score, -c.weight, c.path, c.line))
    found = followup.below_restatements(found)
    return found[:limit] if limit else found


def _below(scan: ClaimScan, statements_: list[tuple[set[str], float]], passage: Passage) -> bool:
    """No unit of the passage holds ``MIN_CANDIDATE`` of a statement's weight (or, where it
    states a condition, the share a follow-up needs): the passage as a whole does not (with a
    margin for float rounding)."""
    weight, vocabulary = scan.vocabulary.weight, passage.tokens.vocabulary
    conditional = followup.may_follow_up(u.text for u in passage.units)
    least = followup.SUBJECT_SHARE if conditional else MIN_CANDIDATE
    return all(
        sum(weight(w) for w in s & vocabulary) < (least - ROUNDING) * total
        for s, total in statements_
    )


def _statements(scan: ClaimScan, claim: Claim) -> list[tuple[set[str], float]]:
    weight = scan.vocabulary.weight
    texts = statements(claim.wordings) + [tuple(words(p)) for p in claim.match]
    return [(set(s), sum(weight(w) for w in set(s))) for s in texts]


def _candidates(
    scan: ClaimScan,
    claim: Claim,
    matcher: ClaimMatcher,
    statements_: list[tuple[set[str], float]],
    target: Compose | Note,
    passage: Passage,
    judged: dict[int, str],
) -> Iterator[Candidate]:
    """The passage's units worth showing; ``judged``: the units a match touches."""
    weight = scan.vocabulary.weight
    cited = {c.line for c in target.citations if c.claim_id == claim.id}
    for index, unit in enumerate(passage.units):
        sequence = tuple(w for sentence in passage.sentences(index) for w in sentence)
        if any(_contains(sequence, phrase) for phrase in matcher.not_match):
            continue  # dismissed: recorded as not the claim
        terms = set(sequence)
        score = max((sum(weight(w) for w in s & terms) / t for s, t in statements_), default=0)
        status = judged.get(index) or ("cites" if cited & {n for n, _ in unit.lines} else "")
        said = terms & {w for s, _ in statements_ for w in s}
        when = None
        if status in ("", "cites") and followup.may_follow_up([unit.text]):
            when = _follow_up(scan, claim, matcher, statements_, passage.sentences(index))
        status = followup.FOLLOW_UP if when else status
        if score < MIN_CANDIDATE and not status:
            continue
        shared = sorted(said, key=lambda w: (-weight(w), w))[:8]
        yield Candidate(
            target.path,
            unit.lines[0][0],
            unit.lines[-1][0],
            round(score, 2),
            round(sum(map(weight, said)), 2),
            status or "candidate",
            tuple(shared),
            _repeated(matcher, sequence),
            "\n".join(text.strip() for _, text in unit.lines),
            when or "",
        )


MIN_CANDIDATE = 0.35  # share of a statement's weight below which a unit is not worth showing


def _follow_up(
    scan: ClaimScan,
    claim: Claim,
    matcher: ClaimMatcher,
    statements_: list[tuple[set[str], float]],
    sentences: list[tuple[str, ...]],
) -> str | None:
    """The condition of the first sentence that acts on the claim on a condition and names
    its subject (``guards.claims.followup``); None when no sentence does."""
    weight = scan.vocabulary.weight
    claimed = {w for text in claim.wordings + claim.match for w in words(text)}
    for sentence in sentences:
        when = followup.condition(" ".join(sentence))
        if when is None:
            continue
        terms = set(sentence)
        share = max((sum(weight(w) for w in s & terms) / t for s, t in statements_), default=0)
        stated = {f for f in matcher.figures if set(f.split("-")) <= terms}
        if followup.names_subject(terms & claimed, stated, share):
            return when
    return None


def _judged_units(
    scan: ClaimScan, claim: Claim, matcher: ClaimMatcher, passage: Passage
) -> dict[int, str]:
    """The units a match touches: stale, a correction, or (for an active claim) a copy."""
    judged: dict[int, str] = {}
    for match in matcher.find(passage.tokens):
        if not claim.is_withdrawn:
            status = "copy"
        else:
            status = "stale" if scan._asserts(claim, matcher, passage, match) else "correction"
        first, last = passage.tokens[match.start].unit, passage.tokens[match.end].unit
        for index in range(first, last + 1):
            judged.setdefault(index, status)
    return judged


def _contains(sequence: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    return any(sequence[i : i + size] == phrase for i in range(len(sequence) - size + 1))


def _repeated(matcher: ClaimMatcher, sequence: tuple[str, ...]) -> tuple[str, ...]:
    """The claim's 3-word runs a unit repeats, joined into phrases."""
    hits = [i for i in range(len(sequence) - 2) if tuple(sequence[i : i + 3]) in matcher.shingles]
    phrases: list[list[int]] = []
    for i in hits:
        if phrases and i <= phrases[-1][-1] + 1:
            phrases[-1].append(i)
        else:
            phrases.append([i])
    return tuple(" ".join(sequence[p[0] : p[-1] + 3]) for p in phrases)
