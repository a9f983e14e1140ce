"""The Jinja2 environment region templates run in, and the loader of their files.

A template is code from the estate: anybody who can commit can write one, and ``guards check``
runs it in CI and pre-commit hooks. So it runs sandboxed (``SandboxedEnvironment``: no
attribute starting with ``_``), sees plain data only (the caller builds the context of str,
int, float, bool, None, lists and dicts), and besides the filters only two callables: ``range``
(bounded) and what the caller adds, within the budget of :mod:`guards.facts.budget`. Template
files are read by :class:`Templates`: only inside ``--root`` (:func:`guards.sources.paths.inside`)
and through :func:`guards.sources.edit.read`, so the run records them.
"""

from __future__ import annotations

import functools
import os
import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.loaders import split_template_path
from jinja2.runtime import LoopContext, Macro
from jinja2.sandbox import (
    SandboxedEnvironment,
    SandboxedEscapeFormatter,
    SandboxedFormatter,
    modifies_known_mutable,
)
from jinja2.visitor import NodeTransformer

from ..errors import GuardsError
from ..sources import edit, reads
from ..sources.paths import check_path, inside
from .budget import (
    LEFT_OUT,
    MAX_DEPTH,
    MAX_RANGE,
    MAX_TEMPLATE,
    MAX_TEXT,
    OverBudget,
    binop_size,
    budgeted,
    checked,
    current,
    digits_of,
    limit,
    method_args,
    step,
    weight,
)

BUILT_INS = Path(__file__).parent / "templates"

# -- the environment ------------------------------------------------------------------------


class Function:
    """A callable a template may call, and nothing more: it prints as its name, and its only
    attributes start with ``_`` (which the sandbox refuses)."""

    def __init__(self, name: str, function: Callable[..., Any]) -> None:
        self._name = name
        self._function = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return self._name


def _range(*args: int) -> range:
    numbers = range(*args)
    try:
        count = len(numbers)
    except OverflowError:
        count = MAX_RANGE + 1
    if count > MAX_RANGE:
        raise GuardsError(f"range() of more than {MAX_RANGE:,} numbers")
    return numbers


@jinja2.pass_context
def _finalize(context: Any, value: Any) -> Any:
    """Every piece of output, literal text included: counted against the budget."""
    budget = step()
    if budget is not None:
        budget.text += weight(value)
        if budget.text > MAX_TEXT:
            raise OverBudget(f"renders more than {MAX_TEXT:,} characters")
    return value


@jinja2.pass_context
def _step_filter(context: Any, value: Any) -> Any:
    step()
    return value


def _concat(values: list[Any]) -> str:
    """``a ~ b``: measured before the values are printed."""
    limit(sum(weight(value) for value in values))
    return "".join(str(value) for value in values)


class _Instrument(NodeTransformer):
    """Rewrites a parsed template so the budget sees what Jinja does not route through the
    environment: every loop turn (and every item a loop's ``if`` tests) is a step, literal
    text is output like any other value (so it is counted), and ``~`` is measured."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.body.insert(0, nodes.ExprStmt(_call("_step", nodes.Const(None)), lineno=node.lineno))
        if node.test is not None:
            node.test = _call("_step", node.test)
        return node

    def visit_TemplateData(self, node: nodes.TemplateData) -> nodes.Node:
        return nodes.Const(node.data, lineno=node.lineno)

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _call("_concat", nodes.List(node.nodes, lineno=node.lineno))


def _call(name: str, node: nodes.Node) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=node.lineno)


class _Formatter(SandboxedFormatter):
    """``str.format`` counting what it builds, each field's width included."""

    def __init__(self, env: jinja2.Environment, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.size = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        widths = [digits_of(digits) for digits in re.findall(r"\d+", format_spec)]
        self.size += weight(value) + max(widths, default=0)
        limit(self.size)
        return super().format_field(value, format_spec)


class _EscapeFormatter(_Formatter, SandboxedEscapeFormatter):
    pass


class Sandbox(SandboxedEnvironment):
    """The sandbox with the budget: every call, lookup and intercepted operator is a step."""

    intercepted_binops = frozenset(("+", "*", "**", "%"))

    def __init__(self, loader: jinja2.BaseLoader) -> None:
        super().__init__(
            loader=loader,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
            autoescape=False,
            finalize=_finalize,
        )
        self.globals.clear()  # lipsum, cycler, joiner, namespace, dict: library objects
        self.globals["range"] = Function("range", _range)
        self.filters = {
            name: budgeted(function, name)
            for name, function in self.filters.items()
            if name not in LEFT_OUT
        }
        self.filters.update(_step=_step_filter, _concat=_concat)

    def add_filter(self, name: str, function: Callable[..., Any]) -> None:
        self.filters[name] = budgeted(function, name)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        return _Instrument().visit(tree)

    def getattr(self, obj: Any, attribute: str) -> Any:
        step()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        step()
        return super().getitem(obj, argument)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        step()
        binop_size(operator, left, right)
        return checked(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        step()
        args = method_args(__obj, args, kwargs)
        with _Nested(__obj):
            result = super().call(__context, __obj, *args, **kwargs)
        owner = getattr(__obj, "__self__", None)
        if owner is not None and modifies_known_mutable(owner, getattr(__obj, "__name__", "")):
            checked(owner)  # list.append and the like: the list is what grew
        return checked(result)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format`` and ``format_map`` through the counting formatter."""
        if not isinstance(
            value, types.MethodType | types.BuiltinMethodType
        ) or value.__name__ not in (
            "format",
            "format_map",
        ):
            return None
        text = value.__self__
        if not isinstance(text, str):
            return None
        escape = getattr(text, "escape", None)
        formatter = _EscapeFormatter(self, escape=escape) if escape else _Formatter(self)

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if value.__name__ == "format_map":
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                mapping = args[0]
                args, kwargs = (), mapping
            formatter.size = 0
            return type(text)(formatter.vformat(text, args, kwargs))

        return wrapper


class _Nested:
    """Inside a macro call or a recursive loop turn: one level deeper."""

    def __init__(self, obj: Any) -> None:
        self.budget = current() if isinstance(obj, Macro | LoopContext) else None

    def __enter__(self) -> None:
        if self.budget is not None:
            self.budget.depth += 1
            if self.budget.depth > MAX_DEPTH:
                raise GuardsError(f"macros or recursive loops nest more than {MAX_DEPTH} deep")

    def __exit__(self, *exc: object) -> None:
        if self.budget is not None:
            self.budget.depth -= 1


# -- template files -------------------------------------------------------------------------


class Templates(jinja2.BaseLoader):
    """The estate's templates folder first, then the built-ins (trusted package files).

    A file of the folder is read only when it resolves, every symlink followed, inside the root
    (a template, the folder, a template another includes, extends or imports), and it is read
    through :func:`guards.sources.edit.read`, so the run cache records it wherever it lives; a name the
    folder lacks is recorded as absent (adding it later changes the result). A compiled
    template is reused only while its file still reads the same."""

    def __init__(self, folder: Path | None, root: Path | None) -> None:
        self.folder = folder
        self.root = root if root is not None else folder
        self.shown = relative(folder, root) if folder is not None else ""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        text, shown = self._find(template)

        def uptodate() -> bool:
            try:
                return self._find(template) == (text, shown)
            except (GuardsError, jinja2.TemplateNotFound):
                return False

        return text, shown, uptodate

    def _find(self, template: Any) -> tuple[str, str]:
        """The template's text and the name errors show it by."""
        pieces = split_template_path(template) if isinstance(template, str) else []
        if not pieces:
            raise jinja2.TemplateNotFound(str(template))
        if self.folder is not None:
            path = self.folder.joinpath(*pieces)
            shown = "/".join([self.shown, *pieces])
            check_path(path, shown)
            if os.path.lexists(path):
                return self._read(path, shown), shown
            reads.record(path, None)
        path = BUILT_INS.joinpath(*pieces)
        if not path.is_file():
            raise jinja2.TemplateNotFound(template)
        return _built_in(path), str(path)

    def _read(self, path: Path, shown: str) -> str:
        assert self.root is not None, "a folder is given with its root"
        try:
            inside(self.root, path, shown)
        except GuardsError:
            reads.record_failure()  # not read: a kept run must not stand for this one
            raise
        text = edit.read(path, shown).text
        if len(text) > MAX_TEMPLATE:
            raise GuardsError(
                f"is larger than {MAX_TEMPLATE:,} characters, the most a template may hold", shown
            )
        return text


@functools.cache
def _built_in(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def relative(folder: Path, root: Path | None) -> str:
    """``folder`` as errors show it: relative to the root, as named (links not followed)."""
    if root is None:
        return folder.as_posix()
    return Path(os.path.relpath(os.path.abspath(folder), os.path.abspath(root))).as_posix()
