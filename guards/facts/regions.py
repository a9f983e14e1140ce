"""Generated regions: the comment lines between ``# >>> guards:NAME [ARGS]`` and
``# <<< guards:NAME (checksum: HEX)``, rendered from the Jinja2 template ``NAME.j2``.

Templates come from the estate's templates folder (setting ``templates``), then from the
built-ins shipped in ``guards/templates``. They run sandboxed with ``StrictUndefined``: a name
the context does not define is an error, not an empty string; they are code any committer can
write, so they see plain data only, read template files only inside the root, and each render
has a budget (``guards.facts.sandbox``). Every line a template renders becomes a comment line at the
opening marker's indentation, so a region can never change what Compose reads, and reads back
as written; the closing marker records a checksum of the body (cog-style), so a hand edit
inside a region is detected. This module is imported only for files that have regions.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import GuardsError
from ..sources import reads, yamlsrc
from ..sources.compose.comments import REGION_CLOSE, REGION_OPEN
from ..sources.compose.compose import Compose, Region, parse_compose
from ..sources.compose.engines import UNKNOWN
from ..sources.edit import Edit, apply, line_starts, unify_breaks
from ..sources.registry import Claim, Registry

if TYPE_CHECKING:
    from ..sources.config import Kept
    from .sandbox import Sandbox

# The profile block's layout: `  Key:` padded to KEY_WIDTH, values and their continuation lines
# at VALUE_COLUMN (both after the `# `). Templates read them; adoption reproduces them.
PROFILE_LAYOUT = {"key_width": 11, "value_column": 13}


def checksum(body: str) -> str:
    """Eight hex digits of the body's SHA-256: enough to notice an edit, short to read."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:8]


class RegionError(GuardsError):
    """A region that cannot be rendered; the error names the compose or the template line at
    fault, ``region_line`` the region's opening marker."""

    def __init__(self, error: GuardsError, region_line: int) -> None:
        super().__init__(error.message, error.path, error.line, error.column)
        self.region_line = region_line


class Rendered(NamedTuple):
    """A region as it is and as its template renders it."""

    region: Region
    edit: Edit  # the body and closing marker line as rendered, replacing ``current``
    current: str  # the body and closing marker as written

    @property
    def stale(self) -> bool:
        return self.current != self.edit.new

    @property
    def edited_by_hand(self) -> bool:
        """The body no longer matches the checksum its closing marker recorded."""
        recorded = self.region.checksum
        body = self.current[: self.current.rfind("\n", 0, len(self.current) - 1) + 1]
        return recorded is not None and checksum(body) != recorded


@cache
def environment(folder: Path | None, root: Path | None = None) -> Sandbox:
    """One environment per templates folder (an existing one; None: the built-ins only) and
    root: compiled templates are reused across files."""
    from .sandbox import Sandbox, Templates  # jinja2: only when a region is rendered

    env = Sandbox(Templates(folder, root))
    env.add_filter("facts", facts)
    return env


# The knobs a profile row may take from the body, as ``{name}``; other braces are text.
FACT_KNOBS = frozenset(
    ("max_model_len", "tensor_parallel_size", "tensor_split", "kv_cache_dtype", "drafter_depth")
)
FACT = re.compile(r"\{(" + "|".join(sorted(FACT_KNOBS)) + r")\}")


def facts(text: str, knobs: dict[str, str | None]) -> str:
    """``text`` with each ``{knob}`` replaced by the compose's value for it; a knob the compose
    does not set is an error (the row would state nothing)."""

    def value(match: re.Match[str]) -> str:
        found = knobs.get(match.group(1))
        if found is None:
            raise GuardsError(f"the compose sets no {match.group(1)} for {match.group(0)}")
        return found

    from .budget import limit

    if isinstance(text, str) and "{" in text and isinstance(knobs, dict):
        longest = max((len(v) for v in knobs.values() if isinstance(v, str)), default=0)
        limit(len(text) + text.count("{") * longest)
    return FACT.sub(value, text)


def render_regions(
    compose: Compose,
    registry: Registry,
    templates: Path | None,
    root: Path | None = None,
    kept: Kept | None = None,
) -> list[Rendered]:
    """Every region of ``compose`` rendered (or, with ``kept``, taken from an earlier render
    of the same template and data). Raises GuardsError (file:line) at a broken marker, and
    RegionError for the first region that cannot be rendered: an unknown template, a template
    error or one past its budget, an unknown claim id, text that would not read back."""
    if compose.marker_problems:
        problem = compose.marker_problems[0]
        raise GuardsError(problem.message, compose.path, problem.line)
    whole = compose.text
    starts = line_starts(whole) + [len(whole)]
    out = []
    for region in compose.regions:
        indent = indentation(compose.lines[region.line - 1])
        try:
            text = _kept_render(compose, region, registry, (templates, root), kept)
            lines = _region_lines(text, region, (compose.path, region.line))
        except GuardsError as exc:
            raise RegionError(exc, region.line) from None
        body = _comment_lines(lines, indent)
        closing = f"{indent}# <<< guards:{region.name} (checksum: {checksum(body)})"
        end = starts[region.end_line - 1] + len(compose.lines[region.end_line - 1])
        current = whole[region.body_start : end]
        out.append(Rendered(region, Edit(region.body_start, end, body + closing), current))
    return out


Folders = tuple[Path | None, Path | None]  # the templates folder and the root


def _kept_render(
    compose: Compose, region: Region, registry: Registry, folders: Folders, kept: Kept | None
) -> str:
    """The region as its template renders it. ``kept`` holds earlier renders by template name,
    the template's data and the registry, with the state of every file the render read (the
    templates, and the names looked for and not found): one is used while each still has that
    state, which is recorded for the run as if read; else the region is rendered, and kept.
    They spare a process its first render, which pays for jinja2 and compiling the template
    (about 50 ms): once a process has rendered, the next render costs less than reading a
    kept one, or keeping it, so it neither reads nor keeps any more."""
    global _rendered
    data = data_of(compose, region)
    if kept is None or _rendered:
        _rendered = True
        return _render(compose, region, registry, folders, data)
    key = repr([region.name, data, registry_digest(registry)])
    found = _from_kept(kept.get(key))
    if found is not None:
        reads.merge(found["reads"], True)
        return str(found["text"])
    _rendered = True
    read = reads.Reads()
    try:
        with reads.recording() as read:
            text = _render(compose, region, registry, folders, data)
    finally:
        reads.merge(read.states, read.complete)
    if read.complete:
        kept.put(key, {"text": text, "reads": read.states})
    return text


_rendered = False  # whether this process has rendered a region (jinja2 is loaded)
# (the key is the repr of the data, not JSON: 1 and "1" differ)


def _region_lines(text: str, region: Region, where: tuple[str, int]) -> list[str]:
    """The rendered text's lines; text that would not read back is an error at the region."""
    try:
        return _lines(text)
    except GuardsError as exc:
        raise GuardsError(f"region guards:{region.name}: {exc.message}", *where) from None


def _from_kept(data: Any) -> dict[str, Any] | None:
    """A kept render whose files all read as they did, else None (a miss)."""
    try:
        if type(data) is not dict or data.keys() != {"text", "reads"}:
            return None
        states = reads.checked_states(data["reads"])
    except ValueError:
        return None
    if type(data["text"]) is not str or not reads.Reads(states).unchanged():
        return None
    return data


def registry_digest(registry: Registry) -> str:
    """What a template can see of the registry (every claim, as ``claim()`` shows it), as a
    digest; computed once per registry."""
    if _DIGESTS.get(id(registry), (None,))[0] is not registry:
        views = json.dumps([claim_view(claim) for claim in registry.claims], sort_keys=True)
        _DIGESTS.clear()
        _DIGESTS[id(registry)] = (registry, reads.digest(views.encode()))
    return _DIGESTS[id(registry)][1]


_DIGESTS: dict[int, tuple[Registry, str]] = {}


def _render(
    compose: Compose, region: Region, registry: Registry, folders: Folders, data: dict[str, Any]
) -> str:
    """The region's text as its template renders it from ``data`` (:func:`data_of`) and the
    registry; every failure is a GuardsError."""
    import jinja2

    from . import budget

    # the loader looks the folder up on every render: one made since the last is used, and a
    # name it lacks is recorded as absent for the run cache
    templates, root = folders
    env = environment(templates, root)
    where = (compose.path, region.line)
    values = context(data, registry, where)
    try:
        return budget.render(env, f"{region.name}.j2", values)
    except jinja2.TemplateNotFound as exc:
        raise GuardsError(_not_found(region, exc.name, templates, root), *where) from None
    except jinja2.TemplateSyntaxError as exc:
        raise GuardsError(
            f"template syntax error: {exc.message}", exc.filename or f"{region.name}.j2", exc.lineno
        ) from None
    except jinja2.TemplateError as exc:  # undefined names, sandbox refusals
        raise GuardsError(
            f"region guards:{region.name}: {exc.message or type(exc).__name__}", *where
        ) from None
    except GuardsError as exc:
        if exc.path is not None:
            raise
        raise GuardsError(f"region guards:{region.name}: {exc.message}", *where) from None
    except Exception as exc:  # 1 / 0, 'x' | wordwrap(0), a recursion: the template's errors
        raise GuardsError(f"region guards:{region.name}: {budget.describe(exc)}", *where) from None


def _not_found(region: Region, name: Any, templates: Path | None, root: Path | None) -> str:
    from . import sandbox

    folder = sandbox.relative(templates, root) + "/" if templates else "the templates folder"
    if name == f"{region.name}.j2":
        return (
            f"no template for region guards:{region.name} (looked for {name} in {folder} and "
            "among the built-ins)"
        )
    return f"region guards:{region.name}: no template {name!r} in {folder} or among the built-ins"


def context(data: dict[str, Any], registry: Registry, where: tuple[str, int]) -> dict[str, Any]:
    """What a template sees (documented in docs/regions.md): plain data (``data_of``, built
    afresh for each render), and one function. No object of guards or a library is reachable
    from it, since through their methods a committed template could run code."""
    from . import sandbox

    claim = sandbox.Function("claim", _claim_lookup(registry, where))
    return {**data, "claim": claim}


def data_of(compose: Compose, region: Region) -> dict[str, Any]:
    """The template's data: its context but ``claim``."""
    services = [_service(s) for s in compose.shipped]
    main = next((s for s in services if s["engine"] != UNKNOWN), services[0] if services else {})
    return {
        "compose": {"path": compose.path, "services": services, **main},
        "data": plain(vars(compose.data)),  # copied: the template gets its own lists
        "args": region.args.split(),
        "layout": dict(PROFILE_LAYOUT),
    }


def _service(service: Any) -> dict[str, Any]:
    return {
        "name": service.name,
        "engine": service.engine,
        "image": service.value("image"),
        "gpus": service.value("gpus"),
        "knobs": {name: knob.value for name, knob in service.knobs.items()},
    }


# What ``claim("id")`` gives a template: the registry entry's own fields, and is_withdrawn.
CLAIM_FIELDS = (
    "id",
    "title",
    "status",
    "asserted",
    "retracted",
    "rationale",
    "reason",
    "text",
    "variants",
    "replacement",
    "superseded_by",
    "refs",
)


def claim_view(claim: Claim) -> dict[str, Any]:
    """A claim as plain data (dates as ``YYYY-MM-DD``)."""
    view = {name: plain(getattr(claim, name)) for name in CLAIM_FIELDS}
    view["is_withdrawn"] = claim.is_withdrawn
    return view


def _claim_lookup(registry: Registry, where: tuple[str, int]) -> Callable[[str], dict[str, Any]]:
    def claim(claim_id: str) -> dict[str, Any]:
        found = registry.get(str(claim_id))
        if found is None:
            raise GuardsError(f"no claim with id {claim_id!r} in {registry.path}", *where)
        return claim_view(found)

    return claim


def plain(value: Any) -> Any:
    """``value`` (validated data) as str, int, float, bool, None, lists and dicts only."""
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {plain(key): plain(item) for key, item in value.items()}
    raise TypeError(f"{type(value).__name__} is not plain data for a template")


def indentation(line: str) -> str:
    """The leading whitespace of ``line``."""
    return line[: len(line) - len(line.lstrip())]


# What a YAML file may hold (the YAML printable set, which libyaml, PyYAML and ruamel enforce):
# anything else a template renders (a control character, a lone surrogate) is an error.
UNWRITABLE = re.compile(r"[^\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _lines(rendered: str) -> list[str]:
    """The rendered text as the lines it is written as, each of which reads back as itself:
    every line break guards reads (CR, NEL, U+2028, U+2029: ``edit.unify_breaks``) is a line
    break here too; a character a YAML file cannot hold, or a line that reads as a region
    marker, is an error (numbered as the region's lines)."""
    text = unify_breaks(rendered).strip("\n")
    bad = UNWRITABLE.search(text)
    if bad:
        number = text.count("\n", 0, bad.start()) + 1
        raise GuardsError(
            f"rendered line {number} holds U+{ord(bad.group()):04X}, a character a YAML file "
            "cannot hold"
        )
    lines = text.split("\n") if text.strip() else []
    for number, line in enumerate(lines, 1):
        if REGION_OPEN.match(line) or REGION_CLOSE.match(line):
            raise GuardsError(
                f"rendered line {number} reads as a region marker ({line.strip()}), which would "
                "end or nest the region"
            )
    return lines


def _comment_lines(lines: list[str], indent: str) -> str:
    """Each rendered line as a comment at ``indent`` (``#`` alone for a blank line)."""
    return "".join(f"{indent}#{' ' + line.rstrip() if line.strip() else ''}\n" for line in lines)


def regenerate(
    text: str,
    shown: str,
    registry: Registry,
    templates: Path | None,
    root: Path | None,
    force: bool,
) -> list[Edit]:
    """The edits that bring every region of a compose up to date, verified: the text outside
    the regions and the YAML data are unchanged. Raises GuardsError (nothing to write)."""
    compose = parse_compose(text, shown)
    rendered = render_regions(compose, registry, templates, root)
    edited = next((r for r in rendered if r.stale and r.edited_by_hand), None)
    if edited is not None and not force:
        raise GuardsError(
            f"region guards:{edited.region.name} was edited by hand since it was generated "
            "(its checksum does not match); move the edit into the template or the data, or "
            "rerun with --force to overwrite it",
            shown,
            edited.region.line,
        )
    edits = [r.edit for r in rendered if r.stale]
    _verify(text, apply(text, edits), edits, shown)
    return edits


def _verify(before: str, after: str, edits: list[Edit], shown: str) -> None:
    """Outside the edited spans the text is byte-identical, and the YAML data is equal."""
    outside_before, outside_after, shift = [], [], 0
    cursor = 0
    for edit in sorted(edits):
        outside_before.append(before[cursor : edit.start])
        outside_after.append(after[cursor + shift : edit.start + shift])
        shift += len(edit.new) - (edit.end - edit.start)
        cursor = edit.end
    outside_before.append(before[cursor:])
    outside_after.append(after[cursor + shift :])
    if outside_before != outside_after or yamlsrc.data(before, shown) != yamlsrc.data(after, shown):
        raise GuardsError(
            "refusing to write: regenerating would change more than the regions' comment "
            "lines (is a marker inside a block scalar?); nothing written",
            shown,
        )


def unified_diff(shown: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{shown}",
            f"b/{shown}",
        )
    )
