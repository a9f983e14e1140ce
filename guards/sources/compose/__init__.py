"""A compose file -> :class:`~guards.sources.compose.compose.Compose`: its header, comments,
services and their knobs as each engine's dialect reads them (``engines/``), interpolation, the
service's script, ports and healthchecks, and the ``x-guards`` data. Part of ``guards.sources``:
may import the rest of it, ``guards.errors`` and ``guards.findings``."""
