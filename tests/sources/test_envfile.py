"""Env files as Compose and the shell read them (guards/sources/envfile.py): assignments with
quotes, comments and references; lines that are no assignment skipped and said; errors only
for what cannot be read."""

import pytest

from guards.errors import GuardsError
from guards.sources.envfile import EnvFile, Skipped, load_env_file, parse_env

SCRIPT = """\
#!/bin/sh
# estate defaults, sourced by the launch script too
export MODEL=org/model-7b
PORT=8000   # the server's port
TAG="v1 # not a comment"
RAW='${MODEL} stays'
URL="http://host:${PORT}/v1"
DEPTH=${SPEC_N:-4}
EMPTY=$UNSET
QUOTED="say \\"hi\\"\\n"

pushd "$(dirname "$0")" > /dev/null
source ./profiles.sh
setup() {
  export HIDDEN=1
}
if [ -n "$GPU" ]; then
  GPU_ID=1
fi
AFTER=yes
WHEN=$(date +%s)
"""


def test_a_shell_script_gives_its_assignments_in_order():
    parsed = parse_env(SCRIPT)
    assert dict(parsed) == {
        "MODEL": "org/model-7b",
        "PORT": "8000",
        "TAG": "v1 # not a comment",
        "RAW": "${MODEL} stays",
        "URL": "http://host:8000/v1",
        "DEPTH": "4",
        "EMPTY": "",
        "QUOTED": 'say "hi"\n',
        "AFTER": "yes",
    }
    assert parsed.lines["MODEL"] == 3 and parsed.lines["AFTER"] == 20


def test_lines_that_are_no_assignment_are_skipped_and_said_with_their_line():
    parsed = load_env_file_text(SCRIPT)
    assert parsed.remarks() == [
        'x.env:12: line skipped, not an assignment: pushd "$(dirname "$0")" > /dev/null',
        "x.env:13: line skipped, not an assignment: source ./profiles.sh",
        "x.env:14: line skipped, not an assignment: setup() {",
        "x.env:15: line skipped, inside a block the file opens: export HIDDEN=1",
        "x.env:16: line skipped, not an assignment: }",
        'x.env:17: line skipped, not an assignment: if [ -n "$GPU" ]; then',
        "x.env:18: line skipped, inside a block the file opens: GPU_ID=1",
        "x.env:19: line skipped, not an assignment: fi",
        "x.env:21: line skipped, the value runs a command: WHEN=$(date +%s)",
    ]


def load_env_file_text(text: str) -> EnvFile:
    parsed = parse_env(text)
    parsed.source = "x.env"
    return parsed


def test_a_one_line_if_opens_no_block():
    parsed = parse_env('if [ -z "$A" ]; then A=1; fi\nB=2\n')
    assert dict(parsed) == {"B": "2"}


def test_references_see_earlier_lines_then_the_outer_environment():
    parsed = parse_env("A=${OUTER}-x\nOUTER=mine\nB=${OUTER}\n", {"OUTER": "theirs"})
    assert dict(parsed) == {"A": "theirs-x", "OUTER": "mine", "B": "mine"}


def test_an_expansion_compose_does_not_have_is_skipped_not_an_error():
    parsed = parse_env("A=abc\nB=${A/b/x}\n")
    assert dict(parsed) == {"A": "abc"}
    assert parsed.skipped == (Skipped(2, "B=${A/b/x}", "an expansion Compose does not have"),)


def test_a_quoted_value_may_run_over_lines():
    parsed = parse_env('KEY="line one\nline two"\nNEXT=1\n')
    assert dict(parsed) == {"KEY": "line one\nline two", "NEXT": "1"}


def test_a_double_quoted_dollar_escape_stays_a_dollar():
    assert dict(parse_env('PRICE="\\$5"\n')) == {"PRICE": "$5"}


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("A=1\nB='never closed\n", (2, "unterminated ' quote")),
        ('A="open\nB=2\n', (1, 'unterminated " quote')),
    ],
)
def test_a_quote_that_never_closes_is_an_error_at_its_line(text, error):
    with pytest.raises(GuardsError) as caught:
        parse_env(text)
    assert (caught.value.line, caught.value.message) == error


def test_a_file_names_itself_in_errors_and_remarks(tmp_path):
    path = tmp_path / "my.env"
    path.write_text("pushd x\nA=1\n", encoding="utf-8")
    parsed = load_env_file(path, "my.env")
    assert parsed == {"A": "1"}
    assert parsed.remarks() == ["my.env:1: line skipped, not an assignment: pushd x"]
    path.write_bytes(b"A=\xff\n")
    with pytest.raises(GuardsError, match=r"^my\.env:1:3: not valid UTF-8"):
        load_env_file(path, "my.env")
