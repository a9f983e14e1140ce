"""Every command that rewrites a compose goes through the one loop (guards.write.rewrite), and
every command that changes the registry through the one editor (edit_registry): were one of
them to grow a read-check-write loop of its own again, these fail."""

import ast
import shutil
from pathlib import Path

import pytest

import guards.write.registry_edits
import guards.write.rewrite
from guards.errors import GuardsError
from guards.sources import edit
from guards.write.rewrite import STALE, rewrite

from ..cli_helpers import STALE_COPY, WITHDRAWN_CLAIM, run_guards, tree_digest, write
from ..conftest import FIXTURES
from ..package_source import syntax
from .test_fix import PROFILED

PACKAGE = Path(__file__).resolve().parents[2] / "guards"
BODY = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.27.1\n"
REGION = "# >>> guards:claim old-cliff\n# <<< guards:claim\n"
NOTE = "The quick brown fox jumps over the lazy dog at 1234 tok/s again."
REGISTRY = (
    "claims:\n  - id: a\n    title: A quick brown fox\n    status: active\n"
    "    text: The quick brown fox jumps over the lazy dog at 1234 tok/s.\n"
)


@pytest.fixture
def composes(tmp_path):
    """A compose for each rewrite: a stale copy (fix), a hand-written profile block
    (--adopt-profile), an empty claim region (regen)."""
    return write(
        tmp_path / "e",
        {
            "claims.yaml": WITHDRAWN_CLAIM,
            "composes/copy.yml": STALE_COPY + BODY,
            "composes/profile.yml": PROFILED.format(ctx="262144"),
            "composes/region.yml": REGION + BODY,
        },
    )


@pytest.fixture
def registry(tmp_path):
    """An estate with one claim, a passage like it and a scrape: each registry write has
    something to write."""
    root = write(
        tmp_path / "r",
        {
            "claims.yaml": REGISTRY,
            "learnings/n.md": f"# T\n\n{NOTE}\n",
            "composes/a.yml": BODY,
            "r.txt": "what to say instead\n",
            "guards.toml": 'composes = ["composes/**/*.yml"]\nnotes = ["learnings/**/*.md"]\n',
        },
    )
    shutil.copy(FIXTURES / "scrapes" / "slow-after.prom", root / "slow-after.prom")
    return root


def spy(monkeypatch, module, name: str) -> list[tuple]:
    """Record each call of ``module.name`` (its arguments), then make it."""
    calls: list[tuple] = []
    real = getattr(module, name)

    def recorded(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, recorded)
    return calls


def refuse(monkeypatch, module, name: str) -> None:
    def refused(*args, **kwargs):
        raise GuardsError("refused by the test")

    monkeypatch.setattr(module, name, refused)


# -- the one rewrite loop ----------------------------------------------------------------------

REWRITES = [
    pytest.param(["regen"], "composes/region.yml", "write", id="regen"),
    pytest.param(["regen", "--check"], "composes/region.yml", "check", id="regen-check"),
    pytest.param(["regen", "--diff"], "composes/region.yml", "diff", id="regen-diff"),
    pytest.param(["fix"], "composes/copy.yml", "write", id="fix"),
    pytest.param(["fix", "--diff"], "composes/copy.yml", "diff", id="fix-diff"),
    pytest.param(["fix", "--adopt-profile"], "composes/profile.yml", "write", id="adopt"),
    pytest.param(
        ["fix", "--adopt-profile", "--diff"], "composes/profile.yml", "diff", id="adopt-diff"
    ),
]


@pytest.mark.parametrize("args, target, mode", REWRITES)
def test_every_compose_rewrite_goes_through_the_one_loop(
    capsys, composes, monkeypatch, args, target, mode
):
    calls = spy(monkeypatch, guards.write.rewrite, "rewrite")
    before = (composes / target).read_bytes()
    result = run_guards(capsys, *args, "--root", str(composes))
    assert result.code in (0, 1), result.err
    assert (target, mode) in [(shown, how) for _, shown, _, _, how, *_ in calls]
    assert ((composes / target).read_bytes() != before) == (mode == "write")


@pytest.mark.parametrize("args, target, mode", REWRITES)
def test_without_the_loop_no_compose_is_written(capsys, composes, monkeypatch, args, target, mode):
    refuse(monkeypatch, guards.write.rewrite, "rewrite")
    before = tree_digest(composes)
    result = run_guards(capsys, *args, "--root", str(composes))
    assert result.code == 2
    assert "guards: error: refused by the test\n" in result.err
    assert tree_digest(composes) == before


def test_fix_and_adopt_refuse_a_file_changed_since_the_check_with_the_loop_s_message(tmp_path):
    path = write(tmp_path, {"c.yml": BODY}) / "c.yml"
    for mode in ("check", "diff", "write"):
        with pytest.raises(GuardsError) as caught:
            rewrite(path, "c.yml", "other text\n", lambda source: [], mode)
        assert str(caught.value) == f"c.yml: {STALE}"


def test_the_loop_writes_only_in_write_mode_and_not_when_the_edits_are_refused(tmp_path):
    path = write(tmp_path, {"c.yml": "a: 1\r\nb: 2\r\n"}) / "c.yml"
    change = [edit.Edit(0, 4, "a: 3")]
    for mode in ("check", "diff"):
        done = rewrite(path, "c.yml", "a: 1\nb: 2\n", lambda source: change, mode)
        assert (done.changed, done.written, done.after) == (True, False, "a: 3\r\nb: 2\r\n")
    left = rewrite(path, "c.yml", None, lambda source: None, "write")
    assert (left.changed, left.written) == (False, False)
    assert path.read_bytes() == b"a: 1\r\nb: 2\r\n"
    done = rewrite(path, "c.yml", None, lambda source: change, "write")
    assert done.written and path.read_bytes() == b"a: 3\r\nb: 2\r\n"


# -- the one registry editor -------------------------------------------------------------------

REGISTRY_WRITES = [
    pytest.param(["claims", "retract", "a", "--date", "2026-09-08", "--reason", "r"], id="retract"),
    pytest.param(["claims", "add", "b", "--title", "B", "--from", "learnings/n.md:3"], id="add"),
    pytest.param(["claims", "find", "a", "--confirm", "learnings/n.md:3"], id="confirm"),
    pytest.param(["claims", "find", "a", "--dismiss", "learnings/n.md:3"], id="dismiss"),
    pytest.param(
        ["claims", "evidence", "add", "a", "--scrape", "slow-after.prom", "--engine", "v1"],
        id="evidence-add",
    ),
]


def registry_args(args: list[str], root: Path) -> list[str]:
    extra = ["--replacement-file", str(root / "r.txt")] if args[1] == "retract" else []
    return [*args, *extra, "--root", str(root)]


@pytest.mark.parametrize("args", REGISTRY_WRITES)
def test_every_registry_write_goes_through_the_one_editor(capsys, registry, monkeypatch, args):
    calls = spy(monkeypatch, guards.write.registry_edits, "edit_registry")
    before = (registry / "claims.yaml").read_bytes()
    result = run_guards(capsys, *registry_args(args, registry), cwd=registry)
    assert result.code == 0, result.err
    assert [(path.name, shown) for path, shown, _ in calls] == [("claims.yaml", "claims.yaml")]
    assert (registry / "claims.yaml").read_bytes() != before


@pytest.mark.parametrize("args", REGISTRY_WRITES)
def test_without_the_editor_the_registry_is_not_written(capsys, registry, monkeypatch, args):
    refuse(monkeypatch, guards.write.registry_edits, "edit_registry")
    before = tree_digest(registry)
    result = run_guards(capsys, *registry_args(args, registry), cwd=registry)
    assert (result.code, result.err) == (2, "guards: error: refused by the test\n")
    assert tree_digest(registry) == before


@pytest.mark.parametrize("args", [REGISTRY_WRITES[i] for i in (0, 4)])
def test_a_missing_registry_is_one_message_for_every_command(capsys, registry, args):
    """Commands that change a claim need the registry; `claims add` starts one (it is the
    first claim), as `claims init` does."""
    (registry / "claims.yaml").unlink()
    before = tree_digest(registry)
    result = run_guards(capsys, *registry_args(args, registry), cwd=registry)
    assert (result.code, result.err) == (
        2,
        "guards: error: claims.yaml: no claims registry to edit\n",
    )
    assert tree_digest(registry) == before


# -- nothing else reads, checks and writes a file in place -------------------------------------

# Where the in-place writer and the write lock of guards.sources.edit may be called: the two
# homes, and `guards baseline` (a whole file guards owns, not an edit).
WRITERS = {
    ("write/rewrite.py", "rewrite"),
    ("write/registry_edits.py", "edit_registry"),
    ("write/registry_edits.py", "init_registry"),  # starts an empty registry, never edits one
    ("cli/check.py", "write_baseline"),
}


def callers(names: set[str]) -> set[tuple[str, str]]:
    """(module, function) of every call of ``edit.NAME`` or a bare ``NAME`` outside sources/."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith("sources/"):
            continue
        for function in ast.walk(syntax(path)):
            if not isinstance(function, ast.FunctionDef):
                continue
            for call in ast.walk(function):
                if isinstance(call, ast.Call) and _named(call.func) in names:
                    found.add((module, function.name))
    return found


def _named(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr if func.value.id == "edit" else None
    return func.id if isinstance(func, ast.Name) else None


def test_only_the_two_homes_lock_and_write_files_in_place():
    assert callers({"write", "locked"}) == WRITERS
