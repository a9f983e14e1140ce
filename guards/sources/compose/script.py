"""The bash ``entrypoint:`` script of a compose service, evaluated just far enough.

Estates build the speculative-decoding config in the entrypoint: ``_spec_n="$${SPEC_N:-7}"``,
an ``off`` alias through ``case "$${SPEC:-}" in off|...) _spec_n=0 ;; esac``, then
``--speculative-config "{\\"method\\":\\"dflash\\",...,\\"num_speculative_tokens\\":$$_spec_n}"``.
Compose turns ``$$`` into ``$`` first; bash then expands against the *container* environment,
which holds only the names the service declares under ``environment:``.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from collections.abc import Mapping
from functools import cached_property
from typing import NamedTuple

from .engines import Token
from .interpolate import TemplateError, Unresolved, Value, interpolate
from .words import shell_parts

ASSIGNMENT = r"^\s*(?:export\s+|local\s+|readonly\s+)?{name}=(.*)$"  # then _value()
CASE_ALIAS = re.compile(
    r'case\s++"?\$\{?(\w++)[^"\s]*+"?\s++in\s++([^)]++)\)\s*+(\w++)=([^\s;]++)\s*+;;'
)
VARIABLE = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
SPEC_CONFIG = "--speculative-config"
OPERATOR_CHARS = "();<>|&\n"  # what ends a word in sh, besides blanks
SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "(", ")", "|&", ";&", ";;&"}
KEYWORDS = {"if", "then", "else", "elif", "while", "until", "do", "!", "{", "}"}
POSITIONAL = {"$@", "${@}", "$*", "${*}"}
REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


class ScriptLine(NamedTuple):
    number: int  # 1-based line in the compose file
    raw: str  # as written (``$$`` escapes intact), block indentation removed
    text: str  # after compose interpolation: what bash sees
    column: int = 1  # 1-based file column where ``raw`` starts
    in_file: bool = True  # ``raw`` is the file's line (not a part of a word placed at it)

    @property
    def end_column(self) -> int:
        """Just after the line's text in the file (0: not known, the line is not the file's)."""
        return self.column + len(self.raw.rstrip()) if self.in_file else 0


class Evaluated(NamedTuple):
    """A bash variable's value at the point it is used, and where it was assigned."""

    name: str
    value: str | None
    line: ScriptLine | None
    raw: str
    variables: tuple[str, ...] = ()
    from_env: tuple[str, ...] = ()
    note: str | None = None


class SpecConfig(NamedTuple):
    method: str | None  # "mtp", "dflash", ... or "draft_model" when only a model is named
    depth: str  # the num_speculative_tokens text: a number or ``$var``
    line: ScriptLine


class Script:
    def __init__(
        self,
        lines: list[ScriptLine],
        env: Mapping[str, EnvEntry],
        words: list[list[Token]] | None = None,
    ) -> None:
        self.lines = lines
        self.env = env
        self.words = words or []  # per line: the words as written, after compose interpolation
        # what assignment() and evaluate() found per name: neither the lines nor the
        # environment change once the script is read
        self._assignments: dict[str, tuple[ScriptLine, str] | None] = {}
        self._evaluated: dict[str, Evaluated] = {}

    @cached_property
    def _env_values(self) -> dict[str, str]:
        return {name: entry.value for name, entry in self.env.items() if entry.value is not None}

    def container_env(self) -> dict[str, str]:
        return dict(self._env_values)  # a copy: callers add the script's own values

    def assignment(self, name: str) -> tuple[ScriptLine, str] | None:
        """The first assignment of ``name`` (the default; later ones are conditional)."""
        if name not in self._assignments:
            self._assignments[name] = self._first_assignment(name)
        return self._assignments[name]

    def _first_assignment(self, name: str) -> tuple[ScriptLine, str] | None:
        pattern = re.compile(ASSIGNMENT.format(name=re.escape(name)))
        for line in self.lines:
            match = pattern.match(line.text)
            if match:
                return line, _unquote(_without_comment(match.group(1)))
        return None

    def evaluate(self, name: str) -> Evaluated:
        if name not in self._evaluated:
            self._evaluated[name] = self._evaluation(name)
        return self._evaluated[name]

    def _evaluation(self, name: str) -> Evaluated:
        found = self.assignment(name)
        if found is None:
            return Evaluated(
                name, None, None, "", note=f"${name} is never assigned in the entrypoint script"
            )
        line, rhs = found
        try:
            value = interpolate(rhs, self._env_values, unescape=False)
        except TemplateError as exc:  # bash has expansions compose does not (${#x}, ${x/a/b})
            return Evaluated(
                name, None, line, _raw_rhs(line.raw, name), note=f"cannot evaluate `{rhs}`: {exc}"
            )
        result = value.text if value.resolved else None
        from_env = _host_sources(value, self.env)
        alias = self._alias(name)
        if alias is not None:
            result = alias[0]
            entry = self.env.get(alias[1])
            if entry is not None and entry.interpolated is not None:
                from_env += entry.interpolated.from_env
        note = "; ".join(u.reason for u in value.unresolved) or None
        return Evaluated(
            name,
            result,
            line,
            _raw_rhs(line.raw, name),
            value.variables,
            tuple(dict.fromkeys(from_env)),
            note,
        )

    def _alias(self, name: str) -> tuple[str, str] | None:
        """(value, variable) when a ``case`` alias such as SPEC=off overrides ``name``."""
        env = self._env_values
        for line in self.lines:
            match = CASE_ALIAS.search(line.text)
            if match and match.group(3) == name:
                current = env.get(match.group(1), "")
                patterns = [p.strip().strip("\"'") for p in match.group(2).split("|")]
                if current and any(fnmatch.fnmatchcase(current, p) for p in patterns):
                    return match.group(4).strip("\"'"), match.group(1)
        return None

    def spec_switch(self) -> str | None:
        """The variable the script derives from SPEC_N (the drafter toggle), if any."""
        for line in self.lines:
            match = re.match(r"^\s*(\w+)=\"?\$\{SPEC_N\b", line.text)
            if match:
                return match.group(1)
        return None

    def spec_config(self) -> SpecConfig | None:
        for line in self.lines:
            at = line.text.find(SPEC_CONFIG)
            if at >= 0:
                payload = _quoted_argument(line.text[at + len(SPEC_CONFIG) :])
                if payload is not None:
                    method, depth = parse_spec_payload(payload)
                    return SpecConfig(method, depth, line)
        return None

    def commands(self) -> list[list[Token]]:
        """The script's simple commands, each as its shell words with quotes removed: split
        at ``&&``, ``;``, ``|`` and line ends (not at a ``\\`` continuation); comments and
        the keywords that open a command (``then``, ``do``, ...) left out."""
        found: list[list[Token]] = [[]]
        for line in self.words:
            continued = bool(line) and line[-1].text == "\\"
            for word in line[:-1] if continued else line:
                if word.text.startswith("#"):
                    break
                for part in _shell_parts(word):
                    if part.text in SEPARATORS:
                        found.append([])
                    elif found[-1] or part.text not in KEYWORDS:
                        found[-1].append(part)
            if not continued:
                found.append([])
        return [command for command in found if command]

    def expand(self, words: list[Token], positional: list[Token]) -> list[Token]:
        """The words as bash passes them: ``"$@"`` is ``positional``, a variable its value
        where the script assigns it or in the container's environment, an empty unquoted
        expansion no word; what cannot be evaluated is kept, unresolved."""
        out: list[Token] = []
        for word in words:
            if word.text in POSITIONAL:
                out += positional
            elif "$" not in word.text or word.raw.startswith("'"):
                out.append(word)
            elif word.raw[:1] == '"':
                out.append(self._expanded(word))
            else:  # unquoted: bash splits the value into words, and drops an empty one
                expanded = self._expanded(word)
                parts = expanded.text.split() if not expanded.unresolved else [""]
                out += [expanded.with_text(part) for part in parts]
        return out

    def _expanded(self, word: Token) -> Token:
        """A word with bash expansions: the script's own variables as the script assigns
        them, the others from the container's environment."""
        name = variable_name(word.text)
        if name is not None and self.assignment(name) is not None:
            return self._assigned(word, name)
        env = self.container_env()
        for name in dict.fromkeys(REFERENCE.findall(word.text)):
            if self.assignment(name) is not None:
                found = self.evaluate(name)
                if found.value is None:
                    return _unresolved(word, name, found.note or f"${name} is not known")
                env[name] = found.value
        try:
            value = interpolate(word.text, env, unescape=False)
        except TemplateError as exc:  # bash has expansions compose does not (${x[@]}, $(...))
            return _unresolved(word, word.text, f"cannot evaluate `{word.text}`: {exc}")
        unresolved = tuple(
            Unresolved(u.variable, self.evaluate(u.variable).note or u.reason)
            for u in value.unresolved
        )
        if not unresolved and "$" in value.text:  # $(...), $1, $#: known only at run time
            return _unresolved(word, word.text, f"bash expands `{word.text}` at run time")
        return word._replace(
            text=value.text,
            variables=value.variables,
            from_env=_host_sources(value, self.env),
            unresolved=unresolved,
        )

    def _assigned(self, word: Token, name: str) -> Token:
        """``"$var"``: the value where the script assigns it, placed at that assignment."""
        found = self.evaluate(name)
        if found.value is None:
            return _unresolved(word, name, found.note or f"${name} is not known")
        at = found.line
        assert at is not None  # assigned: evaluate found the line
        return word._replace(
            text=found.value,
            raw=found.raw,
            line=at.number,
            column=at.column + len(at.raw) - len(at.raw.lstrip()),
            end_column=at.end_column,
            variables=found.variables,
            from_env=found.from_env,
            quoted=False,
        )

    def runs(self, program: str) -> bool:
        return any(
            program in line.text and not line.text.lstrip().startswith("#") for line in self.lines
        )


class EnvEntry(NamedTuple):
    """One ``environment:`` entry: what reaches the container, and from where."""

    name: str
    value: str | None  # None: a bare pass-through the operator did not set
    line: int
    interpolated: Value | None


def _shell_parts(word: Token) -> list[Token]:
    """One written word as bash splits it: quotes removed, ``;`` ``&&`` ``|`` apart. A word
    bash would read across lines (an open quote) is kept as written."""
    parts = shell_parts(word.text)
    if parts is None:
        return [word]
    return [word.with_text(part) for part in parts]


def shell_words(text: str) -> list[str] | None:
    """``text`` as sh splits it: quotes removed, each operator (``&&`` ``||`` ``;`` ``|``
    ``(`` ``>&`` ...) a word of its own and each line end a ``;`` (after ``&&``, ``||`` or
    ``|`` the command goes on); a ``\\`` continuation joins lines, an unquoted ``#`` that opens
    a word comments out the rest of its line. None: a quote is left open."""
    lexer = shlex.shlex(text.replace("\\\n", ""), posix=True, punctuation_chars=OPERATOR_CHARS)
    lexer.whitespace, lexer.whitespace_split, lexer.commenters = " \t\r", True, ""
    try:
        parts = list(lexer)
    except ValueError:
        return None
    words: list[str] = []
    comment = False
    for part in parts:
        if not set(part) <= set(OPERATOR_CHARS):
            comment = comment or part.startswith("#")
            words += [] if comment else [part]
            continue
        pieces = part.split("\n")
        if comment and len(pieces) > 1:
            pieces[0], comment = "", False
        for index, piece in enumerate([] if comment else pieces):
            if index and (not words or words[-1] not in ("&&", "||", "|", "|&")):
                words.append(";")
            words += [piece] if piece else []
    return words


def _unresolved(word: Token, name: str, note: str) -> Token:
    return word._replace(text="", unresolved=(Unresolved(name, note),))


def _host_sources(value: Value, env: Mapping[str, EnvEntry]) -> tuple[str, ...]:
    sources: list[str] = []
    for name in value.from_env:
        entry = env.get(name)
        if entry is not None and entry.interpolated is not None:
            sources.extend(entry.interpolated.from_env)
    return tuple(dict.fromkeys(sources))


def parse_spec_payload(payload: str) -> tuple[str | None, str]:
    """(method, depth text) from a speculative-config JSON payload, parsed or not."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's limit
        data = None
    if isinstance(data, dict):
        method = data.get("method") or ("draft_model" if data.get("model") else None)
        return method, str(data.get("num_speculative_tokens", ""))
    method_match = re.search(r'"method"\s*:\s*"([^"]+)"', payload)
    depth_match = re.search(r'"num_speculative_tokens"\s*:\s*([^,}\s]+)', payload)
    method = (
        method_match.group(1)
        if method_match
        else ("draft_model" if re.search(r'"model"\s*:', payload) else None)
    )
    return method, depth_match.group(1).strip('"') if depth_match else ""


def _quoted_argument(rest: str) -> str | None:
    rest = rest.lstrip()
    if rest[:1] == "'":
        end = rest.find("'", 1)
        return rest[1:end] if end > 0 else None
    if rest[:1] == '"':
        out, i = [], 1
        while i < len(rest):
            if rest[i] == "\\" and i + 1 < len(rest):
                out.append(rest[i + 1])
                i += 2
                continue
            if rest[i] == '"':
                return "".join(out)
            out.append(rest[i])
            i += 1
    return None


def _without_comment(text: str) -> str:
    """A shell word list without its trailing ``# comment`` (a ``#`` after a space, outside
    quotes), the commands after a ``;``, ``&&`` or ``|`` on its line, and surrounding spaces."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif (char == "#" and (index == 0 or text[index - 1] in " \t")) or char in ";&|":
            return text[:index].strip()  # a comment, or the next command on the line
    return text.strip()


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _raw_rhs(raw: str, name: str) -> str:
    match = re.match(ASSIGNMENT.format(name=re.escape(name)), raw)
    return _unquote(_without_comment(match.group(1))) if match else raw.strip()


def variable_name(text: str) -> str | None:
    match = VARIABLE.match(text.strip())
    return match.group(1) if match else None
