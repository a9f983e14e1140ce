"""A note's body read into blocks: markdown tokens from the fast readers (``mdfast`` for the
blocks, ``mdinline`` for the inline runs), or from markdown-it where they leave a construct,
walked by ``walk``. ``notes.parse_note`` imports this module when it reads a note, so a run
that reads no note (a check of composes alone) imports none of the markdown readers."""

from __future__ import annotations

import functools
from typing import Any

from . import mdfast, mdinline
from .blocks import Walked
from .walk import Walker, inline_runs, markdown_it_inline, plain_run


def walk_body(lines: list[str], offset: int, fast: bool = True) -> Walked:
    """The walk over the note's body (``lines`` from ``offset``): tokens from
    :mod:`guards.sources.notes.mdfast` when it reads the body, else (or with ``fast`` off) from
    markdown-it; the same either way."""
    body = "\n".join(lines[offset:])
    if fast:
        try:
            tokens = mdfast.block_tokens(body)
        except mdfast.Fallback:
            pass
        else:
            walker = Walker(lines, offset, _fast_inline)
            walker.walk(tokens)
            return walker.finish()
    walker = Walker(lines, offset)
    walker.walk(_parser().parse(body))
    return walker.finish()


def _fast_inline(content: str) -> Any:
    """One inline run read by :mod:`guards.sources.notes.mdinline`, or by markdown-it when it is left."""
    if not mdinline.has_markup(content):
        return plain_run(content)
    tokens = mdinline.inline_tokens(content)
    if tokens is None:  # a construct only markdown-it reads: that run alone goes to it
        return markdown_it_inline(_parser().parseInline(content)[0])
    # Without "claim" in the source no piece of the run can hold a citation.
    return inline_runs(*tokens, "claim" in content)


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    # Imported here: a CLI run that parses no notes should not pay for markdown-it.
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["strikethrough", "table"])
