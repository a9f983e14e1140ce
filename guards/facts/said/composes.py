"""The layouts of composes and their neighbours: comments on ``environment:`` entries and on
flags, the profile block and tier lines (:mod:`.profile`), and figures in file names."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ...sources.compose.compose import Compose
from ...sources.compose.services import Service
from ...sources.modelfile import Modelfile
from ..knobwords import knob_of_key, knob_of_words
from .base import VALUE, VAR, Q, Statement, value_of
from .profile import profile_statements, tier_statements

ENABLE = re.compile(r"\b(?P<word>enable|disable)[sd]?\b(?:(?!\bnot\b).)*\bby\s+default\b", re.I)
COMMENT_DEFAULT = re.compile(
    rf"\bdefaults?\s*(?:\bis\b|:|\bto\b|=)\s*{Q}(?P<value>{VALUE}){Q}", re.I
)
SETTING = re.compile(rf"^\s*(?:-\s*)?(?:export\s+)?{VAR}\s*[=:]|^\s*-{{1,2}}[a-z]", re.I)
RULER = re.compile(r"^[\s#]*[-=─━*_~]{3,}")
COUNT = re.compile(r"(?<![\w.])(?P<value>\d[\d,]*(?:\.\d+)?\s*[KkM]?)(?![\w.])")
NAME_FIGURE = re.compile(r"(?<![^_.-])(?P<value>\d+[kKmM])(?![^_.-])")
NAME_KNOB = "max_model_len"  # what a bare ``48k`` in a file name counts


def compose_statements(compose: Compose) -> list[Statement]:
    """Every statement a compose makes of itself: its profile block and tier lines, what its
    comments say its services' entries and flags default to, and what its name says."""
    found: list[Statement] = profile_statements(compose) + tier_statements(compose)
    for service in compose.shipped:
        found += _entry_comments(compose, service)
        found += _flag_comments(compose, service)
    return found + _name_statements(compose)


def _entry_comments(compose: Compose, service: Service) -> list[Statement]:
    lines = compose.lines
    found = []
    for name, entry in service.environment.items():
        raw = lines[entry.line - 1] if 0 < entry.line <= len(lines) else ""
        if "${" + name not in raw or raw.lstrip().startswith("#"):
            # From an env_file, or hard-coded: a "default" beside a value the operator cannot
            # change is the engine's own default, not the compose's.
            continue
        for number in _comments_about(lines, entry.line):
            text = lines[number - 1]
            said = _entry_default(text, name)
            if said is not None:
                value, column, end = said
                found.append(
                    Statement(
                        service.name,
                        name,
                        value,
                        compose.path,
                        number,
                        column,
                        "comment",
                        end_column=end,
                    )
                )
    return found


def _comments_about(lines: list[str], line: int) -> Iterator[int]:
    """The comment lines about the entry on ``line``: the run just above it at its indent,
    and the run just under it indented deeper (both end at a blank line or a ruler)."""
    indent = _indent(lines[line - 1])
    above = line - 1
    while above >= 1 and _is_comment(lines[above - 1]) and _indent(lines[above - 1]) == indent:
        yield above
        above -= 1
    below = line + 1
    while (
        below <= len(lines) and _is_comment(lines[below - 1]) and _indent(lines[below - 1]) > indent
    ):
        yield below
        below += 1


def _is_comment(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith("#") and not RULER.match(text)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _entry_default(text: str, name: str) -> tuple[str, int, int] | None:
    """(value, column, end column) a comment line says the entry defaults to; None when it
    says nothing of its default, is a setting itself, or is about another variable."""
    body = text.lstrip().lstrip("#")
    if SETTING.match(body) or any(v != name for v in re.findall(rf"\b{VAR}\b", body)):
        return None
    enable = ENABLE.search(text)
    if enable is not None:
        word = "on" if enable.group("word").lower() == "enable" else "off"
        return word, enable.start() + 1, enable.end() + 1
    said = COMMENT_DEFAULT.search(text)
    if said is not None:
        value = value_of(said.group("value").rstrip(".:"))
        if value is not None:
            written = said.group("value").rstrip(".:")
            return value, said.start("value") + 1, said.start("value") + 1 + len(written)
    return None


def _flag_comments(compose: Compose, service: Service) -> list[Statement]:
    """``--max-model-len 32768  # 32K context``: a comment on the flag's line, or alone on the
    line above, naming the flag's knob and one count."""
    found = []
    lines = compose.lines
    for knob in service.knobs.values():
        if knob.flag is None or knob.source not in ("command", "entrypoint"):
            continue
        for number in (knob.line, knob.line - 1):
            if not 0 < number <= len(lines):
                continue
            text = lines[number - 1]
            hash_at = text.find("#", knob.column if number == knob.line else 0)
            if hash_at < 0 or (number != knob.line and not _is_comment(text)):
                continue
            comment = text[hash_at + 1 :]
            counts = list(COUNT.finditer(comment))
            if len(counts) != 1 or knob_of_words(comment) != knob.name:
                continue
            value = counts[0].group("value").replace(" ", "")
            column = hash_at + 2 + counts[0].start("value")
            end = hash_at + 2 + counts[0].end("value")
            found.append(
                Statement(
                    service.name,
                    knob.name,
                    value,
                    compose.path,
                    number,
                    column,
                    "comment",
                    end_column=end,
                )
            )
            break
    return found


def name_figure(path: str, model: str) -> str | None:
    """The one count with a unit suffix a file's stem carries (``48k`` of
    ``llama3.1_q6k_48k.Modelfile``), or None: none, several, or one the ``model`` the file
    serves carries too (then the figure names the model, not a setting)."""
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    figures = [m.group("value") for m in NAME_FIGURE.finditer(stem)]
    if len(figures) != 1 or _carries(model, figures[0]):
        return None
    return figures[0]


def _carries(text: str, figure: str) -> bool:
    return (
        re.search(rf"(?<![a-z0-9]){re.escape(figure.lower())}(?![a-z0-9])", text.lower())
        is not None
    )


def modelfile_statements(modelfile: Modelfile) -> list[Statement]:
    """What a Modelfile's name says of the context it sets, placed at the ``PARAMETER`` line
    that sets it (the last one: Ollama keeps the last value)."""
    figure = name_figure(modelfile.path, modelfile.base or "")
    setting = [p for p in modelfile.parameters if knob_of_key(p.key) == NAME_KNOB]
    if figure is None or not setting:
        return []
    at = setting[-1]
    return [Statement(None, NAME_KNOB, figure, modelfile.path, at.line, at.column, "name")]


def _name_statements(compose: Compose) -> list[Statement]:
    """What a compose's name says of the context its one server sets (``qwen-32k.yml`` over
    ``--max-model-len``), at the flag; nothing when several services set it."""
    setting = [s for s in compose.shipped if (k := s.knob(NAME_KNOB)) and k.flag is not None]
    if len(setting) != 1:
        return []
    service = setting[0]
    models = " ".join(service.value(k) or "" for k in ("model", "served_model_name", "image"))
    figure = name_figure(compose.path, models)
    knob = service.knob(NAME_KNOB)
    if figure is None or knob is None:
        return []
    return [
        Statement(
            service.name,
            NAME_KNOB,
            figure,
            compose.path,
            knob.line,
            knob.column,
            "name",
            end_column=knob.end_column,
        )
    ]
