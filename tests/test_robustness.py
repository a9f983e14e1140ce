"""Bad input, class by class: one located line on stderr, exit 2, the rest of the estate still
checked, nothing written - never a traceback, a hang or a surprise write."""

import os
import stat
import time

import pytest

from guards.errors import GuardsError
from guards.sources.compose.compose import parse_compose
from guards.sources.compose.interpolate import MAX_NESTING, TemplateError, interpolate
from guards.sources.edit import Edit, read
from guards.sources.envfile import load_env_file
from guards.sources.notes.notes import parse_note
from guards.sources.numbers import to_count, to_number

from .cli_helpers import run_guards, tree_digest

BODY = "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n"
VLLM = "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n    command: [{}]\n"


def write(path, text, mode="w"):
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def check(capsys, root, *args):
    """Run `guards check` and return (exit code, stdout, stderr lines); assert nothing changed."""
    before = tree_digest(root)
    result = run_guards(capsys, "check", "--root", str(root), *args)
    assert tree_digest(root) == before
    assert "Traceback" not in result.err and "internal error" not in result.err
    return result.code, result.out, result.err.splitlines()


# -- line breaks ------------------------------------------------------------------------------


@pytest.mark.parametrize("brk", ["\r", "\x85", "\u2028", "\u2029", "\r\n"])
def test_every_line_break_is_a_line_for_every_parser(brk):
    note = parse_note(f"a{brk}b{brk}{brk}", "n.md")
    assert note.lines == ["a", "b", "", ""]
    compose = parse_compose(
        f"# Profile (at-a-glance):{brk}#   Model: x{brk}services:{brk}  s:{brk}"
        f"    image: vllm/vllm-openai:v0.27.1{brk}",
        "c.yml",
    )
    assert (compose.header.fields[0].line, compose.services[0].line) == (2, 4)


def test_edits_keep_each_line_s_own_ending(tmp_path):
    path = write(tmp_path / "f.yaml", b"a: 1\rb: 2\r\nc: 3\n", "wb")
    source = read(path, "f.yaml")
    assert source.text == "a: 1\nb: 2\nc: 3\n"
    at = source.text.index("3")
    assert source.render([Edit(at, at + 1, "4")]) == "a: 1\rb: 2\r\nc: 4\n"


# -- numbers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, number",
    [("0.90", 0.9), ("204800", 204800.0), ("inf", None), ("nan", None), ("1e400", None),
     ("1" * 400, None), ("²", None), ("٣", None), ("", None), ("-", None), ("1e3", 1000.0)],
)  # fmt: skip
def test_numbers_are_finite_ascii_decimals_within_limits(text, number):
    assert to_number(text) == number


def test_counts_are_whole_and_bounded():
    assert (to_count("4"), to_count("4.0"), to_count("4.5"), to_count("-1")) == (4, 4, None, None)
    assert to_count("100000000", 4096) is None


@pytest.mark.parametrize(
    "compose",
    [
        "# Profile (at-a-glance):\n#   Max ctx:   1e400\n" + VLLM.format("--max-model-len, '1e400'"),
        "# Profile (at-a-glance):\n#   Max ctx:   " + "9" * 400 + "\n"
        + VLLM.format("--max-model-len, '204800'"),
        VLLM.format("--max-model-len, '0', --max-num-seqs, '4'"),
        VLLM.format("--max-model-len, inf, --gpu-memory-utilization, nan"),
        VLLM.format("--tensor-parallel-size, '²'"),
        "# Tensor-parallel: ²\n" + VLLM.format("--tensor-parallel-size, '2'"),
        "# KV pool 1e999 tok\n" + VLLM.format("--max-model-len, '1000', --max-num-seqs, '8'"),
        "services:\n  s:\n    image: vllm/vllm-openai:v0.27.1\n    deploy: {resources: "
        "{reservations: {devices: [{count: 100000000}]}}}\n  t:\n    image: vllm/vllm-openai\n",
    ],
)  # fmt: skip
def test_numbers_that_are_not_sane_never_crash(capsys, tmp_path, compose):
    write(tmp_path / "composes" / "c.yml", compose)
    code, out, err = check(capsys, tmp_path)
    assert code in (0, 1) and err == []
    assert out.splitlines()[-1].startswith("guard suite:")


# -- environment, interpolation, config -------------------------------------------------------


def test_env_file_with_empty_values(tmp_path):
    path = write(tmp_path / "my.env", "A=\nB=  \nexport C=''\nD=\"\"\n")
    assert load_env_file(path, "my.env") == {"A": "", "B": "", "C": "", "D": ""}


def test_interpolation_nested_too_deep_is_a_located_error():
    deep = "${A:-" * (MAX_NESTING + 5) + "x" + "}" * (MAX_NESTING + 5)
    with pytest.raises(TemplateError, match=f"nested more than {MAX_NESTING} deep"):
        interpolate(deep)
    assert interpolate("${A:-" * 10 + "x" + "}" * 10).text == "x"


def test_deep_nesting_in_a_compose_is_exit_2_with_its_line(capsys, tmp_path):
    deep = "${A:-" * 500 + "1" + "}" * 500
    write(tmp_path / "composes" / "c.yml", VLLM.format(f"--max-num-seqs, '{deep}'"))
    write(tmp_path / "composes" / "ok.yml", VLLM.format("--max-num-seqs, '1'"))
    code, out, err = check(capsys, tmp_path)
    assert code == 2
    assert err == [
        # column: 32 (inside the quote) + 5 characters per `${A:-` opened before the limit
        f"guards: error: composes/c.yml:4:{32 + 5 * (MAX_NESTING + 1)}: interpolation: "
        f"defaults nested more than {MAX_NESTING} deep"
    ]
    assert out.endswith(" fail\n")  # the other compose was still checked


@pytest.mark.parametrize(
    "name, text, error",
    [
        ("pyproject.toml", "tool = 1\n", "pyproject.toml:1: `tool.guards` must be a table"),
        ("guards.toml", "x = " + "1" * 5000 + "\n",
         "guards.toml:1: invalid TOML: an integer too long to read"),
        ("guards.toml", "max-file-mb = true\n",
         "guards.toml:1: `max-file-mb` must be a whole number of megabytes from 1 to 4096"),
        ("guards.toml", 'composes = ["/**"]\n',
         "guards.toml:1: `composes` pattern '/**' reaches outside the root; patterns are "
         "relative to it"),
        ("guards.toml", 'notes = ["../**/*.md"]\n',
         "guards.toml:1: `notes` pattern '../**/*.md' reaches outside the root; patterns are "
         "relative to it"),
        ("guards.toml", 'claims = "claims.yaml"\ntemplates = "../shared"\n',
         "guards.toml:2: `templates` '../shared' must be a path relative to the root, without "
         "'..'"),
        ("guards.toml", "templates = 3\n", "guards.toml:1: `templates` must be a path string"),
        ("guards.toml", 'claims = "/etc/claims.yaml"\n',
         "guards.toml:1: `claims` '/etc/claims.yaml' must be a path relative to the root, "
         "without '..'"),
    ],
)  # fmt: skip
def test_config_of_the_wrong_shape_is_exit_2(capsys, estate, name, text, error):
    write(estate / name, text)
    code, out, err = check(capsys, estate)
    assert (code, out, err) == (2, "", [f"guards: error: {error}"])


# -- what is read -----------------------------------------------------------------------------


def test_a_fifo_is_reported_not_read(capsys, estate):
    os.mkfifo(estate / "composes" / "pipe.yml")
    started = time.monotonic()
    code, _, err = check(
        capsys, estate, str(estate / "composes/pipe.yml"), str(estate / "composes/dual-fast.yml")
    )
    assert time.monotonic() - started < 10
    assert code == 2
    assert err == [
        "guards: error: composes/pipe.yml: is not a regular file (a FIFO, socket or device); "
        "not read"
    ]


def test_a_link_to_a_device_is_reported_not_read(capsys, estate):
    (estate / "composes" / "zero.yml").symlink_to("/dev/zero")
    code, _, err = check(capsys, estate)
    assert code == 2
    assert err == [
        "guards: error: composes/zero.yml: composes/zero.yml is a link that leads outside the "
        "estate root; not read or written"
    ]


def test_a_device_node_inside_the_estate_is_reported_not_read(capsys, estate):
    (estate / "dev").mkdir()
    os.mknod(estate / "dev" / "null.yml", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    (estate / "composes" / "null.yml").symlink_to(estate / "dev" / "null.yml")
    code, _, err = check(capsys, estate)
    assert code == 2
    assert err == [
        "guards: error: composes/null.yml: is not a regular file (a FIFO, socket or device); "
        "not read"
    ]


def test_a_file_over_the_size_limit_is_an_error_and_the_rest_is_checked(capsys, estate):
    write(estate / "guards.toml", 'composes = ["composes/*.yml"]\nmax-file-mb = 1\n')
    write(estate / "composes" / "huge.yml", BODY + "#" * 1_100_000 + "\n")
    code, out, err = check(capsys, estate)
    assert code == 2
    assert err == ["guards: error: composes/huge.yml: is larger than 1 MB (setting max-file-mb)"]
    assert out.splitlines()[-1].startswith("guard suite: ")


# -- silent wrong answers ---------------------------------------------------------------------


def test_a_key_given_twice_is_an_error_as_compose_says(capsys, estate):
    write(estate / "composes" / "twice.yml", BODY + "    command: [a]\n    command: [b]\n")
    code, _, err = check(capsys, estate)
    assert code == 2
    assert err == [
        "guards: error: composes/twice.yml:5:5: duplicate key `command` (first at line 4)"
    ]


def test_merge_keys_give_their_knobs_to_the_service():
    compose = parse_compose(
        "x-base: &base\n  image: vllm/vllm-openai:v0.27.1\n  command: [--max-num-seqs, '8']\n"
        "services:\n  s:\n    <<: *base\n    command: [--max-num-seqs, '2']\n  t:\n"
        "    <<: *base\n",
        "c.yml",
    )
    s, t = compose.services
    assert (s.engine, s.value("max_num_seqs"), s.knob("max_num_seqs").line) == ("vllm", "2", 7)
    assert (t.engine, t.value("max_num_seqs"), t.knob("max_num_seqs").line) == ("vllm", "8", 3)


def test_aliases_that_expand_too_far_are_refused(capsys, estate):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]"
              for i in range(7)]  # fmt: skip
    write(estate / "claims.yaml", "\n".join(lines) + "\nclaims: []\n")
    code, out, err = check(capsys, estate)
    assert (code, out) == (2, "")
    assert err == ["guards: error: claims.yaml:1: YAML aliases expand to more than 1,000,000 nodes"]


@pytest.mark.parametrize(
    "config, error",
    [
        ('composes = ["nowhere/*.yml"]\n',
         "guards.toml:1: `composes` pattern 'nowhere/*.yml' matches no file"),
        ('composes = ["nowhere/*.yml", "elsewhere/*.yml"]\nnotes = ["notes/*.md"]\n',
         "guards.toml:1: `composes` pattern 'nowhere/*.yml' matches no file"),
    ],
)  # fmt: skip
def test_a_setting_that_selects_nothing_is_an_error(capsys, estate, config, error):
    write(estate / "guards.toml", config)
    code, _, err = check(capsys, estate)
    assert (code, err[0]) == (2, f"guards: error: {error}")


def test_a_pattern_that_matches_nothing_beside_others_is_a_warning(capsys, estate):
    write(estate / "guards.toml", 'composes = ["composes/*.yml", "extra/*.yml"]\n')
    code, _, err = check(capsys, estate)
    warning = "guards: warning: guards.toml:1: `composes` pattern 'extra/*.yml' matches no file"
    assert (code, err) == (0, [warning])
    again = check(capsys, estate)  # kept or not, the warning is shown
    assert again[0] == 0 and again[2] == [warning]


def test_an_estate_with_nothing_to_check_is_an_error(capsys, tmp_path):
    code, _, err = check(capsys, tmp_path)
    assert (code, err) == (
        2,
        ["guards: error: .: nothing to check: no compose, no note and no claim found under the "
         "root"],
    )  # fmt: skip


def test_a_path_outside_the_root_is_an_error(capsys, estate, tmp_path):
    outside = write(tmp_path / "elsewhere.yml", BODY)
    code, _, err = check(capsys, estate, str(outside))
    assert code == 2
    assert err == [
        f"guards: error: {outside}: is outside the estate (--root {estate}); not checked"
    ]


# -- output ------------------------------------------------------------------------------------


def test_error_lines_are_bounded_and_escape_control_characters(capsys, estate):
    name = "bad\x1b[31m\nname.yml"
    write(estate / "composes" / name, "services: [" + "x" * 5000 + "\n")
    code, _, err = check(capsys, estate)
    assert code == 2 and len(err) == 1
    assert err[0].startswith("guards: error: composes/bad\\x1b[31m\\nname.yml:")
    assert len(err[0]) < 800


def test_error_messages_quoting_input_are_cut(capsys, estate):
    write(
        estate / "claims.yaml", "claims:\n  - id: a\n    title: t\n    status: " + "z" * 9000 + "\n"
    )
    code, _, err = check(capsys, estate)
    assert code == 2 and len(err) == 1 and len(err[0]) < 500 and err[0].endswith("…")


# -- claims retract must only write what it verified ------------------------------------------


def retract(capsys, root, *extra, stdin=None, monkeypatch=None):
    args = ["claims", "retract", "spec-tax-35387", "--date", "2026-11-29", "--reason", "Gone.",
            "--replacement-file", "-", "--root", str(root), *extra]  # fmt: skip
    if monkeypatch is not None:
        import io

        monkeypatch.setattr("sys.stdin", io.StringIO(stdin or ""))
    return run_guards(capsys, *args)


def test_retract_with_an_empty_replacement_on_stdin_writes_nothing(capsys, incident, monkeypatch):
    before = tree_digest(incident)
    result = retract(capsys, incident, stdin="  \n", monkeypatch=monkeypatch)
    assert (result.code, result.err) == (
        2,
        "guards: error: standard input: the replacement is empty; nothing written\n",
    )
    assert tree_digest(incident) == before


def test_retract_in_a_read_only_folder_is_exit_2(capsys, incident, monkeypatch):
    if os.geteuid() == 0:
        pytest.skip("root may write anywhere")
    os.chmod(incident, 0o555)
    try:
        result = retract(capsys, incident, stdin="Instead.", monkeypatch=monkeypatch)
    finally:
        os.chmod(incident, 0o755)
    assert result.code == 2 and "nothing written" in result.err


def test_retract_a_read_only_registry_is_exit_2(capsys, incident, monkeypatch):
    os.chmod(incident / "claims.yaml", 0o444)
    before = tree_digest(incident)
    result = retract(capsys, incident, stdin="Instead.", monkeypatch=monkeypatch)
    assert (result.code, result.err) == (
        2,
        "guards: error: claims.yaml: file is read-only; nothing written\n",
    )
    assert tree_digest(incident) == before


def test_retract_a_registry_that_is_not_utf8_is_exit_2(capsys, incident, monkeypatch):
    path = incident / "claims.yaml"
    path.write_bytes(path.read_bytes().replace(b"title: Spec", b"title: Sp\xe9c", 1))
    before = tree_digest(incident)
    result = retract(capsys, incident, stdin="Instead.", monkeypatch=monkeypatch)
    assert result.code == 2 and "not valid UTF-8 (byte 0xe9)" in result.err
    assert tree_digest(incident) == before


def test_retract_with_claims_given_twice_is_exit_2(capsys, incident, monkeypatch):
    path = incident / "claims.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "claims: []\n", encoding="utf-8")
    before = tree_digest(incident)
    result = retract(capsys, incident, stdin="Instead.", monkeypatch=monkeypatch)
    assert result.code == 2 and "duplicate key `claims`" in result.err
    assert tree_digest(incident) == before


def test_retract_through_a_symlink_writes_the_target(capsys, incident, monkeypatch):
    real = incident / "registry" / "claims.yaml"
    real.parent.mkdir()
    (incident / "claims.yaml").rename(real)
    (incident / "claims.yaml").symlink_to(real)
    result = retract(capsys, incident, stdin="Instead.", monkeypatch=monkeypatch)
    assert result.code == 0, result.err
    assert (incident / "claims.yaml").is_symlink()
    claim = real.read_text(encoding="utf-8").split("- id: spec-tax-35387")[1]
    assert "status: retracted" in claim


def test_retract_a_registry_without_a_final_newline_or_with_a_bom(capsys, incident, monkeypatch):
    path = incident / "claims.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().rstrip(b"\n"))
    result = retract(capsys, incident, stdin="Instead.", monkeypatch=monkeypatch)
    assert result.code == 0, result.err
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"status: retracted" in data


def test_parse_errors_are_guards_errors_with_a_line_inside_the_input():
    for text in ("services: [\n", "services:\n  s: 1\n  s: 2\n", "\u2028services: x\u2028:"):
        with pytest.raises(GuardsError) as caught:
            parse_compose(text, "c.yml")
        lines = text.replace("\u2028", "\n").count("\n") + 1
        assert caught.value.line is None or 1 <= caught.value.line <= lines
