"""The claim candidate index (``guards.claims.textmatch.CandidateIndex``) never drops a pair that the
full comparison matches: wherever a claim's matcher finds a match in a passage, the index names
that claim for that passage. Checked exhaustively (every passage against every claim) on the
bundled estate, the incident fixture, the labelled snippets and the claims-dev passages, and as
a property on generated claims and passages with arbitrary word weights."""

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from guards.claims import scan as claimscan
from guards.claims.scan import ClaimScan, Copy, rank, targets
from guards.claims.textmatch import RESTATED_SHINGLES, CandidateIndex, ClaimMatcher
from guards.claims.tokens import tokenize
from guards.run.estate import Estate, load_estate
from guards.sources.compose.compose import parse_compose
from guards.sources.config import Config
from guards.sources.configfile import load_config
from guards.sources.registry import parse

from ..conftest import FIXTURES
from ..examples import examples
from ..yamldata import read_yaml
from .test_claims_dev import DEV, dev_claims, place, snippets

ROOT = Path(__file__).resolve().parents[2]
INCIDENT = FIXTURES / "estates" / "incident"
SNIPPETS = FIXTURES / "claims" / "snippets.yaml"


def full_copies(scan: ClaimScan, claim, target) -> list[Copy]:
    """Stale copies found by comparing every passage of ``target`` with ``claim``."""
    if not claim.is_withdrawn or not (claim.wordings or claim.match):
        return []
    matcher = scan.matcher(claim)
    found = []
    for passage in scan.passages(target):
        for match in matcher.find(passage.tokens):
            if scan._asserts(claim, matcher, passage, match):
                tokens = passage.tokens
                found.append(Copy(tokens[match.start].line, tokens[match.end].line, match.phrase))
    return found


def check_complete(estate: Estate) -> tuple[int, int, int]:
    """Every matched (passage, claim) pair is a candidate: of the scan (the withdrawn claims
    indexed together, any other alone) and of one index holding every claim of the registry.
    Stale copies are those of the full comparison. Returns (pairs, candidates, matched)."""
    scan = estate.claim_scan
    claims = list(estate.registry.claims)
    everything = CandidateIndex(
        {c.id: scan.matcher(c) for c in claims}, scan.vocabulary.frequency.__getitem__
    )
    pairs = candidates = matched = 0
    for target in targets(estate):
        placed = {c.id: {id(p) for p in scan.candidates(c, target)} for c in claims}
        for passage in scan.passages(target):
            together = everything.candidates(passage.tokens)
            candidates += len(together)
            for claim in claims:
                pairs += 1
                if scan.matcher(claim).find(passage.tokens):
                    matched += 1
                    where = f"{target.path}:{passage.units[0].lines[0][0]} {claim.id}"
                    assert claim.id in together, where
                    assert id(passage) in placed[claim.id], where
        for claim in claims:
            assert scan.stale_copies(claim, target) == full_copies(scan, claim, target)
    return pairs, candidates, matched


def test_every_match_in_the_bundled_estate_is_a_candidate():
    pairs, candidates, matched = check_complete(load_estate(load_config(ROOT)))
    assert matched >= 5 and candidates < pairs / 4


def test_every_match_in_the_incident_fixture_is_a_candidate():
    pairs, candidates, matched = check_complete(load_estate(load_config(INCIDENT)))
    assert matched >= 20 and candidates < pairs


def test_every_match_in_the_labelled_snippets_is_a_candidate(tmp_path):
    (tmp_path / "claims.yaml").write_bytes((INCIDENT / "claims.yaml").read_bytes())
    for snippet in read_yaml(SNIPPETS):
        place(tmp_path, snippet)
    config = Config(root=tmp_path, composes=("composes/**/*.yml",), notes=("learnings/**/*.md",))
    pairs, candidates, matched = check_complete(load_estate(config))
    assert matched >= 29 and candidates < pairs


@pytest.mark.skipif(not DEV.is_dir(), reason="../shared/corpus/claims-dev is absent")
@pytest.mark.parametrize("inside", [False, True], ids=["alone", "in estate"])
def test_every_match_in_the_claims_dev_passages_is_a_candidate(tmp_path, inside):
    registry = "version: 1\nclaims:\n"
    if inside:
        for folder in ("composes", "learnings"):
            shutil.copytree(ROOT / folder, tmp_path / folder)
        registry = (ROOT / "claims.yaml").read_text(encoding="utf-8").rstrip("\n") + "\n"
    (tmp_path / "claims.yaml").write_text(registry + dev_claims(), encoding="utf-8")
    for snippet in snippets():
        place(tmp_path, snippet)
    config = Config(root=tmp_path, composes=("composes/**/*.yml",), notes=("learnings/**/*.md",))
    pairs, candidates, matched = check_complete(load_estate(config))
    # of the pairs that do not match, the index hands the matcher fewer than a fifth
    assert matched >= 15 and candidates - matched < (pairs - matched) / 5


@pytest.mark.parametrize("root", [ROOT, INCIDENT], ids=["bundled", "incident"])
def test_the_ranking_is_that_of_every_passage(monkeypatch, root):
    """``guards claims find`` ranks the same units, the same way, as when every passage is
    matched and scored: the index and the bound that skips passages drop nothing."""
    estate = load_estate(load_config(root))
    ranked = {c.id: rank(estate.claim_scan, c) for c in estate.registry.claims}
    monkeypatch.setattr(claimscan, "_below", lambda *args: False)
    monkeypatch.setattr(ClaimScan, "candidates", lambda self, claim, target: self.passages(target))
    estate = load_estate(load_config(root))
    assert ranked == {c.id: rank(estate.claim_scan, c) for c in estate.registry.claims}
    assert sum(map(len, ranked.values())) >= 20


EVERYDAY_COPY = """\
claims:
  - id: everyday-words
    title: A claim most of whose words are everyday English
    status: retracted
    retracted: 2026-01-02
    text: >-
      After that the team had to turn it off and wait zqxv7 for a new one to come
      back, what you said.
"""


def test_a_copy_of_only_everyday_words_of_a_claim_is_found():
    """No word of the copy is rare, neither in English nor in the estate: it is a candidate by
    the claim's shingles it repeats."""
    compose = parse_compose(
        "# After that the team had to turn it off and wait, then\n"
        "# for a new one to come back, what you said.\n"
        "services: {}\n",
        "composes/a.yml",
    )
    estate = Estate(Path("."), Config(root=Path(".")), parse(EVERYDAY_COPY, "claims.yaml"))
    estate.composes.append(compose)
    claim = estate.registry.claims[0]
    assert estate.claim_scan.stale_copies(claim, compose) == [Copy(1, 2, False)]


# -- the property, on generated claims and passages --------------------------------------------

RARE = ["nvfp4", "sm_120", "21000", "dflash2", "cliff", "spec_n", "e4m3", "43562", "trtllm"]
PLAIN = ["the", "on", "is", "decode", "context", "tier", "at", "not", "kv", "and", "of", "to"]
PLAIN += ["work", "unavailable", "if", "but"]  # denials, and words that stop one
DENIALS = [["is", "not", "work"], ["unavailable"], ["is", "unavailable"], ["not", "work"]]
GAPS = [[], ["on", "the", "tier", "and"], ["but"], ["at", "the", "tier", "of", "the", "tier", "to"]]
WEIGHTS = [0.05, 0.2, 0.34, 0.35, 0.5, 0.8, 1.0]


def wording(rng: random.Random) -> list[str]:
    words = [rng.choice(RARE if rng.random() < 0.3 else PLAIN) for _ in range(rng.randint(3, 40))]
    for _ in range(rng.randint(0, 3)):
        words.insert(rng.randint(1, len(words)), ".")
    return words


def edited(rng: random.Random, words: list[str]) -> list[str]:
    """A slice of a wording, some words dropped, replaced or added."""
    start = rng.randint(0, len(words) - 1)
    piece = words[start : rng.randint(start + 1, len(words))]
    out = []
    dropped = rng.choice([0.0, 0.1, 0.3])
    for word in piece:
        roll = rng.random()
        if roll < dropped:
            continue
        out.append(rng.choice(RARE + PLAIN) if roll < dropped + 0.1 else word)
        if rng.random() < 0.05:
            out.append(rng.choice(PLAIN))
    return out


def reworded(rng: random.Random, words: list[str]) -> list[str]:
    """Most of a wording's words in another order, and a run of it (a restatement)."""
    kept = [w for w in sorted(set(words) - {"."}) if rng.random() < 0.75]
    rng.shuffle(kept)
    start = rng.randint(0, len(words) - 1)
    return kept + words[start : start + rng.randint(0, 6)]


def case(rng: random.Random):
    """A few claims (their wordings, match phrases and word weights) and one passage of a few
    units made of edited pieces of their wordings and filler."""
    plain = rng.random() < 0.25  # no distinctive word and no phrase: only copies can match
    weights = {w: 0.2 if plain else rng.choice(WEIGHTS) for w in RARE + PLAIN}
    matchers = {}
    texts: list[list[str]] = []
    subjects: list[list[str]] = []
    for key in range(rng.randint(1, 3)):
        words = wording(rng)
        texts.append(words)
        phrases = [" ".join(edited(rng, words)) for _ in range(0 if plain else rng.randint(0, 2))]
        if not plain and rng.random() < 0.4:
            subjects.append(rng.sample(words, rng.randint(1, min(3, len(words)))))
            phrases.append(" ".join(subjects[-1] + rng.choice(DENIALS)))
        not_match = [" ".join(edited(rng, words))] if rng.random() < 0.1 else []
        matchers[str(key)] = ClaimMatcher([" ".join(words)], phrases, not_match, weights.get)
    units = []
    line = 1
    short = rng.random() < 0.3  # one line: nothing else in the passage brings in words
    for _ in range(1 if short else rng.randint(1, 3)):
        unit = []
        for _ in range(1 if short else rng.randint(1, 4)):
            roll, text = rng.random(), rng.choice(texts)
            piece = edited(rng, text) if roll < 0.6 else wording(rng)
            piece = reworded(rng, text) if roll > 0.8 else piece
            if rng.random() < 0.3:
                piece += edited(rng, rng.choice(texts))
            if subjects and rng.random() < 0.3:  # a subject denied in other words, or not
                lead, gap = rng.choice([[], ["if"]]), rng.choice(GAPS)
                piece += lead + rng.choice(subjects) + gap + rng.choice(DENIALS)
            unit.append((line, " ".join(piece)))
            line += 1
        units.append(unit)
    frequency = {w: rng.randint(0, 50) for w in RARE + PLAIN}
    return matchers, CandidateIndex(matchers, lambda w: frequency.get(w, 0)), tokenize(units)


def matched_but_dropped(rng: random.Random) -> tuple[list[str], list[str]]:
    """The claims whose matcher finds the passage, and those of them the index dropped."""
    matchers, index, tokens = case(rng)
    found = index.candidates(tokens)
    matched = [key for key, matcher in matchers.items() if matcher.find(tokens)]
    return matched, [key for key in matched if key not in found]


@settings(
    max_examples=examples(150),
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=list(HealthCheck),
)
@given(st.randoms(use_true_random=False))
def test_the_index_never_drops_a_matched_pair(rng):
    assert matched_but_dropped(rng)[1] == []


def test_the_generated_cases_match_every_way_and_the_index_still_filters():
    """The property above is not vacuous: its cases match by copy, phrase, restatement and
    denial, and the index leaves out most pairs that do not match."""
    kinds = {"copy": 0, "phrase": 0, "restatement": 0, "denial": 0}
    unmatched = kept = 0
    for seed in range(1500):
        matchers, index, tokens = case(random.Random(seed))
        found = index.candidates(tokens)
        for key, matcher in matchers.items():
            matches = matcher.find(tokens)
            assert key in found or not matches, seed
            for match in matches:
                kinds[match.how] += 1
            if not matches:
                unmatched += 1
                kept += key in found
    assert min(kinds.values()) >= 20, kinds
    assert kept < unmatched / 2, (kept, unmatched)


def test_every_vocabulary_that_can_match_a_claim_holds_one_of_its_anchors():
    """The lemma the index rests on, exhaustively: every set of a claim's words that could
    hold one of its phrases, restate one of its statements (with the shingles a restatement
    needs) or deny a phrase's subject holds one of the claim's anchor words."""
    checked = 0
    for seed in range(300):
        rng = random.Random(seed)
        pool = rng.sample(RARE + PLAIN, rng.randint(3, 9))
        weights = {w: rng.choice(WEIGHTS) for w in RARE + PLAIN}
        words = [rng.choice(pool) for _ in range(rng.randint(3, 16))]
        phrases = [" ".join(edited(rng, words)) for _ in range(rng.randint(0, 2))]
        if rng.random() < 0.4:
            phrases.append(" ".join(rng.sample(words, 2) + rng.choice(DENIALS)))
        matcher = ClaimMatcher([" ".join(words)], phrases, [], weights.__getitem__)
        frequency = {w: rng.randint(0, 9) for w in RARE + PLAIN}
        anchors = matcher.anchors(frequency.__getitem__)
        distinct = sorted(set(words).union(*matcher.phrases))
        for mask in range(1 << len(distinct)):
            vocabulary = {w for i, w in enumerate(distinct) if mask >> i & 1}
            if matcher.possible(vocabulary, RESTATED_SHINGLES):
                checked += 1
                assert vocabulary & anchors, (seed, sorted(vocabulary))
    assert checked >= 1000
