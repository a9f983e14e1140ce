"""D011 on the real estates of ../shared/corpus/estates-dev (skipped when that folder is
absent): the path-mismatch labels it finds, and its findings on the files the labels call clean
and on the lookalikes. Printed, not asserted (`pytest -s`): the corpus holds a part of each
repository, so a file it leaves out reads as missing."""

from guards.rules import all_rules, find
from guards.run.estate import load_estate
from guards.run.suite import run

from ..dev_corpus import estates, labels, needs_dev, notes_config, score

pytestmark = needs_dev


def test_scores_on_the_dev_estates():
    rule = find(all_rules(), "D011")
    for estate in estates():
        s = score(
            labels(estate),
            run(load_estate(notes_config(estate)), [rule], {}).findings,
            ("path-mismatch",),
        )
        print(
            f"[{estate.name}] path-mismatch {len(s.hit)}/{len(s.wanted)}; findings {len(s.found)}: "
            f"{len(s.on_clean)} on clean files, {len(s.on_look)} on lookalikes"
        )
        for f in s.found:
            print(f"    {f.path}:{f.line}:{f.column} {f.message}")
