"""The editor and the command line cannot disagree: both run one pipeline
(``guards.run.pipeline``), so what the server publishes for an estate is what ``guards check
--format json`` reports for it, under any settings — ``select``, ``extend-select``,
``ignore``, ``extend-ignore`` and ``per-path-ignores`` among them."""

import json
from pathlib import Path

import pytest

from guards.server.checking import check

from ..cli_helpers import run_guards
from .editor import uri
from .test_server import edited

EXTRA_COMPOSE = """\
# Profile (at-a-glance):
#   Model:     Qwen3.8-27B
#   Status:    \u26a0 Production w/ caveats
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--gpu-memory-utilization, "0.99"]
"""
CITING = "# Extra\n\nThe tiers slow down, see claim:decode-cliff-1096 for the numbers.\n"
FROZEN = """
[per-path-ignores."composes/qwen3.8-27b/vllm/multi8/**"]
rules = ["C001"]
reason = "frozen until the tiers move"
"""
# Settings the server read as `select` and `ignore` alone before the pipeline was shared: with
# each, a run that honours only those two reports other findings than `guards check` does.
SETTINGS = {
    "extend-select and extend-ignore": (
        'select = ["C002", "S"]\nextend-select = ["C001"]\nextend-ignore = ["S003"]\n' + FROZEN
    ),
    "extend-ignore alone": 'extend-ignore = ["C001", "K"]\n',
    "a narrower select beats an ignore": 'select = ["C001", "S002"]\nignore = ["C", "S"]\n',
    "per-path-ignores": FROZEN,
}


def with_settings(root: Path, settings: str) -> Path:
    """The incident with a compose of its own findings (S002, S003, K001), a note citing the
    withdrawn claim (C002) and ``settings`` added to its guards.toml."""
    (root / "composes" / "extra.yml").write_text(EXTRA_COMPOSE, encoding="utf-8")
    (root / "learnings" / "extra.md").write_text(CITING, encoding="utf-8")
    toml = (root / "guards.toml").read_text(encoding="utf-8")
    head, _, rest = toml.partition("[header]")
    (root / "guards.toml").write_text(f"{head}{settings}\n[header]{rest}", encoding="utf-8")
    return root


def documents(root: Path) -> list[Path]:
    return sorted([*(root / "composes").rglob("*.yml"), *(root / "learnings").glob("*.md")])


def reported(capsys, root: Path, *paths: Path) -> list[tuple]:
    """What ``guards check --format json`` reports: rule, path, place, message, hint and
    fingerprint of each finding."""
    done = run_guards(capsys, "check", "--format", "json", *map(str, paths), cwd=root)
    assert done.code in (0, 1), done.err
    return sorted(
        (f["rule"], f["path"], f["line"], f["column"], f["message"], f["hint"], f["fingerprint"])
        for f in json.loads(done.out)["findings"]
    )


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_the_editors_check_reports_what_check_reports(capsys, incident, settings):
    root = with_settings(incident, settings)
    expected = reported(capsys, root)
    checked = check(root, documents(root), {})
    assert checked.stopped is None and checked.run is not None
    found = sorted(
        (f.rule, f.path, f.line, f.column, f.message, f.hint, f.fingerprint)
        for f in checked.run.findings
    )
    assert found == expected
    assert {f[0] for f in expected} != {"C001"}  # more than the incident's own rule shows


def test_one_open_file_is_checked_as_check_checks_that_file(capsys, incident):
    root = with_settings(incident, SETTINGS["extend-select and extend-ignore"])
    note = root / "learnings" / "extra.md"
    checked = check(root, [note], {})
    assert checked.run is not None
    found = [
        (f.rule, f.path, f.line, f.column, f.message, f.hint, f.fingerprint)
        for f in checked.run.findings
    ]
    assert found == reported(capsys, root, note) != []


def test_the_servers_diagnostics_are_the_findings_of_check_format_json(capsys, incident):
    """End to end: every compose and note of the estate open in an editor (pygls's client, the
    server in a subprocess) gets exactly the findings ``check --format json`` reports in it."""
    root = with_settings(incident, SETTINGS["extend-select and extend-ignore"])
    expected = reported(capsys, root)
    opened = documents(root)
    published = {}

    async def scenario(editor, root):
        for path in opened:
            editor.open(path)
        for path in opened:
            await editor.diagnostics(path)
        counts = {path: len(editor.published[uri(path)]) for path in opened}
        editor.save(opened[0])  # every open document checked again, all of them at once
        for path in opened:
            published[path] = await editor.diagnostics(path, after=counts[path])

    edited(root, scenario)
    found = sorted(
        (
            d.code,
            path.relative_to(root).as_posix(),
            d.range.start.line + 1,
            d.range.start.character + 1,
            *message_and_hint(d.message),
            d.data["fingerprint"],
        )
        for path, params in published.items()
        for d in params.diagnostics
    )
    assert found == expected
    assert {f[0] for f in found} == {"C001", "C002", "S002"}  # not S003, K001 or multi8's C001
    assert not any("/multi8/" in f[1] for f in found)


def message_and_hint(text: str) -> tuple[str, str | None]:
    message, _, hint = text.partition("\nhint: ")
    return message, hint or None
