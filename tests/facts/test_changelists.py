"""The sibling change-list reader: which flags a "same as X, plus …" line lists, and how."""

from guards.facts.changelists import change_lists


def listed(text):
    return [(c.ref, [(x.kind, x.flag, x.value) for x in c.changes]) for c in change_lists(text)]


def test_each_kind_with_its_values():
    text = "Same as dual/max.yml, plus --enforce-eager, without --jinja; except -np 4."
    assert listed(text) == [
        (
            "dual/max.yml",
            [
                ("plus", "--enforce-eager", None),
                ("without", "--jinja", None),
                ("except", "-np", "4"),
            ],
        )
    ]


def test_values_written_with_equals_or_in_code_spans():
    assert listed("like fast: plus `--kv-cache-dtype fp8` and --max-model-len=64K (long)") == [
        ("fast", [("plus", "--kv-cache-dtype", "fp8"), ("plus", "--max-model-len", "64K")])
    ]


def test_prose_is_not_a_change_list():
    assert listed("runs as fast as the base, plus it is quick") == []
    assert listed("as base.yml but --max-num-seqs 2 for debugging") == [
        ("base.yml", [("except", "--max-num-seqs", None)])  # a value followed by prose is not one
    ]
