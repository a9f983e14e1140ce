"""Reading JSON from the estate (a baseline, a catalog): errors name the file and line.

``json.loads`` raises more than JSONDecodeError on hostile text: ValueError for an integer
past Python's digit limit (``sys.get_int_max_str_digits``, 4,300 by default) and RecursionError
for brackets nested a few hundred deep. Each becomes a GuardsError at the line where the
integer starts or the nesting passes ``nesting.MAX_DEPTH``.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from ..errors import GuardsError, located
from .nesting import MAX_DEPTH, TOO_DEEP, deeper_than, json_line


def parse(text: str, shown: str) -> Any:
    """The data of a JSON text known as ``shown``; anything it cannot be is a GuardsError at
    its line."""
    with located(shown):
        return _data(text)


def _data(text: str) -> Any:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GuardsError(f"invalid JSON: {exc.msg}", None, exc.lineno, exc.colno) from None
    except ValueError:  # an integer past the digit limit
        raise _huge_integer(text) from None
    except RecursionError:
        raise _too_deep(text) from None
    if deeper_than(data, MAX_DEPTH):
        raise _too_deep(text)
    return data


def _too_deep(text: str) -> GuardsError:
    return GuardsError(f"invalid JSON: {TOO_DEEP}", None, json_line(text))


def _huge_integer(text: str) -> GuardsError:
    limit = sys.get_int_max_str_digits()
    integer = rf'"(?:[^"\\]|\\.)*"|(?<![\d.eE+-])-?(\d{{{limit + 1},}})(?![\d.eE])'
    found = next((m for m in re.finditer(integer, text) if m.group(1)), None)
    line = text.count("\n", 0, found.start()) + 1 if found else 1
    digits = len(found.group(1)) if found else limit + 1
    return GuardsError(
        f"invalid JSON: an integer of {digits:,} digits (at most {limit:,} can be read)",
        None,
        line,
    )
