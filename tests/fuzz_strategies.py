"""Inputs for fuzzing ``guards``: hypothesis strategies for every kind of file it reads.

Shared by ``tests/test_fuzz.py`` (bounded, in CI) and ``tools/fuzz_campaign.py`` (long runs on
demand). Real input first: composes, notes, registries and configs are mutations of the files
in this repository (``composes/``, ``learnings/``, ``tests/fixtures/``, the estates of
``tests/rules/*.yml``), with generated ones alongside. What a run must satisfy lives in
``tests/fuzz_props.py``.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from hypothesis import strategies as st

from .yamldata import read_yaml

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
RULE_CASES = ROOT / "tests" / "rules"

BASE_CONFIG = 'composes = ["composes/**/*.yml"]\nnotes = ["learnings/**/*.md"]\n'


# --- the corpus: this repository's own inputs -----------------------------------------------


@dataclass(frozen=True)
class Seed:
    """A small estate to start from: files by path (relative to the root), rule options (the
    ``[rules.*]`` tables of its config) and an operator ``.env`` overlay."""

    name: str
    files: dict[str, str]
    options: dict = field(default_factory=dict)
    env: dict[str, str] | None = None


@dataclass(frozen=True)
class Corpus:
    composes: tuple[str, ...]
    notes: tuple[str, ...]
    registries: tuple[str, ...]
    envs: tuple[str, ...]
    configs: tuple[str, ...]
    estates: tuple[Seed, ...]


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _estate_files(top: Path) -> dict[str, str]:
    return {
        p.relative_to(top).as_posix(): _read(p)
        for p in sorted(top.rglob("*"))
        if p.is_file() and p.suffix in (".yml", ".yaml", ".md", ".toml")
    }


@functools.cache
def corpus() -> Corpus:
    composes = [_read(p) for p in sorted((ROOT / "composes").rglob("*.yml"))]
    composes += [_read(p) for p in sorted((FIXTURES / "composes").glob("*.yml"))]
    composes += [_read(p) for p in sorted((FIXTURES / "estates").rglob("*.yml"))]
    notes = [_read(p) for p in sorted((ROOT / "learnings").glob("*.md"))]
    notes += [_read(p) for p in sorted(FIXTURES.rglob("*.md"))]
    registries = [_read(ROOT / "claims.yaml")]
    registries += [_read(p) for p in sorted((FIXTURES / "estates").glob("*/claims.yaml"))]
    configs = [_read(p) for p in sorted((FIXTURES / "estates").glob("*/guards.toml"))]
    configs.append(_read(ROOT / "pyproject.toml"))
    envs = [_read(p) for p in sorted((FIXTURES / "operator").glob("*.env"))]

    # Hand-labelled passages (compose headers, comments, note paragraphs): real wording.
    snippets = read_yaml(FIXTURES / "claims" / "snippets.yaml")
    for snippet in snippets:
        text = snippet["text"]
        if snippet["kind"] == "note":
            notes.append(text)
        else:
            composes.append(text + MINIMAL_SERVICE)

    estates = [
        Seed("clean", _estate_files(FIXTURES / "estates" / "clean")),
        Seed("incident", _estate_files(FIXTURES / "estates" / "incident")),
    ]
    for path in sorted(RULE_CASES.glob("*.yml")):
        data = read_yaml(path)
        for case in data["cases"]:
            files = dict(case["files"])
            estates.append(
                Seed(
                    f"{data['rule']}: {case['name']}",
                    files,
                    case.get("options") or {},
                    case.get("env"),
                )
            )
            for name, text in files.items():
                if name.startswith("composes/"):
                    composes.append(text)
                elif name.endswith(".md"):
                    notes.append(text)
                elif name == "claims.yaml":
                    registries.append(text)
            if case.get("env"):
                envs.append("".join(f"{k}={v}\n" for k, v in case["env"].items()))
    for seed in estates:
        for name in seed.files:
            if name.endswith("guards.toml"):
                configs.append(seed.files[name])
    return Corpus(
        tuple(dict.fromkeys(composes)),
        tuple(dict.fromkeys(notes)),
        tuple(dict.fromkeys(registries)),
        tuple(dict.fromkeys(envs)),
        tuple(dict.fromkeys(configs)),
        tuple(estates),
    )


MINIMAL_SERVICE = """services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: ["--max-model-len", "${MAX_MODEL_LEN:-131072}", "--max-num-seqs", "4"]
"""


# --- nasty pieces ---------------------------------------------------------------------------


def nested_default(depth: int, leaf: str = "x") -> str:
    """``${V0:-${V1:-...${Vn:-leaf}...}}``, ``depth`` levels deep."""
    return "".join(f"${{V{i}:-" for i in range(depth)) + leaf + "}" * depth


NASTY_NUMBERS = (
    "0",
    "-1",
    "-0",
    "1e400",
    "-1e400",
    "1e-400",
    "inf",
    "-inf",
    "Infinity",
    "nan",
    "NaN",
    ".inf",
    ".nan",
    "9" * 40,
    "9" * 400,
    "18446744073709551617",
    "1e15",
    "1e16",
    "²",
    "2²",
    "٣",
    "０",
    "0x10",
    "0o17",
    "1_000",
    "1,024",
    "1.5",
    ".5",
    "5.",
    "+3",
    "007",
    "1e3",
    "100000000",
    "4294967296",
    "0.0",
    "1e308",
    "2e308",
)

LINE_BREAKS = ("\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c")

NASTY_CHARS = (
    "\x00",
    "\ufeff",
    "\t",
    "\x1b",
    "\x7f",
    "\u200b",
    "\u202e",
    "\x1e",
    "\ufffd",
    "😀",
    "⚠",
    "⚠️",
    "️",
    "×",
    "—",
    "~~",
    "`",
    "\\",
    "'",
    '"',
    "$",
    "$$",
    "{",
    "}",
    "#",
    ":",
    ": ",
    "- ",
    "|",
    ">",
    "&",
    "*",
    "!",
    "%",
    "@",
    "[",
    "]",
    ",",
    "?",
    *LINE_BREAKS,
)

SINGLE_CHARS = tuple(c for c in NASTY_CHARS if len(c) == 1) + tuple("aZ09 -_.=")

COMPOSE_TOKENS = (
    nested_default(3),
    nested_default(40),
    nested_default(400),
    nested_default(1200),
    "${X:-a",
    "${",
    "${}",
    "${:-x}",
    "${1A:-x}",
    "${A:?must be set}",
    "${A?}",
    "${A:+--enforce-eager}",
    "$${SPEC_N:-7}",
    "$${SPEC_N:-1e400}",
    "$$",
    "$",
    "${MAX_MODEL_LEN:-1e400}",
    "${MAX_NUM_SEQS:-²}",
    "--max-model-len 0",
    "--max-model-len 1e400",
    "--max-num-seqs 100000000",
    "--max-num-seqs inf",
    "--gpu-memory-utilization nan",
    "--gpu-memory-utilization 1e400",
    "--tensor-parallel-size 0",
    "--tensor-parallel-size 99999999999999999999",
    "--pipeline-parallel-size -1",
    "--kv-cache-dtype fp8_e4m3",
    "--kv-cache-dtype ²",
    '--speculative-config \'{"method":"mtp","num_speculative_tokens":1e400}\'',
    '--speculative-config \'{"method":"mtp","num_speculative_tokens":NaN}\'',
    '--speculative-config \'{"method":"mtp","num_speculative_tokens":[1]}\'',
    '--speculative-config \'{"method":"mtp"',
    "--speculative-config '" + "[" * 1500 + "'",
    "--speculative-config '" + '{"a":' * 1500 + "'",
    "-np 0",
    "-c inf",
    "-ts 1,0,1e400",
    "--spec-type mtp:n_max=1e400",
    "count: 100000000",
    "count: -1",
    "count: 1e400",
    "count: .inf",
    "count: all",
    "count: []",
    "device_ids: ['0', '0', '1']",
    "device_ids: 5",
    "<<: *base",
    "<<: [*base, *base]",
    "<<: 5",
    "&base",
    "*base",
    "*nowhere",
    "!!binary aGVsbG8=",
    "!!python/object:os.system",
    "!!int 0x10",
    "!!float .nan",
    "!!timestamp 2026-13-45",
    "!custom x",
    "? [a, b]",
    "? complex\n: key",
    "- - - x",
    "|-",
    ">-",
    "|+",
    "|2",
    "---",
    "...",
    "%YAML 1.1",
    "services:",
    "services: []",
    "services: null",
    "services: {vllm: 5}",
    "x-base: &base {image: vllm/vllm-openai, ipc: host}",
    "# Profile (at-a-glance):",
    "#   Status:    ⚠ Production",
    "#   Status:    ",
    "#   Max ctx:   131072 (KV pool 668,467 tok)",
    "#   Max ctx:   1e400",
    "#   Max ctx:   ²",
    "#   KV:        fp8 — 1,795,289-token pool",
    "#   Drafter:   MTP n=99",
    "#   Drafter:   MTP n=1e400",
    "#   Topology:  TP=0",
    "#   Topology:  TP=99999999999999999999",
    "# Tensor-parallel: 999",
    "# Tensor-parallel: 1e400",
    "# Requires-min-gpu-count: 0",
    "# ⚠️ RETRACTED 2026-09-08 (claim:decode-cliff-1096): ",
    "# Retracted 2026-13-45",
    "# ~~accumulated-context decode cliff~~",
    "# ⚠️ ACCUMULATED-CONTEXT DECODE CLIFF (#1096): on the spec-decode tiers decode",
    "# Interim: MTP tier (higher cliff) or SPEC_N=0 for sustained >~20k.",
    "claim:decode-cliff-1096",
    "claim:no-such-claim",
    "claim:UPPER",
    "claim:a-",
    "claim:" + "a-" * 500 + "a",
    "# >>> guards:header",
    "# <<< guards:header (checksum: 0000)",
    "# KV pool" + " " * 2000,
    "# " + "1" * 3000,
    "# " + "a-" * 1500,
    "# " + "ABC " * 800,
    "SPEC_N=${SPEC_N:-1e400}",
    'case "$${SPEC:-}" in off|0) _spec_n=0 ;; esac',
    "case $$" + "a" * 2000,
    '_spec_n="$${SPEC_N:-²}"',
    "x" * 5000,
    "#" * 3000,
)

NOTE_TOKENS = (
    "claim:decode-cliff-1096",
    "claim:spec-tax-35387",
    "claim:no-such-claim",
    "claim:Bad_Id",
    "claim:a-",
    "claim:a " * 2000,
    "claim:" + "a-" * 1000 + "a",
    "~~accumulated-context decode cliff~~",
    "~~",
    "~~~",
    "> [!WARNING]",
    "> [!WARNING]\n> Retracted 2026-09-08 (claim:decode-cliff-1096)",
    "> Retracted 2026-13-45",
    "## Retracted 2026-09-08: the cliff (claim:decode-cliff-1096)",
    "## Superseded",
    "Corrected 2026-02-30:",
    "- Retracted claim:decode-cliff-1096",
    "Severity splits by hardware",
    "accumulated-context decode cliff",
    "Interim: MTP tier (higher cliff) or SPEC_N=0 for sustained >~20k",
    "| a | b |\n| --- | --- |\n| claim:decode-cliff-1096 | ~~x~~ |",
    "| " * 500,
    "```",
    "```yaml\n---\n",
    "---",
    "...",
    "claims: [decode-cliff-1096",
    "retracts: 5",
    "retracts: [[a]]",
    "claims: !!binary aGVsbG8=",
    "title: &a [*a]",
    "<!--",
    "-->",
    "[link](http://x)",
    "![img](x.png)",
    "<div>",
    "*" * 2000,
    "[" * 2000,
    ">" * 500,
    "- " * 500,
    "#" * 2000,
    "a-" * 2000,
    "ABC " * 2000,
    "1" * 3000,
    "KV pool" + " " * 2000,
    "x" * 5000,
)

REGISTRY_TOKENS = (
    "claims:",
    "claims: []",
    "claims: 5",
    "version: 2",
    "version: '1'",
    "id: Not_Kebab",
    "id: 5",
    "id: ''",
    "id: decode-cliff-1096",
    "status: bogus",
    "status: retracted",
    "asserted: 2026-13-01",
    "asserted: 2026-02-30",
    "retracted: yesterday",
    "retracted: 20260908",
    "retracted: 2026-09-08T00:00:00",
    "superseded_by: nowhere",
    "superseded_by: decode-cliff-1096",
    "facts: 5",
    "facts: {kv_heads: 1e400}",
    "facts: {kv_bytes_per_token: {bf16: -1}}",
    "facts: {gpu_memory_utilization_max: .nan}",
    "drafter_depth_max: [{method: mtp, depth: 1e400}]",
    "match: 5",
    "match: ['']",
    "match: [' ']",
    "not_match: [null]",
    "variants: [[a]]",
    "text: |-",
    "text: >-",
    "applies_to: {paths: ['[']}",
    "applies_to: {paths: ['**/**/**/**/**/**/**/**']}",
    "evidence: [{source: 1}]",
    "refs: 5",
    "<<: *base",
    "&base",
    "*base",
    "!!python/name:os.system",
    "? [a]",
    "- id: x",
    *NASTY_NUMBERS[:8],
)

ENV_TOKENS = (
    "KEY=",
    "KEY=value",
    'KEY="quoted value"',
    "KEY='single quoted'",
    'KEY="unterminated',
    "KEY='unterminated",
    "export KEY=value",
    "export  SPEC_N=3",
    "  # comment",
    "#",
    "",
    "garbage line",
    "=novalue",
    "KEY",
    "KEY = spaced",
    "KEY=a # trailing comment",
    "KEY=${OTHER}",
    "KEY=${OTHER:-${DEEP:-1}}",
    'KEY="a\\nb"',
    'KEY="a\\"b"',
    "1KEY=x",
    "KEY.dotted-name=x",
    "\x00",
    "\ufeffKEY=x",
    "KEY=" + "x" * 5000,
)

ENV_KEYS = (
    "SPEC_N",
    "SPEC",
    "MAX_NUM_SEQS",
    "MAX_MODEL_LEN",
    "GPU_MEMORY_UTILIZATION",
    "KV_CACHE_DTYPE",
    "TP",
    "CTX",
    "CTX_SIZE",
    "NP",
    "MTP_DRAFT_N_MAX",
    "TENSOR_SPLIT",
    "VLLM_IMAGE",
)

CONFIG_TOKENS = (
    'composes = ["composes/**/*.yml"]',
    'notes = ["learnings/**/*.md"]',
    "composes = 1",
    'composes = [1, "a"]',
    'notes = "learnings/*.md"',
    "exclude = [[]]",
    'exclude = ["**"]',
    'exclude = ["["]',
    "unknown = 1",
    'claims = ""',
    "claims = 5",
    'claims = "missing.yaml"',
    'claims = "composes"',
    'select = ["K0"]',
    'select = ["nothing"]',
    'ignore = "S"',
    "history = []",
    'history = ["**"]',
    "rules = 3",
    "rules = {K001 = 1}",
    "[rules.K001]\ndefault-ceiling = 1e400",
    "[rules.K001]\ndefault-ceiling = inf",
    "[rules.K001]\ndefault-ceiling = nan",
    '[rules.K001]\ndefault-ceiling = "high"',
    "[rules.utilisation-cieling]\nx = 1",
    "[rules.max-num-seqs]\nkv-heads = 99999999999999999999",
    "[rules.max-num-seqs]\ngpu-memory-gib = -1\nweights-gib = 1e300\nreserved-gib = 0",
    "[rules.max-num-seqs]\nkv-bytes-per-token = {bf16 = 0}",
    '[rules.S002]\nseverity = "fatal"',
    "[rules.S002]\nseverity = 5",
    '[rules.header-drift]\nstatuses = "missing.yaml"',
    '[rules.header-drift]\nstatuses = "composes"',
    "[rules.required-fields]\nfields = [1]",
    "[rules.required-fields]\nfields = []",
    "[tool.guards]",
    "[tool]\nguards = 1",
    "tool = 1",
    "composes = [",
    "= 1",
    "a = 1\na = 2",
    "x = 99999999999999999999999999999999",
    'x = """',
    "[[rules]]",
    "[rules]\n[rules]",
    "\x00",
    "\r",
    'claims = "' + "x" * 300 + '"',
    'claims = "' + "/".join(["y" * 200] * 30) + '"',
    'claims = "a\\u0000b"',
    '[rules.header-drift]\nstatuses = "' + "x" * 300 + '.yaml"',
    '[rules.header-drift]\nstatuses = "a\\u0000b.yaml"',
    'exclude = ["a\\u0000b"]',
    'composes = ["' + "x" * 300 + '/*.yml"]',
)

# Paths the operating system refuses (a name past 255 bytes, a path past 4,096) as arguments.
AWKWARD_ARGUMENTS = (
    ("--config", "x" * 300),
    ("--root", "x" * 300),
    ("--env-file", "x" * 300),
    ("x" * 300,),
    ("/".join(["y" * 200] * 30),),
    ("--root", "/".join(["y" * 200] * 30)),
)


def one_in(draw, n: int) -> bool:
    """True about once in ``n`` draws (the common choice is the one hypothesis shrinks to)."""
    return draw(sampled((False,) * (n - 1) + (True,)))


_SAMPLED: dict[tuple, st.SearchStrategy] = {}


def sampled(options: Sequence) -> st.SearchStrategy:
    """``st.sampled_from(options)``, made once per tuple of options. Hypothesis makes a new
    strategy on each call and works out its properties on its first draw: in the draws inside
    composite strategies (the layouts of a registry are tens of them), that was a third of the
    time spent generating. The draws are the same. Keyed by the types too (``(0, 1)`` equals
    ``(False, True)``)."""
    options = tuple(options)
    key = (options, tuple(map(type, options)))
    if key not in _SAMPLED:
        _SAMPLED[key] = st.sampled_from(options)
    return _SAMPLED[key]


# --- mutation -------------------------------------------------------------------------------

NUMBER_RUN = re.compile(r"\d+(?:[.,]\d+)*")
VALUE_AFTER = re.compile(r"(?<=: )\S[^\n#]*|(?<=--[a-z-]{3} )\S+|(?<== )\S+|(?<==)[^\s\n]+")


@functools.cache  # one strategy per argument: see sampled()
def _tokens(tokens: Sequence[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(tokens),
        st.sampled_from(NASTY_CHARS),
        st.sampled_from(NASTY_NUMBERS),
        st.text(st.sampled_from(SINGLE_CHARS), min_size=1, max_size=6),
    )


def _line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line, its break included."""
    spans, start = [], 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        spans.append((start, end))
        start = end
    return spans or [(0, 0)]


OPS = (
    "insert",
    "delete",
    "replace",
    "delete-line",
    "duplicate-line",
    "swap-lines",
    "insert-line",
    "number",
    "value",
    "break",
    "long-line",
)
NUMERIC_OPS = ("number", "number", "value")  # the YAML stays valid; the values do not
NUMERIC_VALUES = (
    *NASTY_NUMBERS,
    "${X:-1e400}",
    "${X:-${Y:-0}}",
    "${UNSET}",
    "''",
    "null",
    "~",
    "true",
    "auto",
    "all",
)


def _mutate_once(draw, text: str, tokens: Sequence[str], ops: Sequence[str] = OPS) -> str:
    op = draw(sampled(ops))
    n = len(text)
    if op in ("insert", "delete", "replace"):
        at = draw(st.integers(0, n))
        cut = 0 if op == "insert" else draw(st.integers(1, 60))
        new = "" if op == "delete" else draw(_tokens(tokens))
        return text[:at] + new + text[at + cut :]
    spans = _line_spans(text)
    i = draw(st.integers(0, len(spans) - 1))
    start, end = spans[i]
    if op == "delete-line":
        return text[:start] + text[end:]
    if op == "duplicate-line":  # duplicate keys, duplicate fields
        line = text[start:end] if text[start:end].endswith("\n") else text[start:end] + "\n"
        return text[:end] + ("\n" if not text[start:end].endswith("\n") else "") + line
    if op == "swap-lines":
        j = draw(st.integers(0, len(spans) - 1))
        lines = [text[a:b] for a, b in spans]
        if not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    if op == "insert-line":
        line = text[start:end]
        indent = line[: len(line) - len(line.lstrip(" "))]
        return text[:start] + indent + draw(_tokens(tokens)) + "\n" + text[start:]
    if op in ("number", "value"):
        pattern = NUMBER_RUN if op == "number" else VALUE_AFTER
        found = list(pattern.finditer(text))
        if not found:
            return text
        hit = found[draw(st.integers(0, len(found) - 1))]
        if op == "number" or ops is NUMERIC_OPS:
            new = draw(sampled(NASTY_NUMBERS if op == "number" else NUMERIC_VALUES))
        else:
            new = draw(_tokens(tokens))
        return text[: hit.start()] + new + text[hit.end() :]
    if op == "break":
        if not text[start:end].endswith("\n"):
            return text
        return text[: end - 1] + draw(sampled((*LINE_BREAKS, ""))) + text[end:]
    # long-line: a very long run of one piece, inside an existing line
    piece = draw(sampled(("x", " ", "#", "a-", "ABC ", "1", "$", "claim:a ", "~")))
    at = draw(st.integers(start, max(start, end - 1)))
    return text[:at] + piece * draw(sampled((300, 1500, 4000))) + text[at:]


@st.composite
def mutated(draw, base: st.SearchStrategy[str], tokens: Sequence[str], max_ops: int = 4) -> str:
    text = draw(base)
    for _ in range(draw(st.integers(1, max_ops))):
        text = _mutate_once(draw, text, tokens)
    return text


# --- generated composes ---------------------------------------------------------------------

HEADER_FIELDS = {
    "Model": ("Qwen3.8-27B (AutoRound INT4)", "Qwen3.8-27B Q5_K_M GGUF", ""),
    "Engine": ("vllm", "llama.cpp (server-cuda-b9570)", "ik_llama.cpp"),
    "Topology": ("Dual 3090 PCIe (TP=2)", "Single 3090 (TP=1)", "Quad (TP=4)", "TP=0", "-ts 1,1"),
    "Drafter": ("MTP n=2", "DFlash2 n=7", "none", "MTP n=0", "MTP n=2 built-in; defaults to 3"),
    "KV": ("fp8_e4m3", "bf16", "q8_0 K + q4_0 V", "fp8 — 1,795,289-token pool", "auto"),
    "Max ctx": (
        "131072 (128K)",
        "262144 (KV pool 658,636 tok)",
        "204800 (2.03× concurrency)",
        "32K",
        "1e400",
    ),
    "Status": ("✅ Production", "⚠️ Production w/ caveats", "⚠ Production", "🧪 Experimental", "?"),
    "Caveats": ("none", "prose acceptance decays"),
    "Vision": ("✅ tower present",),
}

VLLM_FLAGS = {
    "--max-model-len": ("131072", "${MAX_MODEL_LEN:-131072}", "${MAX_MODEL_LEN:-${CTX:-204800}}"),
    "--gpu-memory-utilization": ("0.90", "${GPU_MEMORY_UTILIZATION:-0.90}", "0.97"),
    "--max-num-seqs": ("4", "${MAX_NUM_SEQS:-1}", "64"),
    "--kv-cache-dtype": ("fp8_e4m3", "${KV_CACHE_DTYPE:-bfloat16}", "auto", "fp8"),
    "--tensor-parallel-size": ("2", "${TP:-2}", "1", "4"),
    "--pipeline-parallel-size": ("1", "2"),
    "--attention-backend": ("FLASH_ATTN", "${ATTN_BACKEND:-FLASH_ATTN}"),
    "--dtype": ("bfloat16", "auto"),
    "--max-num-batched-tokens": ("8192",),
    "--model": ("/root/.cache/huggingface/qwen3.8-27b",),
    "--speculative-config": (
        '{"method":"mtp","num_speculative_tokens":2}',
        '{"method":"dflash","num_speculative_tokens":${SPEC_N:-7}}',
        '{"method":"mtp","num_speculative_tokens":2,"draft":' + "[" * 1200 + "]" * 1200 + "}",
    ),
}
LLAMA_FLAGS = {
    "-c": ("131072", "${CTX_SIZE:-131072}"),
    "-np": ("1", "${NP:-1}", "8"),
    "--cache-type-k": ("q8_0", "${KV_TYPE:-q8_0}", "f16"),
    "--cache-type-v": ("q8_0", "q4_0"),
    "-ts": ("1,1", "${TENSOR_SPLIT:-1,1}", "1,1,1,1"),
    "-sm": ("layer", "row"),
    "--spec-type": ("draft-mtp", "mtp:n_max=3"),
    "--spec-draft-n-max": ("2", "${SPEC_N:-${MTP_DRAFT_N_MAX:-2}}"),
    "-fa": ("on",),
    "-m": ("/models/qwen.gguf",),
}
IMAGES = (
    "vllm/vllm-openai:v0.27.1",
    "${VLLM_IMAGE:-vllm/vllm-openai:v0.27.1}",
    "ghcr.io/ggml-org/llama.cpp:server-cuda-b9570",
    "ik_llama:latest",
    "busybox",
    "",
)


@functools.cache  # one strategy per argument: see sampled()
def _nasty_value() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(NASTY_NUMBERS),
        st.sampled_from(
            (
                nested_default(4, "4"),
                nested_default(300, "4"),
                "${UNSET}",
                "${REQ:?set me}",
                "${X:-a",
                "null",
                "[]",
                "{}",
                "''",
                '"',
                "|",
                "*alias",
            )
        ),
    )


@functools.cache  # one strategy per argument: see sampled()
def _value(pool: Sequence[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(pool), st.sampled_from(pool), _nasty_value())


def _yaml_scalar(value: str) -> str:
    """``value`` as a double-quoted YAML scalar (most of the time, the estates' style)."""
    return json.dumps(value, ensure_ascii=False)


HEADER_KEYS = st.lists(st.sampled_from(sorted(HEADER_FIELDS)), max_size=9)


@st.composite
def header_block(draw) -> list[str]:
    lines = ["# " + "=" * 60, "# Profile (at-a-glance):"]
    for key in draw(HEADER_KEYS):
        value = draw(_value(HEADER_FIELDS[key]))
        lines.append(f"#   {key}:{' ' * (11 - len(key))}{value}".rstrip())
        if one_in(draw, 6):  # a continuation line
            lines.append("#              " + draw(sampled(("(KV pool 212,977 tok)", "n=3"))))
    lines.append("# " + "-" * 60)
    for _ in range(draw(st.integers(0, 3))):
        lines.append(
            "# "
            + draw(
                st.sampled_from(
                    (
                        "⚠️ MAX_NUM_SEQS vs the pool: 668,467 tokens hold 5 full 128K sequences.",
                        "⚠️ ACCUMULATED-CONTEXT DECODE CLIFF (#1096): on the spec-decode tiers",
                        "⭐ WHY n=2: n=2 leads on prose (claim:spec-tax-35387).",
                        "⚠️ RETRACTED 2026-09-08 (claim:decode-cliff-1096): no cliff.",
                        "W4A8: SHIPS ON",
                        "SPEC_N  drafter depth  (default: 2; 0 = off)",
                        "MAX_NUM_SEQS  concurrent streams  (default: 4)",
                        "this compose defaults to 5",
                        "GPU_MEMORY_UTILIZATION 0.90 is deliberate (claim:qwen38-27b-util-ceiling).",
                    )
                )
            )
        )
    if draw(st.booleans()):
        lines.append(f"# Tensor-parallel: {draw(_value(('1', '2', '4')))}")
    if draw(st.booleans()):
        lines.append(f"# Requires-min-gpu-count: {draw(_value(('1', '2', '4')))}")
    return lines


FLAG_LISTS = {
    vllm: st.lists(st.sampled_from(sorted(flags)), max_size=8, unique=True)
    for vllm, flags in ((True, VLLM_FLAGS), (False, LLAMA_FLAGS))
}
SERVICE_ENV_KEYS = st.lists(st.sampled_from(ENV_KEYS), max_size=4, unique=True)
DEVICE_IDS = st.lists(st.sampled_from(("'0'", "'1'", "'2'", "0", "x")), max_size=5)


@st.composite
def service_block(draw, name: str, anchor: bool) -> list[str]:
    vllm = draw(st.booleans())
    flags = VLLM_FLAGS if vllm else LLAMA_FLAGS
    lines = [f"  {name}:"]
    if anchor and draw(st.booleans()):
        lines.append("    <<: *base")
    lines.append(f"    image: {draw(sampled(IMAGES[:2] if vllm else IMAGES[2:]))}")
    chosen = draw(FLAG_LISTS[vllm])
    args: list[str] = []
    for flag in chosen:
        args += [flag, draw(_value(flags[flag]))]
    style = draw(sampled(("list", "folded", "flow")))
    if style == "list":
        lines.append("    command:")
        lines += [f"      - {_yaml_scalar(arg)}" for arg in args]
    elif style == "folded":
        lines.append("    command: >-")
        lines += [f"      {a} {b}" for a, b in zip(args[::2], args[1::2], strict=True)]
        if not args:
            lines.append("      --port 8000")
    else:
        lines.append(f"    command: [{', '.join(_yaml_scalar(a) for a in args)}]")
    if draw(st.booleans()):
        lines.append("    environment:")
        for key in draw(SERVICE_ENV_KEYS):
            lines.append(f"      - {key}=${{{key}:-}}")
    if draw(st.booleans()):
        lines += [
            "    deploy:",
            "      resources:",
            "        reservations:",
            "          devices:",
            "            - driver: nvidia",
        ]
        if draw(st.booleans()):
            lines.append(
                f"              count: {draw(_value(('all', '1', '2', '4', '100000000')))}"
            )
        else:
            ids = draw(DEVICE_IDS)
            lines.append(f"              device_ids: [{', '.join(ids)}]")
        lines.append("              capabilities: [gpu]")
    if draw(st.booleans()):
        depth = draw(_value(("7", "2", "5")))
        lines += [
            "    entrypoint:",
            "      - bash",
            "      - -c",
            "      - |",
            "        set -e",
            "        # SPEC_N=<n> drafter depth (this compose defaults to 5); SPEC_N=0 disables",
            f'        _spec_n="$${{SPEC_N:-{depth}}}"',
            draw(
                st.sampled_from(
                    (
                        '        case "$${SPEC:-}" in off|OFF|0) _spec_n=0 ;; esac',
                        "        case $$" + "a" * 300,
                        "        case $${SPEC in",
                    )
                )
            ),
            '        SPEC_ARGS=(--speculative-config "{\\"method\\":\\"dflash\\",'
            '\\"num_speculative_tokens\\":$$_spec_n}")',
            '        exec vllm serve "$$@" "$${SPEC_ARGS[@]}"'
            if vllm
            else "        exec /app/llama-server",
            "      - --",
        ]
    return lines


@st.composite
def generated_compose(draw) -> str:
    lines: list[str] = [] if one_in(draw, 5) else draw(header_block())
    anchor = draw(st.booleans())
    if anchor:
        lines += ["x-base: &base", "  ipc: host", "  shm_size: 16gb"]
    lines.append("services:")
    for index in range(draw(st.integers(1, 3))):
        lines += draw(service_block(f"svc-{index}", anchor))
    text = "\n".join(lines) + "\n"
    return _mutate_once(draw, text, COMPOSE_TOKENS) if one_in(draw, 4) else text


def compose_texts() -> st.SearchStrategy[str]:
    return st.one_of(
        mutated(st.sampled_from(corpus().composes), COMPOSE_TOKENS),
        generated_compose(),
    )


# --- generated notes ------------------------------------------------------------------------

CLAIM_IDS = ("decode-cliff-1096", "spec-tax-35387", "qwen38-27b-util-ceiling", "no-such-claim")
CITED = st.lists(st.sampled_from(CLAIM_IDS), max_size=3)
RETRACTED = st.lists(st.sampled_from(CLAIM_IDS), max_size=2)


@st.composite
def front_matter(draw) -> str:
    kind = draw(sampled(("none", "valid", "valid", "broken", "unclosed", "empty")))
    if kind == "none":
        return ""
    if kind == "empty":
        return "---\n---\n"
    ids = draw(CITED)
    body = [f"title: {draw(sampled(('A note', 'Qwen3.8 — tiers', '')))}"]
    if draw(st.booleans()):
        body.append(f"claims: [{', '.join(ids)}]")
    if draw(st.booleans()):
        body.append(f"retracts: [{', '.join(draw(RETRACTED))}]")
    if kind == "broken":
        body.append(draw(sampled(NOTE_TOKENS[26:32] + ("- list", "a: b: c", "? [x]"))))
    close = "" if kind == "unclosed" else "---\n"
    return "---\n" + "\n".join(body) + "\n" + close


NOTE_BLOCKS = (
    "# Qwen3.8-27B on 3090s",
    "## The tiers",
    "## Retracted 2026-09-08: accumulated-context decode cliff (claim:decode-cliff-1096)",
    "## Superseded: the old pool figure",
    "Decode is flat from 1.2K to 35.3K (claim:spec-tax-35387).",
    "⚠️ ACCUMULATED-CONTEXT DECODE CLIFF (#1096): on the spec-decode tiers decode\n"
    "collapses once accumulated context passes a threshold: MTP n=3 (dual-max)\n"
    "falls off ~21k to 1.5–6 tok/s.",
    "Interim: MTP tier (higher cliff) or SPEC_N=0 for sustained >~20k.",
    "> [!WARNING]\n> Retracted 2026-09-08 (claim:decode-cliff-1096): there is no cliff.",
    "> ⚠️ accumulated-context decode cliff: Severity splits by hardware.",
    "- Retracted 2026-09-08: ~~the decode cliff~~ (claim:decode-cliff-1096)",
    "- Corrected: the pool holds 5 sequences.",
    "| Tier | Pool | Streams |\n| --- | --- | --- |\n| dual/fast | 668,467 | 4 |\n"
    "| dual/max | ~~cliff at 21k~~ | claim:decode-cliff-1096 |",
    "~~Severity splits by hardware: Blackwell stays clean.~~",
    "```\nclaim:decode-cliff-1096 inside code\n```",
    "We retracted the cliff.",
    "1. claim:no-such-claim\n2. claim:Bad_Id",
)


NOTE_PARTS = st.lists(
    st.one_of(st.sampled_from(NOTE_BLOCKS), st.sampled_from(NOTE_TOKENS)), min_size=1, max_size=8
)


@st.composite
def generated_note(draw) -> str:
    blocks = draw(NOTE_PARTS)
    sep = draw(sampled(("\n\n", "\n\n", "\n", "\r\n\r\n", "\r\r", "\u2028\u2028")))
    text = draw(front_matter()) + sep.join(blocks) + "\n"
    return _mutate_once(draw, text, NOTE_TOKENS) if one_in(draw, 4) else text


def note_texts() -> st.SearchStrategy[str]:
    return st.one_of(mutated(st.sampled_from(corpus().notes), NOTE_TOKENS), generated_note())


# --- generated registries -------------------------------------------------------------------

DATES = ("2026-08-25", "2026-09-08", "2026-13-01", "2026-02-30", "yesterday", "20260908", "")
STATUSES = ("active", "retracted", "superseded", "disputed", "bogus", "Retracted")


CLAIM_TEXTS = st.sampled_from(
    (
        "accumulated-context decode cliff on the spec-decode tiers",
        "Severity splits by hardware: Blackwell stays clean.",
        "the KV pool holds 5 sequences at 128K",
        "a",
        "",
        "x " * 500,
    )
)
# The optional fields (and superseded_by, which names one of the claims before it).
CLAIM_FIELDS = {
    "match": st.sampled_from((["decode cliff"], [""], [" "], "a phrase", 5, [None])),
    "not_match": st.sampled_from((["decode cliff at 90K prefill"], [])),
    "variants": st.sampled_from((["decode collapses past ~21k"], [["nested"]])),
    "refs": st.sampled_from((["#1096"], "#1", 5)),
    "evidence": st.sampled_from(([{"source": "#1232", "date": "2026-09-10"}], [{"source": 1}])),
    "applies_to": st.sampled_from(
        (
            {"model": "qwen3.8-27b", "engine": "vllm", "topology": ["dual"]},
            {"paths": ["composes/**"]},
            {"paths": ["["]},
            {"topology": 5},
        )
    ),
    "facts": st.sampled_from(
        (
            {"kv_bytes_per_token": {"bf16": 65536, "fp8": 32768}, "kv_heads": 4},
            {"gpu_memory_utilization_max": 0.9},
            {"gpu_memory_utilization_max": math.inf},
            {"kv_heads": 10**30},
            {"drafter_depth_max": [{"method": "dflash", "depth": 7, "topology": "dual"}]},
            {"drafter_depth_max": [{"method": "mtp", "depth": -1}]},
            {"gpu_memory_gib": 24, "weights_gib": 18, "reserved_gib": 2},
            {"gpu_memory_gib": 0, "weights_gib": 1e300, "reserved_gib": -5},
            "facts",
        )
    ),
    "bogus_field": st.just(1),
}
CLAIM_FIELD_KEYS = st.lists(
    st.sampled_from(sorted([*CLAIM_FIELDS, "superseded_by"])), max_size=4, unique=True
)


def _claim(draw, index: int, ids: list[str]) -> dict:
    claim_id = draw(
        st.one_of(
            st.just(f"claim-{index}"),
            st.sampled_from(ids) if ids else st.just("first"),  # a duplicate id
            st.sampled_from(("Not_Kebab", "a-", "-a", "", "UPPER", "a" * 300, 5, None, ["x"])),
        )
    )
    claim: dict = {"id": claim_id, "title": f"Claim {index}"}
    status = draw(sampled(STATUSES))
    claim["status"] = status
    if draw(st.booleans()):
        claim["asserted"] = draw(sampled(DATES))
    if status != "active" or draw(st.booleans()):
        claim["retracted"] = draw(sampled(DATES))
        claim["reason"] = draw(sampled(("A harness artefact.", "", 5)))
        claim["replacement"] = "There is no cliff."
    claim["text"] = draw(CLAIM_TEXTS)
    for key in draw(CLAIM_FIELD_KEYS):
        if key == "superseded_by":
            claim[key] = draw(st.sampled_from((*ids, "nowhere")) if ids else st.just("nowhere"))
        else:  # a copy: yaml.safe_dump would write one object in two claims as an alias
            claim[key] = copy.deepcopy(draw(CLAIM_FIELDS[key]))
    return claim


@st.composite
def generated_registry(draw) -> str:
    claims: list[dict] = []
    ids: list[str] = []
    for index in range(draw(st.integers(0, 5))):
        claim = _claim(draw, index, ids)
        claims.append(claim)
        if isinstance(claim["id"], str):
            ids.append(claim["id"])
    version = draw(
        st.sampled_from(("version: 1\n", "version: 1\n", "", "version: 2\n", "version: x\n"))
    )
    text = version + yaml.safe_dump({"claims": claims}, allow_unicode=True, sort_keys=False)
    if one_in(draw, 6):
        text += draw(sampled(("claims: []\n", "claims:\n  - id: again\n", "version: 1\n")))
    return _mutate_once(draw, text, REGISTRY_TOKENS) if one_in(draw, 4) else text


def withdrawn_registry(count: int) -> str:
    """A valid registry of ``count`` retracted claims, each with its own wording."""
    out = ["version: 1", "claims:"]
    for i in range(count):
        out += [
            f"  - id: withdrawn-{i}",
            f"    title: Withdrawn claim {i}",
            "    status: retracted",
            "    asserted: 2026-08-25",
            "    retracted: 2026-09-08",
            f"    reason: Measured wrong on rig {i}.",
            f"    text: The pool on rig {i} holds {i * 7 + 3} sequences of {1000 + i} tokens each.",
            f'    match: ["rig {i} holds {i * 7 + 3} sequences"]',
            f"    replacement: Rig {i} holds fewer sequences.",
        ]
    return "\n".join(out) + "\n"


def registry_texts() -> st.SearchStrategy[str]:
    return st.one_of(
        mutated(st.sampled_from(corpus().registries), REGISTRY_TOKENS, max_ops=3),
        generated_registry(),
    )


# --- .env files and config ------------------------------------------------------------------


@st.composite
def generated_env(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        key = draw(sampled(ENV_KEYS))
        form = draw(st.integers(0, 3))
        if form == 0:
            lines.append(draw(sampled(ENV_TOKENS)).replace("KEY", key))
        else:
            value = draw(
                st.one_of(st.sampled_from(NASTY_NUMBERS), st.sampled_from(("3", "off", "0.95")))
            )
            quote = draw(sampled(("", "", '"', "'")))
            prefix = draw(sampled(("", "", "export ", "  ")))
            lines.append(f"{prefix}{key}={quote}{value}{quote}")
    text = draw(sampled(("\n", "\r\n", "\r"))).join(lines) + "\n"
    return _mutate_once(draw, text, ENV_TOKENS) if one_in(draw, 4) else text


def env_texts() -> st.SearchStrategy[str]:
    return st.one_of(
        mutated(st.sampled_from(corpus().envs), ENV_TOKENS, max_ops=2), generated_env()
    )


@st.composite
def generated_config(draw) -> str:
    lines = [BASE_CONFIG.rstrip("\n")] if draw(st.booleans()) else []
    lines += draw(st.lists(st.sampled_from(CONFIG_TOKENS), max_size=4))
    return "\n".join(lines) + "\n"


def config_texts() -> st.SearchStrategy[str]:
    return st.one_of(
        mutated(st.sampled_from(corpus().configs), CONFIG_TOKENS, max_ops=2), generated_config()
    )


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def base_config(files: dict[str, str]) -> str:
    """The rule cases' settings, naming only globs that select a file of the estate."""
    out = ""
    if any(name.startswith("composes/") for name in files):
        out += 'composes = ["composes/**/*.yml"]\n'
    if any(name.startswith("learnings/") and name.endswith(".md") for name in files):
        out += 'notes = ["learnings/**/*.md"]\n'
    return out


def render_config(options: dict, files: dict[str, str]) -> str:
    out = base_config(files)
    for rule, table in options.items():
        out += f"\n[rules.{json.dumps(rule)}]\n"
        out += "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in table.items())
    return out


# --- whole estates --------------------------------------------------------------------------


@dataclass
class EstateCase:
    """An estate on disk (``files`` by path, as bytes) and the ``guards`` arguments to run in
    its root."""

    files: dict[str, bytes]
    args: tuple[str, ...]
    origin: str = ""

    def size(self) -> int:
        return sum(len(data) for data in self.files.values())

    def text_files(self) -> dict[str, str]:
        return {k: v.decode("utf-8", "replace") for k, v in self.files.items()}


def _kind(path: str) -> str | None:
    if path.startswith("composes/") and path.endswith((".yml", ".yaml")):
        return "compose"
    if path.endswith(".md"):
        return "note"
    if path.endswith("claims.yaml"):
        return "registry"
    if path.endswith(".toml"):
        return "config"
    if path.endswith(".env"):
        return "env"
    if path.endswith((".yml", ".yaml")):  # a statuses catalog, say: YAML all the same
        return "registry"
    return None


MUTATORS: dict[str, Callable[[str], st.SearchStrategy[str]]] = {
    "compose": lambda text: mutated(st.just(text), COMPOSE_TOKENS, max_ops=3),
    "note": lambda text: mutated(st.just(text), NOTE_TOKENS, max_ops=3),
    "registry": lambda text: mutated(st.just(text), REGISTRY_TOKENS, max_ops=2),
    "config": lambda text: mutated(st.just(text), CONFIG_TOKENS, max_ops=2),
    "env": lambda text: mutated(st.just(text), ENV_TOKENS, max_ops=2),
}


ODD_NAMES = (
    "with space",
    "ü ⚠️ 名",
    "a:1:2",
    "#hash",
    "-dash",
    "x" * 200,
    "tab\there",
    "new\nline",
    "\x1b[31mred",
    "quote'\"",
    "back\\slash",
    "%s%n{}",
    ".hidden",
)


def _encode(draw, text: str) -> bytes:
    """UTF-8, now and then with a BOM or a byte that is not UTF-8."""
    data = text.encode("utf-8", "surrogatepass")
    roll = draw(sampled(("utf-8",) * 30 + ("bom", "bad byte")))
    if roll == "bom":
        data = b"\xef\xbb\xbf" + data
    elif roll == "bad byte":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(sampled((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"))) + data[at:]
    return data


@st.composite
def estates(draw, mutate: bool = True) -> EstateCase:
    """A whole estate: a seed estate (a rule case or a fixture estate), some of its files
    mutated, files added (composes, notes, a registry, a config, an ``.env``), and the
    arguments of one ``guards`` run over it."""
    seed = draw(st.sampled_from(corpus().estates))
    files = {k: v for k, v in seed.files.items() if not k.endswith("guards.toml")}
    env = "".join(f"{k}={v}\n" for k, v in (seed.env or {}).items()) or None

    registry = draw(sampled(("keep", "keep", "real", "generated", "mutated", "none")))
    if registry == "real":
        files["claims.yaml"] = corpus().registries[0]
    elif registry == "generated":
        files["claims.yaml"] = draw(generated_registry())
    elif registry == "mutated":
        files["claims.yaml"] = draw(registry_texts())
    elif registry == "none":
        files.pop("claims.yaml", None)

    if mutate and files and one_in(draw, 4):  # numbers only: valid files that reach the rules
        for path in sorted(p for p in files if _kind(p) in ("compose", "registry")):
            for _ in range(draw(st.integers(1, 4))):
                files[path] = _mutate_once(draw, files[path], COMPOSE_TOKENS, NUMERIC_OPS)
        env = draw(generated_env())
    elif mutate and files:
        for path in draw(st.lists(st.sampled_from(sorted(files)), max_size=2, unique=True)):
            kind = _kind(path)
            if kind is not None:
                files[path] = draw(MUTATORS[kind](files[path]))
        for index in range(draw(st.integers(0, 2))):
            if draw(st.booleans()):
                files[f"composes/fuzz-{index}.yml"] = draw(compose_texts())
            else:
                files[f"learnings/fuzz-{index}.md"] = draw(note_texts())

    if mutate and one_in(draw, 8):  # a file with an awkward name
        movable = sorted(p for p in files if p.startswith(("composes/", "learnings/")))
        if movable:
            old = draw(sampled(movable))
            folder, _, name = old.rpartition("/")
            extension = name.rpartition(".")[2]
            files[f"{folder}/{draw(sampled(ODD_NAMES))}.{extension}"] = files.pop(old)

    config = render_config(seed.options, files)
    where = draw(sampled(("guards.toml",) * 5 + ("pyproject", "--config", "none")))
    config_args: list[str] = []
    if mutate and one_in(draw, 4):
        config = draw(st.one_of(config_texts(), MUTATORS["config"](config)))
    if where == "guards.toml":
        files["guards.toml"] = config
    elif where == "pyproject":
        files["pyproject.toml"] = draw(
            st.sampled_from(
                (
                    "[project]\nname = 'x'\n\n" + _under_tool(config),
                    _under_tool(config),
                    "[project]\nname = 'x'\n\n" + _under_tool(config),
                    _under_tool(config),
                    "[tool.other]\nx = 1\n",
                    "tool = 1\n",
                    "[tool]\nguards = 1\n",
                )
            )
        )
        if "[tool.guards" not in files["pyproject.toml"]:
            files["guards.toml"] = config
    elif where == "--config":
        files["settings/guards-settings.toml"] = config
        config_args = ["--config", "settings/guards-settings.toml"]

    command = draw(sampled(("check",) * 17 + ("claims list", "claims show", "claims find")))
    if command == "claims list":
        args = ["claims", "list", *config_args]
    elif command == "claims show":
        args = ["claims", "show", draw(sampled(CLAIM_IDS)), *config_args]
    elif command == "claims find":
        limit = draw(sampled(("5", "0", "1000")))
        args = ["claims", "find", draw(sampled(CLAIM_IDS)), "--limit", limit, *config_args]
    else:
        args = ["check", *config_args]
        if mutate and one_in(draw, 4):
            env = draw(env_texts())
        if env is not None:
            files["my.env"] = env
            args += ["--env-file", "my.env"]
        args += ["--format", draw(sampled(("json", "json", "text")))]
        if one_in(draw, 10):
            args.append("--verbose")
        if one_in(draw, 12):
            args += draw(sampled(AWKWARD_ARGUMENTS))
        if files and one_in(draw, 6):  # pre-commit style: named files
            named = draw(
                st.lists(st.sampled_from(sorted(files)), min_size=1, max_size=3, unique=True)
            )
            args += [name for name in named if not name.endswith((".toml", ".env"))]
    encoded = {path: _encode(draw, text) for path, text in files.items()}
    return EstateCase(encoded, tuple(args), origin=seed.name)


def _under_tool(config: str) -> str:
    """A guards.toml as a pyproject.toml ``[tool.guards]`` table (tables renamed under it)."""
    body = re.sub(r"^\[(?!tool\.)(\[?)", r"[\1tool.guards.", config, flags=re.MULTILINE)
    return "[tool.guards]\n" + body
