"""tools/engine_facts.py reads the engines' sources as text: its readers on small snippets
written in each engine's style."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("engine_facts", ROOT / "tools" / "engine_facts.py")
assert _spec and _spec.loader
facts = importlib.util.module_from_spec(_spec)
sys.modules["engine_facts"] = facts
_spec.loader.exec_module(facts)


def _names(options):
    return {n: o for o in options for n in o.names}


def test_argparse_calls_with_aliases_types_choices_and_booleans():
    text = """
import argparse
def add(parser):
    parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    parser.add_argument("--kv-cache-dtype", choices=["auto", "fp8"], default="auto")
    parser.add_argument("--enforce-eager", action="store_true")
    parser.add_argument("--prefix-caching", action=argparse.BooleanOptionalAction)
    parser.add_argument("model_tag")
"""
    names = _names(facts.parse_argparse(text))
    assert names["-tp"].names[0] == "--tensor-parallel-size" and names["-tp"].type == "int"
    assert names["--kv-cache-dtype"].choices == ["auto", "fp8"]
    assert names["--enforce-eager"].type == "bool"
    assert "--no-prefix-caching" in names and "model_tag" not in names


def test_flags_made_from_a_dataclass_and_splatted_config_fields():
    config = """
from dataclasses import dataclass
from typing import Literal
@dataclass
class ModelConfig:
    max_model_len: int = 0
    tokenizer_mode: Literal["auto", "slow"] = "auto"
    trust_remote_code: bool = False
"""
    text = """
class BaseFrontendArgs:
    host: str | None = None
    @classmethod
    def add_cli_args(cls, parser):
        kwargs = get_kwargs(cls)
        for key, value in kwargs.items():
            parser.add_argument(f"--{key.replace('_', '-')}", **value)
class FrontendArgs(BaseFrontendArgs):
    port: int = 8000
def engine(parser):
    model_kwargs = get_kwargs(ModelConfig)
    parser.add_argument("--max-model-len", **model_kwargs["max_model_len"])
    parser.add_argument("--tokenizer-mode", **model_kwargs["tokenizer_mode"])
    parser.add_argument("--trust-remote-code", **model_kwargs["trust_remote_code"])
"""
    names = _names(facts.parse_argparse(text, facts.dataclass_fields(config)))
    assert {"--host", "--port"} <= set(names)
    assert names["--max-model-len"].type == "int"
    assert names["--tokenizer-mode"].choices == ["auto", "slow"]
    assert "--no-trust-remote-code" in names


def test_annotated_fields_in_sglang_style():
    text = """
class Parallel(msgspec.Struct):
    tp_size: A[int, Arg(help="tp", cli_name="--tp-size", aliases=["--tensor-parallel-size"])] = 1
    attention_backend: A[Optional[str], Arg(help="b", choices=["fa3", "triton"])] = None
    enable_dp_attention: A[bool, "dp attention"] = False
    hidden: A[int, Arg(no_cli=True)] = 0
    plain: int = 0
"""
    names = _names(facts.parse_annotated_fields(text))
    assert names["--tensor-parallel-size"].names[0] == "--tp-size"
    assert names["--attention-backend"].choices == ["fa3", "triton"]
    assert names["--enable-dp-attention"].type == "bool"
    assert "--hidden" not in names and "--plain" not in names


def test_llama_cpp_options_for_the_server_and_their_variables():
    text = r"""
    add_opt(common_arg(
        {"-c", "--ctx-size"}, "N",
        string_format("size of the prompt context (default: %d)", params.n_ctx),
        [](common_params & params, int value) { params.n_ctx = value; }
    ).set_env("LLAMA_ARG_CTX_SIZE"));
    add_opt(common_arg(
        {"--mmap"},
        {"--no-mmap"},
        "whether to memory-map the model (it's \"fast\")",
        [](common_params & params, bool value) { params.use_mmap = value; /* ) } */ }
    ).set_env("LLAMA_ARG_MMAP"));
    add_opt(common_arg(
        {"-p", "--prompt"}, "PROMPT",
        "prompt to start generation with",
        [](common_params & params, const std::string & value) { params.prompt = value; }
    ).set_examples({LLAMA_EXAMPLE_COMPLETION}).set_excludes({LLAMA_EXAMPLE_SERVER}));
    add_opt(common_arg(
        {"--port"}, "PORT", "port to listen (default: %d)",
        [](common_params & params, int value) { char c = ')'; params.port = value; }
    ).set_examples({LLAMA_EXAMPLE_SERVER}).set_env("LLAMA_ARG_PORT"));
"""
    options, env = facts.parse_arg_cpp(text)
    names = _names(options)
    assert names["-c"].names[0] == "--ctx-size" and names["-c"].type == "N"
    assert names["--no-mmap"].type == "bool" and "--prompt" not in names
    assert "--port" in names
    assert {"LLAMA_ARG_CTX_SIZE", "LLAMA_ARG_MMAP", "LLAMA_ARG_NO_MMAP", "LLAMA_ARG_PORT"} <= env


def test_environment_names_are_whole_words_under_the_prefixes():
    text = 'x = os.getenv("VLLM_HOST_IP")\nenv = {"VLLM_PORT": 1}\nf"VLLM_{name}"\nMYVLLM_X'
    assert facts.env_names(text, ("VLLM_",)) == {"VLLM_HOST_IP", "VLLM_PORT"}


def test_merge_keeps_spans_and_the_newest_declaration():
    old = facts.Release("0.1.0", [facts.Option(["--a", "-a"], "int")], {"VLLM_A": "envs.py"})
    mid = facts.Release("0.2.0", [facts.Option(["--b"])], {"VLLM_A": "envs.py"})
    new = facts.Release("0.3.0", [facts.Option(["--a"], "float")], {})
    for release in (old, mid, new):
        release.files = {n: "arg_utils.py" for o in release.options for n in o.names}
    data = facts.merge("vllm", "vllm", [old, mid, new])
    assert data["flags"]["--a"]["in"] == [["0.1.0", "0.1.0"], ["0.3.0", "0.3.0"]]
    assert data["flags"]["--a"]["type"] == "float"
    assert data["flags"]["-a"]["alias_of"] == "--a"
    assert data["env"]["VLLM_A"]["in"] == [["0.1.0", "0.2.0"]]


SPECULATIVE = """
from typing import Literal, Optional
from pydantic.dataclasses import dataclass
MTPModelTypes = Literal["deepseek_mtp", "mtp"]
EagleModelTypes = Literal["eagle", "eagle3", MTPModelTypes]
SpeculativeMethod = Literal["ngram", "suffix", EagleModelTypes]
@config
@dataclass
class SpeculativeConfig:
    num_speculative_tokens: int = None
    model: Optional[str] = None
    method: Optional[SpeculativeMethod] = None
    def __post_init__(self):
        if self.model is None and self.num_speculative_tokens is not None:
            if self.method == "mtp":
                self.model = self.target_model_config.model
        if self.method in ("ngram", "[ngram]"):
            self.prompt_lookup_max = 5
        elif self.method == "suffix":
            self._validate_suffix()
        else:
            if self.model is not None:
                n_predict = getattr(self.draft_model_config.hf_config, "n_predict", None)
                if n_predict is not None and self.num_speculative_tokens is None:
                    self.num_speculative_tokens = n_predict
    def _validate_suffix(self):
        if self.num_speculative_tokens is None:
            self.num_speculative_tokens = self.suffix_max_depth
    def _verify_args(self):
        if self.num_speculative_tokens is None:
            raise ValueError("num_speculative_tokens must be provided")
"""


def test_speculative_methods_through_literal_aliases_and_where_a_count_comes_from():
    found = facts.parse_speculative(SPECULATIVE, "vllm/config/speculative.py")
    assert found.methods == ["ngram", "suffix", "eagle", "eagle3", "deepseek_mtp", "mtp"]
    assert found.count_required
    assert found.count_defaults == ["suffix"]  # mtp's model is set only with a count given
    assert found.count_keys == ["model"]  # a draft model's n_predict


def test_a_free_string_or_a_standard_dataclass_takes_any_method():
    free = SPECULATIVE.replace("method: Optional[SpeculativeMethod]", "method: Optional[str]")
    assert facts.parse_speculative(free).methods is None
    standard = SPECULATIVE.replace("from pydantic.dataclasses import", "from dataclasses import")
    assert facts.parse_speculative(standard).methods is None
    assert facts.parse_speculative("class ModelConfig:\n    method: str = ''\n") is None


def test_no_count_check_without_an_unconditional_raise():
    lenient = SPECULATIVE.replace(
        "        if self.num_speculative_tokens is None:\n            raise",
        "        if self.num_speculative_tokens is None and self.strict:\n            raise",
    )
    assert not facts.parse_speculative(lenient).count_required


def test_the_speculative_data_gives_each_method_its_releases():
    def release(version, methods):
        spec = facts.Speculative("f.py", methods, True, ["suffix"] if methods else [], ["model"])
        return facts.Release(version, speculative=spec)

    data = facts.merge(
        "vllm",
        "vllm",
        [release("0.9.0", None), release("0.9.1", ["ngram"]), release("0.10.0", ["ngram", "mtp"])],
    )["speculative"]
    assert data["checked"] == [["0.9.1", "0.10.0"]]
    assert data["count_required"] == [["0.9.0", "0.10.0"]]
    assert data["methods"]["mtp"]["in"] == [["0.10.0", "0.10.0"]]
    assert data["count_defaults"]["suffix"]["in"] == [["0.9.1", "0.10.0"]]
    assert data["count_keys"]["model"]["in"] == [["0.9.0", "0.10.0"]]
