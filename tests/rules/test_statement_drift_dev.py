"""D008 on the real estates of ../shared/corpus/estates-dev: its findings against the labels
of the value-drift, port-mismatch and gpu-topology-mismatch classes, and on the files labelled clean or lookalike.
A printed report (`pytest -s`), not a gate; skipped when the corpus is absent."""

from guards.rules import all_rules, find
from guards.rules.options import load_options
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.configfile import load_config

from ..dev_corpus import copied, estates, labels, needs_dev, score

CLASSES = ("value-drift", "port-mismatch", "gpu-topology-mismatch")

pytestmark = needs_dev


def findings(estate, tmp) -> list:
    config = load_config(*copied(estate, tmp))
    rules = [find(all_rules(), "D008")]
    loaded = load_estate(config)
    return [f for r in run(loaded, rules, load_options(config, rules)).results for f in r.findings]


def test_print_scores(tmp_path):
    for estate in estates():
        s = score(labels(estate), findings(estate, tmp_path), CLASSES)
        print(
            f"\n[{estate.name}] D008 {len(s.hit)}/{len(s.wanted)} of {', '.join(CLASSES)}; "
            f"{len(s.found)} findings, {len(s.on_clean)} on clean files, {len(s.on_look)} on lookalikes"
        )
        for f in s.found:
            print(f"    {f.path}:{f.line}:{f.column} {f.message}")
