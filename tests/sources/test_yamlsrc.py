"""The node-tree walks of guards/sources/yamlsrc.py."""

from guards.sources import yamlsrc

TEXT = "a: &x $A\nb: [*x, *x, c]\n${K}: {d: e}\n"


def test_scalars_are_each_node_once_keys_included_or_not():
    root = yamlsrc.compose(TEXT)
    every = sorted(n.value for n in yamlsrc.scalars(root))
    assert every == ["$A", "${K}", "a", "b", "c", "d", "e"]
    values = sorted(n.value for n in yamlsrc.scalars(root, keys=False))
    assert values == ["$A", "c", "e"]
    assert list(yamlsrc.scalars(None)) == []
