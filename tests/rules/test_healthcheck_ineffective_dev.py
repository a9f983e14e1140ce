"""K008 on the real estates of ../shared/corpus/estates-dev (skipped when that folder is
absent): the healthcheck-ineffective labels it finds, and its findings on the files the labels
call clean and on the lookalikes. Each estate is checked as the corpus's ``score_dev.py`` checks
it (a copy, with its ``configs/`` settings as guards.toml). Printed, not asserted (`pytest -s`)."""

from ..dev_corpus import check_json, estates, labels, needs_dev, score

CLASS = "healthcheck-ineffective"

pytestmark = needs_dev


def test_scores_on_the_dev_estates(tmp_path):
    for estate in estates():
        s = score(labels(estate), check_json(estate, tmp_path, "K008"), (CLASS,))
        print(
            f"[{estate.name}] {CLASS} {len(s.hit)}/{len(s.wanted)}; findings {len(s.found)}: "
            f"{len(s.on_clean)} on clean files, {len(s.on_look)} on lookalikes"
        )
        for f in s.found:
            print(f"    {f['path']}:{f['line']}:{f['column']} {f['message']}")
