"""The operator's view (``check --env-file FILE``): which findings the operator's ``.env``
causes, and hints that speak to the operator.

The file replaces the estate's own env files for the run (``guards.run.environment``), as
``docker compose --env-file`` does. A finding is caused by the env file when the same check of
the compose as shipped (the same run without the file, with the estate's ``.env`` or
``env-files``) does not have it: fingerprints do not depend on values, so a finding
that is there either way — perhaps with other numbers — is the compose's own. A finding the
file causes is marked with the file's name; when its knob takes a variable from the file, the
hint says which line of the file to change and what the compose ships instead.
"""

from __future__ import annotations

from dataclasses import replace

from ..findings import CheckResult, Finding, Run
from .estate import Estate


def operator_view(with_env: Run, shipped: Run, estate: Estate, env_name: str, only: bool) -> Run:
    """``with_env`` with the findings the env file causes marked (and, with ``only``, the
    others left out)."""
    own = {
        (f.rule, f.path, f.fingerprint) for r in shipped.results for f in (*r.findings, *r.waived)
    }

    def mark(finding: Finding) -> Finding | None:
        if (finding.rule, finding.path, finding.fingerprint) in own:
            return None if only else finding
        hint = _hint(finding, estate, env_name) or finding.hint
        return replace(finding, env=env_name, hint=hint)

    return with_env._replace(results=tuple(_marked(r, mark) for r in with_env.results))


def _marked(result: CheckResult, mark) -> CheckResult:
    findings = tuple(f for f in map(mark, result.findings) if f is not None)
    waived = tuple(f for f in map(mark, result.waived) if f is not None)
    return result._replace(findings=findings, waived=waived)


def _hint(finding: Finding, estate: Estate, env_name: str) -> str | None:
    """For a finding about a knob the env file sets: which variable, and what ships."""
    compose = next((c for c in estate.composes if c.path == finding.path), None)
    if finding.knob is None or compose is None:
        return None
    for service, shipped in zip(compose.services, compose.shipped, strict=False):
        knob = service.knob(finding.knob)
        if knob is not None and knob.from_env and knob.line == finding.line:
            default = shipped.value(finding.knob)
            back = f" (the compose ships {default})" if default is not None else ""
            return f"{knob.from_env[0]}={knob.value} in {env_name} causes this: change or remove it{back}"
    return None
