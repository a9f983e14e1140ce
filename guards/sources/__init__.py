"""Sources: bytes -> objects. The only code that opens a file to read it (``edit.read``, which
records each read in ``reads`` and reads the texts ``files`` holds in place of files), the path
policy (``paths``), the YAML, JSON and TOML readers with their limits (``yamlsrc``,
``jsonsrc``, ``nesting``), the settings (``config``), counts (``numbers``), lazy patterns and
the one glob (``patterns``), claim markers, ``guards:`` directives, the claims registry,
catalogs, and the compose (``compose/``) and note (``notes/``) parsers. May import
``guards.errors`` and ``guards.findings`` only."""
