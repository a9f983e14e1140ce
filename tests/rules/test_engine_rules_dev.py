"""K006, K007 and K001 on the development corpus of real estates: their scores printed, not asserted
(the corpus lives outside the repository; the test skips without it).

Run with ``-s`` to read them: labels of the classes the rules cover found per estate, and
findings on files the labels call clean or on their lookalikes (both should stay 0). Flags
in documented commands count too: unknown-flag and unsafe-knob labels on notes."""

from __future__ import annotations

from pathlib import Path

from guards.rules import all_rules

from ..dev_corpus import check_json, estates, labels, near, needs_dev, score

WANTED = ("K006", "K007", "K001")
CLASSES = ("unknown-flag", "unsafe-knob")


def _score(estate: Path, tmp: Path) -> str:
    marks = labels(estate)
    rules = ",".join(r.id for r in all_rules() if r.id in WANTED)
    s = score(marks, check_json(estate, tmp, rules), CLASSES)
    defects = marks.get("defects") or []
    looks = [f for f in s.on_look if not any(near(f, e) for e in defects)]
    return (
        f"{estate.name}: {len(s.hit)}/{len(s.wanted)} labels, {len(s.found)} findings, "
        f"{len(s.on_clean)} on clean files, {len(looks)} on lookalikes"
    )


@needs_dev
def test_print_scores_on_the_development_corpus(tmp_path):
    for estate in estates():
        print(_score(estate, tmp_path))
