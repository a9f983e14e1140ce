"""D009 and D010 on the development corpus of real estates: their scores printed, not asserted
(the corpus lives outside the repository; the test skips without it).

Run with ``-s`` to read them: labels of the classes the rules cover found per estate (and
the ones missed), and findings on files the labels call clean or on their lookalikes (both
should stay 0)."""

from __future__ import annotations

from pathlib import Path

from guards.rules import all_rules

from ..dev_corpus import check_json, estates, labels, needs_dev, score

WANTED = ("D009", "D010")
CLASSES = ("duplicate-key", "unread-override")


def _score(estate: Path, tmp: Path) -> str:
    rules = ",".join(r.id for r in all_rules() if r.id in WANTED)
    s = score(labels(estate), check_json(estate, tmp, rules), CLASSES)
    missed = [f"{e['path']}:{e.get('line')}" for e in s.missed]
    return (
        f"{estate.name}: {len(s.hit)}/{len(s.wanted)} labels, {len(s.found)} findings, "
        f"{len(s.on_clean)} on clean files, {len(s.on_look)} on lookalikes"
        + (f"; missed {', '.join(missed)}" if missed else "")
    )


@needs_dev
def test_print_scores_on_the_development_corpus(tmp_path):
    for estate in estates():
        print(_score(estate, tmp_path))
