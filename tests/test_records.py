"""Small immutable records are named tuples (``typing.NamedTuple``), not frozen dataclasses:
every ``guards`` process builds the record classes of each module it imports, and a frozen
dataclass takes about ten times as long to build (six generated methods, each compiled from
source: about 0.65 ms against 0.06 ms for a named tuple of five fields on a 2-core machine).
A frozen dataclass stays where it needs what a named tuple cannot give, and this test names
what that is for each one."""

from __future__ import annotations

import ast
from pathlib import Path

from .package_source import syntax

PACKAGE = Path(__file__).parent.parent / "guards"
TUPLE_METHODS = frozenset(dir(tuple)) - frozenset(dir(object)) | {"__eq__", "__hash__", "__repr__"}


def frozen_dataclass(node: ast.ClassDef) -> ast.Call | None:
    """The ``@dataclass(frozen=True, ...)`` decorator of a class, or None."""
    for decorator in node.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func).endswith("dataclass")
            and any(
                k.arg == "frozen" and ast.unparse(k.value) == "True" for k in decorator.keywords
            )
        ):
            return decorator
    return None


def needs(node: ast.ClassDef, decorator: ast.Call) -> list[str]:
    """What the class uses that a named tuple does not have."""
    found = [f"{k.arg}=" for k in decorator.keywords if k.arg != "frozen"]
    found += [f"base {ast.unparse(base)}" for base in node.bases]
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            name = statement.target.id
            if isinstance(statement.value, ast.Call) and ast.unparse(statement.value.func) in (
                "field",
                "dataclasses.field",
            ):
                found.append(f"field() for {name}")
            if name.startswith("_") or name in TUPLE_METHODS:
                found.append(f"field named {name}")
            if "ClassVar" in ast.unparse(statement.annotation):
                found.append(f"class variable {name}")
        if isinstance(statement, ast.FunctionDef):
            decorators = {ast.unparse(d) for d in statement.decorator_list}
            if "cached_property" in decorators or "functools.cached_property" in decorators:
                found.append(f"cached property {statement.name}")
            if statement.name in TUPLE_METHODS | {"__post_init__", "__init__", "__new__"}:
                found.append(f"its own {statement.name}")
    return found


def frozen_dataclasses() -> dict[str, list[str]]:
    """Each frozen dataclass of the package (``module:Class``) with what it needs."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(syntax(path)):
            if isinstance(node, ast.ClassDef) and (decorator := frozen_dataclass(node)):
                name = f"{path.relative_to(PACKAGE.parent).with_suffix('').as_posix()}:{node.name}"
                found[name] = needs(node, decorator)
    return found


def test_a_frozen_dataclass_needs_what_a_named_tuple_cannot_give():
    found = frozen_dataclasses()
    assert [name for name, needed in found.items() if not needed] == []
    assert len(found) >= 10  # the walk found the package's dataclasses at all


def test_what_makes_a_frozen_dataclass_is_seen():
    source = ast.parse(
        "@dataclass(frozen=True)\nclass Plain:\n    line: int\n    text: str = ''\n"
        "@dataclass(frozen=True, kw_only=True)\nclass Keywords:\n    line: int\n"
        "@dataclass(frozen=True)\nclass Factory:\n    names: list = field(default_factory=list)\n"
        "@dataclass(frozen=True)\nclass Cached:\n    @cached_property\n    def size(self): ...\n"
        "@dataclass(frozen=True)\nclass Contains:\n    def __contains__(self, line): ...\n"
        "@dataclass(frozen=True)\nclass Counted:\n    count: int\n"
        "@dataclass\nclass Mutable:\n    line: int\n"
    )
    seen = {
        node.name: needs(node, decorator)
        for node in source.body
        if isinstance(node, ast.ClassDef) and (decorator := frozen_dataclass(node))
    }
    assert seen == {
        "Plain": [],
        "Keywords": ["kw_only="],
        "Factory": ["field() for names"],
        "Cached": ["cached property size"],
        "Contains": ["its own __contains__"],
        "Counted": ["field named count"],
    }
