"""Shrinking a failing input to a small one that fails the same way (delta debugging).

``reduce_text`` removes chunks of lines, then of characters, keeping every removal after which
``still_fails`` holds; ``reduce_files`` does the same for the files of an estate (drop whole
files first). Deterministic and bounded by a number of attempts, so a campaign can afford it.
"""

from __future__ import annotations

from collections.abc import Callable


def _ddmin(
    parts: list[str], still_fails: Callable[[list[str]], bool], budget: list[int]
) -> list[str]:
    chunk = max(1, len(parts) // 2)
    while chunk >= 1 and budget[0] > 0:
        at, changed = 0, False
        while at < len(parts) and budget[0] > 0:
            candidate = parts[:at] + parts[at + chunk :]
            budget[0] -= 1
            if candidate != parts and still_fails(candidate):
                parts, changed = candidate, True
            else:
                at += chunk
        if not changed:
            if chunk == 1:
                break
            chunk //= 2
    return parts


def reduce_text(text: str, still_fails: Callable[[str], bool], attempts: int = 400) -> str:
    """A shorter ``text`` for which ``still_fails`` still holds (``text`` itself must fail)."""
    budget = [attempts]
    lines = text.splitlines(keepends=True)
    lines = _ddmin(lines, lambda parts: still_fails("".join(parts)), budget)
    text = "".join(lines)
    if len(text) <= 4000:  # characters only when it is already small
        chars = _ddmin(list(text), lambda parts: still_fails("".join(parts)), budget)
        text = "".join(chars)
    return text


def reduce_files(
    files: dict[str, str], still_fails: Callable[[dict[str, str]], bool], attempts: int = 300
) -> dict[str, str]:
    """Fewer and shorter files for which ``still_fails`` holds."""
    names = _ddmin(
        sorted(files), lambda kept: still_fails({n: files[n] for n in kept}), [attempts // 3]
    )
    files = {name: files[name] for name in names}
    for name in sorted(files, key=lambda n: -len(files[n])):
        files[name] = reduce_text(
            files[name],
            lambda text, name=name: still_fails({**files, name: text}),
            attempts=max(20, attempts // max(1, len(files))),
        )
    return files
