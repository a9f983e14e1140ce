from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.errors import GuardsError
from guards.rules import all_rules
from guards.run.estate import Estate
from guards.run.suite import run
from guards.sources.compose.compose import parse_compose
from guards.sources.config import Config
from guards.sources.registry import empty

from ..conftest import FIXTURES
from ..examples import examples


def knobs(text, env=None, path="c.yml"):
    compose = parse_compose(text, path, env)
    assert len(compose.services) == 1
    return compose.services[0].knobs


def values(text, env=None):
    return {name: knob.value for name, knob in knobs(text, env).items()}


# -- vLLM, drafter built in the entrypoint ----------------------------------------------------


def test_vllm_knobs_take_their_defaults_and_lines(fixture_text):
    found = knobs(fixture_text("composes/vllm-dflash.yml"))
    assert {k: (v.value, v.line, v.source) for k, v in found.items()} == {
        "model": ("/root/.cache/huggingface/qwen3.8-27b-autoround-int4", 58, "command"),
        "served_model_name": ("qwen3.8-27b", 60, "command"),
        "dtype": ("bfloat16", 62, "command"),
        "tensor_parallel_size": ("2", 64, "command"),
        "max_model_len": ("204800", 66, "command"),
        "gpu_memory_utilization": ("0.90", 68, "command"),
        "max_num_seqs": ("1", 71, "command"),
        "kv_cache_dtype": ("bfloat16", 73, "command"),
        "attention_backend": ("FLASH_ATTN", 75, "command"),
        "drafter_method": ("dflash", 52, "entrypoint"),
        "drafter_depth": ("5", 47, "entrypoint"),
        "port": ("8000", 80, "command"),
        "image": ("vllm/vllm-openai:v0.27.1", 25, "image"),
        "gpus": ("all", 30, "deploy"),
    }


def test_knob_keeps_raw_text_and_the_variables_that_control_it(fixture_text):
    found = knobs(fixture_text("composes/vllm-dflash.yml"))
    assert found["max_model_len"].raw == "${MAX_MODEL_LEN:-${CTX:-204800}}"
    assert found["max_model_len"].variables == ("MAX_MODEL_LEN", "CTX")
    assert found["drafter_depth"].raw == "$${SPEC_N:-5}"
    assert found["drafter_depth"].column == 9


def test_env_overlay_overrides_command_defaults(fixture_text):
    found = knobs(
        fixture_text("composes/vllm-dflash.yml"),
        {"MAX_NUM_SEQS": "3", "GPU_MEMORY_UTILIZATION": "0.95", "CTX": "196608"},
    )
    assert found["max_num_seqs"].value == "3"
    assert found["max_num_seqs"].from_env == ("MAX_NUM_SEQS",)
    assert found["gpu_memory_utilization"].value == "0.95"
    assert found["max_model_len"].value == "196608"


def test_spec_n_reaches_the_entrypoint_through_environment(fixture_text):
    depth = knobs(fixture_text("composes/vllm-dflash.yml"), {"SPEC_N": "7"})["drafter_depth"]
    assert depth.value == "7"
    assert depth.from_env == ("SPEC_N",)


@pytest.mark.parametrize("env", [{"SPEC": "off"}, {"SPEC": "0"}, {"SPEC_N": "0"}])
def test_drafter_off_switches(fixture_text, env):
    assert knobs(fixture_text("composes/vllm-dflash.yml"), env)["drafter_depth"].value == "0"


def test_variables_not_forwarded_to_the_container_do_not_reach_bash(fixture_text):
    text = fixture_text("composes/vllm-dflash.yml").replace("      - SPEC_N=${SPEC_N:-}\n", "")
    assert knobs(text, {"SPEC_N": "7"})["drafter_depth"].value == "5"


def test_prefix_cache_default_that_is_a_flag_is_not_taken_as_a_value(fixture_text):
    found = knobs(fixture_text("composes/vllm-dflash.yml"), {"ATTN_BACKEND": "FLASHINFER"})
    assert found["attention_backend"].value == "FLASHINFER"


# -- vLLM, literal --speculative-config in command: --------------------------------------------


def test_literal_spec_config_bare_literals_and_inline_flag_values(fixture_text):
    found = values(fixture_text("composes/vllm-literal-spec.yml"))
    assert found["drafter_method"] == "mtp"
    assert found["drafter_depth"] == "3"
    assert found["max_model_len"] == "262144"
    assert found["gpu_memory_utilization"] == "0.88"
    assert found["kv_cache_dtype"] == "fp8"
    assert found["tensor_parallel_size"] == "8"
    assert found["attention_backend"] == "FLASHINFER"  # from VLLM_ATTENTION_BACKEND
    assert found["gpus"] == "8"


def test_literal_spec_config_follows_the_env_overlay(fixture_text):
    assert (
        values(fixture_text("composes/vllm-literal-spec.yml"), {"SPEC_N": "2"})["drafter_depth"]
        == "2"
    )


def test_mapping_environment_and_bare_pass_through(fixture_text):
    service = parse_compose(fixture_text("composes/vllm-literal-spec.yml"), "c.yml").services[0]
    assert service.environment["HF_HUB_OFFLINE"].value == "0"
    assert service.environment["CUDA_VISIBLE_DEVICES"].value is None
    overlaid = parse_compose(
        fixture_text("composes/vllm-literal-spec.yml"), "c.yml", {"CUDA_VISIBLE_DEVICES": "1"}
    ).services[0]
    assert overlaid.environment["CUDA_VISIBLE_DEVICES"].value == "1"


# -- llama.cpp family ---------------------------------------------------------------------------


def test_llamacpp_folded_command(fixture_text):
    found = knobs(fixture_text("composes/llamacpp-folded.yml"))
    assert found["max_model_len"].value == "131072"
    assert found["max_model_len"].line == 39
    assert found["max_model_len"].column == 10
    assert found["max_num_seqs"].value == "1"
    assert found["kv_cache_dtype"].value == "q8_0"
    assert found["tensor_split"].value == "1,1"
    assert found["drafter_method"].value == "draft-mtp"
    assert (found["drafter_depth"].value, found["drafter_depth"].line) == ("2", 47)
    assert found["model"].value == "/models/qwen3.8-27b/Qwen3.8-27B-MTP-Q5_K_M.gguf"


def test_llamacpp_entrypoint_switch_is_on_off_not_depth(fixture_text):
    text = fixture_text("composes/llamacpp-folded.yml")
    assert values(text, {"MTP_DRAFT_N_MAX": "3"})["drafter_depth"] == "3"
    off = knobs(text, {"SPEC": "off"})["drafter_depth"]
    assert off.value == "0" and off.source == "entrypoint"


def test_ik_llama_inline_depth_mixed_cache_types_and_device_ids(fixture_text):
    found = values(fixture_text("composes/ik-llama.yml"))
    assert found["drafter_method"] == "mtp"
    assert found["drafter_depth"] == "4"
    assert found["kv_cache_dtype"] == "q4_0/q8_0"
    assert found["max_model_len"] == "200000"
    assert found["gpus"] == "1"


def test_llamacpp_without_cache_flags_uses_the_engine_default():
    text = (
        "services:\n  s:\n    image: ghcr.io/ggml-org/llama.cpp:server\n"
        "    command: -m /m.gguf -c 4096\n"
    )
    kv = knobs(text)["kv_cache_dtype"]
    assert (kv.value, kv.source) == ("f16", "engine-default")


# -- resolution failures are reported, not guessed -----------------------------------------------


def test_unset_variable_without_default_is_unresolved():
    text = (
        "services:\n  s:\n    image: vllm/vllm-openai\n    command: [--max-model-len, '${CTX}']\n"
    )
    knob = knobs(text)["max_model_len"]
    assert knob.value is None
    assert knob.note == "CTX is unset and has no default"


def test_required_variable_is_unresolved_with_its_message():
    text = (
        "services:\n  s:\n    image: vllm/vllm-openai\n"
        "    command: [--max-num-seqs, '${SEQS:?pick a concurrency}']\n"
    )
    assert knobs(text)["max_num_seqs"].note == "required: pick a concurrency"


def test_depth_variable_never_assigned_is_unresolved():
    text = (
        "services:\n  s:\n    image: vllm/vllm-openai\n    entrypoint:\n      - bash\n"
        "      - -c\n      - |\n        exec vllm serve --speculative-config "
        '"{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":$$N}"\n'
    )
    knob = knobs(text)["drafter_depth"]
    assert knob.value is None
    assert "never assigned" in knob.note


# -- comments ---------------------------------------------------------------------------------


def test_comment_lines_are_classified(fixture_text):
    compose = parse_compose(fixture_text("composes/vllm-dflash.yml"), "c.yml")
    by_line = {c.line: c for c in compose.comments}
    assert by_line[1].where == "header"
    assert by_line[34].where == "yaml" and "Drafter toggle" in by_line[34].text
    assert by_line[46].where == "script" and "defaults to 5" in by_line[46].text
    assert by_line[39].where == "yaml" and by_line[39].text.strip() == "PCIe only"
    assert by_line[70].where == "yaml" and 47 not in by_line


def test_folded_command_lines_are_not_comments():
    text = "services:\n  s:\n    image: llama.cpp\n    command: >-\n      -c 4096\n      #x\n"
    assert [c.line for c in parse_compose(text, "c.yml").comments] == []


def test_hash_inside_quotes_is_not_a_trailing_comment():
    text = 'services:\n  s:\n    image: "a#b"\n    command: ["x # y"]  # real\n'
    comments = parse_compose(text, "c.yml").comments
    assert [(c.line, c.text) for c in comments] == [(4, " real")]


def test_top_level_extensions_are_kept(fixture_text):
    text = "x-tier: ultrafast\nservices:\n  s:\n    image: vllm/vllm-openai\n"
    assert parse_compose(text, "c.yml").extensions == {"x-tier": "ultrafast"}


def test_x_guards_is_the_compose_s_data_for_its_regions():
    text = (
        "x-guards:\n  model: Qwen (INT4)\n  caveats: [slow]\n  fields: {Vision: none}\n"
        "services:\n  s:\n    image: vllm/vllm-openai\n"
    )
    data = parse_compose(text, "c.yml").data
    assert (data.model, data.caveats, data.fields) == ("Qwen (INT4)", ["slow"], {"Vision": "none"})


@pytest.mark.parametrize(
    "data, message, line",
    [
        ("  modle: x\n", "`x-guards.modle`: extra inputs are not permitted", 2),
        (
            "  model: x\n  caveats:\n    - a\n    - 3\n",
            "`x-guards.caveats.1`: input should be a valid string",
            5,
        ),
        ("  status: [a]\n", "`x-guards.status`: input should be a valid string", 2),
        ("  model: 3\n  bogus: 1\n", "`x-guards.model`: input should be a valid string", 2),
        ("  caveats: null\n", "`x-guards.caveats`: input should be a valid list", 2),
        ("  fields: [a]\n", "`x-guards.fields`: input should be a valid dictionary", 2),
        ("  fields:\n    a: 1\n", "`x-guards.fields.a`: input should be a valid string", 3),
        ("  fields: {1: a}\n", "`x-guards.fields.1.[key]`: input should be a valid string", 2),
        ("  notes: [a, [b]]\n", "`x-guards.notes.1`: input should be a valid string", 2),
    ],
)
def test_x_guards_unknown_keys_and_wrong_types_are_errors_at_their_line(data, message, line):
    text = "x-guards:\n" + data + "services:\n  s:\n    image: vllm/vllm-openai\n"
    with pytest.raises(GuardsError) as caught:
        parse_compose(text, "c.yml")
    assert (caught.value.message, caught.value.line) == (message, line)


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message, line",
    [
        ("", "empty compose file: no YAML content", 1),
        ("# only a comment\n", "empty compose file: no YAML content", 1),
        ("- a\n- b\n", "top level is not a mapping", 1),
        ("version: '3'\nname: x\n", "no top-level `services:` mapping", 1),
        ("services:\n  - a\n", "`services:` is not a mapping", 2),
        ("services:\n  s: 3\n", "service `s` is not a mapping", 2),
        ("services:\n  s:\n    image: ${X:-a\n", "interpolation: unclosed `${`", 3),
        ("services:\n  s:\n    command: [\n", "YAML error", 4),
    ],
)
def test_bad_compose_raises_one_line_error_with_location(text, message, line):
    with pytest.raises(GuardsError) as caught:
        parse_compose(text, "bad.yml")
    assert caught.value.message.startswith(message)
    assert (caught.value.path, caught.value.line) == ("bad.yml", line)


def test_yaml_error_names_its_own_line_and_column():
    with pytest.raises(GuardsError) as caught:
        parse_compose("services:\n  s:\n    image: [a\n  t: b\n", "bad.yml")
    assert str(caught.value).startswith("bad.yml:4:")


FUZZ_BASE = (FIXTURES / "composes" / "vllm-dflash.yml").read_text(encoding="utf-8")
FUZZ_RULES = [rule for rule in all_rules() if "compose" in rule.targets]


@settings(max_examples=examples(150), deadline=None)
@given(
    st.integers(0, len(FUZZ_BASE) - 1),
    st.integers(0, 40),
    st.text(alphabet="${}:-#'\"\n |>[]&*!%@`\\", max_size=6),
)
def test_any_edit_parses_or_raises_a_located_error(at, cut, insert):
    """An edited compose parses, with every comment, knob and finding placed inside the file,
    or raises one error whose line lies within the input (the line after a final newline
    included: the end of the file)."""
    text = FUZZ_BASE[:at] + insert + FUZZ_BASE[at + cut :]
    try:
        compose = parse_compose(text, "fuzz.yml")
    except GuardsError as error:
        assert error.path == "fuzz.yml" and "\n" not in str(error)
        assert error.line is not None and 1 <= error.line <= text.count("\n") + 1
        assert error.column is None or error.column >= 1
    else:
        lines = len(text.splitlines())
        knobs = [k for s in compose.services for k in s.knobs.values()]
        for place in [*compose.comments, *knobs, *compose.services]:
            assert 1 <= place.line <= lines, place
        assert all(place.column >= 1 for place in [*compose.comments, *knobs])
        estate = Estate(Path("."), Config(root=Path(".")), empty(), composes=[compose])
        for finding in run(estate, FUZZ_RULES).findings:
            assert 1 <= finding.line <= finding.end_line <= lines, finding
            assert finding.column >= 1, finding


def test_regions_record_name_args_body_offsets_and_checksum():
    text = (
        "# >>> guards:claim spec-tax-35387\n"
        "# A steady tax.\n"
        "# <<< guards:claim (checksum: 1a2b3c4d)\n"
        "# >>> guards:profile\n"
        "# <<< guards:profile\n"
        "services: {}\n"
    )
    first, second = parse_compose(text, "c.yml").regions
    assert (first.name, first.args, first.line, first.end_line, first.checksum) == (
        "claim",
        "spec-tax-35387",
        1,
        3,
        "1a2b3c4d",
    )
    assert text[first.body_start : first.body_end] == "# A steady tax.\n"
    assert (second.name, second.args, second.checksum) == ("profile", "", None)
    assert second.body_start == second.body_end == text.index("# <<< guards:profile")
