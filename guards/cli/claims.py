"""``guards claims``: list, show and find claims; add, retract, confirm or dismiss one (its
evidence: ``guards.cli.evidence``). Every change to the registry goes through
:func:`guards.write.registry_edits.edit_registry`."""

import datetime as dt
import sys
from pathlib import Path

import typer

from ..errors import GuardsError
from .common import (
    echo,
    echo_error,
    estate_root,
    exit_for,
    load_settings,
    shown,
    whole_estate,
)
from .evidence import claims_evidence_app
from .options import CONFIG_OPTION, ID_ARGUMENT, ROOT_OPTION

claims_app = typer.Typer(no_args_is_help=True, help="The claims registry: list, show, retract.")
claims_app.add_typer(claims_evidence_app, name="evidence")

RETRACT_DATE = typer.Option(..., "--date", help="Retraction date, YYYY-MM-DD.")
REASON = typer.Option(..., "--reason", help="Why it was retracted.")
REPLACEMENT_FILE = typer.Option(
    ..., "--replacement-file", help="File holding what to say instead ('-' reads standard input)."
)
RETRACT_FORCE = typer.Option(
    False, "--force", help="Retract a claim that is already retracted or superseded."
)
LIMIT = typer.Option(20, "--limit", metavar="N", help="Show the N most similar.")
CONFIRM = typer.Option(
    None,
    "--confirm",
    metavar="PATH:LINE",
    help="Record the passage there as a wording "
    "of the claim (a variant): `check` then finds copies of it.",
)
DISMISS = typer.Option(
    None,
    "--dismiss",
    metavar="PATH:LINE",
    help="Record the passage there as not the "
    "claim (not_match): it is not shown or reported again.",
)
TITLE = typer.Option(..., "--title", help="One line: what the claim says.")
TEXT_FILE = typer.Option(
    None, "--text-file", metavar="FILE", help="The wording as published ('-': stdin)."
)
FROM = typer.Option(
    None,
    "--from",
    metavar="PATH:LINE[-END]",
    help="Take the wording from these lines of a compose or note (comment markers removed).",
)
ASSERTED = typer.Option(None, "--date", help="When it was asserted, YYYY-MM-DD (default: today).")
MATCH = typer.Option(
    None, "--match", metavar="PHRASE", help="A distinctive phrase of it (repeatable)."
)


@claims_app.command("list")
def claims_list(root: Path | None = ROOT_OPTION, config: Path | None = CONFIG_OPTION) -> None:
    """Every claim: id, status, dates, places citing it and stale copies."""
    root = estate_root(root, config)
    from ..claims.scan import places

    estate = whole_estate(root, config)
    rows = [("ID", "STATUS", "ASSERTED", "RETRACTED", "CITED", "STALE")]
    for claim in estate.registry.claims:
        found = places(estate, claim)
        stale = sum(1 for p in found if p.how == "stale copy")
        dates = (str(claim.asserted or "-"), str(claim.retracted or "-"))
        rows.append((claim.id, claim.status, *dates, str(len(found) - stale), str(stale)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = zip(row, widths, strict=False)
        echo(
            "  ".join(
                c.rjust(w) if i >= 4 else c.ljust(w) for i, (c, w) in enumerate(cells)
            ).rstrip()
        )
    exit_for(estate)


@claims_app.command("show")
def claims_show(
    claim_id: str = ID_ARGUMENT,
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """One claim and every place that cites, retracts or still asserts it."""
    root = estate_root(root, config)
    from ..claims.scan import places
    from ..errors import MAX_PATH, printable

    def field(text: str) -> str:
        """A registry field on its line, whole, escaped: a line break in it cannot start a
        line of its own (a CI runner reads ``::error::`` there), nor an escape reach the
        terminal."""
        return printable(" ".join(text.split()), 10_000)

    estate = whole_estate(root, config)
    claim = _claim(estate, claim_id)
    when = f" {claim.retracted}" if claim.retracted else ""
    asserted = f" (asserted {claim.asserted})" if claim.asserted else ""
    echo(f"{claim.id}: {field(claim.title)}")
    echo(f"  status       {claim.status}{when}{asserted}")
    echo(f"  defined at   {printable(estate.registry.path, MAX_PATH)}:{claim.line}")
    for label, value in (
        ("reason", claim.reason),
        ("replacement", claim.replacement),
        ("superseded by", claim.superseded_by),
        ("refs", " ".join(claim.refs) or None),
    ):
        if value:
            echo(f"  {label:<12} {field(value)}")
    found = places(estate, claim)
    echo(f"places ({len(found)}):")
    for place in found:
        echo(f"  {printable(place.path, MAX_PATH)}:{place.line}:{place.column}  {place.how}")
    exit_for(estate)


@claims_app.command("retract")
def claims_retract(
    claim_id: str = ID_ARGUMENT,
    date: str = RETRACT_DATE,
    reason: str = REASON,
    replacement_file: Path = REPLACEMENT_FILE,
    force: bool = RETRACT_FORCE,
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Retract a claim in claims.yaml in place, then list what still cites or asserts it."""
    root = estate_root(root, config)
    from ..claims.scan import places
    from ..run.estate import load_estate
    from ..sources.registry import load
    from ..write.registry_edits import check_date, edit_registry, retract_edits

    settings = load_settings(root, config)
    check_date(date)
    replacement = _read_replacement(replacement_file)
    path = settings.claims_path
    where = shown(settings, path)
    edit_registry(
        path,
        where,
        lambda registry, at: retract_edits(
            registry, at, claim_id, date, reason, replacement, force
        ),
    )
    echo(f"{where}: retracted {claim_id} on {date}")
    estate = load_estate(settings)
    claim = load(path, where).get(claim_id)
    assert claim is not None
    kept = ("retracts", "cites in a retraction")
    remaining = [p for p in places(estate, claim) if p.how not in kept]
    echo(f"still citing or asserting it: {len(remaining)}")
    for place in remaining:
        echo(f"  {place.path}:{place.line}:{place.column}  {place.how}")
    for error in estate.errors:
        echo_error(error)


@claims_app.command("find")
def claims_find(
    claim_id: str = ID_ARGUMENT,
    limit: int = LIMIT,
    confirm: str | None = CONFIRM,
    dismiss: str | None = DISMISS,
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Rank every passage of the estate by similarity to a claim, and say why.

    For recall: `check` reports only confident stale copies; `find` shows the rest, for an
    active claim too, so uncited copies are visible before a retraction."""
    root = estate_root(root, config)
    from ..claims.scan import rank

    estate = whole_estate(root, config)
    claim = _claim(estate, claim_id)
    found = rank(estate.claim_scan, claim)
    if confirm or dismiss:
        place = confirm or dismiss or ""
        field = "variants" if confirm else "not_match"
        _record(estate, claim, field, _passage_at(found, place, estate.registry.path))
        return
    when = f" {claim.retracted}" if claim.retracted else ""
    echo(f"{claim.id} ({claim.status}{when}): {len(found)} passages share its words")
    for candidate in found[:limit]:
        span = f"-{candidate.end_line}" if candidate.end_line > candidate.line else ""
        where = f"{candidate.path}:{candidate.line}{span}"
        echo(f"{candidate.score:5.2f}  {candidate.status:<10}  {where}")
        echo(f"       {_why(candidate)}")
        echo(f"       > {_excerpt(candidate.text)}")
    exit_for(estate)


def _why(candidate) -> str:
    """Shared distinctive words, shared numbers, repeated phrases; for a follow-up, first the
    condition it acts on."""
    numbers = [w for w in candidate.shared if any(ch.isdigit() for ch in w)]
    terms = [w for w in candidate.shared if w not in numbers]
    when = candidate.condition
    parts = [f'acts on it: "{_excerpt(when, 50)}"'] if when else []
    parts += [f"words: {', '.join(terms)}"] if terms else []
    parts += [f"numbers and ids: {', '.join(numbers)}"] if numbers else []
    parts += (
        ["repeats: " + "; ".join(f'"{_excerpt(p, 50)}"' for p in candidate.phrases[:2])]
        if candidate.phrases
        else []
    )
    return " · ".join(parts) or "nothing distinctive"


def _passage_at(found, place: str, registry_path: str) -> str:
    path, _, line = place.rpartition(":")
    if not path or not line.isdigit():
        raise GuardsError(f"{place!r} is not PATH:LINE")
    number = int(line)
    hit = next((c for c in found if c.path == path and c.line <= number <= c.end_line), None)
    if hit is None:
        raise GuardsError("no ranked passage there (see `guards claims find ID`)", path, number)
    return hit.text


def _record(estate, claim, field: str, text: str) -> None:
    """Append the passage to the claim's list, the registry read afresh under the lock."""
    from ..write.registry_edits import append_edits, edit_registry

    where = estate.registry.path
    added = edit_registry(
        estate.config.claims_path,
        where,
        lambda registry, at: append_edits(registry, at, claim.id, field, text),
    )
    if not added:
        echo(f"{where}: {claim.id} already lists that passage in {field}")
        return
    echo(f"{where}: added the passage to {claim.id}.{field}")


def _excerpt(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@claims_app.command("init")
def claims_init(root: Path | None = ROOT_OPTION, config: Path | None = CONFIG_OPTION) -> None:
    """Start an empty claims registry where the settings put it (default: claims.yaml)."""
    from ..write.registry_edits import init_registry

    root = estate_root(root, config)
    settings = load_settings(root, config)
    where = shown(settings, settings.claims_path)
    echo(f"{where}: {'created' if init_registry(settings.claims_path, where) else 'already there'}")


@claims_app.command("add")
def claims_add(
    claim_id: str = ID_ARGUMENT,
    title: str = TITLE,
    text_file: Path | None = TEXT_FILE,
    source: str | None = FROM,
    date: str | None = ASSERTED,
    match: list[str] | None = MATCH,
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Register a new active claim, its wording from a file or from a passage of the estate."""
    root = estate_root(root, config)
    from ..sources.markers import CLAIM_ID
    from ..write.registry_edits import (
        add_claim_edits,
        check_date,
        edit_registry,
        init_registry,
        tidy,
    )

    settings = load_settings(root, config)
    if not CLAIM_ID.fullmatch(claim_id):
        raise GuardsError(f"{claim_id!r} is not a kebab-case claim id")
    if (text_file is None) == (source is None):
        raise GuardsError("give the wording with exactly one of --text-file or --from")
    text = _read_replacement(text_file) if text_file else _lines_of(settings, source or "")
    entry: dict[str, str | list[str] | dt.date] = {
        "id": claim_id,
        "title": tidy(title),
        "status": "active",
        "asserted": dt.date.fromisoformat(check_date(date or dt.date.today().isoformat())),
        "text": tidy(text),
    }
    if match:
        entry["match"] = list(match)
    where = shown(settings, settings.claims_path)
    if init_registry(settings.claims_path, where):
        echo(f"{where}: created")
    edit_registry(
        settings.claims_path, where, lambda registry, at: add_claim_edits(registry, at, entry)
    )
    echo(f"{where}: added {claim_id}")


def _lines_of(settings, place: str) -> str:
    """Lines PATH:LINE[-END] of a file under the root, without comment markers."""
    import textwrap

    from ..sources import yamlsrc

    path, _, span = place.rpartition(":")
    first, _, last = span.partition("-")
    if not path or not first.isdigit() or not (last or first).isdigit():
        raise GuardsError(f"{place!r} is not PATH:LINE or PATH:LINE-END")
    lines = yamlsrc.read_text(settings.root / path, path).split("\n")
    start, end = int(first), int(last or first)
    if not 1 <= start <= end <= len(lines):
        raise GuardsError(f"lines {start}-{end} are not in the file", path, start)
    picked = [
        line.lstrip()[1:] if line.lstrip().startswith("#") else line
        for line in lines[start - 1 : end]
    ]
    return textwrap.dedent("\n".join(picked))


def _claim(estate, claim_id: str):
    claim = estate.registry.get(claim_id)
    if claim is None:
        raise GuardsError(f"no claim with id {claim_id!r}", estate.registry.path)
    return claim


def _read_replacement(path: Path) -> str:
    """The text of ``--replacement-file`` (``-``: standard input); empty is refused."""
    from ..sources import edit

    where = "standard input" if str(path) == "-" else str(path)
    if str(path) == "-":
        text = sys.stdin.read(edit.MAX_BYTES + 1)
        if len(text) > edit.MAX_BYTES:
            raise GuardsError("the replacement on standard input is too long", where)
    elif not path.exists():
        raise GuardsError("replacement file not found", where)
    else:
        text = edit.read(path, where).text
    if not text.strip():
        raise GuardsError("the replacement is empty; nothing written", where)
    return text
