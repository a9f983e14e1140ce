"""Read an operator's ``.env`` file the way Compose does: KEY=VALUE lines, quotes, comments."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import GuardsError, located
from . import yamlsrc

LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*+)\s*=\s*(.*)$")


def load_env_file(path: Path, shown: str) -> dict[str, str]:
    """The values an env file at ``path`` (known as ``shown``) sets; errors name it."""
    text = yamlsrc.read_text(path, shown)
    with located(shown):
        return parse_env(text)


def parse_env(text: str) -> dict[str, str]:
    """KEY=VALUE lines as Compose reads them; an error names its line, not the file."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = LINE.match(line)
        if match is None:
            raise GuardsError("expected KEY=VALUE", None, number)
        values[match.group(1)] = _value(match.group(2), number)
    return values


def _value(text: str, number: int) -> str:
    if text and text[0] in "\"'":
        quote = text[0]
        end = text.find(quote, 1)
        if end < 0:
            raise GuardsError(f"unterminated {quote} quote", None, number)
        inner = text[1:end]
        return inner.replace("\\n", "\n").replace('\\"', '"') if quote == '"' else inner
    comment = re.search(r"\s#", text)
    return (text[: comment.start()] if comment else text).strip()
