"""Generated regions: the built-in templates, `guards regen` (write, --check, --diff, --force),
its refusals (exit 2, one line naming file and line, nothing written), and the retraction
workflow on twenty composes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from guards.facts.regions import checksum, regenerate
from guards.sources import registry

from ..cli_helpers import run_guards, tree_digest

SHARED = Path(__file__).resolve().parents[3] / "shared"
REGISTRY = """\
claims:
  - id: kv-bytes
    title: KV bytes per token
    status: active
    asserted: 2026-08-01
    text: fp8 KV costs 32,768 bytes per token on this model.
  - id: old-cliff
    title: Decode cliff
    status: retracted
    asserted: 2026-08-01
    retracted: 2026-09-08
    reason: A harness artefact.
    text: decode collapses past 21k.
    replacement: Decode is flat with context.
"""
BODY = (
    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
    '    command: [--tensor-parallel-size, "2", --max-model-len, "131072", '
    "--kv-cache-dtype, fp8_e4m3]\n"
)
PROFILE = "x-guards:\n  model: Qwen3.8-27B (INT4)\n  status: ✅ Production\n  caveats: [slow]\n"


def estate(tmp_path: Path, composes: dict[str, str], templates: dict[str, str] | None = None):
    (tmp_path / "claims.yaml").write_text(REGISTRY, encoding="utf-8")
    for name, text in {**composes, **(templates or {})}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    (tmp_path / "guards.toml").write_text('composes = ["composes/**/*.yml"]\n', encoding="utf-8")
    return tmp_path


def rendered(text: str) -> str:
    reg = registry.parse(REGISTRY, "claims.yaml")
    edits = regenerate(text, "c.yml", reg, None, None, force=False)
    from guards.sources.edit import apply

    return apply(text, edits)


def test_claim_template_gives_an_active_claim_its_wording_and_a_withdrawn_one_its_retraction():
    text = "# >>> guards:claim kv-bytes\n# <<< guards:claim\n# >>> guards:claim old-cliff\n"
    text += "# <<< guards:claim\n" + BODY
    active = "# KV bytes per token (claim:kv-bytes):\n#   fp8 KV costs 32,768 bytes per token on this model.\n"
    retracted = (
        "# ⚠️ RETRACTED 2026-09-08 (claim:old-cliff): Decode cliff\n"
        "#   Why: A harness artefact.\n"
        "#   Instead: Decode is flat with context.\n"
    )
    assert rendered(text) == (
        f"# >>> guards:claim kv-bytes\n{active}# <<< guards:claim (checksum: {checksum(active)})\n"
        f"# >>> guards:claim old-cliff\n{retracted}"
        f"# <<< guards:claim (checksum: {checksum(retracted)})\n" + BODY
    )


def test_profile_template_takes_facts_from_the_body_and_wording_from_x_guards():
    text = "# Title\n# >>> guards:profile\n# <<< guards:profile\n" + PROFILE + BODY
    body = (
        "# Profile (at-a-glance):\n"
        "#   Model:     Qwen3.8-27B (INT4)\n"
        "#   Topology:  TP=2\n"
        "#   Drafter:   none\n"
        "#   KV:        fp8_e4m3\n"
        "#   Max ctx:   131072\n"
        "#   Engine:    vllm/vllm-openai:v0.27.1\n"
        "#   Status:    ✅ Production\n"
        "#   Caveat:    slow\n"
    )
    assert rendered(text) == (
        f"# Title\n# >>> guards:profile\n{body}# <<< guards:profile (checksum: {checksum(body)})\n"
        + PROFILE
        + BODY
    )


def test_regions_keep_the_marker_s_indentation():
    text = BODY + "  # >>> guards:claim kv-bytes\n  # <<< guards:claim\n"
    assert rendered(text).splitlines()[4:6] == [
        "  # >>> guards:claim kv-bytes",
        "  # KV bytes per token (claim:kv-bytes):",
    ]


def test_regen_writes_then_has_nothing_left_to_do(capsys, tmp_path):
    root = estate(
        tmp_path, {"composes/a.yml": "# >>> guards:claim kv-bytes\n# <<< guards:claim\n" + BODY}
    )
    first = run_guards(capsys, "regen", "--root", str(root))
    assert (first.code, first.out, first.err) == (
        0,
        "regenerated composes/a.yml\nguards regen: 1 file regenerated\n",
        "",
    )
    before = tree_digest(root)
    second = run_guards(capsys, "regen", "--root", str(root))
    assert (second.code, second.out) == (0, "guards regen: 0 files regenerated\n")
    assert tree_digest(root) == before
    check = run_guards(capsys, "check", "--root", str(root), "--select", "G")
    assert (check.code, check.out) == (0, "guard suite: 3 pass / 0 fail\n")


def test_regen_check_and_diff_write_nothing(capsys, tmp_path):
    root = estate(
        tmp_path, {"composes/a.yml": "# >>> guards:claim kv-bytes\n# <<< guards:claim\n" + BODY}
    )
    before = tree_digest(root)
    check = run_guards(capsys, "regen", "--check", "--root", str(root))
    assert check.code == 1
    assert check.out.startswith("--- a/composes/a.yml\n+++ b/composes/a.yml\n@@ -1,5 +1,7 @@\n")
    assert "+# KV bytes per token (claim:kv-bytes):\n" in check.out
    assert check.out.endswith("guards regen: 1 file would change\n")
    diff = run_guards(capsys, "regen", "--diff", "--root", str(root))
    assert (diff.code, diff.out) == (0, check.out)
    assert tree_digest(root) == before


def test_regen_keeps_line_endings_bom_and_mode(capsys, tmp_path):
    text = "\ufeff" + ("# >>> guards:claim kv-bytes\n# <<< guards:claim\n" + BODY).replace(
        "\n", "\r\n"
    )
    root = estate(tmp_path, {"composes/a.yml": text})
    path = root / "composes/a.yml"
    path.chmod(0o640)
    assert run_guards(capsys, "regen", "--root", str(root)).code == 0
    data = path.read_bytes()
    assert data.startswith("\ufeff".encode())
    assert data.count(b"\n") == data.count(b"\r\n") == 8
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert b"# KV bytes per token (claim:kv-bytes):\r\n" in data


BROKEN = [
    (
        "unclosed",
        "# >>> guards:claim kv-bytes\n" + BODY,
        {},
        "composes/a.yml:1: generated region guards:claim is never closed",
    ),
    (
        "nested",
        "# >>> guards:claim kv-bytes\n# >>> guards:claim kv-bytes\n# <<< guards:claim\n" + BODY,
        {},
        "composes/a.yml:2: generated region guards:claim opens inside guards:claim (opened at line 1)",
    ),
    (
        "unknown template",
        "# x\n# >>> guards:nope\n# <<< guards:nope\n" + BODY,
        {},
        "composes/a.yml:2: no template for region guards:nope (looked for nope.j2 in templates/ and among the built-ins)",
    ),
    (
        "template syntax",
        "# >>> guards:t\n# <<< guards:t\n" + BODY,
        {"templates/t.j2": "one\n{{ data.model }\n"},
        "templates/t.j2:2: template syntax error: unexpected '}'",
    ),
    (
        "undefined name",
        "# >>> guards:t\n# <<< guards:t\n" + BODY,
        {"templates/t.j2": "{{ nonsense }}\n"},
        "composes/a.yml:1: region guards:t: 'nonsense' is undefined",
    ),
    (
        "a placeholder the body does not fill",
        "# >>> guards:profile\n# <<< guards:profile\n"
        "x-guards:\n  profile: {Max ctx: '{max_model_len} (native)'}\n"
        "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n",
        {},
        "composes/a.yml:1: region guards:profile: the compose sets no max_model_len for "
        "{max_model_len}",
    ),
    (
        "unknown claim",
        "# >>> guards:claim kv-byts\n# <<< guards:claim\n" + BODY,
        {},
        "composes/a.yml:1: no claim with id 'kv-byts' in claims.yaml",
    ),
    (
        "hand edit",
        "# >>> guards:claim kv-bytes\n# edited\n# <<< guards:claim (checksum: 00000000)\n" + BODY,
        {},
        "composes/a.yml:1: region guards:claim was edited by hand since it was generated (its "
        "checksum does not match); move the edit into the template or the data, or rerun with "
        "--force to overwrite it",
    ),
    (
        "region inside a block scalar",
        "services:\n  s:\n    image: x\n    entrypoint:\n      - bash\n      - -c\n      - |\n"
        "        # >>> guards:claim kv-bytes\n        # <<< guards:claim\n        exec vllm serve\n",
        {},
        "composes/a.yml: refusing to write: regenerating would change more than the regions' "
        "comment lines (is a marker inside a block scalar?); nothing written",
    ),
]


@pytest.mark.parametrize("name, text, templates, error", BROKEN, ids=[b[0] for b in BROKEN])
def test_regen_refuses_with_one_line_and_writes_nothing(
    capsys, tmp_path, name, text, templates, error
):
    root = estate(tmp_path, {"composes/a.yml": text}, templates)
    before = tree_digest(root)
    result = run_guards(capsys, "regen", "--root", str(root))
    assert (result.code, result.err) == (2, f"guards: error: {error}\n")
    assert tree_digest(root) == before


def test_force_overwrites_a_hand_edit(capsys, tmp_path):
    text = "# >>> guards:claim kv-bytes\n# edited\n# <<< guards:claim (checksum: 00000000)\n" + BODY
    root = estate(tmp_path, {"composes/a.yml": text})
    assert run_guards(capsys, "regen", "--force", "--root", str(root)).code == 0
    assert "# edited" not in (root / "composes/a.yml").read_text(encoding="utf-8")


def test_one_bad_file_does_not_stop_the_others(capsys, tmp_path):
    root = estate(
        tmp_path,
        {
            "composes/a.yml": "# >>> guards:claim kv-byts\n# <<< guards:claim\n" + BODY,
            "composes/b.yml": "# >>> guards:claim kv-bytes\n# <<< guards:claim\n" + BODY,
        },
    )
    result = run_guards(capsys, "regen", "--root", str(root))
    assert result.code == 2
    assert result.out == "regenerated composes/b.yml\nguards regen: 1 file regenerated\n"


def test_retracting_a_claim_twenty_regions_render_puts_them_out_of_date_until_regen(
    capsys, tmp_path
):
    composes = {
        f"composes/c{i:02d}.yml": "# >>> guards:claim kv-bytes\n# <<< guards:claim\n" + BODY
        for i in range(20)
    }
    root = estate(tmp_path, composes)
    assert run_guards(capsys, "regen", "--root", str(root)).code == 0
    assert run_guards(capsys, "check", "--root", str(root), "--select", "G001").code == 0
    replacement = tmp_path / "replacement.txt"
    replacement.write_text("fp8 KV costs 16,384 bytes per token.\n", encoding="utf-8")
    retract = run_guards(
        capsys,
        "claims",
        "retract",
        "kv-bytes",
        "--root",
        str(root),
        "--date",
        "2026-11-01",
        "--reason",
        "Re-measured: 16,384 bytes.",
        "--replacement-file",
        str(replacement),
    )
    assert retract.code == 0, retract.err
    stale = run_guards(capsys, "check", "--root", str(root), "--select", "G001")
    assert stale.code == 1
    assert stale.out.count("G001 [*] region guards:claim kv-bytes is out of date") == 20
    assert stale.out.endswith("guard suite: 0 pass / 20 fail, 20 fixable with --fix\n")
    fixed = run_guards(capsys, "regen", "--root", str(root))
    assert fixed.out.endswith("guards regen: 20 files regenerated\n")
    assert run_guards(capsys, "check", "--root", str(root), "--select", "G").code == 0
    text = (root / "composes/c07.yml").read_text(encoding="utf-8")
    assert "# ⚠️ RETRACTED 2026-11-01 (claim:kv-bytes): KV bytes per token\n" in text
    assert "#   Instead: fp8 KV costs 16,384 bytes per token.\n" in text


@pytest.mark.parametrize(
    "estate_dir, loaded",
    [
        (Path(__file__).resolve().parents[1] / "fixtures" / "estates" / "clean", False),
        (Path(__file__).resolve().parents[2], True),  # the bundled estate has regions
    ],
    ids=["without regions", "with regions"],
)
def test_jinja2_is_loaded_only_for_an_estate_with_regions(estate_dir, loaded):
    code = (
        "import sys; from guards.cli import main; sys.argv = ['guards', 'check', '--root', "
        f"{str(estate_dir)!r}]\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('jinja2' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.splitlines()[-1] == str(loaded), result.stderr


@pytest.mark.skipif(not (SHARED / "corpus/club-3090-sample").is_dir(), reason="no shared corpus")
def test_regen_on_the_real_samples_changes_nothing(capsys):
    sample = SHARED / "corpus/club-3090-sample"
    before = tree_digest(sample)
    result = run_guards(capsys, "regen", "--root", str(sample))
    assert (result.code, result.out, result.err) == (0, "guards regen: 0 files regenerated\n", "")
    assert tree_digest(sample) == before


def test_compiled_templates_are_reused_across_files():
    from guards.facts.regions import environment

    folder = Path(__file__).resolve().parents[2] / "templates"
    assert environment(folder) is environment(folder)
    env = environment(folder)
    assert env.get_template("claim.j2") is env.get_template("claim.j2")
