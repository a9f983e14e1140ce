"""Engine invocations in notes: the commands a README or docs page tells an operator to paste.

Read from shell-like code blocks (``sh``, ``bash``, ``shell``, ``zsh``; in ``console`` blocks
the ``$`` prompt lines; a block with no language when every line looks like a command) and from
inline code spans, split into commands as sh splits them (``Script.commands``), a ``$`` prompt
taken off and ``\\`` continuations joined. A command is an engine invocation when

- it launches the engine, as a compose's command would (``vllm serve``, ``python -m
  sglang.launch_server``, ``llama-server``: the launch recogniser ``identity.launcher``), or runs
  an engine image whose entrypoint is the server (``docker run vllm/vllm-openai ...``, a
  llama.cpp ``server`` tag), or
- an argument names an engine (``vllm``, ``sglang``, ``llama.cpp``, ``llamacpp``,
  ``llama-server``) and the flags after it include one that engine has in some release known:
  evidence that a wrapper passes them on (``tool vllm args --max-model-len 8192``). The engine's
  own CLI with another subcommand (``vllm bench``, ``vllm --version``) is not its server.

Package managers, version control, downloads and docker's other subcommands (``pip install vllm
--upgrade``, ``git clone``, ``docker pull``) are never invocations. A quoted argument that starts
with a flag (``'--max-tokens 1024 -ngl 100'``) is split into its words; a word with an
unresolved ``$VAR`` is skipped by whoever judges it. Readers only read: which release the
invocation is judged against is :func:`documented_running`'s, what is wrong with it the rules'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from ..sources.compose.compose import Compose
from ..sources.compose.engines import LLAMACPP, SGLANG, VLLM, Token
from ..sources.compose.engines.identity import image_engine, launcher, parse_image
from ..sources.compose.script import Script
from ..sources.notes.notes import Block, Note
from ..sources.patterns import lazy
from . import engines
from .engines.running import SHELL_BREAKS, Running, running, service_running
from .memo import per_object

SHELLS = {"sh", "bash", "shell", "zsh", "console"}
# What names an engine as a word of a command.
NAMES = {
    "vllm": VLLM,
    "sglang": SGLANG,
    "llama.cpp": LLAMACPP,
    "llamacpp": LLAMACPP,
    "llama-cpp": LLAMACPP,
    "llama-server": LLAMACPP,
}
# Programs whose arguments are never an engine's: installers, version control, downloads.
NEVER = {
    "pip", "pip3", "pipx", "uv", "conda", "mamba", "micromamba", "apt", "apt-get", "yum", "dnf",
    "brew", "git", "curl", "wget", "npm", "npx", "yarn", "cargo", "cmake", "make", "nix",
    "huggingface-cli", "hf", "cd", "echo", "printf", "export", "cat", "ls", "kubectl", "helm",
}  # fmt: skip
CONTAINERS = {"docker", "podman", "nerdctl"}
ALWAYS = {"-h", "--help", "--version"}  # every parser's own: no evidence of an engine
# docker run's options that take no value (every other option takes one)
DOCKER_SWITCHES = {
    "--rm", "-d", "--detach", "-i", "--interactive", "-t", "--tty", "-it", "-ti", "-dit",
    "--init", "--privileged", "-P", "--publish-all", "--read-only", "--sig-proxy", "-q",
    "--quiet", "--no-healthcheck", "--oom-kill-disable",
}  # fmt: skip
FENCE = lazy(r"^\s*(?:`{3,}|~{3,})\s*([^\s`{]*)")
PROMPT = lazy(r"^\s*\$\s+")
COMMAND_LINE = lazy(r"^(?:\$\s+|#|(?:\./|/|~/)?[a-z0-9][\w.+/-]*(?:\s|$)|[A-Za-z_]\w*=)")
SPAN = lazy(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


class Invocation(NamedTuple):
    """One command that starts an engine, as a note writes it."""

    engine: str
    words: tuple[Token, ...]  # the engine's arguments, at their note lines and columns
    line: int  # where the command starts
    image: str | None = None  # the image ``docker run`` names, for its release


@per_object
def note_invocations(note: Note) -> tuple[Invocation, ...]:
    """Every engine invocation in a note's code blocks and inline code spans (read once per
    note: K006 and K001 both ask)."""
    found: list[Invocation] = []
    for block in note.blocks:
        if not block.current:
            continue
        if block.kind == "code":
            lines = _command_lines(note, block)
        elif block.kind in ("paragraph", "table", "heading"):
            lines = _spans(note, block)
        else:
            continue
        found += invocations(lines)
    return tuple(found)


def invocations(lines: Sequence[list[Token]]) -> list[Invocation]:
    """The engine invocations among the commands of a text given as words per line."""
    found = []
    for command in Script([], {}, list(lines)).commands():
        invocation = invocation_of(_unfolded(command))
        if invocation is not None:
            found.append(invocation)
    return found


def invocation_of(words: list[Token]) -> Invocation | None:
    """The invocation one command is; None when it starts no engine."""
    words = [w for w in words if w.text.strip()]
    while words and words[0].text in ("$", "sudo"):
        words = words[1:]
    if not words:
        return None
    texts = [w.text for w in words]
    program = texts[0].rsplit("/", 1)[-1]
    if program in CONTAINERS:
        return _container(words) if texts[1:2] == ["run"] else None
    found = launcher(texts)
    if found is not None:
        if found.idle:
            return None
        return Invocation(found.engine, _arguments(words[found.end :], found.engine), words[0].line)
    if program in NEVER or program in NAMES:  # the engine's own CLI: not its server
        return None
    return _named(words)


def _named(words: list[Token]) -> Invocation | None:
    """A wrapper's command naming an engine, followed by flags that engine knows."""
    for index, word in enumerate(words[1:], 1):
        engine = NAMES.get(word.text.lower())
        if engine is None or words[index - 1].is_flag:  # ``--backend vllm``: a value
            continue
        args = _arguments(words[index + 1 :], engine)
        if any(_known(engine, w.text) for w in args if w.is_flag):
            return Invocation(engine, args, words[0].line)
        return None
    return None


def _known(engine: str, text: str) -> bool:
    facts = engines.load(engine)
    name = text.partition("=")[0]
    if name.startswith("--"):
        name = name[:2] + name[2:].replace("_", "-")
    return facts is not None and name not in ALWAYS and name in facts.flags


def _container(words: list[Token]) -> Invocation | None:
    """``docker run [OPTIONS] IMAGE [ARGS]``: an engine image whose entrypoint is its server
    takes the arguments; any image takes an engine launch after it."""
    index = 2
    while index < len(words) and words[index].text.startswith("-"):
        text = words[index].text
        index += 1 if text in DOCKER_SWITCHES or "=" in text else 2
    if index >= len(words):
        return None
    image, rest = words[index].text, words[index + 1 :]
    found = launcher([w.text for w in rest])
    if found is not None:
        if found.idle:
            return None
        args = _arguments(rest[found.end :], found.engine)
        return Invocation(found.engine, args, words[0].line, image)
    engine, _ = image_engine(image)
    ref = parse_image(image)
    tag = ref.tag if ref is not None else ""
    if engine == VLLM or (engine == LLAMACPP and tag.startswith("server")):
        return Invocation(engine, _arguments(rest, engine), words[0].line, image)
    return None


def _arguments(words: Sequence[Token], engine: str) -> tuple[Token, ...]:
    """The words up to the end of the command. llama.cpp's ``full`` images start the server
    with a ``--server`` first (their ``tools.sh``, llama.cpp's docs/docker.md): not a flag of
    the server's own."""
    out: list[Token] = []
    for word in words:
        if word.text in SHELL_BREAKS:
            break
        first = not any(w.is_flag for w in out)
        if not (engine == LLAMACPP and first and word.text == "--server"):
            out.append(word)
    return tuple(out)


def _unfolded(command: list[Token]) -> list[Token]:
    """Quoted arguments that start with a flag, split into their words, each at its column."""
    out: list[Token] = []
    for word in command:
        quote = word.raw[:1]
        if quote in "'\"" and word.raw.endswith(quote) and word.text.startswith("-"):
            for offset, text in _split(word.text):
                at = word.column + 1 + offset
                end = at + len(text) if 0 < at + len(text) <= word.end_column else 0
                out.append(word._replace(text=text, raw=text, column=at, end_column=end))
        else:
            out.append(word)
    return out


def _split(text: str) -> list[tuple[int, str]]:
    """Blank-separated words with their offsets; quotes keep a run whole."""
    words: list[tuple[int, str]] = []
    start, quote = None, ""
    for index, char in enumerate(text + " "):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
            start = index if start is None else start
        elif char.isspace():
            if start is not None:
                words.append((start, text[start:index]))
                start = None
        elif start is None:
            start = index
    return words


# --- documented compose commands -------------------------------------------------------------

COMPOSE_STARTS = {"up", "run", "start", "create"}  # the subcommands that start services
COMPOSE_VALUED = {"-f", "--file", "-p", "--project-name", "--env-file", "--project-directory"}
ASSIGNMENT = lazy(r"^[A-Za-z_]\w*=")


class ComposeStart(NamedTuple):
    """A documented ``docker compose ... up``: the files it names and the profiles it enables
    (``--profile``, ``COMPOSE_PROFILES=``), where it is written."""

    files: tuple[str, ...]
    profiles: tuple[str, ...]
    line: int
    column: int
    section: int
    end_column: int = 0  # just after its ``up`` word, when that is on the command's line


def compose_starts(note: Note) -> list[ComposeStart]:
    """Every ``docker compose`` (or ``docker-compose``) command of a note's shell blocks that
    starts services."""
    found: list[ComposeStart] = []
    for block in note.blocks:
        if block.kind != "code" or not block.current:
            continue
        for command in Script([], {}, _command_lines(note, block)).commands():
            start = compose_start(command, block.section)
            if start is not None:
                found.append(start)
    return found


def compose_start(words: list[Token], section: int = -1) -> ComposeStart | None:
    """The compose command ``words`` are, when it starts services; None otherwise."""
    profiles: list[str] = []
    while words and (ASSIGNMENT.match(words[0].text) or words[0].text == "sudo"):
        name, _, value = words[0].text.partition("=")
        if name == "COMPOSE_PROFILES":
            profiles += [p for p in value.split(",") if p]
        words = words[1:]
    texts = [w.text for w in words]
    if texts[:2] == ["docker", "compose"]:
        rest = words[2:]
    elif texts[:1] == ["docker-compose"]:
        rest = words[1:]
    else:
        return None
    files: list[str] = []
    index = 0
    while index < len(rest) and rest[index].text.startswith("-"):
        flag, _, inline = rest[index].text.partition("=")
        value = inline or (rest[index + 1].text if index + 1 < len(rest) else "")
        if flag in ("-f", "--file"):
            files.append(value)
        elif flag == "--profile":
            profiles.append(value)
        index += 1 if inline or (flag not in COMPOSE_VALUED and flag != "--profile") else 2
    if index >= len(rest) or rest[index].text not in COMPOSE_STARTS:
        return None
    up = rest[index]
    end = up.end_column if up.line == words[0].line else 0
    first = words[0]
    return ComposeStart(tuple(files), tuple(profiles), first.line, first.column, section, end)


# --- where commands are written --------------------------------------------------------------


def _command_lines(note: Note, block: Block) -> list[list[Token]]:
    """The words per line of a code block that holds shell commands; none for any other."""
    language = _language(note, block)
    texts = [(line, note.lines[line - 1]) for line, _ in block.line_texts]
    if language == "console":
        texts = _prompted(texts)
    elif language not in SHELLS and (language or not _all_commands(texts)):
        return []
    out = []
    for line, raw in texts:
        prompt = PROMPT.match(raw)
        start = prompt.end() if prompt else len(raw) - len(raw.lstrip())
        out.append(_words(raw[start:], line, start + 1))
    return out


def _language(note: Note, block: Block) -> str:
    """The fence's info word, lower case; "" for an indented block or a bare fence."""
    fence = FENCE.match(note.lines[block.line - 1]) if block.line <= len(note.lines) else None
    return fence.group(1).lower() if fence else ""


def _prompted(texts: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A console session's commands: the ``$`` lines and the lines they continue onto."""
    kept, going = [], False
    for line, raw in texts:
        if going or PROMPT.match(raw):
            kept.append((line, raw))
            going = raw.rstrip().endswith("\\")
    return kept


def _all_commands(texts: list[tuple[int, str]]) -> bool:
    """Every line of a block without a language looks like a command (or continues one)."""
    going = False
    for _, raw in texts:
        text = raw.strip()
        if text and not going and not COMMAND_LINE.match(text):
            return False
        going = text.endswith("\\")
    return any(raw.strip() for _, raw in texts)


def _spans(note: Note, block: Block) -> list[list[Token]]:
    """Each inline code span of a block's lines as a line of its own."""
    out = []
    for line in range(block.line, block.end_line + 1):
        raw = note.lines[line - 1] if line <= len(note.lines) else ""
        for match in SPAN.finditer(raw):
            out.append(_words(match.group(2), line, match.start(2) + 1))
    return out


def _words(text: str, line: int, column: int) -> list[Token]:
    """One line's shell words as written, at their columns (quotes are removed later)."""
    return [
        Token(raw, raw, line, column + offset, end_column=column + offset + len(raw))
        for offset, raw in _split(text)
    ]


# --- which release a documented command meets ------------------------------------------------


def documented_running(
    invocation: Invocation, composes: Iterable[Compose], versions: Mapping[str, str]
) -> Running | str | None:
    """The release a documented command is judged against: the tag of the image it runs, else
    the estate's (what its composes that run the engine are known to run), else the newest
    release known, which is what an operator who installs the engine today gets. A string says
    why it is not known; None: no data for the engine."""
    facts = engines.load(invocation.engine)
    if facts is None:
        return None
    if invocation.image is not None:
        found = running(invocation.engine, invocation.image, versions)
        if not isinstance(found, Running) or found.exact:
            return found
    known = _estate_releases(invocation.engine, composes, versions)
    if not known:
        newest = facts.shown(facts.newest)
        how = f"a documented command; no compose names the release: the newest known, {newest}"
        return Running(facts, (facts.newest,), how, True)
    releases = tuple(sorted(known))
    shown = " and ".join(facts.shown(i) for i in releases)
    how = f"a documented command; the estate's composes run {shown}"
    return Running(facts, releases, how, True)


def _estate_releases(
    engine: str, composes: Iterable[Compose], versions: Mapping[str, str]
) -> set[int]:
    """The releases the estate's services of ``engine`` are known to run."""
    found: set[int] = set()
    for compose in composes:
        for service in compose.services:
            if service.engine != engine:
                continue
            run = service_running(service, versions)
            if isinstance(run, Running) and run.exact:
                found.update(run.releases)
    return found
