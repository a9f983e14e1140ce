"""Generated regions: the comment lines between ``# >>> guards:NAME [ARGS]`` and
``# <<< guards:NAME (checksum: HEX)``, rendered from the Jinja2 template ``NAME.j2``.

Templates come from the estate's templates folder (setting ``templates``), then from the
built-ins shipped in ``guards/templates``. They run sandboxed with ``StrictUndefined``: a name
the context does not define is an error, not an empty string. Every line a template renders
becomes a comment line at the opening marker's indentation, so a region can never change what
Compose reads; the closing marker records a checksum of the body (cog-style), so a hand edit
inside a region is detected. This module is imported only for files that have regions.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from . import yamlsrc
from .compose import Compose, Region, parse_compose
from .edit import Edit, apply, line_starts
from .engines import UNKNOWN
from .errors import GuardsError
from .registry import Claim, Registry

BUILT_INS = Path(__file__).parent / "templates"
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


@dataclass(frozen=True)
class Rendered:
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
def environment(folder: Path | None) -> SandboxedEnvironment:
    """One environment per templates folder (an existing one; None: the built-ins only):
    compiled templates are reused across files."""
    loaders: list[jinja2.BaseLoader] = []
    if folder is not None:
        loaders.append(jinja2.FileSystemLoader(folder))
    loaders.append(jinja2.FileSystemLoader(BUILT_INS))
    env = SandboxedEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,
    )
    env.filters["facts"] = facts
    env.globals["layout"] = PROFILE_LAYOUT
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

    return FACT.sub(value, text)


def render_regions(
    compose: Compose, registry: Registry, templates: Path | None, root: Path | None = None
) -> list[Rendered]:
    """Every region of ``compose`` rendered. Raises GuardsError (file:line) at a broken marker,
    and RegionError for the first region that cannot be rendered: an unknown template, a
    template error, an unknown claim id."""
    if compose.marker_problems:
        problem = compose.marker_problems[0]
        raise GuardsError(problem.message, compose.path, problem.line)
    whole = compose.text
    starts = line_starts(whole) + [len(whole)]
    out = []
    for region in compose.regions:
        indent = indentation(compose.lines[region.line - 1])
        try:
            text = _render(compose, region, registry, templates, root)
        except GuardsError as exc:
            raise RegionError(exc, region.line) from None
        body = _comment_lines(text, indent)
        closing = f"{indent}# <<< guards:{region.name} (checksum: {checksum(body)})"
        end = starts[region.end_line - 1] + len(compose.lines[region.end_line - 1])
        current = whole[region.body_start : end]
        out.append(Rendered(region, Edit(region.body_start, end, body + closing), current))
    return out


def _render(
    compose: Compose,
    region: Region,
    registry: Registry,
    templates: Path | None,
    root: Path | None,
) -> str:
    # keyed by whether the folder exists too: one made since the last render must be used
    env = environment(templates if templates is not None and templates.is_dir() else None)
    where = (compose.path, region.line)
    try:
        template = env.get_template(f"{region.name}.j2")
        return template.render(context(compose, region, registry, where))
    except jinja2.TemplateNotFound:
        folder = _shown(templates, root) + "/" if templates else "the templates folder"
        raise GuardsError(
            f"no template for region guards:{region.name} (looked for {region.name}.j2 in "
            f"{folder} and among the built-ins)",
            *where,
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise GuardsError(
            f"template syntax error: {exc.message}",
            _shown(Path(exc.filename), root) if exc.filename else f"{region.name}.j2",
            exc.lineno,
        ) from None
    except jinja2.TemplateError as exc:  # undefined names, sandbox refusals
        raise GuardsError(
            f"region guards:{region.name}: {exc.message or type(exc).__name__}", *where
        ) from None
    except GuardsError as exc:
        if exc.path is not None:
            raise
        raise GuardsError(f"region guards:{region.name}: {exc.message}", *where) from None


def context(
    compose: Compose, region: Region, registry: Registry, where: tuple[str, int]
) -> dict[str, Any]:
    """What a template sees (documented in the README)."""
    services = [_service(s) for s in compose.shipped]
    main = next((s for s in services if s["engine"] != UNKNOWN), services[0] if services else {})
    return {
        "compose": {"path": compose.path, "services": services, **main},
        "data": compose.data.model_dump(),
        "args": region.args.split(),
        "claim": _claim_lookup(registry, where),
    }


def _service(service: Any) -> dict[str, Any]:
    return {
        "name": service.name,
        "engine": service.engine,
        "image": service.value("image"),
        "gpus": service.value("gpus"),
        "knobs": {name: knob.value for name, knob in service.knobs.items()},
    }


def _claim_lookup(registry: Registry, where: tuple[str, int]) -> Callable[[str], Claim]:
    def claim(claim_id: str) -> Claim:
        found = registry.get(str(claim_id))
        if found is None:
            raise GuardsError(f"no claim with id {claim_id!r} in {registry.path}", *where)
        return found

    return claim


def indentation(line: str) -> str:
    """The leading whitespace of ``line``."""
    return line[: len(line) - len(line.lstrip())]


def _comment_lines(rendered: str, indent: str) -> str:
    """Each rendered line as a comment at ``indent`` (``#`` alone for a blank line)."""
    lines = rendered.strip("\n").split("\n") if rendered.strip() else []
    return "".join(f"{indent}#{' ' + line.rstrip() if line.strip() else ''}\n" for line in lines)


def _shown(path: Path, root: Path | None) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() if root else str(path)
    except ValueError:
        return str(path)


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
