"""Fuzz tests: whatever the input, ``guards`` answers with findings or located one-line errors.

Properties, not types: exit code 0, 1 or 2; on exit 2 each stderr line is one bounded
``guards: error: ...`` line; output lines are bounded; the estate is byte-identical afterwards;
with ``--format json`` stdout parses and every finding's line lies in its file; each parser
returns or raises a :class:`GuardsError` whose line lies within its input; time grows linearly
with adversarial comment text. Inputs are mutations of this repository's own composes, notes,
registries and configs (``tests/fuzz_strategies.py``), with generated ones alongside.

Sized for CI (derandomized, no shrinking: a failure prints the example and its violations).
``tools/fuzz_campaign.py`` runs the same strategies at length and keeps a minimal reproducer
per failure class.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from .examples import examples
from .fuzz_props import (
    Violation,
    best_time,
    check_estate,
    parse_directly,
    parser_violations,
    run_in_process,
    tree_digest,
    write_estate,
)
from .fuzz_strategies import (
    COMPOSE_TOKENS,
    ENV_KEYS,
    NASTY_NUMBERS,
    EstateCase,
    base_config,
    compose_texts,
    config_texts,
    corpus,
    env_texts,
    estates,
    nested_default,
    note_texts,
    registry_texts,
    render_config,
    withdrawn_registry,
)

FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=list(HealthCheck),
    print_blob=False,
)


def assert_clean(found: list[Violation], shown: object = "") -> None:
    assert not found, "\n".join(map(str, found)) + (f"\ninput: {shown!r}"[:3000] if shown else "")


def env_maps() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(
        st.sampled_from(ENV_KEYS),
        st.one_of(st.sampled_from(NASTY_NUMBERS), st.just("off")),
        max_size=3,
    )


# --- the parsers, called directly -----------------------------------------------------------


@settings(FUZZ, max_examples=examples(150))
@given(compose_texts(), env_maps())
def test_compose_parser_returns_or_raises_a_located_error(text, env):
    assert_clean(parser_violations("compose", text, env), text)


@settings(FUZZ, max_examples=examples(120))
@given(note_texts())
def test_note_parser_returns_or_raises_a_located_error(text):
    assert_clean(parser_violations("note", text), text)


@settings(FUZZ, max_examples=examples(120))
@given(registry_texts())
def test_registry_parser_returns_or_raises_a_located_error(text):
    assert_clean(parser_violations("registry", text), text)


@settings(FUZZ, max_examples=examples(100))
@given(env_texts())
def test_env_file_reader_returns_or_raises_a_located_error(text):
    assert_clean(parser_violations("env", text), text)


@settings(FUZZ, max_examples=examples(80))
@given(config_texts())
def test_config_loader_returns_or_raises_a_located_error(text):
    assert_clean(parser_violations("config", text), text)


# --- the command line over whole estates ----------------------------------------------------


@settings(FUZZ, max_examples=examples(150))
@given(estates())
def test_check_on_mutated_estates_keeps_the_contract(case):
    _, found = check_estate(case)
    assert_clean(found, (case.args, case.text_files()))


@pytest.mark.parametrize("seed", corpus().estates, ids=lambda seed: seed.name)
def test_check_on_every_seed_estate_keeps_the_contract(seed):
    """The unmutated seeds (rule cases with their options and .env, fixture estates), JSON and
    text: the baseline every mutation starts from."""
    files = {k: v for k, v in seed.files.items() if not k.endswith("guards.toml")}
    files["guards.toml"] = render_config(seed.options, files)
    env: tuple[str, ...] = ()
    if seed.env:
        files["my.env"] = "".join(f"{k}={v}\n" for k, v in seed.env.items())
        env = ("--env-file", "my.env")
    for output in ("json", "text"):
        args = ("check", "--format", output, *env)
        case = EstateCase({k: v.encode() for k, v in files.items()}, args)
        _, found = check_estate(case)
        assert_clean(found)


def test_a_broken_compose_leaves_the_rest_of_the_estate_checked():
    """One compose broken: exit 2, one error naming it, every other file checked as before."""
    seed = next(s for s in corpus().estates if s.name == "incident")
    files = {k: v.encode() for k, v in seed.files.items()}
    args = ("check", "--format", "json")
    baseline = _json_run(EstateCase(files, args))
    broken_path = sorted(p for p in files if p.startswith("composes/"))[3]
    broken = dict(files)
    broken[broken_path] = files[broken_path].replace(b"services:", b"services: [", 1)
    code, document, err = _json_run_full(EstateCase(broken, args))
    assert code == 2
    assert err.count("guards: error: ") == 1 and broken_path in err
    assert document["summary"]["files"] == baseline["summary"]["files"] - 1
    per_compose = {"S", "K", "D"}  # rule families that look at one compose at a time

    def others(doc):
        return sorted(
            (f["path"], f["rule"], f["line"], f["message"])
            for f in doc["findings"]
            if f["path"] != broken_path and f["rule"][0] in per_compose
        )

    assert others(document) == others(baseline)


def _json_run_full(case: EstateCase) -> tuple[int | None, dict, str]:
    with tempfile.TemporaryDirectory(prefix="guards-fuzz-") as folder:
        write_estate(case, Path(folder))
        outcome = run_in_process(case.args, Path(folder), 60)
    return outcome.code, json.loads(outcome.out), outcome.err


def _json_run(case: EstateCase) -> dict:
    return _json_run_full(case)[1]


# --- named nasty inputs (each one from the list every parser must survive) ------------------

DFLASH = (Path(__file__).parent / "fixtures" / "composes" / "vllm-dflash.yml").read_text(
    encoding="utf-8"
)
NOTE = (Path(__file__).parents[1] / "learnings" / "qwen3.8-27b.md").read_text(encoding="utf-8")
CLAIMS = (Path(__file__).parents[1] / "claims.yaml").read_text(encoding="utf-8")
# estates built by estate() have no note unless asked; their headers are Profile blocks
CONFIG = 'composes = ["composes/**/*.yml"]\nheader = { preset = "profile" }\n'


def estate(
    compose: str | bytes = DFLASH,
    note: str | bytes | None = None,
    claims: str | bytes | None = CLAIMS,
    config: str | None = None,
    env: str | bytes | None = None,
    pyproject: str | None = None,
    output: str = "json",
) -> EstateCase:
    def raw(value: str | bytes) -> bytes:
        return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")

    files = {"composes/c.yml": raw(compose)}
    if note is not None:
        files["learnings/n.md"] = raw(note)
    if claims is not None:
        files["claims.yaml"] = raw(claims)
    files["guards.toml"] = raw(
        config if config is not None else base_config(dict.fromkeys(files, ""))
    )
    if pyproject is not None:
        files["pyproject.toml"] = raw(pyproject)
    args = ["check", "--format", output]
    if env is not None:
        files["my.env"] = raw(env)
        args += ["--env-file", "my.env"]
    return EstateCase(files, tuple(args))


def _flag(value: str, flag: str = "--max-model-len") -> str:
    return DFLASH.replace('"${MAX_MODEL_LEN:-${CTX:-204800}}"', f'"{value}"').replace(
        "--max-model-len", flag, 1
    )


NAMED = {
    "nul in a compose": estate(DFLASH.replace("# Profile", "# Pro\x00file")),
    "nul in a note": estate(note=NOTE.replace("## The tiers", "## The\x00 tiers")),
    "nul in claims.yaml": estate(claims=CLAIMS.replace("version: 1", "version: 1\x00")),
    "vertical tab in a compose": estate(DFLASH.replace("services:", "\x0bservices:")),
    "BOM and CRLF": estate(b"\xef\xbb\xbf" + DFLASH.replace("\n", "\r\n").encode()),
    "lone CR line breaks": estate(DFLASH.replace("\n", "\r"), note=NOTE.replace("\n", "\r")),
    "LS, PS and NEL line breaks": estate(
        DFLASH.replace("#   KV:", "#\u2028  KV:").replace("# Requires", "#\x85 Requires"),
        note=NOTE.replace("\n\n", "\u2029\u2029"),
    ),
    "invalid UTF-8": estate(DFLASH.encode() + b"\n# \xff\xfe\n"),
    "empty files": estate("", note="", claims=""),
    "whitespace-only files": estate("\n \n", note="\n\n", claims=" \n"),
    "max-model-len 0": estate(_flag("0")),
    "max-model-len 1e400": estate(_flag("1e400")),
    "max-model-len inf": estate(_flag("inf")),
    "max-model-len nan": estate(_flag("nan")),
    "max-model-len with 400 digits": estate(_flag("9" * 400)),
    "max-model-len superscript": estate(_flag("²")),
    "max-num-seqs 0": estate(DFLASH.replace('"${MAX_NUM_SEQS:-1}"', '"0"')),
    "max-num-seqs 1e8": estate(DFLASH.replace('"${MAX_NUM_SEQS:-1}"', '"100000000"')),
    "gpu-memory-utilization nan": estate(
        DFLASH.replace('"${GPU_MEMORY_UTILIZATION:-0.90}"', '"nan"')
    ),
    "gpu-memory-utilization 0": estate(DFLASH.replace('"${GPU_MEMORY_UTILIZATION:-0.90}"', '"0"')),
    "tensor-parallel-size 0": estate(DFLASH.replace('"${TP:-2}"', '"0"')),
    "tensor-parallel-size 1e400": estate(DFLASH.replace('"${TP:-2}"', '"1e400"')),
    "device count 100000000": estate(DFLASH.replace("count: all", "count: 100000000")),
    "device count -1": estate(DFLASH.replace("count: all", "count: -1")),
    "device count .inf": estate(DFLASH.replace("count: all", "count: .inf")),
    "header numbers out of range": estate(
        DFLASH.replace("# Tensor-parallel: 2", "# Tensor-parallel: 1e400").replace(
            "# Requires-min-gpu-count: 2", "# Requires-min-gpu-count: ²"
        )
    ),
    "spec depth 1e400 in the entrypoint": estate(
        DFLASH.replace("$${SPEC_N:-5}", "$${SPEC_N:-1e400}")
    ),
    "spec depth superscript in the entrypoint": estate(
        DFLASH.replace("$${SPEC_N:-5}", "$${SPEC_N:-²}")
    ),
    "deep nested defaults": estate(_flag(nested_default(1200, "4"))),
    "nested defaults at 40": estate(_flag(nested_default(40, "4"))),
    "unclosed template": estate(_flag("${MAX_MODEL_LEN:-4")),
    "anchors and merge keys": estate(
        "x-base: &base\n  image: vllm/vllm-openai:v0.27.1\n  ipc: host\n"
        + DFLASH.replace("    image: ${VLLM_IMAGE:-vllm/vllm-openai:v0.27.1}\n", "    <<: *base\n")
    ),
    "merge key of a scalar": estate(DFLASH.replace("    deploy:", "    <<: 5\n    deploy:")),
    "undefined alias": estate(DFLASH.replace("count: all", "count: *nowhere")),
    "alias bomb": estate(
        "x-a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
        + "".join(
            f"x-{i}: &x{i} [{', '.join([f'*{p}'] * 10)}]\n"
            for i, p in enumerate(["a", *(f"x{j}" for j in range(6))])
        )
        + DFLASH.replace("count: all", "count: *x6")
    ),
    "block scalars everywhere": estate(
        DFLASH.replace(
            "    image: ${VLLM_IMAGE:-vllm/vllm-openai:v0.27.1}",
            "    image: |-\n      vllm/vllm-openai",
        )
    ),
    "python tags": estate(DFLASH.replace("count: all", "count: !!python/object:os.system x")),
    "binary tag": estate(DFLASH.replace("count: all", "count: !!binary aGVsbG8=")),
    "complex key": estate(DFLASH.replace("    deploy:", "    ? [a, b]\n    : c\n    deploy:")),
    "services as a list": estate("services:\n  - a\n  - b\n"),
    "service as a scalar": estate("services:\n  vllm: 5\n"),
    "command as a mapping": estate(
        "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: {a: 1}\n"
    ),
    "very long header line": estate(DFLASH.replace("#   Model:", "#   Model: " + "x" * 100_000, 1)),
    "very long comment line": estate(
        DFLASH.replace("services:", "# " + "ABC " * 25_000 + "\nservices:")
    ),
    "header KV pool and spaces": estate(
        DFLASH.replace(
            "# Profile (at-a-glance):",
            "# Profile (at-a-glance):\n#   Max ctx:   131072 (KV pool" + " " * 20_000 + "x)",
        )
    ),
    "header digit run": estate(DFLASH.replace("services:", "# " + "1" * 30_000 + "\nservices:")),
    "duplicate profile fields": estate(
        DFLASH.replace("#   KV:", "#   KV:  fp8\n#   KV:  bf16\n#   KV:", 1)
    ),
    "thousand withdrawn claims": estate(
        DFLASH.replace("services:", "# rig 7 holds 52 sequences\nservices:"),
        note=NOTE,
        claims=withdrawn_registry(1000),
    ),
    "twenty thousand citations on one note line": estate(
        note="# Note\n\n" + "claim:a " * 20_000 + "\n"
    ),
    "citation of a very long id": estate(note="claim:" + "a-" * 20_000 + "a\n"),
    "struck text runs": estate(note="~~a " * 20_000 + "\n"),
    "nested blockquotes": estate(
        note="> " * 5000 + "Retracted 2026-09-08 claim:decode-cliff-1096\n"
    ),
    "nested lists": estate(note="".join("  " * i + "- x\n" for i in range(400))),
    "front matter never closed": estate(note="---\ntitle: x\nclaims: [a\n"),
    "front matter not a mapping": estate(note="---\n- a\n---\nbody\n"),
    "front matter ids of wrong types": estate(
        note="---\nclaims: [[a], 5, {b: c}]\nretracts: 7\n---\n"
    ),
    "registry: duplicate claims key": estate(claims=CLAIMS + "claims: []\n"),
    "registry: duplicate ids": estate(
        claims="version: 1\nclaims:\n  - id: a\n    title: A\n    status: active\n"
        "  - id: a\n    title: B\n    status: active\n"
    ),
    "registry: bad dates": estate(
        claims=CLAIMS.replace("retracted: 2026-09-08", "retracted: 2026-13-45", 1)
    ),
    "registry: non-kebab id": estate(
        claims=CLAIMS.replace("id: decode-cliff-1096", "id: Decode_Cliff", 1)
    ),
    "registry: wrong types": estate(
        claims="version: 1\nclaims:\n  - id: a\n    title: [x]\n    status: 5\n    match: 7\n    facts: 3\n"
    ),
    "registry: a list at the top": estate(claims="- a\n- b\n"),
    "registry: facts at infinity": estate(
        claims="version: 1\nclaims:\n  - id: a\n    title: A\n    status: active\n"
        "    applies_to: {model: qwen3.8-27b}\n"
        "    facts: {gpu_memory_utilization_max: .inf, kv_heads: 0, gpu_memory_gib: 1e400}\n"
    ),
    ".env: KEY= and quotes": estate(
        env="SPEC_N=\nMAX_NUM_SEQS=''\nTP=\"\"\nexport GPU_MEMORY_UTILIZATION=0.95\n"
    ),
    ".env: garbage": estate(env="this is not an env file\n"),
    ".env: unterminated quote": estate(env='SPEC_N="3\n'),
    ".env: nasty numbers": estate(
        env="SPEC_N=1e400\nMAX_NUM_SEQS=²\nTP=nan\nMAX_MODEL_LEN=" + "9" * 400 + "\n"
    ),
    ".env: NUL and CR": estate(env="SPEC_N=3\x00\rMAX_NUM_SEQS=2\r"),
    "pyproject: tool = 1": estate(pyproject="tool = 1\n", config=""),
    "pyproject: tool.guards = 1": estate(pyproject="[tool]\nguards = 1\n", config=""),
    "config: wrong types": estate(config='composes = 1\nnotes = "x"\n'),
    "config: unknown key": estate(config=CONFIG + "colour = 1\n"),
    "config: huge integer": estate(
        config=CONFIG + "[rules.max-num-seqs]\nkv-heads = 99999999999999999999\n"
    ),
    "config: infinite ceiling": estate(config=CONFIG + "[rules.K001]\ndefault-ceiling = inf\n"),
    "config: nan ceiling": estate(config=CONFIG + "[rules.K001]\ndefault-ceiling = nan\n"),
    "config: unknown rule": estate(config=CONFIG + "[rules.utilisation-cieling]\nx = 1\n"),
    "config: severity of a wrong type": estate(config=CONFIG + "[rules.S002]\nseverity = 5\n"),
    "config: rules not a table": estate(config=CONFIG + "rules = 3\n"),
    "config: invalid TOML": estate(config="composes = [\n"),
    "config: NUL": estate(config=CONFIG + "\x00\n"),
    "speculative-config JSON nested 1,000 deep": estate(
        "services:\n  v:\n    image: vllm/vllm-openai\n"
        "    command: [--speculative-config, '" + "[" * 1000 + "']\n"
    ),
    "config: claims path too long": estate(config=CONFIG + 'claims = "' + "x" * 300 + '"\n'),
    "config: statuses path with a NUL": estate(
        config=CONFIG + '[rules.header-drift]\nstatuses = "a\\u0000b.yaml"\n'
    ),
    "--config path too long": EstateCase(
        {"composes/c.yml": DFLASH.encode()}, ("check", "--format", "json", "--config", "x" * 300)
    ),
    "--root path too long": EstateCase(
        {"composes/c.yml": DFLASH.encode()}, ("check", "--format", "json", "--root", "x" * 300)
    ),
    "PATHS argument too long": EstateCase(
        {"composes/c.yml": DFLASH.encode(), "guards.toml": CONFIG.encode()},
        ("check", "--format", "json", "x" * 300),
    ),
    "record separator next to a withdrawn claim": estate(
        note="Severity splits by hardware\x1et\n", claims=CLAIMS
    ),
    "statuses: invalid TOML": EstateCase(
        {
            "composes/c.yml": DFLASH.encode(),
            "statuses.toml": b'a = ""c\n',
            "guards.toml": (CONFIG + '[rules.header-drift]\nstatuses = "statuses.toml"\n').encode(),
        },
        ("check", "--format", "json"),
    ),
    "a newline in a file name": EstateCase(
        {
            "composes/new\nline.yml": b"services:\n  v: {image: vllm/vllm-openai}\n",
            "guards.toml": CONFIG.encode(),
        },
        ("check", "--format", "json"),
    ),
    "an escape sequence in a file name": EstateCase(
        {"composes/\x1b[31mred.yml": b"services: [\n", "guards.toml": CONFIG.encode()},
        ("check", "--format", "json"),
    ),
}


def _named_params():
    for name in sorted(NAMED):
        for output in ("json", "text"):
            yield pytest.param(name, output, id=f"{name}-{output}")


@pytest.mark.parametrize(("name", "output"), list(_named_params()))
def test_named_nasty_input_keeps_the_contract(name, output):
    case = NAMED[name]
    args = tuple(output if a in ("json", "text") else a for a in case.args)
    _, found = check_estate(EstateCase(case.files, args))
    assert_clean(found)


def test_check_as_a_process_keeps_the_contract():
    """The console script itself (start-up, encodings, exit status) on three nasty estates."""
    for name in ("invalid UTF-8", "lone CR line breaks", "registry: duplicate claims key"):
        _, found = check_estate(NAMED[name], subprocess_run=True)
        assert_clean(found, name)


def test_check_writes_nothing_even_with_claims_commands():
    """Read-only commands leave every byte, and the file list, as it was."""
    case = NAMED["thousand withdrawn claims"]
    with tempfile.TemporaryDirectory(prefix="guards-fuzz-") as folder:
        root = Path(folder)
        write_estate(case, root)
        before = tree_digest(root)
        for args in (("claims", "list"), ("claims", "show", "withdrawn-7"), ("check",)):
            outcome = run_in_process(args, root, 60)
            assert outcome.code in (0, 1, 2), (args, outcome.err)
        assert tree_digest(root) == before


# --- time: linear in adversarial text -------------------------------------------------------


def _with_header_line(line: str) -> EstateCase:
    return estate(
        DFLASH.replace("# Profile (at-a-glance):", "# Profile (at-a-glance):\n" + line, 1),
        claims=None,
    )


# The fixture's header states its pool; without it every KV-pool pattern scans the header.
NO_POOL = DFLASH.replace("(KV pool 212,977 tok; hard ceiling ~213K)", "(hard ceiling ~213K)")


def _with_comment(line: str, base: str = DFLASH) -> EstateCase:
    return estate(base.replace("services:", line + "\nservices:", 1), claims=None)


def _with_script_line(line: str) -> EstateCase:
    return estate(
        DFLASH.replace("        set -e\n", "        set -e\n        " + line + "\n", 1), claims=None
    )


def _with_note(text: str) -> EstateCase:
    return estate(note=text, claims=CLAIMS)


GROWTH = {
    "KV pool then spaces": lambda n: _with_header_line(
        "#   Max ctx:   131072 (KV pool" + " " * n + "x)"
    ),
    "KV pool then digits": lambda n: _with_comment("# KV pool " + "1" * n + " x"),
    "digit run in a header field": lambda n: _with_header_line("#   Max ctx:   " + "1" * n),
    "digits and commas": lambda n: _with_comment("# " + "1," * (n // 2) + " tokens"),
    "digits then pool": lambda n: _with_comment("# " + "1" * n + " x pool", NO_POOL),
    "digits and dots then pool": lambda n: _with_comment("# " + "1." * (n // 2) + " pool", NO_POOL),
    "digits then x": lambda n: _with_comment("# " + "1" * n + "x", NO_POOL),
    "GPU KV cache size and digits": lambda n: _with_comment(
        "# GPU KV cache size: " + "1" * n + " x", NO_POOL
    ),
    "a-a-a in a flat line": lambda n: _with_comment("# " + "a-" * (n // 2)),
    "ABC ABC in a comment": lambda n: _with_comment("# " + "ABC " * (n // 4)),
    "ABC ABC in a table row": lambda n: _with_comment("# " + "ABC / " * (n // 6)),
    "case $$aaa in the entrypoint": lambda n: _with_script_line("case $$" + "a" * n),
    "assignments in the entrypoint": lambda n: _with_script_line("_spec_n=" + "$" * n),
    "very long header line": lambda n: _with_header_line("#   Model:     " + "x " * (n // 2)),
    "tokens in a header line": lambda n: _with_header_line("#   KV:        " + "fp8 " * (n // 4)),
    "claim:a on one note line": lambda n: _with_note("# Note\n\n" + "claim:a " * (n // 8) + "\n"),
    "claim:a-a-a id": lambda n: _with_note("claim:" + "a-" * (n // 2) + "\n"),
    "struck text": lambda n: _with_note("~~a " * (n // 4) + "\n"),
    "brackets in a note": lambda n: _with_note("[" * n + "\n"),
    "emphasis in a note": lambda n: _with_note("*a" * (n // 2) + "\n"),
    "retraction words and dates": lambda n: _with_note("Retracted 2026-09-08 " * (n // 21) + "\n"),
    "a stale claim repeated": lambda n: _with_note(
        "Severity splits by hardware. " * (n // 29) + "\n"
    ),
    "spaces in a note line": lambda n: _with_note("a" + " " * n + "b\n"),
}

GROWTH_N = 6000
FLOOR = 0.25  # seconds: noise on a loaded 2-core machine (a quadratic pattern overshoots by 1 s+)


def _best_time(case: EstateCase, repeat: int, limit: float = 20.0, enough: float = 0.0) -> float:
    """:func:`best_time` of in-process runs over ``case``; fails when one outlives ``limit``
    seconds of CPU time (as measured)."""
    with tempfile.TemporaryDirectory(prefix="guards-fuzz-") as folder:
        root = Path(folder)
        write_estate(case, root)

        def run() -> None:
            outcome = run_in_process(case.args, root, limit, cpu=True)
            assert outcome.code is not None, f"stopped after {limit:.1f} s of CPU time"
            assert outcome.code in (0, 1, 2), outcome.err

        return best_time(run, repeat, enough)


@pytest.mark.parametrize("name", sorted(GROWTH))
def test_time_grows_linearly_with_adversarial_text(name):
    """4n characters take less than 8 times as long as n (a quadratic pattern takes 16)."""
    build = GROWTH[name]
    small = _best_time(build(GROWTH_N), 3)
    bound = 8 * small + FLOOR
    # past the bound: fail early; a second try only for a first run over it
    large = _best_time(build(4 * GROWTH_N), 2, limit=bound + 1.0, enough=bound)
    assert large < bound, f"n={GROWTH_N}: {small:.3f} s, 4n: {large:.3f} s"


def test_compose_tokens_survive_at_every_line():
    """Every nasty compose token, inserted as its own line before ``services:``, parses or
    raises a located error (a cheap sweep the random tests may miss)."""
    found = []
    for token in COMPOSE_TOKENS:
        text = DFLASH.replace("services:", token + "\nservices:", 1)
        found += parser_violations("compose", text)
    assert_clean(found)


# --- minimal reproducers of the bugs these tests found (fixed since; kept as regressions) ----


@pytest.mark.parametrize("char", ["\x00", "\x0b", "\x0c", "\x1b", "\x1e"], ids=repr)
@pytest.mark.parametrize("kind", ["compose", "registry", "note"])
def test_a_control_character_is_reported_at_its_line(kind, char):
    """Was: ``FILE: YAML error: unacceptable character #x0000 ... in "<unicode string>",
    position N``, with no line."""
    from guards.errors import GuardsError

    text = {
        "compose": f"services:\n  a:\n    image: x{char}\n",
        "registry": f"version: 1\nclaims: []\n# {char}\n",
        "note": f"---\ntitle: a\nclaims: [x{char}]\n---\n",
    }[kind]
    error = parse_directly(kind, text)
    assert isinstance(error, GuardsError)
    assert error.line == 3, str(error)
    assert "<unicode string>" not in error.message


def test_llamacpp_drafter_knobs_lie_in_the_file():
    """Was: a depth flag without a draft model implied a drafter_method knob at line 0."""
    text = 'services:\n  s:\n    image: llama\n    command: ["--spec-draft-n-max", "3"]\n'
    assert_clean(parser_violations("compose", text))


def test_a_deeply_nested_speculative_config_is_not_an_internal_error():
    """Was: exit 3, RecursionError in guards/script.py:parse_spec_payload."""
    text = (
        "services:\n  v:\n    image: vllm/vllm-openai\n"
        "    command: [--speculative-config, '" + "[" * 1000 + "']\n"
    )
    assert_clean(parser_violations("compose", text))


def test_every_json_field_of_a_finding_is_bounded():
    """Was: the message was cut at 1,000 characters, the `claim` field kept all 40,001."""
    document = _json_run(estate(note="claim:" + "a-" * 20_000 + "a\n"))
    assert document["findings"]
    for finding in document["findings"]:
        for key, value in finding.items():
            assert not isinstance(value, str) or len(value) <= 1000, (key, len(value))


def test_a_json_path_names_the_file_whatever_its_name():
    """Was: ``composes/new\\nline.yml`` in JSON: escaped for a terminal, naming no file."""
    document = _json_run(NAMED["a newline in a file name"])
    assert {f["path"] for f in document["findings"]} == {"composes/new\nline.yml"}


@pytest.mark.parametrize(
    ("config", "args"),
    [
        pytest.param('claims = "' + "x" * 300 + '"\n', ("check",), id="claims-too-long"),
        pytest.param('[rules.D001]\nstatuses = "a\\u0000b.yaml"\n', ("check",), id="statuses-nul"),
        pytest.param("", ("check", "--config", "x" * 300), id="config-too-long"),
        pytest.param("", ("check", "--root", "x" * 300), id="root-too-long"),
        pytest.param("", ("check", "x" * 300), id="paths-too-long"),
        pytest.param("", ("check", "/".join(["y" * 200] * 30)), id="paths-total-too-long"),
        pytest.param(
            "", ("check", "--format", "json", "/".join(["y" * 200] * 30)), id="paths-json-cut"
        ),
        pytest.param("", ("check", "--root", "/".join(["y" * 200] * 30)), id="root-total-too-long"),
        pytest.param(
            'claims = "' + "/".join(["y" * 200] * 30) + '"\n',
            ("check",),
            id="claims-total-too-long",
        ),
    ],
)
def test_a_path_the_system_refuses_is_a_located_error(config, args):
    """A path that cannot even be looked up is bad input (exit 2, one line), not exit 3.

    Was: ``OSError(36, 'File name too long')`` or ``ValueError('embedded null byte')``, exit 3,
    from --root, --config, PATHS, ``claims`` and a rule's ``statuses``."""
    files = {"composes/c.yml": b"services:\n  v: {image: vllm/vllm-openai}\n"}
    files["guards.toml"] = ('composes = ["composes/*.yml"]\n' + config).encode()
    _, found = check_estate(EstateCase(files, args))
    assert_clean(found)


def test_a_record_separator_in_a_note_is_text():
    """Found by tools/fuzz_campaign.py (seed 2024), shrunk to two files. Was: exit 3,
    ``IndexError`` in textmatch (U+001E is its unit separator)."""
    files = {
        "claims.yaml": b"claims:\n  - id: decode\n    title: As\n    status: retracted\n"
        b'    match:\n      - "Severity splits by hardware"\n',
        "learnings/n.md": b"Severity splits by hardware\x1et",
    }
    _, found = check_estate(EstateCase(files, ("check", "--format", "json")))
    assert_clean(found)


def test_an_invalid_statuses_toml_names_its_line():
    """Found by tools/fuzz_campaign.py (seed 2024), shrunk to two files. Was:
    ``statuses.toml: invalid TOML: ... (at line 1, column 5)``, the place inside the message."""
    files = {
        "guards.toml": b'[rules."header-drift"]\n"statuses"="statuses.toml"',
        "statuses.toml": b's=""c',
    }
    _, found = check_estate(EstateCase(files, ("check", "--format", "json")))
    assert_clean(found)
