"""The budget of one region's render: steps, wall clock, output and value sizes, depth.

Every render has a budget (:func:`render`): ``MAX_STEPS`` steps (a loop turn, a call, an
attribute lookup, an operator, a piece of output) and ``MAX_SECONDS`` of wall clock, checked
at every step (no signals: checks also run in forked worker processes); ``MAX_TEXT`` characters
of output, and no value larger than that (a text, a list counted by what printing it would
take). Operations that could build a large value from a small one (``'x' * n``, ``**``, ``%``
and ``format`` with widths, ``center``, ``indent``, ``join``, ``replace``, ...) are estimated
before they run (:func:`budgeted`); every other result is measured after. Macros and recursive
loops nest at most ``MAX_DEPTH`` deep. The clock is read between steps, so one operation on
values within the budget (a sort, a wordwrap of a long text) still runs to its end. Whatever
goes wrong raises an exception the caller turns into a located one-line error (``describe``).
"""

from __future__ import annotations

import functools
import itertools
import re
import time
from collections.abc import Callable, ItemsView, KeysView, Mapping, ValuesView
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2.environment import TemplateModule
from jinja2.utils import _PassArg

from ..errors import GuardsError

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


def digits_of(text: str) -> int:
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
        size += sum(digits_of(part) for part in (width, precision) if part)
        if key and isinstance(values, Mapping):
            size += weight(values.get(key))
        elif isinstance(values, tuple):
            size += weight(values[index] if index < len(values) else None)
            index += 1
        else:
            size += weight(values)
    return size


def binop_size(operator: str, left: Any, right: Any) -> None:
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


def method_args(function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple:
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


def current() -> Budget | None:
    """The budget of the render under way, if any."""
    return _budget.get()
