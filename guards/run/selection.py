"""Which rules a run checks: ``select``, ``extend-select``, ``ignore`` and ``extend-ignore``,
from the settings and then the command line on top of them, picked as ruff picks them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..rules.base import Rule
    from ..sources.config import Config

Layer = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # select, extend-select, ignore


def split(values: Sequence[str] | None) -> tuple[str, ...]:
    """Selectors given as repeated options, each of them comma-separated."""
    return tuple(
        part.strip() for value in values or [] for part in value.split(",") if part.strip()
    )


def layers(
    settings: Config,
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    extend_ignore: Sequence[str] | None = None,
) -> tuple[Layer, Layer]:
    """The selection as ruff reads it: the settings, then the command line on top of them."""
    return (
        (settings.select, settings.extend_select, (*settings.ignore, *settings.extend_ignore)),
        (split(select), split(extend_select), (*split(ignore), *split(extend_ignore))),
    )


def selection_key(chosen: tuple[Layer, ...]) -> tuple[list[str], list[str]]:
    """The selectors of every layer as text, selected and ignored (for the run cache's key)."""
    picked = [
        f"{n}{sign}{s}"
        for n, layer in enumerate(chosen)
        for sign, part in (("=", layer[0]), ("+", layer[1]))
        for s in part
    ]
    return picked, [f"{n}-{s}" for n, layer in enumerate(chosen) for s in layer[2]]


def selecting(chosen: tuple[Layer, ...]) -> list[str]:
    """Every selector that selects (for the warning on header rules an estate has turned off)."""
    return [s for layer in chosen for s in (*layer[0], *layer[1])]


def chosen_rules(rules: list[Rule], chosen: tuple[Layer, ...]) -> list[Rule]:
    """The rules the layers pick, as ruff picks them. Each layer in turn: a ``select`` it gives
    replaces what earlier layers picked (an empty one is no ``select``); its ``extend-select``
    adds to that; its ``ignore`` takes away. Inside a layer the less specific selectors go
    first, so a more specific one wins (``select = ["C001"]`` with ``ignore = ["C"]`` runs
    C001); at the same specificity an ignore wins. A selector that names no rule is an error."""
    from ..rules import select as pick

    enabled = {rule.id for rule in rules}  # without any selection: every rule
    for select, extend, ignore in chosen:
        updates: dict[str, bool] = {}
        given = [(s, True) for s in (*select, *extend)] + [(s, False) for s in ignore]
        for selector, on in sorted(given, key=lambda item: _specificity(rules, item[0])):
            for rule in pick(rules, [selector], []):
                updates[rule.id] = on
        if select:
            enabled = {rule for rule, on in updates.items() if on}
        else:
            enabled |= {rule for rule, on in updates.items() if on}
            enabled -= {rule for rule, on in updates.items() if not on}
    return [rule for rule in rules if rule.id in enabled]


def _specificity(rules: list[Rule], selector: str) -> int:
    """How narrow ``selector`` is: a family or one letter, a longer id prefix, a whole rule."""
    plain = selector.strip()
    if any(plain.upper() == rule.id or plain == rule.name for rule in rules):
        return 9
    if any(plain == rule.family for rule in rules):
        return 1
    return len(plain)
