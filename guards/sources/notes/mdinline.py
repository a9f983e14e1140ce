"""The inline half of :mod:`guards.sources.notes.mdfast`: markdown-it-py's inline rules (text, newline,
escape, backticks, strikethrough, emphasis, link, image, html_inline) and the pairing of
emphasis and strikethrough delimiters (balance_pairs and the post-processing that turns
matched delimiters into tags), for one inline run: a paragraph's, heading's or table cell's
content. Text runs to the next character a rule can take; nothing else is looked at.

A run this port does not carry - an entity, an autolink, a link label holding brackets, an
image or HTML, a run of three or more tildes, a link whose destination validateLink may
refuse - gives None, and the caller hands that run to markdown-it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..patterns import lazy
from . import mdscan
from .mdfast import CLOSE_TAG, OPEN_TAG
from .mdscan import Delim

__all__ = ["has_markup", "inline_tokens"]

# Characters where an inline rule can fire; markdown-it's other terminators (#$%+-:=>@]^{})
# fall through every rule into the text, as do all other characters.
_ACTIVE = lazy(r"[\n\\`~*_\[!<&]")
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_HTML_TAG = lazy(
    "(?:"
    + OPEN_TAG
    + "|"
    + CLOSE_TAG
    + r"|<!---?>|<!--(?:[^-]|-[^-]|--[^>])*-->|<[?][\s\S]*?[?]>|<![A-Za-z][^>]*>"
    + r"|<!\[CDATA\[[\s\S]*?\]\]>)"
)
_AUTOLINK = lazy(r"^([a-zA-Z][a-zA-Z0-9+.\-]{1,31}):([^<>\x00-\x20]*)$")
_EMAIL = lazy(
    r"^([a-zA-Z0-9.!#$%&\'*+\/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*)$"
)
_ANGLES = lazy(r"[<>]")
_ENTITY = lazy(r"&(?:#(?:x[a-f0-9]{1,6}|[0-9]{1,7})|[a-z][a-z0-9]{1,31});", re.IGNORECASE)
# validateLink refuses these protocols in the destination, after its entities and backslash
# escapes are decoded: a destination naming one, or escaping anything before its first / or ?,
# is left to markdown-it.
_BAD_PROTOCOL = lazy(r"(?:vbscript|javascript|file|data):", re.IGNORECASE)
_ESCAPED_PREFIX = lazy(r"[^/?]*[&\\]")


class _GiveUp(Exception):
    """This inline run needs a rule the port does not carry."""


def inline_tokens(src: str) -> tuple[list[str], list[str]] | None:
    """The tokens of one inline run (a paragraph's, heading's or cell's content) as
    markdown-it gives them before joining adjacent texts: types (``text``, ``text_special``,
    ``code_inline``, ``image`` with its alt text as content, ``break`` for a soft or hard
    break, ``s_open``, ``s_close``, ``other`` for a tag the walk skips) and contents; None
    when the run needs markdown-it itself."""
    try:
        scan = _InlineState(src)
        scan.tokenize()
        scan.finish()
    except _GiveUp:
        return None
    return scan.types, scan.contents


def has_markup(src: str) -> bool:
    """Whether any inline rule can fire in ``src`` (else it is one text token)."""
    return _ACTIVE.search(src) is not None


class _InlineState:
    """markdown-it's StateInline and inline rules. Tokens are parallel lists of type and
    content. Text not yet in a token (markdown-it's pending) is always the source from
    ``text_start`` to the position where the next rule fires; a token push flushes it."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.pos = self.text_start = 0
        self.pos_max = len(src)
        self.types: list[str] = []
        self.contents: list[str] = []
        self.delimiters: list[Delim] = []
        self.scopes: list[list[Delim]] = [self.delimiters]  # every delimiter list
        self.outer: list[list[Delim]] = []
        self.backticks: dict[int, int] | None = None
        self.terminators: dict[str, int] = {}

    def push(self, type_: str, content: str = "", nesting: int = 0) -> None:
        if self.text_start < self.pos:
            self.types.append("text")
            self.contents.append(self.src[self.text_start : self.pos])
        self.text_start = self.pos
        if nesting < 0:
            self.delimiters = self.outer.pop()
        self.types.append(type_)
        self.contents.append(content)
        if nesting > 0:
            self.outer.append(self.delimiters)
            self.delimiters = []
            self.scopes.append(self.delimiters)

    def tokenize(self) -> None:
        """markdown-it's inline loop: text runs to the next character a rule may take, then
        that rule; a character no rule takes is text. A rule that matched has pushed a token
        (so the pending text starts after it), except an unmatched backtick run, which
        returns False with the position moved past the run: that run is text."""
        src, end, types, contents = self.src, self.pos_max, self.types, self.contents
        search, rules = _ACTIVE.search, _RULES
        text_start = pos = self.pos
        while pos < end:
            found = search(src, pos, end)
            if found is None:
                pos = end
                break
            at = found.start()
            ch = src[at]
            if ch == "\n" and (text_start == at or src[at - 1] != " "):
                # the newline rule when no trailing space is to be trimmed: a soft break
                if text_start < at:
                    types.append("text")
                    contents.append(src[text_start:at])
                types.append("break")
                contents.append("")
                pos = at + 1
                while pos < end and (src[pos] == " " or src[pos] == "\t"):
                    pos += 1
                text_start = pos
                continue
            if ch == "`" and (close := self.single_code(at)) > 0:
                if text_start < at:
                    types.append("text")
                    contents.append(src[text_start:at])
                types.append("code_inline")
                contents.append(mdscan.code_content(src[at + 1 : close - 1]))
                pos = text_start = close
                continue
            self.pos, self.text_start = at, text_start
            if rules[ch](self):
                pos = text_start = self.pos
            else:
                pos = self.pos if self.pos > at else at + 1
        self.pos = pos
        if text_start < pos:
            types.append("text")
            contents.append(src[text_start:pos])
        self.text_start = pos

    def single_code(self, at: int) -> int:
        """The end of a code span opened by a single backtick at ``at``, when the next backtick
        is a single one inside the run (what the backtick rule finds first); else -1."""
        src = self.src
        if src[at + 1 : at + 2] == "`":
            return -1
        close = src.find("`", at + 1, self.pos_max)
        if close < 0 or src[close + 1 : close + 2] == "`":
            return -1
        return close + 1

    # --- rules ---

    def newline(self) -> bool:
        src, at = self.src, self.pos
        if self.text_start < at and src[at - 1] == " ":
            text = src[self.text_start : at]
            # Before a hard break (two spaces) every trailing space goes, but the first
            # character stays; before a soft one, one space.
            end = max(len(text.rstrip(" ")), 1) if text.endswith("  ") else len(text) - 1
            text = text[:end]
            if text:
                self.types.append("text")
                self.contents.append(text)
            self.text_start = at
        self.push("break")
        pos = at + 1
        while pos < self.pos_max and src[pos] in " \t":
            pos += 1
        self.pos = pos
        return True

    def escape(self) -> bool:
        src, pos = self.src, self.pos + 1
        if pos >= self.pos_max:
            return False
        ch = src[pos]
        if ch == "\n":
            self.push("break")
            pos += 1
            while pos < self.pos_max and src[pos] in " \t":
                pos += 1
            self.pos = pos
            return True
        if "\ud800" <= ch <= "\udfff":
            raise _GiveUp
        self.push("text_special", ch if ch in _ESCAPABLE else "\\" + ch)
        self.pos = pos + 1
        return True

    def backtick(self) -> bool:
        pos, closer = self.code_span(self.pos)
        if closer is not None:
            self.push("code_inline", mdscan.code_content(self.src[pos : closer[0]]))
            self.pos = closer[1]
            return True
        self.pos = pos  # unmatched: the run is text
        return False

    def strikethrough(self) -> bool:
        can_open, can_close, length = self.scan_delims(self.pos, True)
        if length < 2:
            return False
        if length != 2:
            raise _GiveUp  # odd runs move lone tildes around; longer runs are rare
        self.push("text", "~~")
        self.delimiters.append(Delim("~", 0, len(self.types) - 1, can_open, can_close))
        self.pos += length
        return True

    def emphasis(self) -> bool:
        """Each marker of the run is its own text token and delimiter."""
        marker = self.src[self.pos]
        can_open, can_close, length = self.scan_delims(self.pos, marker == "*")
        self.push("text", marker)
        first = len(self.types) - 1
        delimiters = self.delimiters
        delimiters.append(Delim(marker, length, first, can_open, can_close))
        for i in range(1, length):
            self.types.append("text")
            self.contents.append(marker)
            delimiters.append(Delim(marker, length, first + i, can_open, can_close))
        self.pos += length
        return True

    def scan_delims(self, start: int, can_split_word: bool) -> tuple[bool, bool, int]:
        src, maximum = self.src, self.pos_max
        marker = src[start]
        pos = start + 1
        while pos < maximum and src[pos] == marker:
            pos += 1
        last_space, last_punct = mdscan.char_class(src[start - 1] if start > 0 else " ")
        next_space, next_punct = mdscan.char_class(src[pos] if pos < maximum else " ")
        left = not (next_space or (next_punct and not (last_space or last_punct)))
        right = not (last_space or (last_punct and not (next_space or next_punct)))
        can_open = left and (can_split_word or not right or last_punct)
        can_close = right and (can_split_word or not left or next_punct)
        return can_open, can_close, pos - start

    def link(self) -> bool:
        label_start = self.pos + 1
        label_end = self.link_label(self.pos)
        if label_end < 0:
            return False
        end = self.inline_destination(label_end + 1)
        if end < 0:
            return False  # the reference form: no references in a note this port reads
        maximum = self.pos_max
        self.push("other", nesting=1)
        self.pos, self.pos_max = label_start, label_end
        self.tokenize()
        self.push("other", nesting=-1)
        self.pos, self.pos_max = end, maximum
        return True

    def image(self) -> bool:
        src, pos = self.src, self.pos
        if pos + 1 < self.pos_max and src[pos + 1] != "[":
            return False
        label_end = self.link_label(pos + 1)
        if label_end < 0:
            return False
        if not (label_end + 1 < self.pos_max and src[label_end + 1] == "("):
            return False  # the reference form
        end = self.inline_destination(label_end + 1)
        if end < 0:
            return False
        alt = _InlineState(src[pos + 2 : label_end])
        alt.tokenize()
        alt.finish()
        text = "".join(c for t, c in zip(alt.types, alt.contents, strict=True) if t in _ALT_TYPES)
        self.push("image", text)
        self.pos = end
        return True

    def link_label(self, start: int) -> int:
        """markdown-it's parseLinkLabel for labels without brackets, images or HTML (those
        give up); -1 when the label does not close."""
        src, maximum = self.src, self.pos_max
        pos = start + 1
        while pos < maximum:
            ch = src[pos]
            if ch == "]":
                return pos
            if ch == "[" or ch == "<" or (ch == "!" and src[pos + 1 : pos + 2] == "["):
                raise _GiveUp
            if ch == "\\":
                pos += 2 if pos + 1 < maximum else 1
                continue
            if ch == "`":
                pos = self.skip_code(pos)
                continue
            pos += 1
        return -1

    def skip_code(self, start: int) -> int:
        """Where the backtick rule in validation mode leaves the position."""
        pos, closer = self.code_span(start)
        return closer[1] if closer is not None else pos

    def code_span(self, start: int) -> tuple[int, tuple[int, int] | None]:
        """The end of the backtick run at ``start``, and the (start, end) of the run of as
        many backticks that closes it, if one does."""
        src, maximum = self.src, self.pos_max
        pos = start + 1
        while pos < maximum and src[pos] == "`":
            pos += 1
        opener = pos - start
        if self.backticks is None:
            self.backticks = mdscan.last_runs(src)
        if self.backticks.get(opener, -1) >= pos:
            match_end = pos
            while (match_start := src.find("`", match_end)) != -1 and match_start < maximum:
                match_end = match_start + 1
                while match_end < len(src) and src[match_end] == "`":
                    match_end += 1
                if match_end > maximum:
                    break
                if match_end - match_start == opener:
                    return pos, (match_start, match_end)
        return pos, None

    def inline_destination(self, pos: int) -> int:
        """The position after ``(destination "title")`` at ``pos``, or -1 when there is none
        (a link then tries the reference form, which finds nothing here)."""
        src, maximum = self.src, self.pos_max
        if not (pos < maximum and src[pos] == "("):
            return -1
        pos += 1
        while pos < maximum and src[pos] in " \t\n":
            pos += 1
        if pos >= maximum:
            return -1
        dest_end = mdscan.destination(src, pos, maximum)
        # Without a destination the title cannot follow (no space was left to skip).
        if dest_end >= 0:
            destination = src[pos:dest_end]
            if _BAD_PROTOCOL.search(destination) or _ESCAPED_PREFIX.match(destination):
                raise _GiveUp  # validateLink may refuse it
            pos = start = dest_end
            while pos < maximum and src[pos] in " \t\n":
                pos += 1
            title_end = mdscan.title(src, pos, maximum)
            if pos < maximum and start != pos and title_end >= 0:
                pos = title_end
                while pos < maximum and src[pos] in " \t\n":
                    pos += 1
        if pos >= maximum or src[pos] != ")":
            return -1
        return pos + 1

    def angle(self) -> bool:
        src, pos, maximum = self.src, self.pos, self.pos_max
        close = _ANGLES.search(src, pos + 1, maximum)
        if close is not None and close.group() == ">":
            url = src[pos + 1 : close.start()]
            if _AUTOLINK.search(url) or _EMAIL.search(url):
                raise _GiveUp  # its text is the URL decoded and punycoded
        if pos + 2 >= maximum:
            return False
        ch = src[pos + 1]
        if ch not in "!?/" and not ("a" <= ch.lower() <= "z" and ch.isascii()):
            return False
        if not self.may_close(pos, ch):
            return False
        found = _HTML_TAG.match(src, pos)
        if found is None or found.end() > maximum:
            if found is not None:
                raise _GiveUp
            return False
        self.push("other")
        self.pos = found.end()
        return True

    def may_close(self, pos: int, ch: str) -> bool:
        """Whether the terminator an HTML construct at ``pos`` needs occurs after it at all
        (markdown-it's guard that keeps a run of unclosed openers linear)."""
        src = self.src
        if src.startswith("<!--", pos):
            if self.last(">") < pos + 4:
                return False
            return (
                src.startswith("<!-->", pos)
                or src.startswith("<!--->", pos)
                or self.last("-->") >= pos + 4
            )
        if src.startswith("<![CDATA[", pos):
            return self.last("]]>") >= pos + 9
        if ch == "?":
            return self.last("?>") >= pos + 2
        if ch == "!":
            return self.last(">") >= pos + 3
        return self.last(">") >= pos + 2

    def last(self, term: str) -> int:
        if term not in self.terminators:
            self.terminators[term] = self.src.rfind(term)
        return self.terminators[term]

    def entity(self) -> bool:
        if _ENTITY.match(self.src, self.pos, self.pos_max):
            raise _GiveUp
        return False

    # --- post-processing ---

    def finish(self) -> None:
        if not any(self.scopes):
            return
        for delimiters in self.scopes:
            mdscan.balance(delimiters)
        for delimiters in self.scopes:
            for delim in delimiters:
                if delim.marker == "~" and delim.end != -1:
                    self.types[delim.token] = "s_open"
                    self.types[delimiters[delim.end].token] = "s_close"
        for delimiters in self.scopes:
            self.emphasis_tags(delimiters)

    def emphasis_tags(self, delimiters: list[Delim]) -> None:
        i = len(delimiters) - 1
        while i >= 0:
            start = delimiters[i]
            if start.marker not in "*_" or start.end == -1:
                i -= 1
                continue
            end = delimiters[start.end]
            strong = (
                i > 0
                and delimiters[i - 1].end == start.end + 1
                and delimiters[i - 1].marker == start.marker
                and delimiters[i - 1].token == start.token - 1
                and delimiters[start.end + 1].token == end.token + 1
            )
            self.types[start.token] = "other"
            self.types[end.token] = "other"
            if strong:
                self.contents[delimiters[i - 1].token] = ""
                self.contents[delimiters[start.end + 1].token] = ""
                i -= 1
            i -= 1


_ALT_TYPES = frozenset(("text", "text_special", "code_inline"))
_RULES: dict[str, Callable[[_InlineState], bool]] = {
    "\n": _InlineState.newline,
    "\\": _InlineState.escape,
    "`": _InlineState.backtick,
    "~": _InlineState.strikethrough,
    "*": _InlineState.emphasis,
    "_": _InlineState.emphasis,
    "[": _InlineState.link,
    "!": _InlineState.image,
    "<": _InlineState.angle,
    "&": _InlineState.entity,
}
