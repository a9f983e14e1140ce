"""D011 dead-path: a path a document tells the operator to open is a path the estate has.

Why: operators follow the paths a note gives them — "edit `deploy/nims.yaml`", a link to
`../deploy/compose/.env`, a compose comment "see docs/tuning.md" — and when the file moved the
document still names the old place: the operator edits a file that is not there, or creates a
new one nothing reads. The rule reads the paths in a note's code spans, shell code blocks
(``sh``, ``bash``, ``console`` ...) and relative link targets (the file part, without
``#anchor``), and the path-like words of compose comments, and looks each up in the listing of
every file under the root. A word counts as a path of this estate when it is relative (no
scheme, no ``/`` root, no ``~``, no ``$``, no glob), holds a ``/`` and starts at an entry of
the root or of the document's own folder; a link target always counts. A path under a command
substitution (``$(tool home)/ollama/modelfiles``: a command that prints the checkout's folder)
is read from the root and reported with it; a variable (``$HOME``, ``${ROOT}``) may be any
folder, so a path under one is not. Links resolve from the document's folder, as markdown does;
other paths from the root, then the document's folder (a compose's comments from its folder
first). A missing path is a finding only when the estate shows where it moved: exactly one path
ending in its last two components, or exactly one of its name below its deepest folder that is
there (``deploy/nims.yaml`` as ``deploy/compose/nims.yaml``; a ``README.md`` or ``.env``
elsewhere proves nothing). Otherwise it is a remark (-v): it may be a file the operator makes
or one of another checkout. So is a path the line tells the operator to create, copy, save or
write, and what ``cp``, ``mv``, ``mkdir``, ``touch``, ``>`` or ``-o`` makes in a shell block.

A Dockerfile of another checkout is judged by what the composes build with instead: when a
compose's ``build: dockerfile:`` names a file the estate does not hold (a remote build context,
``https://github.com/org/engine.git#ref``), a document naming another Dockerfile in that folder
(``.devops/server.Dockerfile`` beside the built ``.devops/cpu.Dockerfile``) that no compose
builds with is a finding: the upstream file was renamed, or the document names the wrong one.

Not read: a shell block after a ``cd`` (its paths are relative to somewhere else), container
paths (absolute), a folder guards does not list and what lies below it (``.git``, the folders
tools make such as ``node_modules`` or ``.mypy_cache``, excluded folders, links to folders:
unknown, not absent), and the files of the ``history``
setting (changelogs name old paths on purpose). A warning, not an error: that the path is
missing is certain, that the match is where it went is read from names alone; ``severity =
"error"`` makes it fail the check.

Bad:
    --- composes/qwen/vllm.yml
    # Tuning notes: see learnings/tuning.md before raising the context.
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
    --- learnings/guides/tuning.md
    # Tuning
    --- learnings/deploy.md
    # Deploy

    Edit `composes/vllm.yml` and set the context, then read [tuning](tuning.md#context).

Finds:
    composes/qwen/vllm.yml:1:21: D011 [warning] names learnings/tuning.md, which does not exist; learnings/guides/tuning.md does
    learnings/deploy.md:3:7: D011 [warning] names composes/vllm.yml, which does not exist; composes/qwen/vllm.yml does
    learnings/deploy.md:3:66: D011 [warning] links to tuning.md (learnings/tuning.md), which does not exist; learnings/guides/tuning.md does

Good:
    --- composes/qwen/vllm.yml
    # Tuning notes: see learnings/guides/tuning.md before raising the context.
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
    --- learnings/guides/tuning.md
    # Tuning
    --- learnings/deploy.md
    # Deploy

    Edit `composes/qwen/vllm.yml` and set the context, then read [tuning](guides/tuning.md#context).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections import defaultdict
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote

from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from ..sources.config import TOOL_MADE
from ..sources.notes.notes import Note
from ..sources.patterns import glob_match, lazy
from .base import Context, Rule, written_end
from .options import RuleOptions

if TYPE_CHECKING:
    from ..run.discovery import Tree
    from ..run.estate import Estate

# A word is cut at what cannot be part of a path in prose or a command line.
WORD = lazy(r"[^\s'\"`,;|]+")
# A word holding a ``/``, from its start: only those can be paths (one test per word, in C).
SLASHED = lazy(r"(?<![^\s'\"`,;|])[^\s'\"`,;|/]*+/[^\s'\"`,;|]*+")
PATH = lazy(r"(?:\.\.?/)*[\w.&+@-]+(?:/[\w.&+@-]+)*/?")
CODE_SPAN = lazy(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
LINK = lazy(
    r"!?\[[^\[\]\n]*\]\(\s*(?:<([^<>\n]*)>|([^\s()<]+))(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
REFERENCE = lazy(r"^ {0,3}\[[^\]]+\]:\s*(?:<([^>]*)>|(\S+))")
SCHEME = lazy(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = lazy(r"^\s*(?:`{3,}|~{3,})\s*([\w+-]*)")
SHELLS = frozenset(("sh", "bash", "shell", "zsh", "console", "shell-session", "terminal"))
# Prose that has the operator make the file: the path is a target, not a place to look.
MAKES = lazy(
    r"\b(?:creat\w*|generat\w*|sav(?:e|es|ed|ing)|writ(?:e|es|ten|ing)|cop(?:y|ies|ied)|"
    r"renam\w*|output\w*|download\w*|produc\w*|mkdir|touch)\b",
    re.IGNORECASE,
)
WRITERS = frozenset(("cp", "mv", "ln", "install", "rsync", "scp"))  # the last word is made
MAKERS = frozenset(("mkdir", "touch"))  # every word is made
OUTPUTS = frozenset((">", ">>", "tee", "-o", "-O", "--output", "--out", "--output-dir"))
PREFIXES = frozenset(("sudo", "env", "time", "exec", "nohup"))
COMMANDS = lazy(r"&&|\|\||[;|]")
PROMPT = lazy(r"^\s*(?:\$|>|PS>)\s+")
SUBSTITUTION = lazy(r"\$\([^()\n]*\)")  # ``$(tool home)``: one word, spaces and all
ROOTED = lazy(r"^\$\((?P<command>[^()]*)\)/(?P<rest>[^$~*?]+)$")
DOCKERFILE = lazy(r"(?:^|[._-])(?:Dockerfile|Containerfile)(?:$|[._-])", re.I)
BUILD_FILE = lazy(r"^\s*dockerfile\s*:\s*[\"']?(?P<path>[^\"'\s#]+)")


class Candidate(NamedTuple):
    written: str  # as in the document
    line: int
    column: int
    bases: tuple[str, ...]  # folders (from the root) it may be relative to, in order
    link: bool = False  # a link target: a path by construction
    made: bool = False  # the text has the operator make it
    prefix: str = ""  # the ``$(tool home)/`` it is written under


class Index(NamedTuple):
    """The tree as the rule looks things up in it, built once per listing."""

    entries: frozenset[str]
    closed: frozenset[str]
    children: dict[str, frozenset[str]]
    by_tail: dict[str, tuple[str, ...]]  # last component, and last two, -> paths


@functools.lru_cache(maxsize=4)
def index(tree: Tree) -> Index:
    entries = tree.files | tree.folders | tree.closed
    children: dict[str, set[str]] = defaultdict(set)
    by_tail: dict[str, list[str]] = defaultdict(list)
    for path in entries:
        folder, _, name = path.rpartition("/")
        children[folder].add(name)
        by_tail[name].append(path)
        if folder:
            by_tail[f"{folder.rpartition('/')[2]}/{name}"].append(path)
    return Index(
        entries,
        tree.closed,
        {k: frozenset(v) for k, v in children.items()},
        {k: tuple(sorted(v)) for k, v in by_tail.items()},
    )


def check(target: Note | Compose, context: Context) -> list[Finding] | None:
    estate = context.estate
    if any(glob_match(target.path, pattern) for pattern in estate.config.history):
        return None  # a changelog records old paths on purpose
    if not estate.tree.complete:
        context.remark(RULE, target.path, "the estate's files were not all listed: not checked")
        return None
    found = index(estate.tree)
    listed = note_candidates(target) if isinstance(target, Note) else comment_candidates(target)
    builds = upstream_builds(estate, found)
    judged = ((c, judge(c, target.path, found, context, builds)) for c in listed)
    return [_spanned(f, c, target.lines) for c, f in judged if f is not None]


def _spanned(finding: Finding, candidate: Candidate, lines: list[str]) -> Finding:
    """The finding with the end of the path as the document writes it (a point when the
    line does not hold it as read: a link target with its escapes)."""
    end = written_end(lines, finding.line, finding.column, candidate.written)
    return replace(finding, end_column=end) if end else finding


def judge(
    candidate: Candidate, path: str, found: Index, context: Context, builds: Builds
) -> Finding | None:
    """The finding for a path that is not there and moved to one place, or for a Dockerfile
    no compose builds with beside the ones they do; a remark when it is missing and where it
    went cannot be told."""
    written = candidate.written
    if not candidate.link and DOCKERFILE.search(posixpath.basename(written)):
        unbuilt = _unbuilt(candidate, path, found, builds)
        if unbuilt is not None:
            return unbuilt
    bases = [b for b in candidate.bases if candidate.link or _starts_inside(b, written, found)]
    resolved = [r for base in bases if (r := _resolve(base, written))]
    if not resolved or any(_present(r, found) for r in resolved):
        return None  # not a path of this estate, or one it has
    shown = resolved[0]
    said = f"line {candidate.line}: {written}"
    if candidate.made:
        context.remark(RULE, path, f"{said} does not exist; the text has it made")
        return None
    moved, why = _moved(shown.rstrip("/"), found)
    if moved is None:
        context.remark(RULE, path, f"{said} does not exist, and {why}")
        return None
    if candidate.link:
        relative = posixpath.relpath(moved, candidate.bases[0] or ".")
        message = f"links to {written} ({shown}), which does not exist; {moved} does"
        hint = f"point it at {relative}"
    else:
        prefix = candidate.prefix
        message = f"names {prefix}{written}, which does not exist; {prefix}{moved} does"
        hint = f"point it at {prefix}{moved}"
    return RULE.at(path, candidate.line, candidate.column, message, hint=hint)


def _resolve(base: str, written: str) -> str | None:
    """``written`` from the folder ``base``, as a path from the root; None outside it."""
    joined = posixpath.normpath(posixpath.join(base, written))
    if joined in (".", "..") or joined.startswith("../"):
        return None
    return joined + "/" if written.endswith("/") else joined


def _present(path: str, found: Index) -> bool:
    """There, or in or below a folder guards does not look into (unknown is not absent): a
    closed one, or one tools make, which is not even listed."""
    bare = path.rstrip("/")
    if bare in found.entries:
        return True
    parts = bare.split("/")
    if any(part in TOOL_MADE for part in parts):
        return True
    return any("/".join(parts[:i]) in found.closed for i in range(1, len(parts)))


def _starts_inside(base: str, written: str, found: Index) -> bool:
    """Whether ``written`` starts at an entry of the folder it leads from (``../`` steps
    taken first): a word like ``TP/PP`` or ``meta-llama/Llama-3`` starts at none."""
    parts = written.split("/")
    while parts and parts[0] in (".", ".."):
        base = posixpath.normpath(posixpath.join(base, parts.pop(0)))
        base = "" if base == "." else base
    return bool(parts) and parts[0] in found.children.get(base, frozenset())


def _moved(path: str, found: Index) -> tuple[str | None, str]:
    """Where ``path`` moved: the one path of the estate ending in its last two components,
    else the one path of its name below its deepest folder that is there (``deploy/x.yaml``
    found as ``deploy/compose/x.yaml``). A name alone elsewhere in the estate is not enough: a
    ``README.md`` or ``.env`` is in many places. None, with the reason, when it cannot be told."""
    parts = path.split("/")
    if len(parts) > 1:
        tail = "/".join(parts[-2:])
        matches = found.by_tail.get(tail, ())
        if len(matches) == 1:
            return matches[0], ""
        if matches:
            return None, f"{len(matches)} paths end in {tail}"
    anchor = next(
        (
            "/".join(parts[:i])
            for i in range(len(parts) - 1, 0, -1)
            if "/".join(parts[:i]) in found.entries
        ),
        "",
    )
    if not anchor:
        return None, "no folder of it is in the estate"
    matches = tuple(m for m in found.by_tail.get(parts[-1], ()) if m.startswith(anchor + "/"))
    if len(matches) == 1:
        return matches[0], ""
    many = f"{len(matches)} paths" if matches else "no path"
    return None, f"{many} below {anchor}/ {'are' if len(matches) > 1 else 'is'} named {parts[-1]}"


# --- Dockerfiles of builds from another checkout ------------------------------------------

# A Dockerfile a compose builds with that the estate does not hold (a remote build context,
# ``https://github.com/org/engine.git#ref``): its path -> (compose, line) of each build.
Builds = dict[str, list[tuple[str, int]]]
_BUILDS: list[tuple[object, Builds]] = []  # the last estate (held: its id is not reused)


def upstream_builds(estate: Estate, found: Index) -> Builds:
    """The ``build: dockerfile:`` paths of the composes that no file of the estate is: the
    Dockerfiles of another checkout, as the composes name them. Built once per estate."""
    if _BUILDS and _BUILDS[0][0] is estate:
        return _BUILDS[0][1]
    builds: Builds = {}
    for compose in estate.composes:
        folder = posixpath.dirname(compose.path)
        for number, text in enumerate(compose.lines, 1):
            match = BUILD_FILE.match(text)
            if match is None:
                continue
            written = posixpath.normpath(match.group("path"))
            local = (posixpath.normpath(posixpath.join(folder, written)), written)
            if not any(_present(p, found) for p in local):
                builds.setdefault(written, []).append((compose.path, number))
    _BUILDS[:] = [(estate, builds)]
    return builds


def _unbuilt(candidate: Candidate, path: str, found: Index, builds: Builds) -> Finding | None:
    """A Dockerfile a document names in the folder of another checkout the composes build
    from (``.devops/`` of a remote context), which no compose builds with and the estate does
    not hold: the upstream file was renamed, or the document names the wrong one."""
    written = posixpath.normpath(candidate.written)
    folder = posixpath.dirname(written)
    built = sorted(b for b in builds if posixpath.dirname(b) == folder)
    local = [_resolve(base, written) for base in candidate.bases]
    if not folder or not built or written in builds or any(p and _present(p, found) for p in local):
        return None
    where = ", ".join(f"{b} ({builds[b][0][0]} line {builds[b][0][1]})" for b in built[:3])
    return RULE.at(
        path,
        candidate.line,
        candidate.column,
        f"names {candidate.written}, which no compose builds with; the composes build {where}",
        hint="name the Dockerfile the build uses, or point the build at this one",
    )


# --- candidates in notes --------------------------------------------------------------------


def note_candidates(note: Note) -> list[Candidate]:
    """Code spans and links of the prose blocks, the words of shell blocks, and the targets
    of link reference definitions (which are no block)."""
    folder = posixpath.dirname(note.path)
    found: list[Candidate] = []
    code_lines: set[int] = set()
    for block in note.blocks:
        if block.kind == "code":
            code_lines.update(range(block.line, block.end_line + 1))
            found += _code_block(note, block.line, block.line_texts, folder)
            continue
        for line in range(block.line, block.end_line + 1):
            found += _prose_line(note.lines[line - 1], line, folder)
    for number, text in enumerate(note.lines, 1):
        match = REFERENCE.match(text) if number not in code_lines else None
        if match:
            group = 1 if match.group(1) is not None else 2
            found += _link(match.group(group), number, match.start(group) + 1, folder)
    return found


def _prose_line(text: str, line: int, folder: str) -> list[Candidate]:
    """Code spans and link targets of one line of prose."""
    if "`" not in text and "](" not in text:
        return []  # neither a code span nor a link
    made = MAKES.search(text) is not None
    found: list[Candidate] = []
    for span in CODE_SPAN.finditer(text):
        body = span.group(2)
        column = span.start(2) + len(body) - len(body.lstrip()) + 1
        found += _command(body.strip(), line, column, ("", folder), made)[0]
    masked = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)
    for link in LINK.finditer(masked):
        group = 1 if link.group(1) is not None else 2
        found += _link(link.group(group), line, link.start(group) + 1, folder)
    return found


def _link(target: str, line: int, column: int, folder: str) -> list[Candidate]:
    """A relative link target, its ``#anchor`` and ``?query`` left off."""
    if not target or target.startswith(("#", "/", "~")) or SCHEME.match(target):
        return []
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not PATH.fullmatch(path):
        return []
    return [Candidate(path, line, column, (folder,), link=True)]


def _code_block(
    note: Note, first: int, line_texts: tuple[tuple[int, str], ...], folder: str
) -> list[Candidate]:
    """The path words of a shell block's commands, up to a ``cd``."""
    fence = FENCE.match(note.lines[first - 1])
    if fence is None or fence.group(1).lower() not in SHELLS:
        return []
    found: list[Candidate] = []
    for line, text in line_texts:
        prompt = PROMPT.match(text)
        command = text[prompt.end() :] if prompt else text
        if not command.strip() or command.lstrip().startswith("#"):
            continue
        column = note.lines[line - 1].find(command) + 1
        words, moved = _command(command, line, column, ("", folder), False)
        found += words
        if moved:
            break  # after a cd, paths are relative to somewhere else
    return found


def _command(
    text: str, line: int, column: int, bases: tuple[str, ...], made: bool
) -> tuple[list[Candidate], bool]:
    """The path words of a command line (or of prose in a code span), and whether it moves
    to another folder (``cd``, whose own target is still a path to check). What ``cp``,
    ``mv``, ``mkdir``, ``touch``, ``>`` or ``-o`` makes is marked made."""
    found: list[Candidate] = []
    start = 0
    for piece in COMMANDS.split(text):
        at = text.find(piece, start)
        start = at + len(piece)
        masked = SUBSTITUTION.sub(lambda m: m.group(0).replace(" ", "_"), piece)
        words = [(piece[m.start() : m.end()], m.start()) for m in WORD.finditer(masked)]
        while words and (words[0][0] in PREFIXES or "=" in words[0][0]):
            words.pop(0)
        name = words[0][0] if words else ""
        makes = {i for i in range(1, len(words)) if name in MAKERS}
        if name in WRITERS and len(words) > 2:
            makes.add(len(words) - 1)
        makes |= {i + 1 for i, (word, _) in enumerate(words) if word in OUTPUTS}
        for i, (word, offset) in enumerate(words):
            candidate = _word(word, line, column + at + offset, bases, made or i in makes)
            if candidate is not None:
                found.append(candidate)
        if name in ("cd", "pushd"):
            return found, True
    return found, False


def _word(
    word: str, line: int, column: int, bases: tuple[str, ...], made: bool
) -> Candidate | None:
    """A word as a path: ``--file=x/y`` gives ``x/y``; quotes, brackets around it and
    punctuation after it are prose. A word under a command substitution (``$(tool
    home)/x/y``) is a path from the root: the command prints the checkout's folder. Any other
    word holding a scheme, ``$`` (a variable may be any folder), ``~``, a glob or a bracket
    inside is no path of the estate."""
    if "/" not in word:
        return None  # every path read here holds one, a rooted one too
    rooted = ROOTED.match(word)
    if rooted is not None:
        return _rooted(rooted, line, column, made)
    if "=" in word:
        cut = word.rindex("=") + 1
        word, column = word[cut:], column + cut
    stripped = word.lstrip("([<")
    column += len(word) - len(stripped)
    word = stripped.rstrip(")]>.:!?")
    if "/" not in word or not PATH.fullmatch(word):
        return None
    return Candidate(word, line, column, bases, made=made)


def _rooted(match: re.Match[str], line: int, column: int, made: bool) -> Candidate | None:
    """The path under ``$(...)``, from the root, with the substitution it is written under."""
    rest = match.group("rest").rstrip(")]>.:!?")
    if not PATH.fullmatch(rest):
        return None
    prefix = match.group(0)[: match.start("rest")]
    return Candidate(rest, line, column, ("",), made=made, prefix=prefix)


# --- candidates in compose comments ---------------------------------------------------------


def comment_candidates(compose: Compose) -> list[Candidate]:
    """The path words of every comment, from the compose's folder (as Compose reads paths)
    or the root."""
    folder = posixpath.dirname(compose.path)
    found = []
    for comment in compose.comments:
        if "/" not in comment.text:
            continue  # no word of it can be a path
        made = MAKES.search(comment.text) is not None
        for match in SLASHED.finditer(comment.text):
            column = comment.column + 1 + match.start()
            candidate = _word(match.group(0), comment.line, column, (folder, ""), made)
            if candidate is not None:
                found.append(candidate)
    return found


RULE: Rule[RuleOptions] = Rule(
    id="D011",
    name="dead-path",
    family="drift",
    targets=("note", "compose"),
    severity=Severity.WARNING,
    check=check,
    doc=__doc__,
)
