"""vLLM: ``vllm serve`` flags -> canonical knobs; the drafter from the entrypoint or command."""

from __future__ import annotations

from dataclasses import replace

from ..script import EnvEntry, Script, ScriptLine, parse_spec_payload, variable_name
from . import Flag, Knob, Token, first_knobs, knob_from, split_flags
from .identity import arguments
from .kvtypes import canonical_kv

FLAGS = {
    "--max-model-len": "max_model_len",
    "--gpu-memory-utilization": "gpu_memory_utilization",
    "--max-num-seqs": "max_num_seqs",
    "--kv-cache-dtype": "kv_cache_dtype",
    "--tensor-parallel-size": "tensor_parallel_size",
    "-tp": "tensor_parallel_size",
    "--pipeline-parallel-size": "pipeline_parallel_size",
    "-pp": "pipeline_parallel_size",
    "--attention-backend": "attention_backend",
    "--dtype": "dtype",
    "--max-num-batched-tokens": "max_num_batched_tokens",
    "--model": "model",
    "--quantization": "quantization",
    "-q": "quantization",
    "--limit-mm-per-prompt": "limit_mm_per_prompt",
    "--language-model-only": "language_model_only",
    "--port": "port",
}
# Flags known to take exactly one value; other flags take the non-flag tokens that follow.
TAKES_VALUE = set(FLAGS) | {
    "--speculative-config",
    "--host",
    "--port",
    "--chat-template",
    "--reasoning-parser",
    "--tool-call-parser",
    "--default-chat-template-kwargs",
    "--override-generation-config",
    "--long-prefill-token-threshold",
}


def knobs(
    tokens: list[Token], script: Script | None, environment: dict[str, EnvEntry]
) -> dict[str, Knob]:
    flags = split_flags(tokens, TAKES_VALUE)
    found = first_knobs(flags, FLAGS)
    served = next((f for f in flags if f.name == "--served-model-name" and f.values), None)
    if served:
        found["served_model_name"] = knob_from("served_model_name", served)
    rest = tokens[arguments([t.text for t in tokens]) :]  # after `vllm serve`, when written
    if "model" not in found and rest and not rest[0].is_flag:
        first = rest[0]
        found["model"] = Knob(
            name="model",
            value=first.text,
            raw=first.raw,
            line=first.line,
            column=first.column,
            end_column=first.end_column,
            source=first.source,
            flag=None,
            variables=first.variables,
            from_env=first.from_env,
        )
    entry = environment.get("VLLM_ATTENTION_BACKEND")
    if "attention_backend" not in found and entry is not None and entry.value:
        found["attention_backend"] = Knob(
            name="attention_backend",
            value=entry.value,
            raw=entry.value,
            line=entry.line,
            column=1,
            source="environment",
        )
    found.update(_drafter(flags, script))
    return found


def _drafter(flags: list[Flag], script: Script | None) -> dict[str, Knob]:
    literal = next((f for f in flags if f.name == "--speculative-config" and f.value), None)
    config = script.spec_config() if script is not None else None
    if literal is not None and not (config and _written_in(literal, script)):
        return _from_command(literal)
    if config is None:
        return {}
    line = config.line
    method = Knob(
        name="drafter_method",
        value=config.method,
        raw=line.raw.strip(),
        line=line.number,
        column=1,
        end_column=line.end_column,
        source="entrypoint",
        flag="--speculative-config",
    )
    name = variable_name(config.depth)
    if name is None:
        note = None if config.depth else "num_speculative_tokens is not set"
        depth = replace(
            method, name="drafter_depth", value=config.depth or None, raw=config.depth, note=note
        )
        return {"drafter_method": method, "drafter_depth": depth}
    assert script is not None
    evaluated = script.evaluate(name)
    where = evaluated.line or line
    depth = replace(
        method,
        name="drafter_depth",
        value=evaluated.value,
        raw=evaluated.raw or config.depth,
        line=where.number,
        column=_column(where),
        end_column=where.end_column,
        variables=evaluated.variables,
        from_env=evaluated.from_env,
        note=evaluated.note,
    )
    return {"drafter_method": method, "drafter_depth": depth}


def _written_in(flag: Flag, script: Script | None) -> bool:
    """The flag is written in the script, whose reading follows its variables to where they
    are assigned."""
    return script is not None and any(line.number == flag.token.line for line in script.lines)


def _from_command(flag: Flag) -> dict[str, Knob]:
    token = flag.value
    assert token is not None
    method, depth = parse_spec_payload(token.text)
    note = "; ".join(u.reason for u in token.unresolved) or None
    knob = knob_from("drafter_method", flag)
    return {
        "drafter_method": replace(knob, value=method, note=None),
        "drafter_depth": replace(knob, name="drafter_depth", value=depth or None, note=note),
    }


def _column(line: ScriptLine) -> int:
    return line.column + len(line.raw) - len(line.raw.lstrip())


def kv_dtype(kv: str | None, dtype: str | None) -> str | None:
    """Canonical KV dtype: ``auto`` follows ``--dtype``; vLLM's ``fp8`` means e4m3."""
    if kv is None:
        return None
    kv = kv.lower()
    if kv == "auto":
        kv = (dtype or "auto").lower()
    return canonical_kv(kv)
