"""The header convention is a setting: with none declared the header rules (S001-S005) are
off and ``-v`` says so once; the profile preset gives today's findings; a convention of the
estate's own is checked on its own terms; a bad ``[header]`` table is exit 2 at its line."""

import pytest

from ..cli_helpers import run_guards, tree_digest

PROFILED = """\
# Profile (at-a-glance):
#   Model:     tiny-7b
#   Status:    ⚠ Production w/ caveats
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
"""
CARD = """\
# Model card (tiny):
#   Model:   tiny-7b
#   Status:  beta
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
"""
BANNER = """\
# Copyright 2026 Example Corp.
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
"""
GLOBS = 'composes = ["composes/*.yml"]\n'
PRESET = '[header]\npreset = "profile"\n'
CUSTOM = """\
[header]
marker = "Model card"
required = ["Model", "Status", "Owner"]

[header.statuses]
ready = ["✅", "ready"]
retired = "🗑️"
"""
OFF = (
    "guards: no header convention in the settings: header rules (S001-S005) are off -- "
    'set header.marker (or header.preset = "profile") to turn them on\n'
)


@pytest.fixture
def estate(tmp_path):
    (tmp_path / "composes").mkdir()
    for name, text in (("p.yml", PROFILED), ("card.yml", CARD), ("banner.yml", BANNER)):
        (tmp_path / "composes" / name).write_text(text, encoding="utf-8")
    return tmp_path


def check(capsys, root, settings, *args):
    (root / "guards.toml").write_text(GLOBS + settings, encoding="utf-8")
    before = tree_digest(root)
    result = run_guards(capsys, "check", "--select", "S", *args, cwd=root)
    assert tree_digest(root) == before
    return result


def test_no_convention_no_header_findings_and_one_verbose_line(capsys, estate):
    result = check(capsys, estate, "", "-v")
    assert (result.code, result.out) == (0, "guard suite: 0 pass / 0 fail\n")
    assert result.err.count(OFF) == 1
    assert result.err.startswith(
        "guards: warning: `S` selects header rules, but the settings declare no header "
        'convention; they are off -- set header.marker (or header.preset = "profile") to turn '
        "them on\n"
    )


def test_no_convention_all_rules_run_but_the_header_ones(capsys, estate):
    (estate / "guards.toml").write_text(GLOBS, encoding="utf-8")
    result = run_guards(capsys, "check", cwd=estate)
    assert (result.code, result.err) == (0, "")
    assert " S00" not in result.out


def test_the_profile_preset_gives_the_profile_findings(capsys, estate):
    result = check(capsys, estate, PRESET)
    assert (result.code, result.err) == (1, "")
    assert result.out == (
        "composes/banner.yml:1:1: S001 header has no `# Profile (at-a-glance):` block\n"
        "composes/card.yml:1:1: S001 header has no `# Profile (at-a-glance):` block\n"
        "composes/p.yml:1:1: S003 profile block has no Drafter field\n"
        "composes/p.yml:1:1: S003 profile block has no KV field\n"
        "composes/p.yml:1:1: S003 profile block has no Topology field\n"
        "composes/p.yml:3:16: S002 Status '⚠ Production w/ caveats' starts with U+26A0 without "
        "the U+FE0F variation selector, so it maps to no status\n"
        "guard suite: 3 pass / 4 fail\n"
    )


def test_a_convention_of_the_estates_own(capsys, estate):
    result = check(capsys, estate, CUSTOM)
    assert (result.code, result.err) == (1, "")
    assert result.out == (
        "composes/banner.yml:1:1: S001 header has no `# Model card:` block\n"
        "composes/card.yml:1:1: S003 model card block has no Owner field\n"
        "composes/card.yml:3:14: S002 Status 'beta' does not start with a known status\n"
        "composes/p.yml:1:1: S001 header has no `# Model card:` block\n"
        "guard suite: 3 pass / 4 fail\n"
    )


@pytest.mark.parametrize(
    ("settings", "error"),
    [
        (
            "[header]\nrequired = []\n",
            "guards.toml:2: `header` needs `preset` or `marker`: the line that opens the block",
        ),
        (
            '[header]\npreset = "card"\n',
            "guards.toml:3: `header.preset`: input should be 'profile' (got 'card')",
        ),
        (
            '[header]\nmarker = "Card"\nlayout = "yaml"\n',
            "guards.toml:4: unknown setting "
            "`header.layout` (known: caveats-field, marker, preset, required, separator, statuses)",
        ),
        (
            '[header]\nmarker = "Card"\n[header.statuses]\nReady = "ok"\n',
            "guards.toml:5: `header.statuses` status name `Ready` must be lowercase kebab-case",
        ),
        (
            'header = "profile"\n',
            "guards.toml:2: `header` must be a table (`[header]` with `preset` or `marker`)",
        ),
        (
            '[by-status]\ndeprecated = "skip"\n',
            "guards.toml:2: `by-status` needs the statuses "
            "of a header convention (set `header.preset` or `header.statuses`)",
        ),
        (
            CUSTOM + '[by-status]\ndeprecated = "skip"\n',
            "guards.toml:10: `by-status` names an "
            "unknown status `deprecated` (known: ready, retired)",
        ),
    ],
)
def test_a_bad_header_table_is_exit_2_at_its_line(capsys, estate, settings, error):
    result = check(capsys, estate, settings)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")
