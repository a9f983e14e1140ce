"""The statement readers, one layout at a time: the exact statements each reads from a small
text, and the look-alikes each leaves alone."""

from guards.facts import knobwords
from guards.facts.said import Statement, compose_statements, modelfile_statements, note_statements
from guards.facts.subjects import subjects
from guards.sources.compose.compose import parse_compose
from guards.sources.modelfile import parse_modelfile
from guards.sources.notes.notes import parse_note


def rows(statements: list[Statement]) -> list[tuple]:
    return [(s.subject, s.knob, s.value, s.line, s.column, s.layout) for s in statements]


def said(text: str, path: str = "docs/n.md") -> list[tuple]:
    return rows(note_statements(parse_note(text, path)))


def test_default_table_reads_one_statement_per_variable_row():
    text = (
        "| Variable | Default | Description |\n"
        "|---|---|---|\n"
        "| `CTX_LEN` | `4096` | the window |\n"
        "| `NUM_SLOTS` | — | unset |\n"
        "| not a variable | 3 | prose |\n"
    )
    assert said(text) == [(None, "CTX_LEN", "4096", 3, 16, "table")]


def test_knob_table_reads_subject_rows_under_knob_headers():
    text = (
        "| Service | Context | Host port | Container port |\n"
        "|---|---|---|---|\n"
        "| chat-llm | 32K | 8001 | 8000 |\n"
    )
    assert said(text) == [
        ("chat-llm", "max_model_len", "32K", 3, 14, "table"),
        ("chat-llm", "port", "8001", 3, 20, "table"),
        ("chat-llm", "container_port", "8000", 3, 27, "table"),
    ]


def test_listing_block_and_its_maps_to_alias():
    text = (
        "```\n"
        "APP_URL        http://x:1\n"
        '# Maps to the "ENGINE_CTX" variable of the container\n'
        "APP_ENGINE_CTX   2048\n"
        "```\n"
    )
    assert said(text) == [
        (None, "APP_URL", "http://x:1", 2, 16, "block"),
        (None, "APP_ENGINE_CTX", "2048", 4, 18, "block"),
        (None, "ENGINE_CTX", "2048", 4, 18, "block"),
    ]


def test_a_single_listing_line_is_not_a_catalog():
    assert said("```\nAPP_URL   http://x:1\n```\n") == []


def test_sentences_state_defaults_and_local_ports():
    text = "By default `APP_MODEL_NAME` is set to `small-7b`; override it if needed.\nOpen http://localhost:3000/ to use Chat UI.\n"
    found = note_statements(parse_note(text, "docs/n.md"))
    assert [(s.knob, s.value, s.line, s.column, s.layout) for s in found] == [
        ("APP_MODEL_NAME", "small-7b", 1, 40, "sentence"),
        ("port", "3000", 2, 23, "sentence"),
    ]
    assert found[1].mention and "Chat UI" in (found[1].subject or "")


def test_an_instruction_to_set_a_variable_is_not_a_default():
    assert said("Set `APP_MODEL_NAME` to `big-70b` for more accuracy.\n") == []


def test_shell_examples_give_engine_flags_in_any_spelling():
    text = "```sh\nllama-server -m x.gguf -c 8192 -np 2\nvllm serve m --max-model-len=4096\n```\n"
    assert said(text) == [
        (None, "max_model_len", "8192", 2, 27, "shell"),
        (None, "max_num_seqs", "2", 2, 36, "shell"),
        (None, "max_model_len", "4096", 3, 30, "shell"),
    ]


def test_compose_comments_above_and_under_an_entry():
    text = (
        "services:\n"
        "  app:\n"
        "    image: x\n"
        "    environment:\n"
        "      # Enable the cache by default\n"
        "      - USE_CACHE=${USE_CACHE:-0}\n"
        "      - MODE=${MODE:-fast}\n"
        "        # Impact: picks the kernel; default: fast\n"
        "      - HOST=0.0.0.0\n"
        "        # Default is 127.0.0.1 (the engine's own)\n"
        "      # USE_CACHE=1\n"
    )
    found = compose_statements(parse_compose(text, "c.yml"))
    assert [(s.subject, s.knob, s.value, s.line, s.column) for s in found] == [
        ("app", "USE_CACHE", "on", 5, 9),
        ("app", "MODE", "fast", 8, 46),
    ]


def test_compose_comment_on_a_flag_names_its_knob():
    text = (
        "services:\n"
        "  llm:\n"
        "    image: vllm/vllm-openai:v0.27.1\n"
        "    command:\n"
        "      # 32K context\n"
        "      - --max-model-len=32768\n"
        "      - --max-num-seqs=4   # the batch: 8 at most\n"
    )
    found = compose_statements(parse_compose(text, "c.yml"))
    assert found == [
        Statement("llm", "max_model_len", "32K", "c.yml", 5, 9, "comment"),
    ]


def test_vocabulary_has_one_name_for_every_engine_spelling():
    for flag in ("--max-model-len", "-c", "--ctx-size", "--context-length"):
        assert knobwords.knob_of_flag(flag) == "max_model_len"
    for flag in ("--max-num-seqs", "-np", "--max-running-requests"):
        assert knobwords.knob_of_flag(flag) == "max_num_seqs"
    assert knobwords.knob_of_flag("--mem-fraction-static") == "gpu_memory_utilization"
    assert "OLLAMA_CONTEXT_LENGTH" in knobwords.vocabulary()["max_model_len"].variables
    assert "OLLAMA_NUM_PARALLEL" in knobwords.vocabulary()["max_num_seqs"].variables
    assert knobwords.knob_of_key("num_ctx") == "max_model_len"
    assert knobwords.knob_of_words("Context length") == "max_model_len"
    assert knobwords.knob_of_words("Context and KV cache type") is None  # two knobs


def test_subjects_resolve_by_name_path_stem_and_served_name():
    one = parse_compose(
        "services:\n  chat-ui:\n    image: x\n    ports: ['8080:8080']\n", "stack/ui.yml"
    )
    two = parse_compose(
        "services:\n  llm:\n    image: vllm/vllm-openai:v0.27.1\n"
        "    command: [--served-model-name, qwen-small]\n",
        "stack/models/llm.yml",
    )
    known = subjects([one, two])
    assert [t.service.name for t in known.resolve("Chat UI") or []] == ["chat-ui"]
    assert [t.service.name for t in known.resolve("models/llm.yml") or []] == ["llm"]
    assert [t.service.name for t in known.resolve("stack/…/llm.yml") or []] == ["llm"]
    assert [t.service.name for t in known.resolve("qwen-small") or []] == ["llm"]
    assert known.resolve("nothing-here") is None
    assert known.mentioned("Open the Chat UI, then ask qwen-small") is None  # two services
    assert [t.service.name for t in known.mentioned("Open the Chat UI now") or []] == ["chat-ui"]


def test_gpu_table_reads_ids_with_the_container_column_as_another_name():
    text = "| Service | Container Name | Default GPU ID |\n|---|---|---|\n| LLM | `llm-ms` | 1 |\n"
    found = note_statements(parse_note(text, "docs/n.md"))
    assert [(s.subject, s.names, s.knob, s.value, s.line, s.column) for s in found] == [
        ("LLM", ("llm-ms",), "gpu_ids", "1", 3, 20),
    ]


def test_gpu_sentences_give_cards_per_service_counts_and_tensor_parallel():
    text = (
        "GPU 0: embedder; GPU 1, 2: chat-llm.\n"
        "The chat-llm service requires 2 GPUs (TP2). The stack needs 3 x H100.\n"
    )
    found = note_statements(parse_note(text, "docs/n.md"))
    assert [
        (s.subject if not s.mention else "…", s.knob, s.value, s.line, s.column) for s in found
    ] == [
        ("embedder", "gpu_ids", "0", 1, 5),
        ("chat-llm", "gpu_ids", "1,2", 1, 22),
        ("…", "gpus", "2", 2, 31),
        ("…", "tensor_parallel_size", "2", 2, 41),
        (None, "host_gpus", "3", 2, 61),  # the deployment's host, about no one service
    ]
    assert "chat-llm service" in (found[2].subject or "")


def test_shell_exports_are_read_with_their_section():
    text = "# A\n\n## Fallback\n\n```sh\nexport LLM_GPU=1,2\ndocker compose up\n```\n"
    found = note_statements(parse_note(text, "docs/n.md"))
    assert [(s.knob, s.value, s.line, s.column, s.layout, s.section) for s in found] == [
        ("LLM_GPU", "1,2", 6, 16, "export", 1),
    ]


def test_a_figure_in_a_file_name_is_about_the_context_the_file_sets():
    assert said_name(
        "llama3.1_q6k_48k.Modelfile", "FROM llama3.1:8b\nPARAMETER num_ctx 46000\n"
    ) == [(None, "max_model_len", "48k", 2, 19, "name")]
    assert said_name("m_32k_64k.Modelfile", "FROM m\nPARAMETER num_ctx 32000\n") == []  # two
    assert said_name("phi3-128k.Modelfile", "FROM phi3:mini-128k\nPARAMETER num_ctx 8192\n") == []
    assert said_name("m_8b.Modelfile", "FROM m\nPARAMETER num_ctx 8192\n") == []  # not a count
    assert said_name("m_32k.Modelfile", "FROM m\nPARAMETER temperature 0.2\n") == []  # no knob


def said_name(path: str, text: str) -> list[tuple]:
    return rows(modelfile_statements(parse_modelfile(text, path)))


def test_a_compose_name_figure_is_about_its_one_server():
    text = (
        "services:\n  llm:\n    image: vllm/vllm-openai:v0.27.1\n"
        "    command: [--model, org/m, --max-model-len, '8192']\n"
    )
    found = compose_statements(parse_compose(text, "stack/chat-16k.yml"))
    assert [(s.subject, s.knob, s.value, s.line, s.layout) for s in found] == [
        ("llm", "max_model_len", "16k", 4, "name")
    ]
    assert compose_statements(parse_compose(text.replace("org/m", "org/m-16k"), "a-16k.yml")) == []


PROFILED = (
    "# Profile (at-a-glance):\n"
    "#   Topology:  Dual 3090 (TP=2)\n"
    "#   KV:        fp8 — not bf16\n"
    "#   Max ctx:   262144 (~256K)\n"
    "#   Vision:    ON (mmproj)\n"
    "#   Status:    ✅ production\n"
    "# ---------------------------------------------------------------------------\n"
    "# THE DUAL TIER — MTP n=3, 160K ctx, fp8 KV, text-only.\n"
    "services:\n"
    "  vllm:\n"
    "    image: vllm/vllm-openai:v0.27.1\n"
    "    command: [--max-model-len, '131072']\n"
    "    # the shipped default (MTP n=2)\n"
)


def test_the_profile_block_is_one_layout_of_the_compose_statements():
    from guards.sources.compose.header import PROFILE

    found = compose_statements(parse_compose(PROFILED, "c.yml", convention=PROFILE))
    assert [(s.knob, s.value, s.line, s.column, s.layout, s.key, s.said) for s in found] == [
        ("max_model_len", "262144", 4, 16, "profile", "Max ctx", "262144"),
        ("kv_cache_dtype", "fp8", 3, 16, "profile", "KV", "fp8"),
        ("tensor_parallel_size", "2", 2, 16, "profile", "Topology", "TP=2"),
        ("vision", "on", 5, 16, "profile", "Vision", "ON"),
        ("status", "✅ production", 6, 16, "profile", "Status", "✅ production"),
        ("drafter_depth", "3", 8, 23, "tier", "summary line", "n=3"),
        ("max_model_len", "160K", 8, 28, "tier", "summary line", "160K ctx"),
        ("kv_cache_dtype", "fp8", 8, 38, "tier", "summary line", "fp8 KV"),
        ("vision", "off", 8, 46, "tier", "summary line", "text-only"),
        ("drafter_depth", "2", 13, 32, "tier", "comment", "n=2"),
    ]
    assert {s.subject for s in found} == {"vllm"}


def test_without_a_convention_the_header_states_no_profile():
    found = compose_statements(parse_compose(PROFILED, "c.yml", convention=None))
    assert [(s.knob, s.line, s.layout) for s in found] == [("drafter_depth", 13, "tier")]


def test_a_table_of_request_parameters_names_them_under_its_headings():
    text = (
        "# Chat API parameters\n\n"
        "| Parameter | Default | Description |\n"
        "|---|---|---|\n"
        "| `top_p` | 0.9 | nucleus sampling |\n"
        "| max_tokens | — | unset |\n"
        "| Top P | 0.9 | not a parameter name |\n"
    )
    assert said(text) == [("Chat API parameters", "top_p", "0.9", 5, 13, "parameter")]


def test_a_request_parameter_is_the_one_variable_its_headings_prefix_name():
    chat = parse_compose(
        "services:\n  api:\n    image: x\n    environment:\n"
        "      CHAT_TOP_P: ${CHAT_TOP_P:-1.0}\n      SUMMARY_CHAT_TOP_P: 0.5\n"
        "      TEMPERATURE: ${TEMPERATURE:-0}\n",
        "app.yml",
    )
    known = subjects([chat])
    assert known.parameter("top_p", "Chat API parameters") == "CHAT_TOP_P"
    assert known.parameter("top_p", "Summary chat parameters") is None  # two fit
    assert known.parameter("top_p", "Request parameters") is None
    assert known.parameter("temperature", "Chat API parameters") is None  # no prefix
    assert known.compose("app.yml") is chat and known.compose("other.yml") is None


def test_hosts_give_their_size_and_a_lower_bound_keeps_a_plus():
    text = (
        "The generation profile is designed for **2xH100 GPUs**.\n\n"
        "For systems with 3+ GPUs, move the VLM. A minimum of 4 x A100 is needed for the rest.\n\n"
        "On an 8-GPU node everything fits. B200 GPUs are not supported.\n"
    )
    assert said(text) == [
        (None, "host_gpus", "2", 1, 42, "host"),
        (None, "host_gpus", "3+", 3, 18, "host"),
        (None, "host_gpus", "4+", 3, 54, "host"),
        (None, "host_gpus", "8", 5, 7, "host"),
    ]


def test_a_sentence_that_every_variable_of_a_compose_is_interpolated():
    text = (
        "All environment variables in [`docker-compose.yml`](../docker-compose.yml) use "
        "`${VAR:-default}`, so a `.env` overrides them.\n\n"
        "All GPU tuning knobs of `docker-compose.yml` are configurable via `${VAR:-default}`.\n\n"
        "All variables in `a.yml` and `b.yml` can be overridden.\n\n"
        "Every setting is documented below.\n"
    )
    assert said(text) == [("docker-compose.yml", "interpolation", "every", 1, 1, "universal")]
