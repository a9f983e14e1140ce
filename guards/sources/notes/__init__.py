"""Markdown notes -> :class:`~guards.sources.notes.notes.Note`: blocks, sections and the
retraction contexts they mark, read by a port of markdown-it's rules (``mdstate``,
``mdcontainers``, ``mdfast``, ``mdinline``, ``mdscan``) with markdown-it itself as the fallback.
Part of ``guards.sources``: may import the rest of it, ``guards.errors`` and ``guards.findings``."""
