"""Property: on composes with arbitrary comments, quoting styles, anchors and aliases, block
scalars, CRLF and a BOM, regenerating changes no byte outside the regions and no YAML data,
and a second run changes nothing."""

import re
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guards.facts.regions import regenerate
from guards.sources import edit, registry

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM
from ..examples import examples

REGISTRY = registry.parse(
    "claims:\n  - id: kv-bytes\n    title: KV bytes\n    status: active\n"
    "    text: fp8 KV costs 32,768 bytes per token.\n",
    "claims.yaml",
)
COMMENT_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\ufeff"),
    max_size=40,
)
SCALARS = st.sampled_from(
    [
        "plain",
        "'single # quoted'",
        '"double \\" quoted"',
        "|\n      block # not a comment\n      text",
        ">-\n      folded\n      text",
        "'#'",
        "0.90",
        "~",
    ]
)
REGIONS = st.sampled_from(
    [
        "# >>> guards:claim kv-bytes\n# <<< guards:claim\n",
        "# >>> guards:claim kv-bytes\n# stale words\n# <<< guards:claim\n",
        "# >>> guards:profile\n# <<< guards:profile\n",
        "  # >>> guards:claim kv-bytes\n  # <<< guards:claim\n",
    ]
)


@st.composite
def composes(draw):
    header = "".join(f"#{draw(COMMENT_TEXT)}\n" for _ in range(draw(st.integers(0, 3))))
    parts = [header, draw(REGIONS)]
    values = draw(st.lists(SCALARS, min_size=1, max_size=4))
    if draw(st.booleans()):
        values = ["&anchor value", *values, "*anchor"]
    lines = ["x-data:\n"]
    for index, value in enumerate(values):
        trailing = f"  #{draw(COMMENT_TEXT)}" if draw(st.booleans()) and "\n" not in value else ""
        lines.append(f"  k{index}: {value}{trailing}\n")
    parts += lines
    parts.append("services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n")
    parts.append(
        draw(
            st.sampled_from(
                [
                    "",
                    "    # a trailing comment\n",
                    "    " + draw(REGIONS).replace("\n# ", "\n    # ").lstrip(),
                ]
            )
        )
    )
    text = "".join(parts)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return ("\ufeff" if draw(st.booleans()) else "") + text


REGION = re.compile(
    r"^[ \t]*# >>> guards:.*?^[ \t]*# <<< guards:[^\r\n]*", re.MULTILINE | re.DOTALL
)


def outside(text: str) -> list[str]:
    return REGION.split(text)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=composes())
def test_regen_changes_only_regions_and_is_idempotent(tmp_path_factory, text):
    path = Path(tmp_path_factory.mktemp("c")) / "c.yml"
    path.write_bytes(text.encode("utf-8"))
    source = edit.read(path, "c.yml")
    edits = regenerate(source.text, "c.yml", REGISTRY, None, None, force=True)
    after = source.render(edits)
    assert outside(after) == outside(source.raw)
    assert yaml.safe_load(edit.unify_breaks(after)) == yaml.safe_load(source.text)
    assert after.count("\r\n") in (0, after.count("\n"))  # line endings stay one style
    path.write_bytes((("\ufeff" if source.bom else "") + after).encode("utf-8"))
    again = edit.read(path, "c.yml")
    assert regenerate(again.text, "c.yml", REGISTRY, None, None, force=False) == []


WITHDRAWN = (
    WITHDRAWN_CLAIM
    + """\
  - id: kv-bytes
    title: KV bytes
    status: active
    text: fp8 KV costs 32,768 bytes per token.
"""
)
COPY = STALE_COPY


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=composes())
def test_fix_changes_only_the_copy_and_no_yaml_data(tmp_path_factory, text):
    from guards.rules import stale_claim
    from guards.run.estate import load_estate
    from guards.run.suite import run
    from guards.sources.config import Config
    from guards.write.fix import fix_stale_copies

    bom = text.startswith("\ufeff")
    body = text.removeprefix("\ufeff")
    newline = "\r\n" if "\r\n" in body else "\n"
    body = COPY.replace("\n", newline) + body
    root = Path(tmp_path_factory.mktemp("e"))
    (root / "claims.yaml").write_text(WITHDRAWN, encoding="utf-8")
    path = root / "c.yml"
    path.write_bytes((("\ufeff" if bom else "") + body).encode("utf-8"))
    estate = load_estate(Config(root=root, composes=("*.yml",), notes=()))
    copies = run(estate, [stale_claim.RULE]).findings
    assert [(f.line, f.end_line) for f in copies] == [(1, 2)]
    source = edit.read(path, "c.yml")
    fixed = fix_stale_copies(source.text, "c.yml", copies, estate.registry, None, None)
    after = source.render(edit.line_edits(source.text, fixed.text))
    rest = outside(source.raw.split(newline, len(COPY.splitlines()))[-1])
    # The copy's lines are now the first region; every other byte is where it was.
    assert outside(after) == ["", newline + rest[0], *rest[1:]]
    assert yaml.safe_load(edit.unify_breaks(after)) == yaml.safe_load(source.text)
