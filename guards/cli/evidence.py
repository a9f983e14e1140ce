"""``guards evidence read`` and ``guards claims evidence add``: the figures of a vLLM /metrics
scrape, read alone or beside a compose, or recorded as a claim's evidence (through
:func:`guards.write.registry_edits.edit_registry`, as every change to the registry)."""

import datetime as dt
from pathlib import Path

import typer

from ..errors import GuardsError
from .common import (
    echo,
    estate_root,
    load_settings,
    shown,
)
from .options import CONFIG_OPTION, ENV_FILE_OPTION, ID_ARGUMENT, ROOT_OPTION

evidence_app = typer.Typer(no_args_is_help=True, help="Figures from a vLLM /metrics scrape.")
claims_evidence_app = typer.Typer(no_args_is_help=True, help="A claim's evidence.")

AFTER_ARGUMENT = typer.Argument(
    None,
    metavar="AFTER",
    help="A second scrape, taken after the run: the figures are what changed in between.",
    show_default=False,
)
EVIDENCE_MODEL_OPTION = typer.Option(
    None, "--model", metavar="NAME", help="The served model (model_name label) to read."
)


def _json_or_text(value: str) -> str:
    if value not in ("text", "json"):
        raise typer.BadParameter(f"{value!r} is not one of text, json")
    return value


BEFORE_ARGUMENT = typer.Argument(
    ..., metavar="BEFORE", help="A scrape of /metrics (alone: totals since the server started)."
)
BESIDE_COMPOSE = typer.Option(
    None, "--compose", metavar="FILE", help="Set the figures beside what this compose ships."
)
FORMAT = typer.Option(
    "text", "--format", metavar="text|json", help="Output format.", callback=_json_or_text
)
SCRAPE = typer.Option(
    ..., "--scrape", metavar="BEFORE", help="The scrape of /metrics (the first of two)."
)
ENGINE = typer.Option(
    None,
    "--engine",
    metavar="TAG",
    help="The engine image or version the scrape came from (vLLM's /metrics names none).",
)
SERVED_COMPOSE = typer.Option(
    None, "--compose", metavar="FILE", help="The compose the server ran: its image is the engine."
)
NOTE = typer.Option(None, "--note", metavar="TEXT", help="A note to keep with it.")
MEASURED = typer.Option(None, "--date", help="When it was measured, YYYY-MM-DD (default: today).")


@evidence_app.callback()
def _evidence() -> None:
    """Figures from a vLLM /metrics scrape."""


@claims_evidence_app.callback()
def _claims_evidence() -> None:
    """A claim's evidence."""


@evidence_app.command("read")
def evidence_read(
    before: Path = BEFORE_ARGUMENT,
    after: Path | None = AFTER_ARGUMENT,
    compose: Path | None = BESIDE_COMPOSE,
    model: str | None = EVIDENCE_MODEL_OPTION,
    env_file: Path | None = ENV_FILE_OPTION,
    output: str = FORMAT,
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Decode tok/s, preemptions, KV cache usage, running/waiting requests and spec-decode
    acceptance from a vLLM /metrics scrape; with --compose, whether they confirm K002."""
    root = estate_root(root, config)
    import json

    from ..run import evidence

    first, last = evidence.load_pair(before, after)
    found = evidence.figures(last, first, model)
    side = None
    if compose is not None:
        estate, options = evidence_compose(root, config, compose, env_file)
        chosen, side = evidence.beside(found, estate, options, model)
        found = [chosen]
    if output == "json":
        typer.echo(json.dumps(evidence.document(first, last, found, side), indent=2))
    else:
        typer.echo(evidence.text(first, last, found, side), nl=False)


def evidence_compose(root: Path, config: Path | None, compose: Path, env_file: Path | None):
    """The estate with only ``compose`` loaded (as `guards check FILE` loads it), and the
    rules' options; a compose that cannot be loaded is an error."""
    from ..rules import all_rules
    from ..rules.options import load_options
    from ..run.estate import load_estate
    from ..run.pipeline import operator_env

    settings = load_settings(root, config)
    estate = load_estate(settings, [compose], operator_env(env_file))
    if estate.errors:
        raise estate.errors[0]
    if not estate.composes:
        raise GuardsError(
            "not a compose of the estate under --root (see `composes` in the settings)",
            str(compose),
        )
    return estate, load_options(settings, all_rules())


@claims_evidence_app.command("add")
def claims_evidence_add(
    claim_id: str = ID_ARGUMENT,
    after: Path | None = AFTER_ARGUMENT,
    scrape: Path = SCRAPE,
    engine: str | None = ENGINE,
    compose: Path | None = SERVED_COMPOSE,
    model: str | None = EVIDENCE_MODEL_OPTION,
    note: str | None = NOTE,
    date: str | None = MEASURED,
    root: Path | None = ROOT_OPTION,
    config: Path | None = CONFIG_OPTION,
) -> None:
    """Append an evidence entry (source, date, engine, the figures) read from a vLLM /metrics
    scrape (or a before/after pair) to a claim in claims.yaml, editing it in place."""
    root = estate_root(root, config)
    from ..run import evidence
    from ..write.evidence_edit import entry, evidence_edits, summary
    from ..write.registry_edits import check_date, edit_registry

    when = check_date(date or dt.date.today().isoformat())
    first, last = evidence.load_pair(scrape, after)
    found = evidence.figures(last, first, model)
    if len(found) > 1:
        raise GuardsError(
            f"the scrape serves {len(found)} models ({', '.join(f.model for f in found)}): "
            "name one with --model",
            last.shown,
        )
    if compose is not None:
        estate, options = evidence_compose(root, config, compose, None)
        chosen, side = evidence.beside(found, estate, options, model)
        found, engine = [chosen], engine or side.image
    if not engine:
        raise GuardsError(
            "the scrape does not say which engine it came from: give --engine TAG or --compose FILE"
        )
    settings = load_settings(root, config)
    where = shown(settings, settings.claims_path)
    scrapes = [s.shown for s in (first, last) if s is not None]
    new = entry(found[0], scrapes, when, engine, note)
    if not edit_registry(
        settings.claims_path,
        where,
        lambda registry, at: evidence_edits(registry, at, claim_id, new),
    ):
        echo(f"{where}: {claim_id} already records that evidence")
        return
    echo(f"{where}: added evidence to {claim_id} (on {engine}): {summary(found[0])}")
