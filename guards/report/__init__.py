"""Reporters: one class per output format, each rendering one :class:`~guards.findings.Run`.

A format is a subclass of :class:`Reporter` (flake8's ``BaseFormatter``): override
:meth:`finding` to render one finding as text, and :meth:`start` / :meth:`finish` for what
comes before and after; or override :meth:`render` for a format that is one document.
Register it in ``FORMATS`` by name; ``guards check --format NAME`` imports only that module.
May import ``guards.run`` and everything below it.
"""

from __future__ import annotations

import importlib

from ..findings import Finding, Run

FORMATS = {
    "text": "text:TextReporter",
    "json": "json:JsonReporter",
    "github": "github:GithubReporter",
    "gitlab": "gitlab:GitlabReporter",
    "junit": "junit:JunitReporter",
    "sarif": "sarif:SarifReporter",
}


class Reporter:
    """Renders a run to a string. ``verbose`` asks for hints and remarks where the format has
    room for them; ``show_waived`` for the suppressed and baselined findings too (each carries
    its ``waiver``)."""

    def __init__(
        self, verbose: bool = False, show_waived: bool = False, color: bool = False
    ) -> None:
        self.verbose = verbose
        self.show_waived = show_waived
        self.color = color  # ANSI colour, for a terminal (only the text format has any)

    def render(self, run: Run) -> str:
        parts = [self.start(run)]
        parts += [self.finding(f) for f in self.shown(run)]
        parts.append(self.finish(run))
        return "".join(parts)

    def shown(self, run: Run) -> list[Finding]:
        """The findings to list: the reported ones, and the waived ones when asked for."""
        if not self.show_waived:
            return run.findings
        return sorted(run.findings + run.waived, key=Finding.sort_key)

    def start(self, run: Run) -> str:
        return ""

    def finding(self, finding: Finding) -> str:
        raise NotImplementedError

    def finish(self, run: Run) -> str:
        return ""


def reporter(
    name: str, verbose: bool = False, show_waived: bool = False, color: bool = False
) -> Reporter:
    module, _, cls = FORMATS[name].partition(":")
    found: type[Reporter] = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
    return found(verbose, show_waived, color)
