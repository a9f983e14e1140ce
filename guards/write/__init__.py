"""Write: everything that changes a file, and nothing else writes: ``guards fix`` (stale
copies -> claim regions), profile adoption, the claims registry's edits (retract, add, confirm,
dismiss, evidence). Every write splices text, verifies the YAML data, holds the write lock and
replaces the file atomically (``guards.sources.edit``): a compose through the one loop of
``rewrite.py``, the registry through ``registry_edits.edit_registry``. May import
``guards.run`` and everything below it."""
