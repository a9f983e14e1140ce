"""What notes and compose comments say a compose ships: :class:`Statement` per knob, per layout.

A statement is (subject, knob, value, where). The knob is a canonical knob name
(``max_model_len``, ``port``: :mod:`guards.facts.knobwords`) or an environment variable as
written (``OLLAMA_CONTEXT_LENGTH``: upper case tells them apart); the subject is the text that
names what the statement is about (a compose, a service, a model), or None when the knob names
it (a variable is about the composes that read it; a compose comment is about its service).
Readers only read: who the subject is (:mod:`guards.facts.subjects`) and whether the value is
what ships (rules D001, D005, D008, D010) are decided later. One reader per layout, each for
one class of text:

- :func:`tables`: markdown tables whose header names a ``Default`` (or ``Value``) column, with a
  variable in each row's first cell, or a request or config parameter (``top_p``: layout
  ``parameter``, about the variable that sets it server-side, found under the table's
  headings), or whose header cells name knobs, with a subject in each row's first cell;
- :func:`blocks`: ``NAME  value`` listings in code blocks (two or more such lines: an env
  catalog restated), where a comment above an entry saying it "maps to" another variable makes
  the entry a statement about that variable too;
- :func:`sentences`: prose naming a variable and its default (``X defaults to 4096``, ``X is
  set to Y``, ``X (default: Y)``), and a ``localhost:PORT`` beside the service it opens;
- :func:`shell`: shell examples passing engine flags, and ``export NAME=value`` lines (an
  instruction, not a statement of what ships: D008 compares no value with them, but applies a
  section's exports to the composes to see what the operator who follows them gets);
- :func:`gpu_sentences`: the GPUs a sentence gives one service: ``GPU 0: embedder; GPU 1:
  chat-llm`` (card ids per service), ``chat-llm requires 2 GPUs``, ``TP2``, ``tensor parallel
  2``; a count of cards of a model (``3 x H100``) is a deployment's, about no one service;
- :func:`hosts`: the size of the host a passage describes (``on 2xH100 GPUs``, ``systems with
  3 GPUs``, ``an 8-GPU node``; a lower bound, ``3+ GPUs`` or ``at least``, as ``3+``), which
  the commands of the same section run on;
- :func:`universal`: a sentence saying every variable of a compose comes from interpolation
  ("All environment variables in `x.yml` use `${VAR:-default}`, so a `.env` overrides them"),
  not one about some of them ("all GPU tuning knobs");
- :func:`profile_statements`: the compose's profile block (the header convention's fields:
  ``Max ctx``, ``KV``, ``Topology``'s ``TP=N`` and ``-ts``, ``Vision``, ``Status``), each value
  read in its affirmed clauses, and :func:`tier_statements`: the lines that restate the tier
  (the summary line after the block, a "shipped default (…)" comment: context, KV, drafter
  depth, vision, read by ``statements.said_in``); D001 and D005 compare them;
- :func:`compose_statements`: in a compose, the comment lines above or under an ``environment:``
  entry that say what it defaults to (``Enable X by default``, ``default: 1``), and a comment
  on or just above a flag that names the flag's knob and a count (``# 32K context``);
- :func:`name_figure`: a count with a unit suffix in a file's name (``llama3_48k.Modelfile``,
  ``qwen-32k.yml``): the context length the file sets (a Modelfile's ``num_ctx``, a service's
  ``--max-model-len``), unless the model the file names carries the same figure (a
  ``phi3-128k`` model served with a shorter context says nothing about the file's setting).

Commented-out settings (``# OLLAMA_NUM_PARALLEL=4``) are not statements: a comment that is a
setting is advice, not a claim about the shipped value.

The package: ``base`` (the :class:`Statement` and what readers share), ``notes`` (the layouts of
notes), ``composes`` (of compose comments and file names) and ``profile`` (the profile block
and tier lines). It imports ``guards.sources`` and its peers in ``guards.facts``.
"""

from .base import Statement
from .composes import compose_statements, modelfile_statements, name_figure
from .notes import (
    blocks,
    gpu_sentences,
    hosts,
    note_statements,
    sentences,
    shell,
    tables,
    universal,
)
from .profile import profile_statements, summary_line, tier_lines, tier_statements

__all__ = [
    "Statement",
    "blocks",
    "compose_statements",
    "gpu_sentences",
    "hosts",
    "modelfile_statements",
    "name_figure",
    "note_statements",
    "profile_statements",
    "sentences",
    "shell",
    "summary_line",
    "tables",
    "tier_lines",
    "tier_statements",
    "universal",
]
