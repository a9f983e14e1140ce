"""D010 unread-override: an override the estate offers reaches what it is for.

Why: an estate that gives each service an env file of overrides (``env_file:
./svc/override.env``) invites the operator to set knobs there. A file of that name that no
compose loads - the copy left behind when the files moved, the service whose compose forgot
its ``env_file:`` entry - looks the same and changes nothing: a value set there never reaches
a container, and a reader who finds it has two values for one knob. An env file is the
estate's when it is named ``*.env`` or ``.env*`` under the root (the always-excluded folders
and the ``exclude`` setting aside); it is flagged only when nothing loads it - no
``env_file:`` names it, from the compose's folder or a folder above it (a project of several
``-f`` files takes paths from the first file's folder), and it feeds no interpolation - and a
compose in its folder, the folder above or one below loads a file of the same name, or a
loaded file's path ends with its path (the same file at another depth). Copies meant to be
made (``.env.example``, ``*.sample``, ``*.template``, ``*.dist``) are documentation, and an env
file nothing relates to (a launcher's settings) is silent.

Compose keeps two environments apart, and the rule follows it. A file that feeds
interpolation - a compose folder's ``.env``, the ``env-files``, or a file of shell exports
(``export NAME=...``) beside the composes that the operator sources - gives ``${NAME}`` its
value and nothing else: a container sees a variable only when ``environment:`` lists it or an
``env_file:`` holds it. A variable such a file sets, or a comment in it names as
``NAME=value``, is flagged when its prefix is the one a service's program reads (its engine's,
``VLLM_``; a part of its image's path, ``nim`` in ``nvcr.io/nim/...``, ``ollama``) and nothing
carries it: no compose reads ``${NAME}``, no service's environment or loaded env file holds it,
and no compose loads the file itself (nor a ``.env`` the estate makes from ``env-files``) or
mounts it into a container. The other way round, a note that sets ``NAME=value`` under a line
naming an env file a compose loads through ``env_file:`` is flagged when that compose reads
``${NAME}`` and no container reads the name itself (no key of the compose, no ``$$NAME``) and
the file does not set it: the container gets the value, the ``${NAME}`` never does. A line
that names another env file beside it is not clear, and stays silent. A note's sentence that
every environment variable of a compose comes from interpolation ("All environment variables in
`docker-compose.yml` use `${VAR:-default}`, so a `.env` overrides them"; the one compose it
names) is flagged when that compose writes entries as plain values (``OLLAMA_HOST=0.0.0.0``):
a ``.env`` value for them is never read. A sentence about some variables ("all GPU tuning
knobs are configurable") claims nothing of the others.

Bad:
    --- composes/example.yml
    services:
      ollama:
        image: ollama/ollama:0.9
        env_file: ./ollama/override.env
      tgi:
        image: ghcr.io/huggingface/text-generation-inference:3.3
        env_file: ./.env
    --- composes/ollama/override.env
    OLLAMA_CONTEXT_LENGTH=16384
    --- composes/tgi/override.env
    MAX_TOTAL_TOKENS=16384
    --- composes/large.env
    export OLLAMA_KV_CACHE_TYPE=q8_0

Finds:
    composes/large.env:1:1: D010 OLLAMA_KV_CACHE_TYPE reaches no container: a value set in composes/large.env goes to interpolation only, no compose reads ${OLLAMA_KV_CACHE_TYPE}, and the services its prefix OLLAMA_ is for do not list it under environment: (composes/example.yml: ollama, image ollama/ollama:0.9)
    composes/tgi/override.env:1:1: D010 no compose loads composes/tgi/override.env, while composes/example.yml loads composes/ollama/override.env through env_file: a value set here never reaches a container

Good:
    --- composes/example.yml
    services:
      ollama:
        image: ollama/ollama:0.9
        env_file: ./ollama/override.env
        environment:
          OLLAMA_KV_CACHE_TYPE: ${OLLAMA_KV_CACHE_TYPE:-f16}
      tgi:
        image: ghcr.io/huggingface/text-generation-inference:3.3
        env_file: [./.env, ./tgi/override.env]
    --- composes/ollama/override.env
    OLLAMA_CONTEXT_LENGTH=16384
    --- composes/tgi/override.env
    MAX_TOTAL_TOKENS=16384
    --- composes/large.env
    export OLLAMA_KV_CACHE_TYPE=q8_0
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from ..facts import said
from ..facts.engines import PREFIXES
from ..facts.said import Statement
from ..facts.subjects import of_estate
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose, Service
from ..sources.patterns import glob_match, lazy
from .base import Context, Rule
from .options import RuleOptions

if TYPE_CHECKING:
    from ..run.environment import EnvUse, EnvVariables
    from ..run.estate import Estate

TEMPLATE = lazy(r"(?:^|[._-])(?:example|sample|template|tmpl|dist)(?:$|[._-])", re.I)


def check(compose: Compose, context: Context) -> list[Finding]:
    use = context.estate.env_use.get(compose.path)
    if use is None:
        return []
    return [
        *_orphans(compose, context.estate, use),
        *_unforwarded(compose, context.estate),
        *_misplaced(compose, context.estate, use),
        *_universal(compose, context.estate),
    ]


def _orphans(compose: Compose, estate: Estate, use: EnvUse) -> list[Finding]:
    """Env files no compose loads, beside one a compose loads under the same name."""
    sources = _sources(estate, compose.path, use)
    if not sources:
        return []
    loaded = _loaded(estate)
    findings = []
    for orphan in _env_files(estate):
        if orphan in loaded:
            continue
        sibling = next((f for f in sources if _related(compose.path, f, orphan)), None)
        if sibling is not None and _first_relating(estate, orphan) == compose.path:
            findings.append(_finding(compose, orphan, sibling))
    return findings


def _finding(compose: Compose, orphan: str, sibling: str) -> Finding:
    return RULE.at(
        orphan,
        1,
        1,
        f"no compose loads {orphan}, while {compose.path} loads {sibling} through env_file: "
        "a value set here never reaches a container",
        hint=f"name {orphan} in the env_file: of the service it is for, or delete it",
    )


def _env_files(estate: Estate) -> list[str]:
    """The estate's env files, by name, except copies meant to be made from them."""
    files = []
    for path in sorted(estate.tree.files):
        name = posixpath.basename(path)
        if not (name.endswith(".env") or name.startswith(".env")):
            continue
        if _template(path) or _excluded(estate, path):
            continue
        files.append(path)
    return files


def _template(path: str) -> bool:
    """A copy meant to be made (``.env.example``, ``override.env.sample``): documentation."""
    return TEMPLATE.search(posixpath.basename(path).removeprefix(".env")) is not None


def _excluded(estate: Estate, path: str) -> bool:
    return any(glob_match(path, pattern) for pattern in estate.config.exclude)


def _loaded(estate: Estate) -> set[str]:
    """Every file a compose may load: its interpolation files, and each ``env_file:`` name
    resolved from the compose's folder and from every folder above it."""
    loaded: set[str] = set()
    for path, use in estate.env_use.items():
        loaded.update(use.interpolation)
        for folder in _folders(posixpath.dirname(path)):
            loaded.update(posixpath.normpath(posixpath.join(folder, n)) for n in use.named)
    return loaded


def _sources(estate: Estate, path: str, use: EnvUse) -> list[str]:
    """The files ``env_file:`` names that exist, from the folder of the compose or above."""
    files = estate.tree.files
    found = []
    for name in use.named:
        for folder in _folders(posixpath.dirname(path)):
            candidate = posixpath.normpath(posixpath.join(folder, name))
            if candidate in files:
                found.append(candidate)
                break
    return found


def _folders(folder: str) -> list[str]:
    """``folder`` and every folder above it up to the root ("")."""
    found = [folder]
    while folder:
        folder = posixpath.dirname(folder)
        found.append(folder)
    return found


def _related(compose: str, loaded: str, orphan: str) -> bool:
    """The compose loads a file the estate clearly meant ``orphan`` to be one of."""
    if loaded == orphan or posixpath.basename(loaded) != posixpath.basename(orphan):
        return False
    if loaded.endswith("/" + orphan):
        return True  # the same file at another depth
    here, there = posixpath.dirname(compose), posixpath.dirname(orphan)
    return here == there or posixpath.dirname(there) == here or posixpath.dirname(here) == there


def _first_relating(estate: Estate, orphan: str) -> str | None:
    """The first compose (by path) that relates to ``orphan``: it alone reports it."""
    for path in sorted(estate.env_use):
        if any(_related(path, f, orphan) for f in _sources(estate, path, estate.env_use[path])):
            return path
    return None


# --- variables that reach no container ------------------------------------------------------

READ = lazy(r"(?<!\$)\$\{?([A-Za-z_][A-Za-z0-9_]*)")  # interpolated: `$$` is the container's
ESCAPED = lazy(r"\$\$\{?([A-Za-z_][A-Za-z0-9_]*)")  # the container's shell reads it
KEY = lazy(r"(?m)^[ \t]*(?:-[ \t]*)?[\"']?([A-Za-z_][A-Za-z0-9_]*)[\"']?[ \t]*(?::(?=\s|$)|=|$)")
ASSIGNED = lazy(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=")
MENTION = lazy(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]*\.env)(?![\w/-])")


class Wiring(NamedTuple):
    """How variables travel in the estate, built once per estate: the names some compose
    interpolates or some service's environment holds (``reached``), the files a container
    receives whole (``passed``), the files that feed interpolation and no ``env_file:`` loads
    (``sources``), the services under each variable prefix they run (``owners``), and the
    lines of notes that set a variable under a line naming env files (``settings``)."""

    reached: frozenset[str]
    passed: frozenset[str]
    sources: dict[str, EnvVariables]
    owners: dict[str, list[tuple[str, str, str]]]  # prefix -> (compose, service, image)
    settings: tuple[tuple[str, int, str, tuple[str, ...]], ...]  # notes' NAME=value lines
    universal: tuple[Statement, ...] = ()  # notes' "every variable is interpolated" sentences


_BUILT: list[tuple[Estate, Wiring]] = []


def _wiring(estate: Estate) -> Wiring:
    if not _BUILT or _BUILT[0][0] is not estate:
        _BUILT[:] = [(estate, _build(estate))]
    return _BUILT[0][1]


def _build(estate: Estate) -> Wiring:
    reached: set[str] = set()
    passed: set[str] = set()
    sources: dict[str, EnvVariables] = {}
    owners: dict[str, list[tuple[str, str, str]]] = {}
    for compose in sorted(estate.composes, key=lambda c: c.path):
        reached.update(READ.findall(compose.text))
        for service in compose.services:
            reached.update(service.environment)
            for prefix, image in dict(_prefixes(service)).items():
                owners.setdefault(prefix, []).append((compose.path, service.name, image))
        use = estate.env_use.get(compose.path)
        if use is None:
            continue
        passed.update(use.loaded)
        if _passes_dotenv(use):
            passed.update(use.interpolation)
        reached.update(n for p in use.loaded if p in use.files for n in use.files[p].sets)
        for path in (*use.interpolation, *use.shell):
            if path in use.files and not _template(path):
                sources.setdefault(path, use.files[path])
    texts = [c.text for c in estate.composes]
    for path in list(sources):
        if path in passed or any(_mounted(path, text) for text in texts):
            sources.pop(path, None)
    settings = tuple(_settings(estate))
    universal = tuple(
        s
        for note in estate.notes
        for block in note.blocks
        if block.kind == "paragraph" and block.current
        for s in said.universal(note, block)
    )
    return Wiring(frozenset(reached), frozenset(passed), sources, owners, settings, universal)


def _mounted(path: str, text: str) -> bool:
    """The compose mounts a file of that name into a container (``./.env:/app/.env``),
    whose program then reads the file itself."""
    return re.search(rf"(?<![\w.-]){re.escape(posixpath.basename(path))}:/", text) is not None


def _passes_dotenv(use: EnvUse) -> bool:
    """The compose loads its project's ``.env`` through ``env_file:`` while no folder holds
    one: the estate makes it from the files that feed interpolation (``env-files``), so a
    container receives those whole."""
    named = any(posixpath.basename(n) == ".env" for n in use.named)
    return named and not any(posixpath.basename(p) == ".env" for p in use.loaded)


def _prefixes(service: Service) -> list[tuple[str, str]]:
    """The variable prefixes a service's program reads: its engine's (``VLLM_``), and each
    path component of its image (``nvcr.io/nim/...`` -> ``NIM``), with the image."""
    image = service.value("image") or ""
    found = [(p.rstrip("_"), image) for p in PREFIXES.get(service.engine, ())]
    name = image.split("@")[0].rsplit(":", 1)[0] if "/" in image else image.split(":")[0]
    parts = name.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]  # the registry
    found += [(p.upper(), image) for p in parts if re.fullmatch(r"[a-z][a-z0-9]+", p)]
    return found


def _unforwarded(compose: Compose, estate: Estate) -> list[Finding]:
    """Variables a file feeding interpolation sets or names under the prefix of a service's
    program, which no compose interpolates and no service's environment holds."""
    wiring = _wiring(estate)
    findings = []
    for path, variables in sorted(wiring.sources.items()):
        mentioned = [*variables.sets.items(), *variables.named]
        for name, line in sorted(dict(reversed(mentioned)).items(), key=lambda i: i[1]):
            owners = wiring.owners.get(name.split("_", 1)[0], [])
            if name in wiring.reached or not owners or owners[0][0] != compose.path:
                continue
            findings.append(_unforwarded_finding(path, line, name, owners))
    return findings


def _unforwarded_finding(
    path: str, line: int, name: str, owners: list[tuple[str, str, str]]
) -> Finding:
    first, service, image = owners[0]
    more = f", and {len(owners) - 1} more" if len(owners) > 1 else ""
    prefix = name.split("_", 1)[0]
    return RULE.at(
        path,
        line,
        1,
        f"{name} reaches no container: a value set in {path} goes to interpolation only, no "
        f"compose reads ${{{name}}}, and the services its prefix {prefix}_ is for do not list "
        f"it under environment: ({first}: {service}, image {image}{more})",
        hint=f"add `{name}: ${{{name}}}` to the environment: of the service that reads it",
    )


# --- a note that sets an interpolated variable in an env_file -------------------------------


def _misplaced(compose: Compose, estate: Estate, use: EnvUse) -> list[Finding]:
    """Lines of a note that set a variable in a file the compose loads through ``env_file:``
    (its container's environment) while the compose reads that variable in ``${...}``."""
    interpolated = set(READ.findall(compose.text)) - _container_names(compose)
    files = {p: use.files[p] for p in use.loaded if p in use.files}
    files = {p: v for p, v in files.items() if p not in use.interpolation}
    if not interpolated or not files:
        return []
    findings = []
    for note, line, name, mentions in _wiring(estate).settings:
        found = {_which(mention, files) for mention in mentions}
        path = found.pop() if len(found) == 1 else None  # beside another file: not clear
        if path is None or name not in interpolated or name in files[path].sets:
            continue
        if _first_loading(estate, path, name) == compose.path:
            findings.append(_misplaced_finding(note, line, name, path, compose, use))
    return findings


def _settings(estate: Estate) -> Iterator[tuple[str, int, str, tuple[str, ...]]]:
    """Each ``NAME=value`` line of a note's blocks, with the env file paths written on the
    last line of the block (that line or one above) that names any."""
    for note in estate.notes:
        for block in note.blocks:
            mentions: tuple[str, ...] = ()
            for line, text in block.line_texts:
                mentions = tuple(MENTION.findall(text)) or mentions
                match = ASSIGNED.match(text)
                if match and mentions:
                    yield note.path, line, match.group(1), mentions


def _which(mention: str, files: dict[str, EnvVariables]) -> str | None:
    """The file of ``files`` a path written in prose names (whole, or a tail of two parts
    or more), None for any other env file."""
    mention = posixpath.normpath(mention)
    for path in files:
        if path == mention or ("/" in mention and path.endswith("/" + mention)):
            return path
    return None


def _container_names(compose: Compose) -> set[str]:
    """Names a container of the compose reads by name: each written as a key or an item
    (``NAME: ...``, ``- NAME=...``, what ``environment:`` holds), and each ``$$NAME``. The
    names an ``env_file:`` gives are only present, not read."""
    return set(KEY.findall(compose.text)) | set(ESCAPED.findall(compose.text))


def _first_loading(estate: Estate, path: str, name: str) -> str | None:
    """The first compose (by path) that loads ``path`` and interpolates ``name``."""
    for compose in sorted(estate.composes, key=lambda c: c.path):
        use = estate.env_use.get(compose.path)
        if use is not None and path in use.loaded and name in READ.findall(compose.text):
            return compose.path
    return None


def _misplaced_finding(
    note: str, line: int, name: str, path: str, compose: Compose, use: EnvUse
) -> Finding:
    source = ", ".join(use.interpolation) or "the .env beside it"
    return RULE.at(
        note,
        line,
        1,
        f"{name} is set here in {path}, which {compose.path} loads through env_file: "
        f"(container environment only), but the compose reads ${{{name}}} by interpolation: "
        "a value set there never reaches it",
        hint=f"set {name} in {source}, the file the compose is interpolated from",
    )


# --- a note that says every variable of a compose is interpolated ---------------------------


def _universal(compose: Compose, estate: Estate) -> list[Finding]:
    """Sentences saying every variable of this compose comes from interpolation (a ``.env``
    overrides it), while the compose writes some of its environment as plain values."""
    claims = [c for c in _wiring(estate).universal if _names(estate, c.subject, compose)]
    literal = _literal_entries(compose) if claims else []
    if not literal:
        return []
    shown = ", ".join(f"{name}={value} (line {line})" for name, value, line in literal[:3])
    more = f" and {len(literal) - 3} more" if len(literal) > 3 else ""
    return [
        RULE.at(
            claim.path,
            claim.line,
            claim.column,
            f"says every environment variable of {compose.path} comes from interpolation, "
            f"so a .env sets it, but {compose.path} writes {shown}{more} as plain values: "
            "a .env value for them is never read",
            hint="say which variables are fixed, or write them as ${NAME:-value}",
            end_column=claim.end_column,
        )
        for claim in claims
    ]


def _names(estate: Estate, subject: str | None, compose: Compose) -> bool:
    """Whether a statement's subject names ``compose`` and no other compose."""
    if subject is None:
        return False
    found = of_estate(estate, estate.composes).resolve(subject)
    return bool(found) and all(t.compose.path == compose.path for t in found or [])


def _literal_entries(compose: Compose) -> list[tuple[str, str, int]]:
    """The ``environment:`` entries written in the compose with a value and no ``${...}``
    (not from an env_file, not a bare pass-through), by line."""
    found = []
    for service in compose.shipped:
        for name, entry in service.environment.items():
            raw = compose.lines[entry.line - 1] if 0 < entry.line <= len(compose.lines) else ""
            if entry.value is None or name not in raw or "${" in raw or raw.lstrip()[:1] == "#":
                continue
            found.append((name, entry.value, entry.line))
    return sorted(set(found), key=lambda item: item[2])


RULE: Rule[RuleOptions] = Rule(
    id="D010",
    name="unread-override",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__ or "",
)
