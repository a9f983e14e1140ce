"""What a ``--speculative-config`` value asks of the vLLM release it meets.

vLLM reads the flag's value (``-sc`` too) as a JSON object and builds its
``SpeculativeConfig`` from it at start: a method outside the release's set, or no
``num_speculative_tokens`` where the release needs one, and the server exits before it serves.
What each release takes is read from its sources (``speculative`` in vllm.json,
docs/engines.md). Only ``method`` and ``num_speculative_tokens`` are judged, other keys are
not. A method is judged only on releases whose class validates it (before vLLM 0.9.1 any
string passed); the count is judged missing only where the release refuses a config without
one, the method gets no count of its own there (``suffix``), the object sets no key the
sources take a count from (``model``: the draft model's config may give it), and no other word
(``--spec-tokens``, ``--speculative-config.KEY``) may set it.

A value with a part interpolation leaves unknown is judged only where that is certain: a
method written out in full, never the count; a value that does not parse once interpolated
is said (a remark), not judged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

from ...sources.compose.engines import VLLM, Token
from ...sources.compose.script import Script
from ...sources.patterns import lazy
from . import EngineFacts, Names, distance
from .running import Running

FLAG = "--speculative-config"
COUNT = "num_speculative_tokens"
# Words that set the config another way (``--spec-tokens``, ``--speculative-config.KEY``):
# with one of them the count may come from there.
OTHER_WAY = lazy(r"--(num-)?spec|-sc\.")
METHOD_TEXT = lazy(r'"method"\s*:\s*"([^"]*)"')
METHOD_RAW = lazy(r"""method[\\"']*\s*:\s*\\*["']([^"'\\]*)""")  # as written


class Verdict(NamedTuple):
    """What is wrong with the value, at ``line``:``column``; ``certain`` False: a remark."""

    line: int
    column: int
    message: str
    hint: str | None = None
    certain: bool = True
    unread: bool = False  # the value itself could not be read
    end_column: int = 0  # just after the value as written (0: not known)

    @property
    def remark(self) -> str:
        return self.message if self.unread else f"{self.message}: not certain, not a finding"


def judge(words: Sequence[Token], run: Running) -> list[Verdict]:
    """The verdicts on the last ``--speculative-config`` value among the engine's words."""
    spec = run.facts.speculative
    if (
        run.facts.engine != VLLM
        or spec is None
        or not any(FLAG in w.text or "-sc" in w.text for w in words)
    ):
        return []
    found = _value(words, _names(run.facts))
    if found is None:
        return []
    token, text, column = found
    line, how = token.line, f"({run.how})"
    if token.unresolved and not text.strip():
        why = "; ".join(u.reason for u in token.unresolved)
        return [_unread(token, column, f"`{FLAG}` value is not known ({why}): not checked")]
    data, error = None, "not a JSON object"
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # not JSON, or nested past the parser's limit
        error = str(exc)
    if token.unresolved:
        return _partial(token, text, data, run, column)
    if not isinstance(data, dict):
        if token.variables:  # what interpolation gave: the template may be read otherwise
            said = f"`{FLAG}` value, as interpolated, is not a JSON object ({error}): not checked"
            return [_unread(token, column, said)]
        message = f"`{FLAG}` value is not a JSON object vLLM can read: {error} {how}"
        return [Verdict(line, column, message, end_column=_end(token))]
    data = {str(key).replace("-", "_"): value for key, value in data.items()}  # as vLLM reads
    method = data.get("method")
    verdicts = _method(method, run, token, column) if isinstance(method, str) else []
    if not verdicts and _count_missing(data, words, run):
        shown = run.facts.shown(max(run.releases))
        asked = f"method `{method}`" if isinstance(method, str) else "a config with no method"
        message = f"`{FLAG}` sets no `{COUNT}`, which {shown} requires for {asked} {how}"
        hint = f'add `"{COUNT}": N`, the number of draft tokens'
        verdicts = [Verdict(line, column, message, hint, run.exact, end_column=_end(token))]
    return verdicts


def judge_script(script: Script, run: Running) -> list[Verdict]:
    """The method of the config an entrypoint script writes where its launch words do not
    carry it (``ARGS=(--speculative-config "{...}")`` then ``"$${ARGS[@]}"``): read from the
    line that writes it (``Script.spec_config``); the count is not judged there, the line may
    not be the one the launch takes."""
    config = script.spec_config() if run.facts.engine == VLLM else None
    if config is None or config.method is None or "$" in config.method:
        return []
    line = config.line
    column = line.column + max(line.raw.find(FLAG), 0)
    token = Token(config.method, line.raw, line.number, column)
    return _method(config.method, run, token, column)


def _unread(token: Token, column: int, message: str) -> Verdict:
    return Verdict(token.line, column, message, certain=False, unread=True)


def _value(words: Sequence[Token], names: set[str]) -> tuple[Token, str, int] | None:
    """The last value of the flag (``names``: it and its aliases): its token, text and
    column, ``--flag=VALUE`` too; None where there is none, or it is empty or ``None``
    (vLLM's own words for no config)."""
    found = None
    for index, token in enumerate(words):
        name, equals, rest = token.text.partition("=")
        if name not in names:
            continue
        if equals:
            offset = len(name) + 1 if token.raw.startswith(name + "=") else 0
            found = (token, rest, token.column + token.quoted + offset)
        elif index + 1 < len(words):
            value = words[index + 1]
            found = (value, value.text, value.column + value.quoted)
    if found is not None and found[1] in ("", "None") and not found[0].unresolved:
        return None
    return found


def _names(facts: EngineFacts) -> set[str]:
    """The flag and the aliases the release data gives it (``-sc``)."""
    return {FLAG} | {n for n, entry in facts.flags.items() if entry.alias_of == FLAG}


def _partial(token: Token, text: str, data: object, run: Running, column: int) -> list[Verdict]:
    """A value interpolation leaves partly unknown: the method when it is written in full."""
    unknown = "; ".join(u.reason for u in token.unresolved)
    method = data.get("method") if isinstance(data, dict) else None
    match = METHOD_TEXT.search(text) if method is None else None
    method = match.group(1) if match else method
    written = METHOD_RAW.search(token.raw)
    if not isinstance(method, str) or written is None or written.group(1) != method:
        return [
            _unread(token, column, f"`{FLAG}` value has parts not known ({unknown}): not checked")
        ]
    return _method(method, run, token, column)


def _method(method: str, run: Running, token: Token, column: int) -> list[Verdict]:
    """What is wrong when the releases do not take ``method``: a name only other releases
    have, or none has (a misspelling of one the release has is certain)."""
    facts, spec = run.facts, run.facts.speculative
    assert spec is not None
    checked = tuple(i for i in run.releases if any(a <= i <= b for a, b in spec.checked))
    entry = spec.methods.get(method)
    if not checked or (entry is not None and any(entry.present(i) for i in checked)):
        return []
    at, what = max(checked), f"`{FLAG}` method `{method}`"
    if entry is not None:
        message = f"{what} {facts.when(entry.spans, at)} ({run.how})"
        return [Verdict(token.line, column, message, None, run.exact, end_column=_end(token))]
    message = f"{what} is not a method of {facts.shown(at)}, nor of any release known ({run.how})"
    hint = _did_you_mean(method, facts, spec.methods, checked)
    certain = run.exact or hint is not None
    return [Verdict(token.line, column, message, hint, certain, end_column=_end(token))]


def _end(token: Token) -> int:
    """Just after the value a token writes, its closing quote left out (0: not known)."""
    return token.end_column - token.quoted if token.end_column else 0


def _count_missing(data: dict, words: Sequence[Token], run: Running) -> bool:
    spec = run.facts.speculative
    assert spec is not None
    if COUNT in data:
        return False
    for key in data:  # ``model``: the draft model's own config may give the count
        entry = spec.count_keys.get(key)
        if entry is not None and any(entry.present(i) for i in run.releases):
            return False
    names = _names(run.facts)
    if any(OTHER_WAY.match(w.text) and w.text.partition("=")[0] not in names for w in words):
        return False
    method = data.get("method")
    defaults = spec.count_defaults.get(method) if isinstance(method, str) else None
    return all(
        any(a <= i <= b for a, b in spec.count_required) and not (defaults and defaults.present(i))
        for i in run.releases
    )


def _did_you_mean(name: str, facts: EngineFacts, table: Names, at: tuple[int, ...]) -> str | None:
    """The release's closest method, when it is a misspelling away (at most two edits, at most
    one in four characters)."""
    import difflib  # only for a method not known

    known = facts.names_at(table, at)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
    near = [c for c in close if distance(name, c) <= min(2, max(1, len(name) // 4))]
    return f"did you mean `{near[0]}`?" if near else None
