"""Run: discover -> estate -> suite -> :class:`~guards.findings.Run`. Discovery, the loaded
estate, the suite that runs the rules and applies suppressions and the baseline, the operator's
view of an env file, the run cache and the worker processes, the settings schema, and reading
engine evidence. May import ``guards.rules`` and everything below it."""
