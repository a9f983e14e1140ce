"""Stacks as the run forms them (guards.run.stacks): the ``stacks`` setting, Compose's default
override file, plain fragments; ``extends.file`` read under the path policy; the cache."""

from pathlib import Path

from tests.cli_helpers import run_guards

BASE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--model, /models/m, --tensor-parallel-size, "2"]
"""
ONE_CARD = """\
services:
  vllm:
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]
"""
TWO_CARDS = ONE_CARD.replace('["0"]', '["0", "1"]')
FOUND = "c/base.yml:4:59: K004 service vllm runs TP=2 on 2 GPUs but reserves 1 (0)\n"


def estate(root: Path, files: dict[str, str], settings: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "guards.toml").write_text('composes = ["c/*.yml"]\n' + settings)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def check(capsys, root: Path, *args: str):
    return run_guards(capsys, "check", "--root", str(root), "--select", "K004", *args)


def test_the_stacks_setting_merges_what_it_names_and_nothing_else(capsys, tmp_path):
    files = {"c/base.yml": BASE, "c/a.yml": ONE_CARD, "c/b.yml": TWO_CARDS}
    root = estate(tmp_path, files, 'stacks = [["c/base.yml", "c/a.yml"]]\n')
    result = check(capsys, root, "-v")
    hint = "    hint: make the parallel size match the reserved devices\n"
    assert (result.code, result.out) == (1, FOUND + hint + "guard suite: 0 pass / 1 fail\n")
    assert (
        "guards: stack c/base.yml: c/base.yml + c/a.yml are checked merged, as "
        "`docker compose -f c/base.yml -f c/a.yml` runs them\n"
    ) in result.err


def test_a_stacks_entry_that_is_not_a_file_stops_the_run(capsys, tmp_path):
    root = estate(tmp_path, {"c/base.yml": BASE}, 'stacks = [["c/base.yml", "c/gone.yml"]]\n')
    result = check(capsys, root)
    assert result.code == 2
    assert (
        result.err
        == "guards: error: guards.toml:2: `stacks` names 'c/gone.yml', which is not a file\n"
    )


def test_a_stack_setting_of_one_file_is_refused(capsys, tmp_path):
    root = estate(tmp_path, {"c/base.yml": BASE}, 'stacks = [["c/base.yml"]]\n')
    result = check(capsys, root)
    assert result.code == 2
    assert "each stack lists two or more compose files, the base first" in result.err


def test_a_fragment_with_no_base_is_checked_alone_with_a_remark(capsys, tmp_path):
    root = estate(tmp_path, {"c/gpu.yml": ONE_CARD})
    result = check(capsys, root, "-v")
    assert (result.code, result.out) == (0, "guard suite: 0 pass / 0 fail\n")
    assert (
        "guards: c/gpu.yml: its services set no image, build or extends, but no one other "
        "compose of its folder defines them all: checked alone (name its base in `stacks`)\n"
    ) in result.err


def test_extends_file_is_merged(capsys, tmp_path):
    app = "services:\n  app:\n    extends: {file: base.yml, service: vllm}\n" + ONE_CARD[10:]
    app = app.replace("  vllm:\n", "")
    files = {
        "c/base.yml": BASE.replace('"2"]', '"1"]'),
        "c/app.yml": app.replace('["0"]', '["0", "1"]'),
    }
    result = check(capsys, estate(tmp_path, files))
    assert result.out == (
        "c/base.yml:4:59: K004 service app runs TP=1 on 1 GPUs but reserves 2 (0,1)\n"
        "guard suite: 1 pass / 1 fail\n"
    )


def test_extends_file_leading_outside_the_root_is_not_read_and_said(capsys, tmp_path):
    """Compose reads a base outside the project; guards reads nothing outside the estate: the
    service is checked as written, and -v says so (a missing file stays an error)."""
    root = tmp_path / "root"
    (tmp_path / "outside.yml").write_text(BASE)
    app = "services:\n  app:\n    extends:\n      file: ../../outside.yml\n      service: vllm\n"
    result = check(capsys, estate(root, {"c/app.yml": app}), "-v")
    assert result.code == 0, result.err
    assert (
        "guards: c/app.yml: line 3: service `app` extends `vllm` of ../../outside.yml, which "
        "lies outside the root and is not read: `app` is checked as written\n"
    ) in result.err
    missing = app.replace("../../outside.yml", "nowhere.yml")
    result = check(capsys, estate(tmp_path / "other", {"c/app.yml": missing}))
    assert result.code == 2
    assert "c/app.yml:3: `extends.file` 'nowhere.yml': no such file" in result.err


def test_the_cache_notices_an_edit_of_the_overlay(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    root = estate(tmp_path / "root", {"c/base.yml": BASE, "c/gpu.yml": TWO_CARDS})
    assert check(capsys, root).out == "guard suite: 1 pass / 0 fail\n"
    assert check(capsys, root).out == "guard suite: 1 pass / 0 fail\n"  # kept
    (root / "c/gpu.yml").write_text(ONE_CARD)
    assert check(capsys, root).out == FOUND + "guard suite: 0 pass / 1 fail\n"


FULL = BASE + "    ipc: host\n"  # says more of `vllm` than ROCM, which swaps its image
ROCM = """\
services:
  vllm:
    image: rocm/vllm:latest
    devices: [/dev/kfd, /dev/dri]
"""


def test_alternatives_are_each_checked_with_the_base_which_is_also_checked_alone(capsys, tmp_path):
    files = {"c/base.yml": FULL, "c/a.yml": ONE_CARD, "c/b.yml": TWO_CARDS, "c/rocm.yml": ROCM}
    result = check(capsys, estate(tmp_path, files), "-v")
    found = FOUND.replace("(0)\n", "(0) (with c/a.yml)\n")
    hint = "    hint: make the parallel size match the reserved devices\n"
    assert (result.code, result.out) == (1, found + hint + "guard suite: 3 pass / 1 fail\n")
    for name in ("a", "b", "rocm"):
        assert (
            f"guards: alternative c/{name}.yml: c/base.yml + c/{name}.yml are checked merged, as "
            f"`docker compose -f c/base.yml -f c/{name}.yml` runs them; c/base.yml is also "
            "checked alone\n"
        ) in result.err


def test_a_second_full_definition_of_a_service_is_no_overlay(capsys, tmp_path):
    """A compose that writes what the other one writes (``command``) is a definition of its
    own, however short: neither is merged onto the other, and a fragment fits neither."""
    short = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n    command: [--model, /m]\n"
    files = {"c/base.yml": BASE, "c/short.yml": short, "c/gpu.yml": ONE_CARD}
    result = check(capsys, estate(tmp_path, files), "-v")
    assert (result.code, result.out) == (0, "guard suite: 2 pass / 0 fail\n")
    assert "guards: stack" not in result.err and "guards: alternative" not in result.err
    assert "guards: c/gpu.yml: its services set no image, build or extends" in result.err


def test_an_alternative_and_its_overlay_files_own_checks_are_one_check(capsys, tmp_path):
    header = "# Profile (at-a-glance):\n#   Status: ✅ ok\n# ---\n"
    files = {"c/base.yml": header + BASE, "c/a.yml": ONE_CARD, "c/b.yml": TWO_CARDS}
    root = estate(tmp_path, files, '[header]\npreset = "profile"\n')
    result = run_guards(capsys, "check", "--root", str(root), "--select", "S001,K004")
    assert result.out.endswith("guard suite: 3 pass / 3 fail\n"), result.out


def test_two_alternative_stacks_ending_in_one_file_are_refused(capsys, tmp_path):
    stacks = 'stacks = [["c/base.yml", "c/a.yml"], ["c/base.yml", "c/a.yml"]]\n'
    root = estate(tmp_path, {"c/base.yml": BASE, "c/a.yml": ONE_CARD}, stacks)
    result = check(capsys, root)
    assert (result.code, result.err) == (
        2,
        "guards: error: guards.toml:2: `stacks`: two alternative stacks end in 'c/a.yml', "
        "the name of both\n",
    )


def test_the_cache_notices_an_edit_of_an_alternative_overlay(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    files = {"c/base.yml": FULL, "c/a.yml": TWO_CARDS, "c/rocm.yml": ROCM}
    root = estate(tmp_path / "root", files)
    assert check(capsys, root).out == "guard suite: 3 pass / 0 fail\n"
    assert check(capsys, root).out == "guard suite: 3 pass / 0 fail\n"  # kept
    (root / "c/a.yml").write_text(ONE_CARD)
    found = FOUND.replace("(0)\n", "(0) (with c/a.yml)\n")
    assert check(capsys, root).out == found + "guard suite: 2 pass / 1 fail\n"
