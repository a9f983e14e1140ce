"""D004 and D006 on the real estates of ../shared/corpus/estates-dev (skipped when that folder
is absent): no label of their classes exists there, so every finding is on a file the labels
call clean, on a lookalike or elsewhere. Printed, not asserted (`pytest -s`)."""

from guards.rules import all_rules, find
from guards.run.estate import load_estate
from guards.run.suite import run

from ..dev_corpus import estates, labels, needs_dev, notes_config, score

pytestmark = needs_dev


def test_scores_on_the_dev_estates():
    rules = [find(all_rules(), "D004"), find(all_rules(), "D006")]
    for estate in estates():
        s = score(labels(estate), run(load_estate(notes_config(estate)), rules, {}).findings)
        print(
            f"[{estate.name}] D004/D006 findings {len(s.found)}: {len(s.on_clean)} on clean files, "
            f"{len(s.on_look)} on lookalikes"
        )
        for f in s.found:
            print(f"    {f.path}:{f.line}:{f.column} {f.rule} {f.message}")
