"""``guards rules``, ``guards schema`` and ``guards explain``: what guards checks and reads."""

import typer

from ..errors import GuardsError


def list_rules(
    markdown: bool = typer.Option(
        False, "--markdown", help="Print the full rules reference (docs/rules.md) instead."
    ),
) -> None:
    """List every rule: id, name, family and what it checks."""
    from ..rules import all_rules

    rules = all_rules()
    if markdown:
        from ..rules.docs import markdown as reference

        typer.echo(reference(rules), nl=False)
        return
    name = max(len(r.name) for r in rules)
    family = max(len(r.family) for r in rules)
    for rule in rules:
        typer.echo(f"{rule.id}  {rule.name:<{name}}  {rule.family:<{family}}  {rule.summary}")


def print_schema() -> None:
    """Print the JSON schema of the settings, for an editor to validate them."""
    from ..run.schema import text

    typer.echo(text(), nl=False)


def explain(rule: str = typer.Argument(..., help="Rule id or name.")) -> None:
    """Print a rule's documentation: why it exists, a bad and a good example."""
    from ..rules import all_rules, find
    from ..rules.docs import explain as explanation

    found = find(all_rules(), rule) or find(all_rules(), rule.upper())
    if found is None:
        raise GuardsError(f"unknown rule `{rule}` (see `guards rules`)")
    typer.echo(explanation(found), nl=False)
