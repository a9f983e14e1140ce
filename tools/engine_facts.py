"""Generate guards/facts/engines/*.json: the flags and environment variables each engine reads,
per released version, from the engine's own published sources.

The sources are read as text, never imported or run: vLLM's and SGLang's argparse calls and
config dataclasses through the ``ast`` module, llama.cpp's ``common/arg.cpp`` (vendored in the
``llama-cpp-python`` sdist) by a small scanner of its ``add_opt(common_arg(...))`` calls. Each
release is fetched from PyPI by name (the sdist where there is one, else a wheel), the few
files read are kept in memory and the archive is discarded before the next release.

    python tools/engine_facts.py                 # every engine, every release from its floor
    python tools/engine_facts.py --engine vllm   # one engine
    python tools/engine_facts.py --limit 3       # the newest 3 releases only (a quick try)

Sampled: every final release from the floor (``FLOORS``); where a release has post-releases
(``0.5.3``, ``0.5.3.post1`` ...) only the last of them, which stands for that release.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
import tarfile
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

PYPI = "https://pypi.org/pypi/{name}/json"
OUT = Path(__file__).resolve().parent.parent / "guards" / "facts" / "engines"
FLOORS = {"vllm": "0.6", "sglang": "0.3", "llama.cpp": "0.3.0"}
PACKAGES = {"vllm": "vllm", "sglang": "sglang", "llama.cpp": "llama-cpp-python"}


@dataclass
class Option:
    """One option as a parser declares it: its names (the canonical one first)."""

    names: list[str]
    type: str | None = None
    choices: list[str] | None = None


@dataclass
class Release:
    """What one release's sources say."""

    version: str
    options: list[Option] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # name -> the file it is read in
    files: dict[str, str] = field(default_factory=dict)  # option name -> file
    build: str | None = None  # llama.cpp: the vendored commit
    speculative: Speculative | None = None  # vLLM: what --speculative-config takes


# ---------------------------------------------------------------- Python sources (argparse)


def _const(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _type_name(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _choices(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = [_const(e) for e in node.elts]
        return [v for v in values if v is not None] or None
    return None


def _call_option(call: ast.Call) -> Option | None:
    """``add_argument("--a", "-b", type=int, choices=[...])``; None for a positional."""
    names = [n for n in (_const(a) for a in call.args) if n and n.startswith("-")]
    if not names:
        return None
    names.sort(key=lambda n: not n.startswith("--"))  # the first long name is canonical
    kwargs = {k.arg: k.value for k in call.keywords if k.arg}
    kind = _type_name(kwargs.get("type"))
    action = kwargs.get("action")
    action_name = _const(action) if action is not None else None
    if action_name in ("store_true", "store_false") or _type_name(action) == (
        "BooleanOptionalAction"
    ):
        kind = "bool"
    if _type_name(action) == "BooleanOptionalAction":
        names += [f"--no-{n[2:]}" for n in names if n.startswith("--")]
    return Option(names, kind, _choices(kwargs.get("choices")))


def _annotation(node: ast.AST | None) -> tuple[str | None, list[str] | None]:
    """A field's type and its Literal choices, from the annotation as written."""
    if node is None:
        return None, None
    text = ast.unparse(node)
    literal = re.search(r"Literal\[([^\]]*)\]", text)
    if literal:
        values = re.findall(r"['\"]([^'\"]*)['\"]", literal.group(1))
        return "str", values or None
    for kind in ("bool", "int", "float", "str", "dict", "list"):
        if re.search(rf"\b{kind}\b", text):
            return kind, None
    return None, None


def _fields(cls: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> dict[str, ast.AnnAssign]:
    """Annotated fields of a class and of its bases defined in the same file."""
    found: dict[str, ast.AnnAssign] = {}
    for base in cls.bases:
        name = _type_name(base)
        if name in classes and classes[name] is not cls:
            found.update(_fields(classes[name], classes))
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if not stmt.target.id.startswith("_") and "ClassVar" not in ast.unparse(stmt):
            found[stmt.target.id] = stmt
    return found


def _field_flag(name: str, stmt: ast.AnnAssign) -> Option:
    kind, choices = _annotation(stmt.annotation)
    flag = "--" + name.replace("_", "-")
    names = [flag] + ([f"--no-{flag[2:]}"] if kind == "bool" else [])
    return Option(names, kind, choices)


def _dataclass_flags(tree: ast.Module) -> list[Option]:
    """Flags made from a dataclass's fields: a function that calls ``get_kwargs(X)`` and
    adds ``f"--{key.replace('_', '-')}"`` for each key (vLLM's ``FrontendArgs``)."""
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    options: list[Option] = []
    for cls_node in classes.values():
        for func in cls_node.body:
            if isinstance(func, ast.FunctionDef) and _adds_field_flags(func):
                targets = _get_kwargs_targets(func, cls_node.name)
                for target in targets:
                    for sub in _subclasses(target, classes):
                        options += [_field_flag(n, s) for n, s in _fields(sub, classes).items()]
    for func in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        if _adds_field_flags(func):
            for target in _get_kwargs_targets(func, ""):
                if target in classes:
                    fields = _fields(classes[target], classes)
                    options += [_field_flag(n, s) for n, s in fields.items()]
    return options


def _adds_field_flags(func: ast.FunctionDef) -> bool:
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and _type_name(node.func) == "add_argument":  # noqa: SIM102
            if any(isinstance(a, ast.JoinedStr) for a in node.args):
                return True
    return False


def _get_kwargs_targets(func: ast.FunctionDef, owner: str) -> list[str]:
    targets = []
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and _type_name(node.func) == "get_kwargs" and node.args:
            name = _type_name(node.args[0])
            targets.append(owner if name == "cls" else name or "")
    return [t for t in targets if t]


def _subclasses(name: str, classes: dict[str, ast.ClassDef]) -> list[ast.ClassDef]:
    return [c for c in classes.values() if c.name == name or name in map(_type_name, c.bases)]


def _kwargs_types(tree: ast.Module, fields: dict[str, dict[str, ast.AnnAssign]]) -> dict:
    """``x_kwargs = get_kwargs(ModelConfig)`` -> {"x_kwargs": ModelConfig's fields}."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            if _type_name(call.func) == "get_kwargs" and call.args:
                cls = _type_name(call.args[0])
                for target in node.targets:
                    if isinstance(target, ast.Name) and cls in fields:
                        found[target.id] = fields[cls]
    return found


def parse_argparse(text: str, config_fields: dict[str, dict[str, ast.AnnAssign]] | None = None):
    """Every option a Python module declares: ``add_argument`` calls with literal names, and
    flags made from dataclass fields. ``config_fields`` (class -> fields) gives the type of
    ``add_argument("--x", **model_kwargs["x"])``."""
    tree = ast.parse(text)
    kwargs_of = _kwargs_types(tree, config_fields or {})
    options = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _type_name(node.func) == "add_argument":
            option = _call_option(node)
            if option is None:
                continue
            if option.type is None:
                option.type, option.choices = _splatted_type(node, kwargs_of, option)
            options.append(option)
    return options + _dataclass_flags(tree)


def _splatted_type(call: ast.Call, kwargs_of: dict, option: Option):
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg is None and isinstance(value, ast.Subscript):
            owner, key = _type_name(value.value), _const(value.slice)
            stmt = kwargs_of.get(owner, {}).get(key or "")
            if stmt is not None:
                kind, choices = _annotation(stmt.annotation)
                if kind == "bool" and option.names[0].startswith("--"):
                    option.names.append(f"--no-{option.names[0][2:]}")
                return kind, choices
    return option.type, option.choices


def parse_annotated_fields(text: str) -> list[Option]:
    """SGLang's field modules: ``name: A[T, "help"]`` or ``A[T, Arg(cli_name=..., aliases=[...],
    choices=[...])]`` is the flag ``--name`` (``Arg(no_cli=True)`` is none)."""
    options = []
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        note = node.annotation
        if not (isinstance(note, ast.Subscript) and _type_name(note.value) == "A"):
            continue
        parts = note.slice.elts if isinstance(note.slice, ast.Tuple) else [note.slice]
        meta = parts[1] if len(parts) > 1 else None
        kwargs = {}
        if isinstance(meta, ast.Call) and _type_name(meta.func) == "Arg":
            kwargs = {k.arg: k.value for k in meta.keywords if k.arg}
        elif not (isinstance(meta, (ast.Constant, ast.JoinedStr, ast.BinOp))):
            continue
        if isinstance(kwargs.get("no_cli"), ast.Constant) and kwargs["no_cli"].value is True:
            continue
        name = _const(kwargs["cli_name"]) if "cli_name" in kwargs else None
        aliases = _choices(kwargs.get("aliases")) or []
        kind, choices = _annotation(parts[0])
        options.append(
            Option(
                [name or "--" + node.target.id.replace("_", "-"), *aliases],
                kind,
                _choices(kwargs.get("choices")) or choices,
            )
        )
    return options


def dataclass_fields(text: str) -> dict[str, dict[str, ast.AnnAssign]]:
    """class name -> its annotated fields, for the config modules."""
    tree = ast.parse(text)
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    return {name: _fields(cls, classes) for name, cls in classes.items()}


def env_names(text: str, prefixes: Iterable[str]) -> set[str]:
    """Names under the prefixes a source mentions as whole words (``VLLM_HOST_IP``)."""
    alternatives = "|".join(re.escape(p) for p in prefixes)
    return set(re.findall(rf"\b(?:{alternatives})[A-Z0-9_]*[A-Z0-9]\b", text))


# ---------------------------------------------------------------- vLLM's speculative config

SPEC_CLASS = "SpeculativeConfig"
COUNT = "num_speculative_tokens"


@dataclass
class Speculative:
    """What one release's ``SpeculativeConfig`` says of the ``--speculative-config`` JSON:
    the methods it accepts (None: the field is a free string, or the class does not validate
    it) and whether it refuses a config with no ``num_speculative_tokens``, save for the
    methods it gives a count of its own."""

    file: str
    methods: list[str] | None
    count_required: bool
    count_defaults: list[str] = field(default_factory=list)
    count_keys: list[str] = field(default_factory=list)  # fields a count may come from


def parse_speculative(text: str, path: str = "") -> Speculative | None:
    """``SpeculativeConfig`` in a module: its ``method`` field's ``Literal`` (through the
    module's ``X = Literal[...]`` aliases), validated when the class is a pydantic dataclass;
    an unconditional ``if self.num_speculative_tokens is None: raise`` in one of its methods;
    and the methods whose branches of the class's code set the count, or name a draft model
    whose config may give it. None: the module has no such class."""
    tree = ast.parse(text)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == SPEC_CLASS), None)
    if cls is None:
        return None
    fields = _fields(cls, {})
    method = fields.get("method")
    methods = None
    if method is not None and _validated(tree, cls):
        methods = _literal_values(method.annotation, _literal_aliases(tree)) or None
    functions = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    required = any(_raises_without_count(f) for f in functions.values())
    post_init = functions.get("__post_init__")
    defaults, keys = _count_sources(post_init, functions) if post_init else (set(), set())
    return Speculative(path, methods, required, sorted(defaults), sorted(keys))


def _literal_aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``Name = Literal[...]`` assignments."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and "Literal[" in ast.unparse(node.value):
                found[target.id] = node.value
    return found


def _literal_values(node: ast.AST | None, aliases: dict[str, ast.expr], depth: int = 0) -> list:
    """The strings a ``Literal`` annotation admits, aliases and ``Optional``/``| None``
    followed; a name that is no ``Literal`` alias admits nothing known."""
    if node is None or depth > 20:
        return []
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, ast.Name):
        return _literal_values(aliases.get(node.id), aliases, depth + 1)
    if isinstance(node, ast.BinOp):
        left = _literal_values(node.left, aliases, depth + 1)
        return left + _literal_values(node.right, aliases, depth + 1)
    if isinstance(node, ast.Subscript) and _type_name(node.value) in ("Literal", "Optional"):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        values = [v for p in parts for v in _literal_values(p, aliases, depth + 1)]
        return list(dict.fromkeys(values))
    return []


def _validated(tree: ast.Module, cls: ast.ClassDef) -> bool:
    """The class checks its fields' types when made: a ``dataclass`` decorator imported from
    ``pydantic.dataclasses``, or none but ``config`` in a module that imports pydantic (vLLM's
    ``config`` decorator makes a pydantic dataclass); a standard dataclass does not."""
    origin = {
        alias.asname or alias.name: node.module or ""
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    names = [_type_name(d.func if isinstance(d, ast.Call) else d) for d in cls.decorator_list]
    if "dataclass" in names:
        return origin.get("dataclass") == "pydantic.dataclasses"
    return "config" in names and any(m.startswith("pydantic") for m in origin.values())


def _raises_without_count(func: ast.FunctionDef) -> bool:
    """A top-level ``if self.num_speculative_tokens is None: raise ...`` in the function."""
    for stmt in func.body:
        if isinstance(stmt, ast.If) and ast.unparse(stmt.test) == f"self.{COUNT} is None":
            return any(isinstance(s, ast.Raise) for s in stmt.body)
    return False


def _count_sources(
    func: ast.FunctionDef, functions: dict[str, ast.FunctionDef]
) -> tuple[set[str], set[str]]:
    """Where a count comes from when the config sets none: the methods whose branches set
    ``self.num_speculative_tokens`` (directly or in a method of the class they call) or set
    ``self.model`` where no test of the count guards it; and the fields (``model``) the tests
    around any other setting of the count read."""
    methods_found: set[str] = set()
    fields_found: set[str] = set()

    def visit(stmts: list[ast.stmt], methods: frozenset[str], tested: frozenset[str], depth: int):
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                named = _tested_methods(stmt.test)
                reads = tested | _self_fields(stmt.test)
                visit(stmt.body, named or methods, reads, depth)
                visit(stmt.orelse, methods, reads, depth)
                continue
            for body in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, body, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    visit(inner, methods, tested, depth)
            targets = {ast.unparse(t) for t in _assigned(stmt)}
            if f"self.{COUNT}" in targets or ("self.model" in targets and COUNT not in tested):
                methods_found.update(methods)
            if f"self.{COUNT}" in targets and not methods:
                fields_found.update(tested - {COUNT, "method"})
            called = _self_call(stmt)
            if called in functions and depth < 3:
                visit(functions[called].body, methods, tested, depth + 1)

    visit(func.body, frozenset(), frozenset(), 0)
    return methods_found, fields_found


def _self_fields(test: ast.expr) -> frozenset[str]:
    return frozenset(
        node.attr
        for node in ast.walk(test)
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "self"
    )


def _tested_methods(test: ast.expr) -> frozenset[str]:
    """``self.method == "x"`` / ``self.method in ("x", "y")``: the methods a test names."""
    found: set[str] = set()
    for node in ast.walk(test):
        if not (isinstance(node, ast.Compare) and ast.unparse(node.left) == "self.method"):
            continue
        if all(isinstance(op, (ast.Eq, ast.In)) for op in node.ops):
            for right in node.comparators:
                found.update(_literal_values(right, {}))
                if isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                    found.update(v for e in right.elts for v in _literal_values(e, {}))
    return frozenset(found)


def _assigned(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    return []


def _self_call(stmt: ast.stmt) -> str | None:
    """``self._validate()`` as a statement of its own: the method it calls."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and ast.unparse(func.value) == "self":
            return func.attr
    return None


# ---------------------------------------------------------------- llama.cpp (arg.cpp)

STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
CPP_NOISE = re.compile(
    r'R"([^(]*)\((?:.|\n)*?\)\1"|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*(?:.|\n)*?\*/'
)


def strip_cpp(text: str) -> str:
    """C++ text with comments and character literals blanked and raw strings emptied, so
    that brackets and quotes left in it are code's."""

    def keep(match: re.Match) -> str:
        token = match.group(0)
        if token.startswith('"'):
            return token
        if token.startswith("R"):
            return '""'
        return " " * len(token) if not token.startswith("/") else "\n" * token.count("\n")

    return CPP_NOISE.sub(keep, text)


def _balanced(text: str, start: int) -> int:
    """The index just past the bracket that closes the one at ``start``."""
    depth, index, pairs = 0, start, {"(": ")", "{": "}", "[": "]"}
    closers = set(pairs.values())
    while index < len(text):
        char = text[index]
        if char == '"':
            index = STRING.match(text, index).end()  # type: ignore[union-attr]
            continue
        if char in pairs:
            depth += 1
        elif char in closers:
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return index


def _top_level_args(body: str) -> list[str]:
    args, depth, current, index = [], 0, [], 0
    while index < len(body):
        char = body[index]
        if char == '"':
            end = STRING.match(body, index).end()  # type: ignore[union-attr]
            current.append(body[index:end])
            index = end
            continue
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        if char == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        index += 1
    args.append("".join(current).strip())
    return args


def _strings(text: str) -> list[str]:
    return [s[1:-1] for s in STRING.findall(text)]


def parse_arg_cpp(text: str, example: str = "LLAMA_EXAMPLE_SERVER") -> tuple[list[Option], set]:
    """The options ``llama-server`` registers and the variables they read: each
    ``add_opt(common_arg({names}, [{negated names},] ["VALUE",] help, handler))`` in examples
    that include the server (or none, which means every example), and its ``set_env``."""
    options, env = [], set()
    text = strip_cpp(text)
    for match in re.finditer(r"add_opt\(\s*(?:common|llama|gpt)_arg\(", text):
        open_at = match.end() - 1
        close = _balanced(text, open_at)
        end = _balanced(text, match.start() + len("add_opt"))
        args = _top_level_args(text[open_at + 1 : close - 1])
        chain = text[close:end]
        variables = re.findall(r'set_env\(\s*"([A-Z0-9_]+)"', chain)
        env.update(variables)
        if not _for_example(chain, example):
            continue
        names = _strings(args[0]) if args and args[0].startswith("{") else []
        negated = _strings(args[1]) if len(args) > 1 and args[1].startswith("{") else []
        rest = args[2:] if negated else args[1:]
        texts = [a for a in rest if a.startswith('"') or a.startswith("string_format")]
        takes_value = len(texts) >= 2 and STRING.fullmatch(texts[0]) is not None
        value = _strings(texts[0])[0] if takes_value else None
        if negated and variables:
            env.update(v.replace("LLAMA_ARG_", "LLAMA_ARG_NO_", 1) for v in variables)
        if names:
            names.sort(key=lambda n: not n.startswith("--"))
            options.append(Option(names + negated, value or "bool"))
    return options, env


def _for_example(chain: str, example: str) -> bool:
    examples = re.search(r"set_examples\(\s*\{([^}]*)\}", chain)
    excludes = re.search(r"set_excludes\(\s*\{([^}]*)\}", chain)
    if excludes and example in excludes.group(1):
        return False
    return examples is None or bool(
        re.search(rf"\b({example}|LLAMA_EXAMPLE_COMMON)\b", examples.group(1))
    )


# ---------------------------------------------------------------- fetching


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=300) as response:
        return bytes(response.read())


def releases(package: str, floor: str) -> list[tuple[str, str]]:
    """(version, file URL) of every final release from the floor, the last post-release of
    each, oldest first; the sdist where there is one."""
    index = json.loads(_get(PYPI.format(name=package)))
    chosen: dict[tuple, tuple[Version, str]] = {}
    for text, files in index["releases"].items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        usable = [f for f in files if not f.get("yanked")]
        if version.is_prerelease or version.is_devrelease or version < Version(floor) or not usable:
            continue
        pick = _pick_file(usable)
        if pick is None:
            continue
        url = urllib.parse.urljoin(PYPI.format(name=package), pick["url"])
        if version.release not in chosen or chosen[version.release][0] < version:
            chosen[version.release] = (version, url)
    return [(str(v), url) for v, url in sorted(chosen.values())]


def _pick_file(files: list[dict]) -> dict | None:
    sdists = [f for f in files if f["packagetype"] == "sdist"]
    wheels = [f for f in files if f["filename"].endswith(".whl")]
    wheels.sort(key=lambda f: ("x86_64" not in f["filename"], f["size"]))
    return (sdists or wheels or [None])[0]


def archive_files(data: bytes, name: str, wanted: Callable[[str], bool]) -> dict[str, str]:
    """The wanted members of an sdist or wheel, as text, keyed by their path in the
    package (the sdist's top folder dropped)."""
    found: dict[str, str] = {}
    if name.endswith(".whl") or data[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                if wanted(member):
                    found[member] = archive.read(member).decode("utf-8", "replace")
        return found
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|*") as stream:
        for member in stream:
            path = member.name.split("/", 1)[-1]
            if member.isfile() and wanted(path):
                handle = stream.extractfile(member)
                if handle is not None:
                    found[path] = handle.read().decode("utf-8", "replace")
    return found


# ---------------------------------------------------------------- per engine

VLLM_FILES = re.compile(
    r"^vllm/(engine/arg_utils|envs|entrypoints/(openai/cli_args|cli/serve|openai/api_server|"
    r"common/cli_args|api_server)|config|config/[a-z_]+|utils/argparse_utils)\.py$"
)
SGLANG_FILES = re.compile(r"^(python/)?sglang/srt/server_args\.py$")
SGLANG_FIELDS = re.compile(r"^(python/)?sglang/srt/arg_groups/fields/[a-z_]+\.py$")


def _python_package(path: str, package: str) -> bool:
    return re.match(rf"^(python/)?{package}/.*\.py$", path) is not None


def _vllm_parser_file(path: str, text: str) -> bool:
    """The modules that build ``vllm serve``'s parser, wherever a release keeps them."""
    if path.startswith("vllm/config"):
        return False
    serving = path.startswith("vllm/entrypoints/") and any(
        mark in text for mark in ("class FrontendArgs", "def make_arg_parser")
    )
    return serving or VLLM_FILES.match(path) is not None


def vllm_release(version: str, files: dict[str, str]) -> Release:
    release = Release(version)
    fields: dict[str, dict[str, ast.AnnAssign]] = {}
    for path, text in files.items():
        if path.startswith("vllm/config"):
            fields.update(dataclass_fields(text))
    for path, text in sorted(files.items()):
        if _vllm_parser_file(path, text):
            _add_options(release, parse_argparse(text, fields), path)
    _add_env(release, files, ("VLLM_",), "vllm/envs.py")
    for path, text in sorted(files.items()):
        if path.startswith("vllm/config") and f"class {SPEC_CLASS}" in text:
            release.speculative = parse_speculative(text, path) or release.speculative
    return release


def sglang_release(version: str, files: dict[str, str]) -> Release:
    release = Release(version)
    for path, text in sorted(files.items()):
        if SGLANG_FILES.match(path):
            options = parse_argparse(text) + parse_annotated_fields(text)
            _add_options(release, options, path.removeprefix("python/"))
        elif SGLANG_FIELDS.match(path):
            _add_options(release, parse_annotated_fields(text), path.removeprefix("python/"))
    _add_env(release, files, ("SGLANG_", "SGL_"), "sglang/srt/environ.py")
    environ = next((t for p, t in files.items() if p.endswith("sglang/srt/environ.py")), "")
    if re.search(r"""replace\(\s*["']SGL_["']\s*,\s*["']SGLANG_["']""", environ):
        # the legacy prefix is rewritten at start: SGL_X is read as SGLANG_X
        legacy = "sglang/srt/environ.py (SGL_ read as SGLANG_)"
        for name in [n for n in release.env if n.startswith("SGLANG_")]:
            release.env.setdefault("SGL_" + name.removeprefix("SGLANG_"), legacy)
    return release


def llamacpp_release(version: str, files: dict[str, str]) -> Release:
    release = Release(version)
    for path, text in files.items():
        if path.endswith("common/arg.cpp"):
            options, env = parse_arg_cpp(text)
            short = path.split("vendor/", 1)[-1]
            _add_options(release, options, short)
            release.env.update({name: short for name in env})
        elif path.endswith("vendor/llama.cpp/HEAD"):
            release.build = text.strip()[:12] or None
        elif path == "CHANGELOG.md":
            release.build = release.build or _changelog_commit(text, version)
    return release


def _changelog_commit(text: str, version: str) -> str | None:
    section = text.partition(f"## [{version}]")[2].partition("\n## [")[0]
    found = re.search(r"llama\.cpp@([0-9a-f]{7,40})", section)
    return found.group(1) if found else None


def _add_options(release: Release, options: list[Option], path: str) -> None:
    for option in options:
        release.options.append(option)
        for name in option.names:
            release.files.setdefault(name, path)


def _add_env(release: Release, files: dict[str, str], prefixes: tuple, declared: str) -> None:
    """Every variable the package's Python code names; the declaring module wins as the
    file recorded."""
    for path, text in sorted(files.items(), key=lambda item: item[0] != declared):
        if path.endswith(".py"):
            for name in env_names(text, prefixes):
                release.env.setdefault(name, path.removeprefix("python/"))


@dataclass(frozen=True)
class Engine:
    package: str
    wanted: Callable[[str], bool]
    read: Callable[[str, dict[str, str]], Release]


def _llamacpp_wanted(path: str) -> bool:
    return path.endswith(("vendor/llama.cpp/common/arg.cpp", "modules/vendor/llama.cpp/HEAD")) or (
        path == "CHANGELOG.md"
    )


ENGINES = {
    "vllm": Engine("vllm", lambda p: _python_package(p, "vllm"), vllm_release),
    "sglang": Engine("sglang", lambda p: _python_package(p, "sglang"), sglang_release),
    "llama.cpp": Engine("llama-cpp-python", _llamacpp_wanted, llamacpp_release),
}


# ---------------------------------------------------------------- the data


def merge(engine: str, package: str, found: list[Release]) -> dict:
    """Per name, the spans of versions that have it; the newest declaration's details."""
    versions = [r.version for r in found]
    flags: dict[str, dict] = {}
    env: dict[str, dict] = {}
    for index, release in enumerate(found):
        for option in release.options:
            for name in option.names:
                entry = flags.setdefault(name, {"in": []})
                _extend(entry["in"], versions, index)
                entry["file"] = release.files.get(name)
                _details(entry, option, name)
        for name, path in release.env.items():
            entry = env.setdefault(name, {"in": [], "file": path})
            _extend(entry["in"], versions, index)
    for entry in list(flags.values()) + list(env.values()):
        entry["in"] = [[versions[a], versions[b]] for a, b in entry["in"]]
    data = {
        "engine": engine,
        "package": package,
        "source": f"PyPI {package}: every final release from {FLOORS[engine]}",
        "versions": versions,
        "flags": dict(sorted(flags.items())),
        "env": dict(sorted(env.items())),
    }
    builds = {r.version: r.build for r in found if r.build}
    if builds:
        data["builds"] = builds
    speculative = _merge_speculative(found)
    if speculative:
        data["speculative"] = speculative
    return data


def _merge_speculative(found: list[Release]) -> dict | None:
    """``--speculative-config``: the releases whose method set is known and enforced
    (``checked``), those that refuse a config with no count (``count_required``), and the
    spans of releases that have each method (``methods``), each method given a count of its
    own (``count_defaults``) and each key a count may come from (``count_keys``)."""
    versions = [r.version for r in found]
    checked: list[list[int]] = []
    required: list[list[int]] = []
    methods: dict[str, dict] = {}
    defaults: dict[str, dict] = {}
    keys: dict[str, dict] = {}
    for index, release in enumerate(found):
        spec = release.speculative
        if spec is None:
            continue
        if spec.count_required:
            _extend(required, versions, index)
        for table, names in ((defaults, spec.count_defaults), (keys, spec.count_keys)):
            for name in names:
                entry = table.setdefault(name, {"in": []})
                _extend(entry["in"], versions, index)
                entry["file"] = spec.file
        if spec.methods is None:
            continue
        _extend(checked, versions, index)
        for name in spec.methods:
            entry = methods.setdefault(name, {"in": []})
            _extend(entry["in"], versions, index)
            entry["file"] = spec.file
    if not checked and not required:
        return None
    for entry in [*methods.values(), *defaults.values(), *keys.values()]:
        entry["in"] = [[versions[a], versions[b]] for a, b in entry["in"]]
    return {
        "checked": [[versions[a], versions[b]] for a, b in checked],
        "count_required": [[versions[a], versions[b]] for a, b in required],
        "methods": dict(sorted(methods.items())),
        "count_defaults": dict(sorted(defaults.items())),
        "count_keys": dict(sorted(keys.items())),
    }


def _extend(spans: list[list[int]], versions: list[str], index: int) -> None:
    if spans and spans[-1][1] in (index - 1, index):
        spans[-1][1] = index
    else:
        spans.append([index, index])


def _details(entry: dict, option: Option, name: str) -> None:
    canonical = option.names[0]
    if name != canonical:
        entry["alias_of"] = canonical
    else:
        entry.pop("alias_of", None)
    for key in ("type", "choices"):
        value = getattr(option, key)
        if value:
            entry[key] = value
        else:
            entry.pop(key, None)


def generate(engine: str, limit: int | None, log: Callable[[str], None]) -> dict:
    spec = ENGINES[engine]
    chosen = releases(spec.package, FLOORS[engine])
    chosen = chosen[-limit:] if limit else chosen
    found = []
    for version, url in chosen:
        started = time.monotonic()
        data = _get(url)
        files = archive_files(data, url, spec.wanted)
        del data
        release = spec.read(version, files)
        if not release.options:  # a layout the readers do not know: no data, not empty data
            log(f"{engine} {version}: skipped, no options read from {len(files)} files")
            continue
        found.append(release)
        log(
            f"{engine} {version}: {len(release.options)} options, {len(release.env)} variables, "
            f"{len(files)} files read, {time.monotonic() - started:.1f} s"
        )
    return merge(engine, spec.package, found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--engine", choices=sorted(ENGINES), action="append")
    parser.add_argument("--limit", type=int, help="only the newest N releases")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    for engine in args.engine or sorted(ENGINES):
        started = time.monotonic()
        data = generate(engine, args.limit, lambda line: print(line, file=sys.stderr))
        path = args.out / f"{engine.replace('.', '')}.json"
        text = json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n"
        path.write_text(text, encoding="utf-8")
        print(f"{path}: {len(text):,} bytes, {len(data['versions'])} versions, "
              f"{time.monotonic() - started:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
