"""`by-status`: the settings decide how composes of a Status are treated (deprecated ones
skipped, or their findings reported as warnings)."""

import pytest

from ..cli_helpers import run_guards, tree_digest

DEPRECATED = """\
# Profile (at-a-glance):
#   Status:    🗑️ Deprecated — superseded by dual/fast
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--gpu-memory-utilization, "0.99"]
"""
ROLE = 'composes = ["composes/*.yml"]\nselect = ["K001", "S002"]\n'
HEADER = '\n[header]\npreset = "profile"\n'  # last: the error lines stay where they were


@pytest.fixture
def estate(tmp_path):
    (tmp_path / "composes").mkdir()
    (tmp_path / "composes" / "old.yml").write_text(DEPRECATED, encoding="utf-8")
    (tmp_path / "composes" / "live.yml").write_text(
        DEPRECATED.replace("🗑️ Deprecated — superseded by dual/fast", "✅ Production"),
        encoding="utf-8",
    )
    return tmp_path


def check(capsys, root, settings):
    (root / "guards.toml").write_text(ROLE + settings + HEADER, encoding="utf-8")
    before = tree_digest(root)
    result = run_guards(capsys, "check", cwd=root)
    assert tree_digest(root) == before
    return result


FINDING = (
    "composes/{name}.yml:6:41: K001 {level}gpu-memory-utilization 0.99 is above the ceiling 0.94 "
    "(the default ceiling 0.94; no registry claim sets one for this model)\n"
)


def test_deprecated_composes_are_checked_by_default(capsys, estate):
    result = check(capsys, estate, "")
    assert result.out == (
        FINDING.format(name="live", level="")
        + FINDING.format(name="old", level="")
        + "guard suite: 2 pass / 2 fail\n"
    )


def test_warning_reports_their_findings_without_failing(capsys, estate):
    result = check(capsys, estate, '[by-status]\ndeprecated = "warning"\n')
    assert result.code == 1  # the live compose still fails
    assert result.out == (
        FINDING.format(name="live", level="")
        + FINDING.format(name="old", level="[warning] ")
        + "guard suite: 3 pass / 1 fail, 1 warning\n"
    )


def test_skip_leaves_them_unchecked(capsys, estate):
    result = check(capsys, estate, '[by-status]\ndeprecated = "skip"\n')
    assert result.out == FINDING.format(name="live", level="") + "guard suite: 1 pass / 1 fail\n"


@pytest.mark.parametrize(
    ("settings", "error"),
    [
        (
            'by-status = "skip"\n',
            "guards.toml:3: `by-status` must be a table of status = treatment",
        ),
        (
            '[by-status]\nretired = "skip"\n',
            "guards.toml:4: `by-status` names an unknown status `retired` (known: caveats, deprecated, "
            "experimental, incubating, preview, production, upstream-gated)",
        ),
        (
            '[by-status]\ndeprecated = "hide"\n',
            "guards.toml:4: `by-status` sets deprecated to 'hide', not one of check, warning, skip",
        ),
    ],
)
def test_a_bad_by_status_table_is_exit_2(capsys, estate, settings, error):
    result = check(capsys, estate, settings)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")
