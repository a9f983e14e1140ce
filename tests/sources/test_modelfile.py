"""Modelfiles: the FROM and PARAMETER lines with their places; quoted values skipped whole."""

from guards.sources.modelfile import Parameter, is_modelfile, parse_modelfile


def test_parameters_and_base_with_lines_and_columns():
    text = (
        "# generated\n"
        "FROM llama3.1:8b\n"
        'TEMPLATE """{{ .Prompt }}\n'
        "PARAMETER num_ctx 1\n"
        '"""\n'
        'SYSTEM "one line"\n'
        "PARAMETER num_ctx 46000\n"
        "parameter stop <|end|>\n"
    )
    found = parse_modelfile(text, "m/x.Modelfile")
    assert found.base == "llama3.1:8b"
    assert found.parameters == [
        Parameter("num_ctx", "46000", 7, 19),
        Parameter("stop", "<|end|>", 8, 16),
    ]
    assert found.parameter("NUM_CTX") == [Parameter("num_ctx", "46000", 7, 19)]


def test_a_quoted_value_over_lines_and_an_unclosed_one():
    text = 'TEMPLATE "a\nPARAMETER num_ctx 2\nb"\nPARAMETER num_ctx 3\n'
    assert [p.value for p in parse_modelfile(text, "Modelfile").parameters] == ["3"]
    assert parse_modelfile('SYSTEM """never closed\nPARAMETER num_ctx 4\n', "M").parameters == []


def test_names_that_are_modelfiles():
    assert is_modelfile("Modelfile") and is_modelfile("a/b/qwen_32k.Modelfile")
    assert not is_modelfile("a/Modelfile.md") and not is_modelfile(".Modelfile")
