"""One check of an estate for the editor: the suite on the open documents of one estate, with
every open document's text in place of its file (read through :mod:`guards.sources.files`, as
``guards check -`` reads standard input), and the fixes of what it found.

A check runs what ``guards check PATHS...`` runs for those paths, through the same pipeline
(:func:`guards.run.pipeline.check`): the settings of the estate, its registry, the rules its
settings select (``select``, ``extend-select``, ``ignore``, ``extend-ignore``), its
suppressions; a named registry, settings file, template or env file checks the whole estate,
as on the command line. Unlike the command line, it keeps no run (buffers are not files) and
runs in this process (a handful of open files gains nothing from worker processes, and a
server holding threads must not fork). The estate of a document is found as the command
line finds it: the nearest folder with settings at or above the document; else the innermost
workspace folder holding it; else the first workspace folder (which the document is then
outside of, as the check says); else the document's own folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import GuardsError
from ..findings import Finding, Fix, Run
from ..run.discovery import shown_path
from ..run.estate import Estate
from ..run.pipeline import Asked
from ..run.pipeline import check as checked_run
from ..sources.config import Config
from ..sources.configfile import find_settings
from ..sources.files import overridden
from ..sources.paths import is_inside


@dataclass(frozen=True)
class Checked:
    """What one check found: the run and the estate it ran on, or the error that stopped it
    (settings or a registry that cannot be read)."""

    root: Path
    run: Run | None = None
    estate: Estate | None = None
    stopped: GuardsError | None = None
    by_path: dict[str, list[Finding]] = field(default_factory=dict)

    def findings_in(self, shown: str) -> list[Finding]:
        return self.by_path.get(shown, [])

    def errors_in(self, shown: str) -> list[GuardsError]:
        """The errors placed in the file shown as ``shown``: the one that stopped the check, or
        the files that could not be read or parsed."""
        errors = (
            [self.stopped]
            if self.stopped is not None
            else list(self.run.errors if self.run else ())
        )
        return [error for error in errors if error.path == shown]


def estate_root(path: Path, folders: Sequence[Path]) -> Path:
    """The estate ``path`` (an absolute path) belongs to (see the module's docstring)."""
    found = find_settings(path.parent)
    if found is not None:
        return found
    holding = [folder for folder in folders if is_inside(folder, path)]
    if holding:
        return max(holding, key=lambda folder: len(folder.parts))
    return folders[0] if folders else path.parent


def shown(root: Path, path: Path) -> str:
    """``path`` as findings and errors name it in the estate at ``root``."""
    return shown_path(Config(root=root), path)


def check(root: Path, paths: Sequence[Path], texts: Mapping[str, str]) -> Checked:
    """The suite on ``paths`` of the estate at ``root``, each file whose absolute path
    ``texts`` holds read as that text."""
    with overridden(_bytes(texts)):
        try:
            done = checked_run(Asked(root=root, paths=list(paths), workers=1))
        except GuardsError as error:
            return Checked(root, stopped=error)
    result = done.run
    by_path: dict[str, list[Finding]] = {}
    for finding in result.findings:
        by_path.setdefault(finding.path, []).append(finding)
    return Checked(root, result, done.estate, by_path=by_path)


def fixes(
    checked: Checked, findings: Sequence[Finding], texts: Mapping[str, str]
) -> list[Fix | None]:
    """The fix of each of ``findings`` (:func:`guards.write.fixes.fix_for`: the edit ``guards
    fix`` or ``guards regen`` would make), computed on the text each was found in; a template
    open in the editor renders as its buffer holds it."""
    if checked.estate is None:
        return [None for _ in findings]
    from ..write.fixes import fix_for  # only for a code action: a check computes no fix

    with overridden(_bytes(texts)):
        return [fix_for(checked.estate, finding) for finding in findings]


def _bytes(texts: Mapping[str, str]) -> dict[Path, bytes]:
    """Buffers as the bytes a file would hold: a lone surrogate (JSON can carry one) stays the
    invalid UTF-8 it is, which the reader reports at its line."""
    return {Path(path): text.encode("utf-8", "surrogatepass") for path, text in texts.items()}
