"""The reader of engine invocations in notes: the exact invocations small texts hold, and the
commands that name an engine without starting it."""

from guards.facts.engines import load
from guards.facts.engines.running import Running
from guards.facts.invocations import compose_starts, documented_running, note_invocations
from guards.sources.compose.compose import parse_compose
from guards.sources.notes.notes import parse_note


def read(text: str) -> list[tuple]:
    return [
        (i.engine, i.line, i.image, [(w.text, w.line, w.column) for w in i.words])
        for i in note_invocations(parse_note(text, "docs/n.md"))
    ]


def test_a_launch_in_a_shell_block_with_a_prompt_and_continuations():
    text = "```bash\n$ vllm serve m \\\n    --max-model-len 8192\n```\n"
    assert read(text) == [
        ("vllm", 2, None, [("m", 2, 14), ("--max-model-len", 3, 5), ("8192", 3, 21)])
    ]


def test_python_modules_and_llama_server_at_a_path():
    text = (
        "```sh\npython3 -m sglang.launch_server --tp 2 && ./build/bin/llama-server -c 4096\n```\n"
    )
    assert read(text) == [
        ("sglang", 2, None, [("--tp", 2, 33), ("2", 2, 38)]),
        ("llama.cpp", 2, None, [("-c", 2, 68), ("4096", 2, 71)]),
    ]


def test_docker_run_of_an_engine_image_takes_the_words_after_it():
    command = "docker run --rm -p 8000:8000 --gpus all vllm/vllm-openai:v0.8.5 --device cuda"
    text = f"```shell\n{command}\n```\n"
    assert read(text) == [
        ("vllm", 2, "vllm/vllm-openai:v0.8.5", [("--device", 2, 65), ("cuda", 2, 74)])
    ]


def test_a_wrapper_naming_the_engine_with_a_quoted_argument_string():
    text = "```bash\ntool llamacpp args '--max-tokens 1024 -ngl 100'\n```\n"
    assert read(text) == [
        (
            "llama.cpp",
            2,
            None,
            [
                ("args", 2, 15),
                ("--max-tokens", 2, 21),
                ("1024", 2, 34),
                ("-ngl", 2, 39),
                ("100", 2, 44),
            ],
        )
    ]


def test_an_inline_code_span_in_prose():
    text = "Run `vllm serve m --max-num-seqs 4` to start it.\n"
    assert read(text) == [
        ("vllm", 1, None, [("m", 1, 17), ("--max-num-seqs", 1, 19), ("4", 1, 34)])
    ]


def test_a_block_without_a_language_when_every_line_is_a_command():
    commands = "```\nvllm serve m --enforce-eager\n```\n"
    output = "```\nINFO: started\nvllm serve m --enforce-eager\n```\n"
    assert [i[0] for i in read(commands)] == ["vllm"]
    assert read(output) == []


def test_console_blocks_read_only_their_prompt_lines():
    text = "```console\n$ vllm serve m --enforce-eager\nvllm serve --not-a-command\n```\n"
    assert read(text) == [("vllm", 2, None, [("m", 2, 14), ("--enforce-eager", 2, 16)])]


def test_lookalikes_start_no_engine():
    text = (
        "```bash\n"
        "pip install vllm --upgrade\n"
        "vllm --version\n"
        "vllm bench serve --model m --num-prompts 10\n"
        "tool launch --backend vllm --model m\n"
        "tool up llamacpp --help\n"
        "git clone https://example.org/llama.cpp --depth 1\n"
        "docker pull vllm/vllm-openai:latest\n"
        "```\n"
        "```yaml\nvllm serve m --enforce-eager\n```\n"
        "Pass `--gpu-memory-utilization 0.9` (the default) when needed.\n"
    )
    assert read(text) == []


def test_retracted_and_quoted_passages_are_not_read():
    text = "> Run `vllm serve m --device cuda`.\n"
    assert read(text) == []


def test_the_full_images_server_selector_is_not_a_server_flag():
    text = "```sh\ntool llamacpp args '--server -m /m.gguf'\n```\n"
    assert read(text) == [
        ("llama.cpp", 2, None, [("args", 2, 15), ("-m", 2, 30), ("/m.gguf", 2, 33)])
    ]


def _compose(image: str):
    return parse_compose(f"services:\n  vllm:\n    image: {image}\n", "composes/c.yml")


def test_the_release_is_the_estates_else_the_newest_known():
    (invocation,) = note_invocations(parse_note("`vllm serve m --enforce-eager`\n", "docs/n.md"))
    facts = load("vllm")
    assert facts is not None
    pinned = documented_running(invocation, [_compose("vllm/vllm-openai:v0.8.5")], {})
    assert isinstance(pinned, Running) and pinned.releases == (facts.release("0.8.5"),)
    assert "the estate's composes run vLLM 0.8.5" in pinned.how
    unknown = documented_running(invocation, [_compose("acme/server:1")], {})
    assert isinstance(unknown, Running) and unknown.releases == (facts.newest,)
    assert "no compose names the release: the newest known" in unknown.how


def starts(text: str) -> list[tuple]:
    return [
        (s.files, s.profiles, s.line, s.column, s.section)
        for s in compose_starts(parse_note(text, "docs/n.md"))
    ]


def test_compose_commands_that_start_services_with_their_files_and_profiles():
    text = (
        "# Run\n\n"
        "```bash\n"
        "export GPU_ID=1\n"
        "USERID=$(id -u) docker compose -f stack/models.yml --profile chat --profile=ingest up -d\n"
        "COMPOSE_PROFILES=rag,ingest docker-compose --file=stack/app.yml -p demo up\n"
        "docker compose -f stack/models.yml --profile chat config --services\n"
        "docker compose -f stack/models.yml logs -f chat\n"
        "```\n"
    )
    assert starts(text) == [
        (("stack/models.yml",), ("chat", "ingest"), 5, 17, 0),
        (("stack/app.yml",), ("rag", "ingest"), 6, 29, 0),
    ]


def test_a_compose_command_outside_a_shell_block_is_not_read():
    assert starts("Run `docker compose --profile chat up` once.\n") == []
    assert starts("```yaml\ncommand: docker compose up\n```\n") == []
