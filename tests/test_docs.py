"""The documentation: the generated rules reference is current, and its links lead somewhere."""

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

import guards.rules
import guards.rules.docs

ROOT = Path(__file__).resolve().parents[1]
RULES_MD = ROOT / "docs" / "rules.md"

# [text](target) and [text](target "title"); images too. Reference definitions: [id]: target
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)


def documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def relative_links(text: str) -> list[str]:
    """Link targets that point into the repository (not URLs, not anchors within the page)."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = INLINE_LINK.findall(prose) + REFERENCE_LINK.findall(prose)
    return [
        t
        for t in targets
        if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.IGNORECASE) and not t.startswith("#")
    ]


def test_rules_reference_is_up_to_date():
    expected = guards.rules.docs.markdown(guards.rules.all_rules())
    committed = RULES_MD.read_text(encoding="utf-8") if RULES_MD.is_file() else ""
    if committed != expected:
        old, new = committed.splitlines(), expected.splitlines()
        line = next(
            (n for n, (a, b) in enumerate(zip(old, new, strict=False), 1) if a != b),
            min(len(old), len(new)) + 1,
        )
        pytest.fail(
            "docs/rules.md is out of date: run `guards rules --markdown > docs/rules.md` "
            f"(first difference at line {line})",
            pytrace=False,
        )


def test_relative_links_point_at_existing_files():
    broken = []
    for doc in documents():
        for target in relative_links(doc.read_text(encoding="utf-8")):
            path = unquote(target.split("#", 1)[0].split("?", 1)[0])
            if not (doc.parent / path).exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert broken == [], "relative links to missing files:\n" + "\n".join(broken)


def test_link_finder_sees_links_and_skips_code():
    text = (
        "[a](docs/a.md) [b](../b.md#x) ![i](img.png 'no') [web](https://x.org) [top](#here)\n"
        "`[not](code.md)`\n```\n[not](fenced.md)\n```\n[ref]: docs/ref.md\n"
    )
    assert relative_links(text) == ["docs/a.md", "../b.md#x", "docs/ref.md"]
