"""The word splits the compose reader makes, each memoised (bounded) and with a quick path.

A compose estate repeats its words and lines (the same flags, the same entrypoint lines in
each copy of a service), and most words hold no quote, backslash or comment: for those a
regular expression gives what shlex gives, much faster. Anything else goes to shlex (or to the
written-word scanner) as before; tests/sources/compose/test_fast_split.py holds both paths to
the same results.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

MEMO_SIZE = 4096  # distinct texts each split remembers (an estate repeats far fewer)
PUNCTUATION = "();<>|&"  # shlex's punctuation_chars=True
# What makes shlex do more than cut at blanks and punctuation: its whitespace, escape, quotes
# and comment characters (shlex.shlex(posix=True) defaults).
SHLEX_SPECIAL = re.compile(r"[ \t\r\n\\\"'#]")
QUOTING = re.compile(r"[\\\"']")  # shlex.split keeps no comments: only these are special
PUNCTUATION_RUNS = re.compile(r"[();<>|&]+|[^();<>|&]+")
FIELDS = re.compile(r"[^ \t\r\n]+")
NON_BLANKS = re.compile(r"\S+")
GROUPING = re.compile(r"[\"']|\$\{")  # what keeps blanks inside a written word


@lru_cache(maxsize=MEMO_SIZE)
def shell_parts(text: str) -> tuple[str, ...] | None:
    """One word as ``shlex.shlex(text, posix=True, punctuation_chars=True)`` with
    ``whitespace_split`` splits it: quotes removed, each run of ``();<>|&`` apart. None: a
    quote is left open (shlex raises)."""
    quick = quick_parts(text)
    if quick is not None:
        return quick
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return tuple(lexer)
    except ValueError:
        return None


def quick_parts(text: str) -> tuple[str, ...] | None:
    """:func:`shell_parts` of a word with no blank, backslash, quote or ``#``: the runs of
    punctuation and of other characters; None for any other word."""
    if SHLEX_SPECIAL.search(text):
        return None
    return tuple(PUNCTUATION_RUNS.findall(text))


@lru_cache(maxsize=MEMO_SIZE)
def shell_fields(text: str) -> tuple[str, ...]:
    """``shlex.split(text)``; raises ValueError as it does (a quote left open)."""
    quick = quick_fields(text)
    return quick if quick is not None else tuple(shlex.split(text))


def quick_fields(text: str) -> tuple[str, ...] | None:
    """:func:`shell_fields` of a text with no backslash or quote: its runs of non-blanks
    (shlex's blanks: space, tab, CR, LF); None for any other text."""
    if QUOTING.search(text):
        return None
    return tuple(FIELDS.findall(text))


@lru_cache(maxsize=MEMO_SIZE)
def written_words(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, word) of the whitespace-separated words of a line as written, each ``${...}``
    and quoted run kept whole."""
    quick = quick_words(text)
    return quick if quick is not None else scanned_words(text)


def quick_words(text: str) -> tuple[tuple[int, str], ...] | None:
    """:func:`written_words` of a line with no quote and no ``${``: its runs of non-blanks
    (``\\S`` is what ``str.isspace`` is not); None for any other line."""
    if GROUPING.search(text):
        return None
    return tuple((match.start(), match.group()) for match in NON_BLANKS.finditer(text))


def scanned_words(text: str) -> tuple[tuple[int, str], ...]:
    """:func:`written_words`, character by character: a quote runs to the same quote, a
    ``${`` to its ``}`` (nested ones counted), and only a blank outside both ends a word."""
    words: list[tuple[int, str]] = []
    start, depth, quote = None, 0, ""
    for i, char in enumerate(text + " "):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif text.startswith("${", i):
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char.isspace() and not quote and not depth:
            if start is not None:
                words.append((start, text[start:i]))
                start = None
        elif start is None:
            start = i
    return tuple(words)
