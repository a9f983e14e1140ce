"""The Jinja2 environment region templates run in.

A template is code from the estate: anybody who can commit can write one, and ``guards check``
runs it in CI and pre-commit hooks. So it runs sandboxed (``SandboxedEnvironment``: no
attribute starting with ``_``), sees plain data only (the caller builds the context of str,
int, float, bool, None, lists and dicts), and besides the filters only two callables: ``range``
(bounded) and what the caller adds. Template files are read by :class:`Templates`: only inside
``--root`` (:func:`guards.sources.paths.inside`) and through :func:`guards.sources.edit.read`, so the run cache
records them.

Every render has a budget (:func:`render`): ``MAX_STEPS`` steps (a loop turn, a call, an
attribute lookup, an operator, a piece of output) and ``MAX_SECONDS`` of wall clock, checked
at every step (no signals: checks also run in forked worker processes); ``MAX_TEXT`` characters
of output, and no value larger than that (a text, a list counted by what printing it would
take). Operations that could build a large value from a small one (``'x' * n``, ``**``, ``%``
and ``format`` with widths, ``center``, ``indent``, ``join``, ``replace``, ...) are estimated
before they run; every other result is measured after. Macros and recursive loops nest at most
``MAX_DEPTH`` deep. The clock is read between steps, so one operation on values within the
budget (a sort, a wordwrap of a long text) still runs to its end. Whatever goes wrong raises an
exception the caller turns into a located one-line error (``describe``).
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import time
import types
from collections.abc import Callable, ItemsView, KeysView, Mapping, ValuesView
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.environment import TemplateModule
from jinja2.loaders import split_template_path
from jinja2.runtime import LoopContext, Macro
from jinja2.sandbox import (
    SandboxedEnvironment,
    SandboxedEscapeFormatter,
    SandboxedFormatter,
    modifies_known_mutable,
)
from jinja2.utils import _PassArg
from jinja2.visitor import NodeTransformer

from ..errors import GuardsError
from ..sources import edit, reads
from ..sources.paths import check_path, inside

BUILT_INS = Path(__file__).parent / "templates"
MAX_TEXT = 1_000_000  # characters a region renders, and the largest value it may build
MAX_STEPS = 1_000_000  # loop turns, calls, lookups, operators and output pieces per region
MAX_SECONDS = 2.0  # wall clock per region
MAX_DEPTH = 50  # macro calls and recursive loops inside each other
MAX_NESTING = 32  # lists and dicts inside each other, in a value a template holds
MAX_BITS = 100_000  # the largest integer a template may compute (30,000 digits)
MAX_RANGE = 100_000  # numbers in one range()
MAX_TEMPLATE = 100_000  # characters in one template file
# Filters not offered: pprint indents by the width of dict keys (no bound on its output), random
# gives a different text each run (a region would never be current).
LEFT_OUT = ("pprint", "random")


class OverBudget(GuardsError):
    """A render that ran past its budget."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} (the budget of one region)")


@dataclass
class Budget:
    deadline: float
    steps: int = 0
    text: int = 0  # characters output so far, buffered ones (macros, blocks) included
    depth: int = 0


_budget: ContextVar[Budget | None] = ContextVar("guards_render_budget", default=None)


def render(env: jinja2.Environment, name: str, context: dict[str, Any]) -> str:
    """The template ``name`` rendered with ``context``, within a fresh budget (the compiled
    template is reused; the budget is per render)."""
    token = _budget.set(Budget(time.monotonic() + MAX_SECONDS))
    try:
        return "".join(env.get_template(name).generate(context))
    finally:
        _budget.reset(token)


def describe(error: BaseException) -> str:
    """What went wrong, for an exception a template raised that is not a Jinja or guards one
    (``1 / 0``, ``'x' | wordwrap(0)``, a recursion)."""
    if isinstance(error, RecursionError):
        return "templates include, extend or call themselves too deeply"
    if isinstance(error, MemoryError):
        return "out of memory"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def step() -> Budget | None:
    """Count one step of the current render; past the budget, raise."""
    budget = _budget.get()
    if budget is not None:
        budget.steps += 1
        if budget.steps > MAX_STEPS:
            raise OverBudget(f"rendering takes more than {MAX_STEPS:,} steps")
        if time.monotonic() > budget.deadline:
            raise OverBudget(f"rendering takes longer than {MAX_SECONDS:g} s")
    return budget


# -- sizes ----------------------------------------------------------------------------------

CONTAINERS = (list, tuple, set, frozenset, dict, KeysView, ValuesView, ItemsView)


def weight(value: Any, indent: int = 0) -> int:
    """About how many characters ``str(value)`` takes (a list: its items, each printed), with
    ``indent`` more per item and nesting level (``tojson``'s indentation). Counting stops a
    little past ``MAX_TEXT``."""
    if type(value) is str:  # the usual case, first
        return len(value)
    return _weight(value, indent, 0, set())


def _weight(value: Any, indent: int, depth: int, path: set[int]) -> int:
    if isinstance(value, str | bytes | bytearray):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return value.bit_length() // 3 + 2
    if isinstance(value, float):
        return 24
    if isinstance(value, jinja2.Undefined):
        return 0
    if isinstance(value, TemplateModule):
        return len(str(value))
    if not isinstance(value, CONTAINERS):
        return 64  # a macro, a loop, a generator: printed as a short name
    if id(value) in path:
        return 5  # printed as [...]
    if depth >= MAX_NESTING:
        raise OverBudget(f"a value nests more than {MAX_NESTING} lists or dicts deep")
    path.add(id(value))
    total = 2
    for item in value.items() if isinstance(value, dict) else value:
        total += 2 + depth * indent + _weight(item, indent, depth + 1, path)
        if total > MAX_TEXT:
            break
    path.discard(id(value))
    return total


def limit(size: int) -> None:
    """Refuse to build a value of ``size`` characters past ``MAX_TEXT``."""
    if size > MAX_TEXT:
        raise OverBudget(f"a value of more than {MAX_TEXT:,} characters")


def checked(value: Any) -> Any:
    """``value``, when it is not larger than a template may hold."""
    limit(weight(value))
    return value


def _limit_bits(bits: int) -> None:
    if bits > MAX_BITS:
        raise OverBudget(f"a number of more than {MAX_BITS:,} bits")


def _number(value: Any) -> int:
    """``value`` as a count for an estimate (0 when it is not an int: the operation itself then
    says what is wrong)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _digits(text: str) -> int:
    """A width or precision as written (a very long one counts as too large)."""
    return int(text) if len(text) < 8 else MAX_TEXT + 1


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str) -> Any:
    return args[index] if len(args) > index else kwargs.get(name)


# %-formatting: each conversion, with its mapping key, width and precision.
CONVERSION = re.compile(r"%(?:\(([^)]*)\))?[#0 +-]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.?)", re.DOTALL)


def percent_size(pattern: str | bytes, values: Any) -> int:
    """How long ``pattern % values`` can be: the pattern, each conversion's width and
    precision, and what each prints."""
    text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
    size, index = len(text), 0
    for key, width, precision, kind in CONVERSION.findall(text):
        if kind == "%":
            continue
        if "*" in (width, precision):
            raise GuardsError("a `*` width or precision in %-formatting is not supported")
        size += sum(_digits(part) for part in (width, precision) if part)
        if key and isinstance(values, Mapping):
            size += weight(values.get(key))
        elif isinstance(values, tuple):
            size += weight(values[index] if index < len(values) else None)
            index += 1
        else:
            size += weight(values)
    return size


def _binop_size(operator: str, left: Any, right: Any) -> None:
    """Refuse ``left operator right`` before it runs when the result would be too large."""
    if operator == "*":
        if isinstance(left, int) and not isinstance(right, int):
            left, right = right, left
        if isinstance(left, str | bytes | list | tuple) and isinstance(right, int):
            brackets = 2 if isinstance(left, list | tuple) else 0
            limit((weight(left) - brackets) * right + brackets)
        elif isinstance(left, int) and isinstance(right, int):
            _limit_bits(left.bit_length() + right.bit_length())
    elif operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            _limit_bits(left.bit_length() * right)
    elif operator == "+":
        if isinstance(left, str | bytes | list | tuple) and isinstance(right, type(left)):
            limit(weight(left) + weight(right))
    elif operator == "%" and isinstance(left, str | bytes):
        limit(percent_size(left, right))


# -- methods and filters that build large values from small ones ----------------------------

WIDTH_METHODS = frozenset(("ljust", "rjust", "center", "zfill"))


def _method_args(function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple:
    """``args`` for a method call, once its result is known not to be too large (an iterable
    given to ``join`` is made a list to measure it)."""
    owner, name = getattr(function, "__self__", None), getattr(function, "__name__", "")
    if isinstance(owner, int) and name == "to_bytes":
        limit(_number(_arg(args, kwargs, 0, "length")))
    if not isinstance(owner, str | bytes | bytearray):
        return args
    if name in WIDTH_METHODS:
        limit(_number(_arg(args, kwargs, 0, "width")))
    elif name == "expandtabs":
        tabs = owner.count("\t") if isinstance(owner, str) else owner.count(b"\t")
        limit(len(owner) + tabs * _number(_arg(args, kwargs, 0, "tabsize") or 8))
    elif name == "replace" and len(args) >= 2:
        limit(_replaced_size(owner, args[0], args[1], _arg(args, kwargs, 2, "count")))
    elif name == "join" and args:
        items = list(args[0])
        limit(weight(items) + len(items) * len(owner))
        return (items, *args[1:])
    elif name == "translate" and args and isinstance(args[0], dict):
        widest = max((weight(v) for v in args[0].values()), default=1)
        limit(len(owner) * max(widest, 1))
    return args


def _replaced_size(text: Any, old: Any, new: Any, count: Any) -> int:
    if not isinstance(text, str | bytes) or not isinstance(old, type(text)):
        return 0
    haystack: Any = text  # str or bytes, with ``old`` of the same type
    found = haystack.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * weight(new)


def _center(args: tuple, kwargs: dict) -> tuple:
    limit(_number(_arg(args, kwargs, 1, "width")))
    return args


def _indent(args: tuple, kwargs: dict) -> tuple:
    text, width = _arg(args, kwargs, 0, "s"), _arg(args, kwargs, 1, "width")
    if isinstance(text, str):
        by = len(width) if isinstance(width, str) else _number(width)
        limit(len(text) + (text.count("\n") + 1) * by)
    return args


def _wordwrap(args: tuple, kwargs: dict) -> tuple:
    text, width = _arg(args, kwargs, 0, "s"), _number(_arg(args, kwargs, 1, "width"))
    wrap = _arg(args, kwargs, 3, "wrapstring") or "\n"
    if isinstance(text, str) and width > 0:
        limit(len(text) + (len(text) // width + 1) * weight(wrap))
    return args


def _replace(args: tuple, kwargs: dict) -> tuple:
    if len(args) >= 3:
        old, new = str(args[1]), args[2]
        limit(_replaced_size(str(args[0]), old, new, _arg(args, kwargs, 3, "count")))
    return args


def _join(args: tuple, kwargs: dict) -> tuple:
    if not args:
        return args
    items = list(args[0])
    limit(weight(items) + len(items) * weight(_arg(args, kwargs, 1, "d") or ""))
    return (items, *args[1:])


def _format(args: tuple, kwargs: dict) -> tuple:
    if args and isinstance(args[0], str):
        limit(percent_size(args[0], kwargs or tuple(args[1:])))
    return args


def _count(index: int, name: str) -> Callable[[tuple, dict], tuple]:
    def estimate(args: tuple, kwargs: dict) -> tuple:
        limit(_number(_arg(args, kwargs, index, name)))
        return args

    return estimate


def _tojson(args: tuple, kwargs: dict) -> tuple:
    if args:
        limit(weight(args[0], indent=_number(_arg(args, kwargs, 1, "indent"))))
    return args


def _urlize(args: tuple, kwargs: dict) -> tuple:
    text = _arg(args, kwargs, 0, "value")
    if isinstance(text, str):
        extra = 40 + weight(_arg(args, kwargs, 3, "target") or "")
        limit(
            2 * len(text)
            + (len(text) // 4 + 1) * (extra + weight(_arg(args, kwargs, 4, "rel") or ""))
        )
    return args


def _sum(args: tuple, kwargs: dict) -> tuple:
    """``sum`` of lists adds them one by one (quadratic): joined here in one go instead."""
    start = _arg(args, kwargs, 2, "start")
    if not args or not isinstance(start, list | tuple):
        return args
    if _arg(args, kwargs, 1, "attribute") is not None:
        raise GuardsError("sum() of lists or tuples by attribute is not supported")
    items, kind = list(args[0]), type(start)
    limit(weight(items) + weight(start))
    if not all(isinstance(item, kind) for item in items):
        raise TypeError(f"sum() of {kind.__name__}s: every item must be a {kind.__name__}")
    kwargs.pop("start", None)
    return ([kind(itertools.chain(start, *items))], None, kind())


# Filters whose result can be much larger than their input, by their template-level arguments.
ESTIMATES: dict[str, Callable[[tuple, dict], tuple]] = {
    "center": _center,
    "indent": _indent,
    "wordwrap": _wordwrap,
    "replace": _replace,
    "join": _join,
    "format": _format,
    "batch": _count(1, "linecount"),
    "slice": _count(1, "slices"),
    "tojson": _tojson,
    "urlize": _urlize,
    "sum": _sum,
}


def budgeted(function: Callable[..., Any], name: str = "") -> Callable[..., Any]:
    """``function`` as a filter under the budget: a step, the estimate for ``name`` (if any)
    before it runs, its result measured after."""
    estimate = ESTIMATES.get(name)
    passes = _PassArg.from_obj(function) is not None  # its first argument is Jinja's

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        step()
        if estimate is not None:
            lead, given = (args[:1], args[1:]) if passes else ((), args)
            args = (*lead, *estimate(given, kwargs))
        return checked(function(*args, **kwargs))

    return run


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
        widths = [_digits(digits) for digits in re.findall(r"\d+", format_spec)]
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
        _binop_size(operator, left, right)
        return checked(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        step()
        args = _method_args(__obj, args, kwargs)
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
        self.budget = _budget.get() if isinstance(obj, Macro | LoopContext) else None

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
