"""The environment a compose is evaluated in (guards/run/environment.py): the `.env` beside it,
the `env-files` setting, the operator's --env-file replacing them, and `env_file:` feeding the
container only; what -v says of each; the path policy and the cache over those files."""

import os

import pytest

from guards.run.estate import load_estate
from guards.sources.config import Config

from ..cli_helpers import run_guards, write

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command:
      - --gpu-memory-utilization
      - "${GPU_MEMORY_UTILIZATION:-0.90}"
"""
K001 = (
    "{path}:6:9: K001 {tag}gpu-memory-utilization {value} (from GPU_MEMORY_UTILIZATION in the "
    "environment) is above the ceiling 0.94 (the default ceiling 0.94; no registry claim sets "
    "one for this model)\n"
)
CLEAN = "guard suite: 1 pass / 0 fail\n"
FAILED = "guard suite: 0 pass / 1 fail\n"


@pytest.fixture
def estate(tmp_path):
    root = tmp_path / "estate"
    write(root, {"composes/c.yml": COMPOSE, "guards.toml": 'select = ["K001"]\n'})
    return root


def check(capsys, root, *args):
    return run_guards(capsys, "check", "--root", str(root), *args)


def finding(path="composes/c.yml", value="0.97", tag=""):
    return K001.format(path=path, value=value, tag=tag)


def test_the_env_beside_a_compose_feeds_its_interpolation(capsys, estate):
    assert check(capsys, estate).out == CLEAN
    write(estate, {"composes/.env": "GPU_MEMORY_UTILIZATION=0.97\nUNUSED=1\n"})
    result = check(capsys, estate, "-v")
    assert (result.code, result.out.replace("\n    hint: ", "\n", 1).count("\n")) == (1, 3)
    assert result.out.startswith(finding()) and result.out.endswith(FAILED)
    assert "guards: composes/c.yml: interpolated from composes/.env (1 variable: " in result.err
    assert "(1 variable: GPU_MEMORY_UTILIZATION)\n" in result.err


def test_an_env_in_another_folder_does_not_feed_it(capsys, estate):
    write(estate, {".env": "GPU_MEMORY_UTILIZATION=0.97\n"})
    assert check(capsys, estate).out == CLEAN


def test_the_env_file_option_replaces_the_estate_env(capsys, estate):
    write(estate, {"composes/.env": "GPU_MEMORY_UTILIZATION=0.97\n", "my.env": "OTHER=1\ncd x\n"})
    result = check(capsys, estate, "-v", "--env-file", str(estate / "my.env"))
    assert result.out == CLEAN  # the run takes 0.90 (the default): my.env replaced .env
    assert f"guards: {estate / 'my.env'}:2: line skipped, not an assignment: cd x\n" in result.err
    said = [line for line in result.err.splitlines() if "interpolated" in line]
    assert said == [
        f"guards: composes/c.yml: interpolated from {estate / 'my.env'}, the --env-file "
        "(no variable)",
        "guards: composes/c.yml: as shipped, interpolated from composes/.env "
        "(1 variable: GPU_MEMORY_UTILIZATION)",
    ]
    write(estate, {"my.env": "GPU_MEMORY_UTILIZATION=0.96\n"})
    result = check(capsys, estate, "--env-file", str(estate / "my.env"))
    assert result.out == finding(value="0.96") + FAILED  # the estate's own finding, not my.env's


def test_env_files_for_every_compose_replace_the_env(capsys, estate):
    write(
        estate,
        {
            "guards.toml": 'select = ["K001"]\n'
            'env-files = ["profiles/base.env", "profiles/gpu.env"]\n',
            "composes/.env": "GPU_MEMORY_UTILIZATION=0.99\n",
            "profiles/base.env": "GPU_MEMORY_UTILIZATION=0.50\nMODEL=m\n",
            "profiles/gpu.env": "export GPU_MEMORY_UTILIZATION=0.97\n",
        },
    )
    result = check(capsys, estate, "-v")
    assert result.out.startswith(finding())
    said = [line for line in result.err.splitlines() if "interpolated" in line]
    assert said == [
        "guards: composes/c.yml: interpolated from profiles/base.env "
        "(none of its 2 variables used)",
        "guards: composes/c.yml: interpolated from profiles/gpu.env "
        "(1 variable: GPU_MEMORY_UTILIZATION)",
    ]


def test_env_files_per_folder(capsys, estate):
    write(
        estate,
        {
            "guards.toml": 'select = ["K001"]\n[env-files]\n"composes/a" = ["profiles/a.env"]\n',
            "composes/a/c.yml": COMPOSE,
            "composes/a/.env": "GPU_MEMORY_UTILIZATION=0.50\n",
            "composes/b/c.yml": COMPOSE,
            "composes/b/.env": "GPU_MEMORY_UTILIZATION=0.96\n",
            "profiles/a.env": "GPU_MEMORY_UTILIZATION=0.97\n",
        },
    )
    result = check(capsys, estate)
    assert result.out == (
        finding("composes/a/c.yml")
        + finding("composes/b/c.yml", "0.96")
        + "guard suite: 1 pass / 2 fail\n"
    )


SHELL_ENV = """\
# Deployment defaults: `source deploy/.env` before `docker compose up`
export GPU_MEMORY_UTILIZATION="${GPU_UTIL:-0.97}"   # headroom for the sidecar
export MODEL_DIR='/models'
pushd "$MODEL_DIR" >/dev/null
source ./secrets.sh
"""


def test_a_shell_style_env_feeds_and_its_other_lines_are_said(capsys, estate):
    write(estate, {"composes/.env": SHELL_ENV})
    result = check(capsys, estate, "-v")
    assert result.out.startswith(finding()) and result.code == 1
    assert result.err.splitlines()[1:4] == [
        "guards: composes/c.yml: interpolated from composes/.env "
        "(1 variable: GPU_MEMORY_UTILIZATION)",
        'guards: composes/.env:4: line skipped, not an assignment: pushd "$MODEL_DIR" >/dev/null',
        "guards: composes/.env:5: line skipped, not an assignment: source ./secrets.sh",
    ]


ENV_FILE_COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:${TAG}
    env_file:
      - runtime.env
      - path: local.env
        required: false
    environment:
      SHARED: from-environment
    entrypoint:
      - /bin/sh
      - -c
      - |
        depth="$${SPEC_N:-7}"
        exec vllm serve m --max-num-seqs "$$depth"
"""


def test_env_file_feeds_the_container_not_interpolation(tmp_path):
    write(
        tmp_path,
        {
            "composes/c.yml": ENV_FILE_COMPOSE,
            "composes/runtime.env": "SPEC_N=3\nSHARED=from-file\nTAG=v0.27.1\n",
        },
    )
    estate = load_estate(Config(root=tmp_path, composes=("composes/*.yml",)))
    service = estate.composes[0].services[0]
    assert {n: e.value for n, e in service.environment.items()} == {
        "SPEC_N": "3",
        "SHARED": "from-environment",
        "TAG": "v0.27.1",
    }
    assert service.environment["SPEC_N"].line == 5  # the env_file entry that gave it
    assert service.script is not None and service.script.evaluate("depth").value == "3"
    image = service.knob("image")  # `${TAG}` stays unresolved: env_file is no interpolation
    assert image is not None and (image.value, image.note) == (
        None,
        "TAG is unset and has no default",
    )
    assert [r for r in estate.remarks if "env_file" in r] == [
        "composes/c.yml: env_file composes/runtime.env: container environment, not "
        "interpolation (3 variables: SPEC_N, SHARED, TAG)",
        "composes/c.yml: env_file composes/local.env does not exist (required: false); "
        "read as empty",
    ]


def test_an_extended_services_env_file_is_relative_to_the_file_that_declares_it(tmp_path):
    """Compose resolves the relative paths of a service extended from another file from that
    file's folder, not from the extending compose's."""
    app = "services:\n  app:\n    extends:\n      file: base/base.yml\n      service: app\n"
    base = "services:\n  app:\n    image: alpine\n    env_file: ./extra.env\n"
    write(
        tmp_path,
        {"composes/c.yml": app, "composes/base/base.yml": base, "composes/base/extra.env": "A=1\n"},
    )
    estate = load_estate(Config(root=tmp_path, composes=("composes/c.yml",)))
    service = estate.composes[0].services[0]
    assert {n: e.value for n, e in service.environment.items()} == {"A": "1"}
    assert not [r for r in estate.remarks if "does not exist" in r]


def test_a_missing_required_env_file_is_a_remark(tmp_path):
    write(tmp_path, {"composes/c.yml": ENV_FILE_COMPOSE.replace("local.env", "runtime.env")})
    estate = load_estate(Config(root=tmp_path, composes=("composes/*.yml",)))
    assert estate.errors == [] and len(estate.composes) == 1
    assert (
        "composes/c.yml: env_file composes/runtime.env does not exist (Compose would refuse "
        "to start the service); read as empty"
    ) in estate.remarks


def test_a_setting_naming_a_file_outside_the_root_is_refused_unread(capsys, estate, tmp_path):
    outside = tmp_path / "outside.env"
    outside.write_text("GPU_MEMORY_UTILIZATION=0.97\n", encoding="utf-8")
    (estate / "profiles").mkdir()
    (estate / "profiles" / "link.env").symlink_to(outside)
    write(estate, {"guards.toml": 'select = ["K001"]\nenv-files = ["profiles/link.env"]\n'})
    before = os.stat(outside).st_atime_ns
    result = check(capsys, estate)
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith("guards: error: guards.toml:2: `env-files` 'profiles/link.env': ")
    assert result.err.endswith("; not read or written\n") and result.err.count("\n") == 1
    assert os.stat(outside).st_atime_ns == before


@pytest.mark.parametrize(
    ("setting", "error"),
    [
        (
            'env-files = ["../x.env"]',
            "guards.toml:2: `env-files` '../x.env' must be a path relative to the root, "
            "without '..'",
        ),
        ('env-files = ["nope.env"]', "guards.toml:2: `env-files` 'nope.env': no such file"),
        (
            '[env-files]\n"composes" = ["c.env"]\n"deploy" = ["nope.env"]',
            "guards.toml:4: `env-files` 'nope.env': no such file",
        ),
    ],
)
def test_a_bad_env_files_setting_is_exit_2_at_its_line(capsys, estate, setting, error):
    write(estate, {"guards.toml": f'select = ["K001"]\n{setting}\n', "c.env": "A=1\n"})
    result = check(capsys, estate)
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")


def test_an_unreadable_env_is_one_error_for_its_folder(capsys, estate):
    write(estate, {"composes/d.yml": COMPOSE, "composes/.env": "A='never closed\n"})
    result = check(capsys, estate)
    assert result.code == 2
    assert result.err == "guards: error: composes/.env:1: unterminated ' quote\n"


@pytest.fixture
def cached(estate, tmp_path, monkeypatch):
    monkeypatch.delenv("GUARDS_NO_CACHE", raising=False)
    monkeypatch.setenv("GUARDS_CACHE_DIR", str(tmp_path / "cache"))
    return estate


def test_the_cache_notices_an_env_added_edited_or_removed(capsys, cached):
    assert check(capsys, cached).out == CLEAN
    write(cached, {"composes/.env": "GPU_MEMORY_UTILIZATION=0.97\n"})
    assert check(capsys, cached).out == finding() + FAILED
    write(cached, {"composes/.env": "GPU_MEMORY_UTILIZATION=0.96\n"})
    assert check(capsys, cached).out == finding(value="0.96") + FAILED
    (cached / "composes" / ".env").unlink()
    assert check(capsys, cached).out == CLEAN


def test_an_env_file_guards_cannot_read_is_a_remark_not_an_error(tmp_path):
    write(tmp_path, {"composes/c.yml": ENV_FILE_COMPOSE.replace("- runtime.env", "- ''")})
    (tmp_path / "composes" / "local.env").write_bytes(b"A=\xff\n")
    estate = load_estate(Config(root=tmp_path, composes=("composes/*.yml",)))
    assert estate.errors == [] and estate.composes[0].services[0].environment.keys() == {"SHARED"}
    assert estate.remarks[-1] == (
        "composes/c.yml: env_file not read: composes/local.env:1:3: not valid UTF-8 (byte 0xff)"
    )
