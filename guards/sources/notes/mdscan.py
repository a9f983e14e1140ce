"""Scanning helpers of guards' fast inline reader (:mod:`guards.sources.notes.mdinline`):
code span contents, link destinations and titles, delimiter balancing and character classes,
as markdown-it's inline rules compute them."""

from __future__ import annotations

import unicodedata

from .mdstate import WHITESPACE_CODES


class Delim:
    __slots__ = ("close", "end", "length", "marker", "open", "token")

    def __init__(self, marker: str, length: int, token: int, can_open: bool, can_close: bool):
        self.marker = marker
        self.length = length
        self.token = token
        self.end = -1
        self.open = can_open
        self.close = can_close


def code_content(text: str) -> str:
    """A code span's content: line breaks as spaces, one space stripped from both ends
    unless it is all spaces."""
    text = text.replace("\n", " ")
    if text.startswith(" ") and text.endswith(" ") and text.strip(" "):
        return text[1:-1]
    return text


def last_runs(src: str) -> dict[int, int]:
    runs: dict[int, int] = {}
    pos = 0
    while (start := src.find("`", pos)) != -1:
        pos = start + 1
        while pos < len(src) and src[pos] == "`":
            pos += 1
        runs[pos - start] = start
    return runs


def destination(src: str, pos: int, maximum: int) -> int:
    """markdown-it's parseLinkDestination: the position after it, or -1."""
    start = pos
    if src[pos] == "<":
        pos += 1
        while pos < maximum:
            ch = src[pos]
            if ch == "\n" or ch == "<":
                return -1
            if ch == ">":
                return pos + 1
            pos += 2 if ch == "\\" and pos + 1 < maximum else 1
        return -1
    level = 0
    while pos < maximum:
        ch = src[pos]
        if ch == " " or ch < " " or ch == "\x7f":
            break
        if ch == "\\" and pos + 1 < maximum:
            if src[pos + 1] == " ":
                break
            pos += 2
            continue
        if ch == "(":
            level += 1
            if level > 32:
                return -1
        if ch == ")":
            if level == 0:
                break
            level -= 1
        pos += 1
    if start == pos or level != 0:
        return -1
    return pos


def title(src: str, pos: int, maximum: int) -> int:
    """markdown-it's parseLinkTitle: the position after the title, or -1."""
    if pos >= maximum:
        return -1
    marker = src[pos]
    if marker not in "\"'(":
        return -1
    closing = ")" if marker == "(" else marker
    pos += 1
    while pos < maximum:
        ch = src[pos]
        if ch == closing:
            return pos + 1
        if ch == "(" and closing == ")":
            return -1
        if ch == "\\" and pos + 1 < maximum:
            pos += 1
        pos += 1
    return -1


def balance(delimiters: list[Delim]) -> None:
    """markdown-it's balance_pairs (processDelimiters): match each closer with an opener."""
    if not delimiters:
        return
    openers_bottom: dict[str, list[int]] = {}
    header = 0
    last_token = -2
    jumps: list[int] = []
    for closer_index, closer in enumerate(delimiters):
        jumps.append(0)
        if delimiters[header].marker != closer.marker or last_token != closer.token - 1:
            header = closer_index
        last_token = closer.token
        if not closer.close:
            continue
        bottoms = openers_bottom.setdefault(closer.marker, [-1, -1, -1, -1, -1, -1])
        slot = (3 if closer.open else 0) + closer.length % 3
        minimum = bottoms[slot]
        opener_index = header - jumps[header] - 1
        new_minimum = opener_index
        while opener_index > minimum:
            opener = delimiters[opener_index]
            if opener.marker != closer.marker:
                opener_index -= jumps[opener_index] + 1
                continue
            if opener.open and opener.end < 0:
                odd = (
                    (opener.close or closer.open)
                    and (opener.length + closer.length) % 3 == 0
                    and (opener.length % 3 != 0 or closer.length % 3 != 0)
                )
                if not odd:
                    if opener_index > 0 and not delimiters[opener_index - 1].open:
                        last_jump = jumps[opener_index - 1] + 1
                    else:
                        last_jump = 0
                    jumps[closer_index] = closer_index - opener_index + last_jump
                    jumps[opener_index] = last_jump
                    closer.open = False
                    opener.end = closer_index
                    opener.close = False
                    new_minimum = -1
                    last_token = -2
                    break
            opener_index -= jumps[opener_index] + 1
        if new_minimum != -1:
            bottoms[slot] = new_minimum


_CLASSES: dict[str, tuple[bool, bool]] = {}


def char_class(ch: str) -> tuple[bool, bool]:
    """(whitespace, punctuation) as markdown-it's scanDelims tells them apart."""
    found = _CLASSES.get(ch)
    if found is None:
        found = _CLASSES[ch] = (is_space(ch), is_punct(ch))
    return found


def is_space(ch: str) -> bool:
    code = ord(ch)
    return 0x2000 <= code <= 0x200A or code in WHITESPACE_CODES


ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def is_punct(ch: str) -> bool:
    if ch in ASCII_PUNCT:
        return True
    if ch.isascii():
        return False
    return unicodedata.category(ch).startswith(("P", "S"))
