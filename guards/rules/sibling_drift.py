"""D006 sibling-drift: what a comment says another compose ships is what that compose ships.

Why: composes of one model describe each other — "the dual-max sibling ships fp8 KV", a tier
table listing "dual/max.yml: 262K, MTP n=3" — and nobody re-reads those lines when the sibling
changes. A reference is a compose path (relative to this compose, to the root, or with ``…``
for the middle: ``dual/…/fp8-mtp.yml``) or "the NAME sibling" (``dual-max`` is ``dual/max.yml``
beside this compose's tier folder, or ``NAME.yml`` in its own folder). It must name exactly one
compose of the estate; what follows it on the line, up to the next reference, is compared with
that compose as shipped — context, KV, drafter depth and vision, read as in D005 (in a tier
table a bare ``262K`` is the context). ``(this)`` after a path means this compose.

Bad:
    --- composes/m/vllm/single/fast.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    # Tiers: dual/max.yml — 262K, MTP n=3 · single/fast.yml (this) — 64K, MTP n=2
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "65536",
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":2}']
    --- composes/m/vllm/dual/max.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "262144",
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":4}']

Finds:
    composes/m/vllm/single/fast.yml:3:35: D006 comment says dual/max.yml ships n=3 (line 3), but in composes/m/vllm/dual/max.yml the default drafter depth is 4 (command line 7)

Good:
    --- composes/m/vllm/single/fast.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    # Tiers: dual/max.yml — 262K, MTP n=4 · single/fast.yml (this) — 64K, MTP n=2
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "65536",
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":2}']
    --- composes/m/vllm/dual/max.yml
    # Profile (at-a-glance):
    #   Model:     Qwen3.8-27B
    services:
      vllm:
        image: vllm/vllm-openai:v0.27.1
        command: [--max-model-len, "262144",
                  --speculative-config, '{"method":"mtp","num_speculative_tokens":4}']
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ..facts.statements import Disagreement, Stated, disagreements
from ..findings import Finding, Severity
from ..sources.compose.compose import Compose
from .base import Context, Rule
from .options import RuleOptions

YAML_END = re.compile(r"\.ya?ml\b")
SIBLING_WORD = re.compile(r"\bsibling\b", re.IGNORECASE)
NAME_BEFORE = re.compile(r"\b([a-z0-9]+(?:[-/][a-z0-9]+)+)\s+$", re.IGNORECASE)
PATH_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/…")
THIS = re.compile(r"\s*\(this\)")
ELLIPSIS = re.compile(r"/?(?:…|\.\.\.)/?")


@dataclass(frozen=True)
class Reference:
    ref: str  # as written
    start: int  # where it starts in the comment text
    end: int  # where the statement about it starts
    table: bool  # a path (a tier table's row), not a "sibling" phrase
    this: bool = False


def check(compose: Compose, context: Context) -> list[Finding] | None:
    composes = {c.path: c for c in context.estate.composes}
    findings, referenced = [], False
    for comment in compose.comments:
        refs = references(comment.text)
        for index, ref in enumerate(refs):
            target = compose if ref.this else resolve(ref, compose.path, composes)
            if target is None:
                context.remark(
                    RULE, compose.path, f"line {comment.line}: `{ref.ref}` names no single compose"
                )
                continue
            if not target.shipped:
                continue
            referenced = True
            stop = refs[index + 1].start if index + 1 < len(refs) else None
            text = comment.text[ref.end : stop]
            stated = Stated("comment", comment.line, text, comment.column + 1 + ref.end, ref.table)
            findings += [
                _at(compose, stated, ref, target, found)
                for found in disagreements(stated, target.shipped[0])
            ]
    return findings if referenced else None


def references(text: str) -> list[Reference]:
    """Compose paths (scanned back from each ``.yml``) and "NAME sibling" phrases, in order."""
    found = []
    for match in YAML_END.finditer(text):
        start = match.start()
        while start > 0 and text[start - 1] in PATH_CHARS:
            start -= 1
        if start == match.start():
            continue
        this = THIS.match(text, match.end())
        end = this.end() if this else match.end()
        found.append(Reference(text[start : match.end()], start, end, True, this is not None))
    for match in SIBLING_WORD.finditer(text):
        window = max(0, match.start() - 80)
        name = NAME_BEFORE.search(text, window, match.start())
        if name is not None:
            found.append(Reference(name.group(1), name.start(1), match.end(), False))
    return sorted(found, key=lambda r: r.start)


def resolve(ref: Reference, here: str, composes: dict[str, Compose]) -> Compose | None:
    """The one compose a reference names, or None."""
    folder = posixpath.dirname(here)
    if ref.table:
        parts = ELLIPSIS.split(ref.ref)
        if len(parts) > 1:
            return _only(
                [p for p in composes if parts[0] in p and p.endswith("/" + parts[-1])], composes
            )
        tried = [posixpath.normpath(posixpath.join(folder, ref.ref)), posixpath.normpath(ref.ref)]
        exact = [p for p in tried if p in composes]
        if exact:
            return composes[exact[0]]
        return _only([p for p in composes if p.endswith("/" + ref.ref.lstrip("./"))], composes)
    name = ref.ref.lower()
    tier_root = posixpath.dirname(folder)
    tried = [
        posixpath.join(folder, f"{name}.yml"),
        posixpath.join(tier_root, name.replace("-", "/", 1) + ".yml"),
        posixpath.join(tier_root, f"{name}.yml"),
    ]
    return next((composes[p] for p in tried if p in composes and p != here), None)


def _only(paths: list[str], composes: dict[str, Compose]) -> Compose | None:
    return composes[paths[0]] if len(paths) == 1 else None


def _at(
    compose: Compose, stated: Stated, ref: Reference, target: Compose, found: Disagreement
) -> Finding:
    knob = found.knob
    where = f" ({knob.source} line {knob.line})" if knob is not None else ""
    subject = "this compose" if ref.this else ref.ref
    inside = "" if ref.this else f"in {target.path} "
    return RULE.at(
        compose.path,
        stated.number,
        stated.column + found.said.start(),
        f"comment says {subject} ships {found.said.group(0).strip()} (line {stated.number}), but "
        f"{inside}{found.actual}{where}",
        knob=knob.name if knob else None,
        hint=f"update what this comment says of {subject}, or the compose it describes",
    )


RULE: Rule[RuleOptions] = Rule(
    id="D006",
    name="sibling-drift",
    family="drift",
    targets=("compose",),
    severity=Severity.ERROR,
    check=check,
    doc=__doc__,
)
