"""The layers of ``guards`` (docs/architecture.md): imports point down only, and the import
graph has no cycle. Imports inside functions count; only ``if TYPE_CHECKING:`` imports are
exempt (they never run)."""

from __future__ import annotations

import ast
from pathlib import Path

from .package_source import syntax

PACKAGE = Path(__file__).parent.parent / "guards"
# errors/findings <- sources <- facts, claims <- rules <- run <- report, write <- cli
LAYERS = {
    "errors": 0,
    "findings": 0,
    "sources": 1,
    "facts": 2,
    "claims": 2,
    "rules": 3,
    "run": 4,
    "report": 5,
    "write": 5,
    "cli": 6,
    "server": 6,  # the editor server: beside cli, which alone imports it
    "__main__": 6,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_only(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def edges(known: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the guards modules it imports when it runs."""
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(syntax(path)):
            for target in _targets(node, package):
                while target not in known and "." in target:
                    target = target.rpartition(".")[0]
                if target in known and target != name:
                    graph[name].add(target)
    return graph


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.startswith("guards")]
    if node.level:
        base = package.split(".")
        base = base[: len(base) - node.level + 1]
        stem = ".".join([*base, node.module] if node.module else base)
    elif node.module and node.module.startswith("guards"):
        stem = node.module
    else:
        return []
    return [stem] + [f"{stem}.{alias.name}" for alias in node.names]


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], -1) if len(parts) > 1 else 0


def test_every_module_belongs_to_a_layer():
    assert [m for m in modules() if m != "guards" and layer(m) < 0] == []


def test_imports_point_down():
    graph = edges(modules())
    upward = sorted(
        f"{source} ({layer(source)}) imports {target} ({layer(target)})"
        for source, targets in graph.items()
        for target in targets
        if layer(target) > layer(source)
    )
    assert upward == []


def test_the_import_graph_has_no_cycle():
    graph = edges(modules())
    cycles = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def test_modules_and_functions_stay_short():
    """A module past 600 lines or a function past 60 is two ideas sharing a home."""
    long = []
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_MODULE_LINES:
            long.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(syntax(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {size} lines")
    assert long == []
