"""Facts: what a compose ships and what its prose says, as pure functions over the objects
``guards.sources`` builds: KV-pool arithmetic (``kv``, ``capacity``), quoted figures, prose
statements, vision, defaults, which claims apply (``scope``), and generated regions rendered in
a sandbox with a budget (``regions``, ``sandbox``, ``budget``, ``templates/``). May import
``guards.sources``, ``guards.errors`` and ``guards.findings``; ``guards.claims`` is its peer."""
