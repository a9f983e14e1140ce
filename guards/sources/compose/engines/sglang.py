"""SGLang: ``python -m sglang.launch_server`` / ``sglang serve`` flags -> canonical knobs.

The flag names and aliases are SGLang's own (``docs/advanced_features/server_arguments.md`` and
``python/sglang/srt/server_args.py`` in sgl-project/sglang). Its argparse parser also accepts
unambiguous abbreviations; only the two its documentation uses (``--tp``, ``--dp``) are read,
the others are not guessed. ``--mem-fraction-static`` (weights and KV pool as a fraction of
the card) is the canonical ``gpu_memory_utilization``. Flags in the command win; a bash
entrypoint's own flags (``--speculative-num-steps "$$_spec_n"``) fill in the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from ...numbers import to_count
from ..interpolate import TemplateError, interpolate
from ..script import EnvEntry, Script, ScriptLine, variable_name
from . import Flag, Knob, Token, first_knobs, knob_from, split_flags

FLAGS = {
    "--context-length": "max_model_len",
    "--mem-fraction-static": "gpu_memory_utilization",
    "--max-running-requests": "max_num_seqs",
    "--tp-size": "tensor_parallel_size",
    "--tensor-parallel-size": "tensor_parallel_size",
    "--tp": "tensor_parallel_size",  # abbreviation of --tp-size used by SGLang's docs
    "--pp-size": "pipeline_parallel_size",
    "--pipeline-parallel-size": "pipeline_parallel_size",
    "--dp-size": "data_parallel_size",
    "--data-parallel-size": "data_parallel_size",
    "--dp": "data_parallel_size",  # abbreviation of --dp-size used by SGLang's docs
    "--kv-cache-dtype": "kv_cache_dtype",
    "--dtype": "dtype",
    "--quantization": "quantization",
    "--model-path": "model",
    "--model": "model",
    "--served-model-name": "served_model_name",
    "--port": "port",
    "--speculative-algorithm": "drafter_method",
    "--speculative-num-steps": "drafter_depth",
    "--speculative-num-draft-tokens": "speculative_num_draft_tokens",
    "--speculative-eagle-topk": "speculative_eagle_topk",
    "--speculative-draft-model-path": "draft_model",
    "--speculative-draft-model": "draft_model",
}
SWITCHES = {"--enable-dp-attention": "enable_dp_attention"}  # flags that take no value
# Flags that take exactly one value; other flags take the non-flag tokens that follow.
TAKES_VALUE = set(FLAGS) | {
    "--host",
    "--config",
    "--model-type",
    "--tokenizer-path",
    "--tokenizer-mode",
    "--revision",
    "--load-format",
    "--chat-template",
    "--hf-chat-template-name",
    "--completion-template",
    "--reasoning-parser",
    "--tool-call-parser",
    "--tool-server",
    "--sampling-defaults",
    "--default-chat-template-kwargs",
    "--preferred-sampling-params",
    "--json-model-override-args",
    "--api-key",
    "--weight-version",
    "--chunked-prefill-size",
    "--max-prefill-tokens",
    "--max-total-tokens",
    "--max-queued-requests",
    "--page-size",
    "--schedule-policy",
    "--schedule-conservativeness",
    "--swa-full-tokens-ratio",
    "--attention-backend",
    "--prefill-attention-backend",
    "--decode-attention-backend",
    "--sampling-backend",
    "--grammar-backend",
    "--mm-attention-backend",
    "--moe-runner-backend",
    "--fp8-gemm-backend",
    "--mamba-ssm-dtype",
    "--cuda-graph-max-bs",
    "--torch-compile-max-bs",
    "--ep-size",
    "--expert-parallel-size",
    "--ep",
    "--nnodes",
    "--node-rank",
    "--dist-init-addr",
    "--dist-timeout",
    "--nccl-port",
    "--base-gpu-id",
    "--gpu-id-step",
    "--random-seed",
    "--watchdog-timeout",
    "--stream-interval",
    "--log-level",
    "--speculative-draft-model-revision",
    "--speculative-draft-load-format",
    "--speculative-draft-model-quantization",
    "--speculative-draft-attention-backend",
    "--speculative-attention-mode",
    "--speculative-token-map",
    "--speculative-dflash-block-size",
}
# --speculative-algorithm (upper case in SGLang) -> the method names the registry uses.
# NEXTN runs a model's own MTP layers (SGLang turns it into EAGLE internally); STANDALONE is
# a separate small draft model.
METHODS = {
    "eagle": "eagle",
    "eagle3": "eagle3",
    "nextn": "mtp",
    "standalone": "draft_model",
    "ngram": "ngram",
    "dflash": "dflash",
    "dspark": "dspark",
}
WORD = r"(\"[^\"]*\"|'[^']*'|[^\s\"';)]+)"  # one shell word: quoted, or up to a space or `)`
SCRIPT_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(?:=|\s+)" + WORD)


def knobs(
    tokens: list[Token], script: Script | None, environment: dict[str, EnvEntry]
) -> dict[str, Knob]:
    """``environment`` is the dialects' common signature; SGLang reads no variable by name."""
    flags = split_flags(tokens, TAKES_VALUE)
    found = first_knobs(flags, {**SWITCHES, **FLAGS}, _knob)
    if "model" not in found:
        found.update(_positional_model(tokens, script))
    if script is not None:
        for name, knob in _script_knobs(script).items():
            found.setdefault(name, knob)
    return _drafter(found)


def _knob(name: str, flag: Flag) -> Knob:
    if flag.name in SWITCHES:  # a switch never takes a value: what follows is not its own
        return knob_from(name, Flag(flag.name, flag.token))
    return knob_from(name, flag)


def _positional_model(tokens: list[Token], script: Script | None) -> dict[str, Knob]:
    """``sglang serve MODEL``: the first argument after ``serve`` when it is not a flag."""
    start = next(
        (
            i + 2
            for i, token in enumerate(tokens[:-1])
            if token.text.rsplit("/", 1)[-1] == "sglang" and tokens[i + 1].text == "serve"
        ),
        None,
    )
    if start is None and script is not None and script.runs("sglang serve"):
        start = 0  # the command is the script's "$@"
    if start is None or start >= len(tokens) or tokens[start].is_flag:
        return {}
    first = tokens[start]
    model = Knob(
        name="model",
        value=first.text,
        raw=first.raw,
        line=first.line,
        column=first.column,
        end_column=first.end_column,
        source="command",
        variables=first.variables,
        from_env=first.from_env,
    )
    return {"model": model}


def _script_knobs(script: Script) -> dict[str, Knob]:
    """The known flags the entrypoint script passes itself, first occurrence of each."""
    found: dict[str, Knob] = {}
    for line in script.lines:
        if line.text.lstrip().startswith("#"):
            continue
        for match in SCRIPT_FLAG.finditer(line.text):
            name = FLAGS.get(match.group(1))
            if name and name not in found:
                found[name] = _script_knob(name, match.group(1), match.group(2), line, script)
        for flag, name in SWITCHES.items():
            if name not in found and (switch := _script_switch(name, flag, line)):
                found[name] = switch
    return found


def _script_switch(name: str, flag: str, line: ScriptLine) -> Knob | None:
    at = re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", line.raw)
    if at is None:
        return None
    return Knob(
        name=name,
        value="true",
        raw=flag,
        line=line.number,
        column=line.column + at.start(),
        end_column=line.column + at.end() if line.in_file else 0,
        source="entrypoint",
        flag=flag,
    )


def _script_knob(name: str, flag: str, word: str, line: ScriptLine, script: Script) -> Knob:
    written = re.compile(r"(?<![\w-])" + re.escape(flag) + r"(?:=|\s+)" + WORD).search(line.raw)
    knob = Knob(
        name=name,
        value=_unquote(word),
        raw=_unquote(written.group(1)) if written else _unquote(word),
        line=line.number,
        column=line.column + (written.start(1) if written else 0),
        end_column=line.column + written.end(1) if written and line.in_file else 0,
        source="entrypoint",
        flag=flag,
    )
    if word.startswith("'"):  # bash expands nothing in single quotes
        return knob
    variable = variable_name(knob.value or "")
    if variable is not None:
        return _evaluated(knob, variable, script)
    if "$" in (knob.value or ""):
        return _expanded(knob, knob.value or "", script)
    return knob


def _evaluated(knob: Knob, variable: str, script: Script) -> Knob:
    """``--flag "$var"``: the variable's value where the script assigns it."""
    evaluated = script.evaluate(variable)
    where = evaluated.line
    return replace(
        knob,
        value=evaluated.value,
        raw=evaluated.raw or knob.raw,
        line=where.number if where else knob.line,
        column=_indent_column(where) if where else knob.column,
        end_column=where.end_column if where else knob.end_column,
        variables=evaluated.variables,
        from_env=evaluated.from_env,
        note=evaluated.note,
    )


def _expanded(knob: Knob, text: str, script: Script) -> Knob:
    """``--flag "${VAR:-3}"``: expanded against the container's environment."""
    try:
        value = interpolate(text, script.container_env(), unescape=False)
    except TemplateError as exc:  # bash has expansions compose does not (${#x}, ${x/a/b})
        return replace(knob, value=None, note=f"cannot evaluate `{text}`: {exc}")
    sources: list[str] = []
    for name in value.from_env:
        entry = script.env.get(name)
        if entry is not None and entry.interpolated is not None:
            sources.extend(entry.interpolated.from_env)
    return replace(
        knob,
        value=value.text if value.resolved else None,
        variables=value.variables,
        from_env=tuple(dict.fromkeys(sources)),
        note="; ".join(u.reason for u in value.unresolved) or None,
    )


def _drafter(found: dict[str, Knob]) -> dict[str, Knob]:
    """The drafter exists only with --speculative-algorithm; without --speculative-num-steps
    SGLang picks the depth for the model, which the compose does not say."""
    method = found.get("drafter_method")
    if method is None:
        found.pop("drafter_depth", None)
        return found
    found["drafter_method"] = replace(method, value=method_name(method.value))
    if "drafter_depth" not in found:
        found["drafter_depth"] = replace(
            method,
            name="drafter_depth",
            value=None,
            raw="",
            flag="--speculative-num-steps",
            variables=(),
            from_env=(),
            note="no --speculative-num-steps: SGLang picks the depth for the model",
        )
    return found


def data_parallel(knobs: Mapping[str, Knob]) -> int | None:
    """How many copies of the TP × PP group of cards the server runs: ``--dp-size`` (1 by
    default), or 1 with ``--enable-dp-attention``, where the DP ranks split attention across
    the TP group's own cards. None when ``--dp-size`` is not a positive count."""
    if "enable_dp_attention" in knobs:
        return 1
    knob = knobs.get("data_parallel_size")
    if knob is None:
        return 1
    return to_count(knob.value) or None


def method_name(algorithm: str | None) -> str | None:
    """``EAGLE3`` -> ``eagle3``, ``NEXTN`` -> ``mtp``; other names in lower case."""
    if not algorithm:
        return None
    return METHODS.get(algorithm.lower(), algorithm.lower())


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
        return word[1:-1]
    return word


def _indent_column(line: ScriptLine) -> int:
    return line.column + len(line.raw) - len(line.raw.lstrip())
