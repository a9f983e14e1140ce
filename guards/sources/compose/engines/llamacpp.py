"""llama.cpp and its forks (ik_llama.cpp, beellama): ``llama-server`` flags -> knobs.

The depth lives on the command line (``--spec-draft-n-max``, ik_llama's
``--spec-type mtp:n_max=N``). The entrypoint's ``$${SPEC_N:-1}`` is only an on/off switch:
when it is 0 the script strips the drafter flags.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..script import Script
from . import Flag, Knob, Token, first_knobs, knob_from, split_flags

FLAGS = {
    "-c": "max_model_len",
    "--ctx-size": "max_model_len",
    "-np": "max_num_seqs",
    "--parallel": "max_num_seqs",
    "-ctk": "cache_type_k",
    "--cache-type-k": "cache_type_k",
    "-ctv": "cache_type_v",
    "--cache-type-v": "cache_type_v",
    "-ts": "tensor_split",
    "--tensor-split": "tensor_split",
    "-sm": "split_mode",
    "--split-mode": "split_mode",
    "-fa": "flash_attn",
    "--flash-attn": "flash_attn",
    "-m": "model",
    "--model": "model",
    "-md": "draft_model",
    "--model-draft": "draft_model",
    "--spec-draft-model": "draft_model",
    "--alias": "served_model_name",
    "-ngl": "n_gpu_layers",
    "--n-gpu-layers": "n_gpu_layers",
    "-mm": "mmproj",  # the vision projector (docs/multimodal.md)
    "--mmproj": "mmproj",
    "-mmu": "mmproj",
    "--mmproj-url": "mmproj",
    "--no-mmproj": "no_mmproj",
    "-hf": "hf_repo",  # loads the repository's projector too, unless --no-mmproj
    "--hf-repo": "hf_repo",
    "--port": "port",
}
DEPTH_FLAGS = ("--spec-draft-n-max", "--draft-max", "--draft-n-max", "--draft")
TAKES_VALUE = (
    set(FLAGS)
    | set(DEPTH_FLAGS)
    | {
        "--spec-type",
        "--host",
        "--port",
        "-b",
        "-ub",
        "-t",
        "-ot",
        "-devd",
        "-ngld",
        "--temp",
        "--top-p",
        "--top-k",
        "--min-p",
        "--reasoning",
        "--reasoning-format",
        "--repeat-penalty",
        "--repeat-last-n",
        "--moe-cache",
        "--fit",
        "--batch-size",
        "--ubatch-size",
    }
)
DEFAULT_CACHE_TYPE = "f16"


def knobs(tokens: list[Token], script: Script | None, service_line: int) -> dict[str, Knob]:
    flags = split_flags(tokens, TAKES_VALUE)
    found = first_knobs(flags, FLAGS)
    found["kv_cache_dtype"] = _kv(found, service_line)
    found.update(_drafter(flags, found, script))
    return found


def _kv(found: dict[str, Knob], service_line: int) -> Knob:
    k, v = found.get("cache_type_k"), found.get("cache_type_v")
    if k is None and v is None:
        return Knob(
            name="kv_cache_dtype",
            value=DEFAULT_CACHE_TYPE,
            raw="",
            line=service_line,
            column=1,
            source="engine-default",
            note="no -ctk/-ctv: llama.cpp caches K and V as f16",
        )
    first = k or v
    assert first is not None
    k_value = k.value if k else DEFAULT_CACHE_TYPE
    v_value = v.value if v else DEFAULT_CACHE_TYPE
    value = k_value if k_value == v_value else f"{k_value}/{v_value}"
    if k_value is None or v_value is None:
        value = None
    variables = tuple(dict.fromkeys((k.variables if k else ()) + (v.variables if v else ())))
    from_env = tuple(dict.fromkeys((k.from_env if k else ()) + (v.from_env if v else ())))
    return Knob(
        name="kv_cache_dtype",
        value=value,
        raw=first.raw,
        line=first.line,
        column=first.column,
        end_column=first.end_column,
        source="command",
        flag=first.flag,
        variables=variables,
        from_env=from_env,
        note=first.note,
    )


def _drafter(flags: list[Flag], found: dict[str, Knob], script: Script | None) -> dict[str, Knob]:
    spec_type = next((f for f in flags if f.name == "--spec-type" and f.value), None)
    depth_flag = next((f for f in flags if f.name in DEPTH_FLAGS and f.value), None)
    if spec_type is None and depth_flag is None and "draft_model" not in found:
        return {}
    out: dict[str, Knob] = {}
    inline_depth = None
    if spec_type is not None:
        method_knob = knob_from("drafter_method", spec_type)
        text = method_knob.value or ""
        method, _, params = text.partition(":")
        inline = re.search(r"(?:^|,)n_max=([^,]*)", params)
        if inline:
            inline_depth = inline.group(1)
        out["drafter_method"] = replace(method_knob, value=method or None)
    else:
        draft = found.get("draft_model")
        if draft is not None:
            line, column = draft.line, 1
        else:  # only a depth flag: the method is implied where the depth is given
            assert depth_flag is not None  # else returned above
            depth_at = knob_from("drafter_depth", depth_flag)
            line, column = depth_at.line, depth_at.column
        out["drafter_method"] = Knob(
            name="drafter_method",
            value="draft_model",
            raw=draft.raw if draft else "",
            line=line,
            column=column,
            source="command",
            flag="-md",
        )
    if depth_flag is not None:
        depth = knob_from("drafter_depth", depth_flag)
    elif spec_type is not None and inline_depth is not None:
        base = knob_from("drafter_depth", spec_type)
        depth = replace(base, value=inline_depth if base.value is not None else None)
    else:
        anchor = out["drafter_method"]
        depth = Knob(
            name="drafter_depth",
            value=None,
            raw="",
            line=anchor.line,
            column=anchor.column,
            source="command",
            note="no --spec-draft-n-max: the engine's default depth applies",
        )
    out["drafter_depth"] = _switched_off(depth, script)
    return out


def _switched_off(depth: Knob, script: Script | None) -> Knob:
    """Depth 0 when the entrypoint's SPEC_N switch strips the drafter flags."""
    switch = script.spec_switch() if script is not None else None
    if switch is None:
        return depth
    assert script is not None
    state = script.evaluate(switch)
    if state.value != "0":
        return depth
    return replace(
        depth,
        value="0",
        raw=state.raw,
        line=state.line.number if state.line else depth.line,
        end_column=0 if state.line else depth.end_column,
        source="entrypoint",
        variables=state.variables,
        from_env=state.from_env,
        note="the entrypoint removes the drafter flags (SPEC_N=0)",
    )
