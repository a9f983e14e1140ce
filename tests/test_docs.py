"""The documentation: the generated rules reference and the README's rules table are current,
the README stays a newcomer's page, and every link (and every #anchor in it) leads somewhere."""

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

import guards.rules
import guards.rules.docs

ROOT = Path(__file__).resolve().parents[1]
RULES_MD = ROOT / "docs" / "rules.md"
README = ROOT / "README.md"
README_LIMIT = 14_000  # bytes: what a newcomer reads; the rest belongs in docs/
REGENERATE_README_TABLE = (
    'python -c "from pathlib import Path; from guards.rules import all_rules; '
    "from guards.rules.docs import with_readme_table; p = Path('README.md'); "
    "p.write_text(with_readme_table(p.read_text(encoding='utf-8'), all_rules()), "
    "encoding='utf-8')\""
)

# [text](target) and [text](target "title"); images too. Reference definitions: [id]: target
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=[\"']([^\"']+)[\"']", re.IGNORECASE)
FENCE_LINE = re.compile(r"^ {0,3}(```|~~~)")
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


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: the rendered text lower-cased, punctuation
    dropped (letters, digits, ``_`` and ``-`` stay), each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every #fragment a page offers: its headings outside code blocks, numbered from the
    second of a name on as GitHub numbers them, and explicit ``<a id=...>`` anchors."""
    found: set[str] = set(HTML_ANCHOR.findall(FENCE.sub("", text)))
    seen: dict[str, int] = {}
    fence = ""
    for line in text.splitlines():
        opening = FENCE_LINE.match(line)
        if opening and (not fence or opening.group(1) == fence):
            fence = "" if fence else opening.group(1)
            continue
        heading = None if fence else HEADING.match(line)
        if heading:
            name = slug(heading.group(2))
            count = seen.get(name, 0)
            seen[name] = count + 1
            found.add(name if count == 0 else f"{name}-{count}")
    return found


def fragment_links(text: str) -> list[tuple[str, str]]:
    """(path, fragment) of each link with a #fragment that stays in the repository; the path
    is empty for a link within the page."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = INLINE_LINK.findall(prose) + REFERENCE_LINK.findall(prose)
    out = []
    for target in targets:
        if "#" in target and not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            path, fragment = target.split("#", 1)
            out.append((unquote(path.split("?", 1)[0]), unquote(fragment)))
    return out


def test_links_into_markdown_name_an_anchor_the_page_has():
    broken = []
    for doc in documents():
        for path, fragment in fragment_links(doc.read_text(encoding="utf-8")):
            page = (doc.parent / path) if path else doc
            if page.suffix != ".md" or not page.is_file():
                continue  # a missing file is the other test's finding
            if fragment not in anchors(page.read_text(encoding="utf-8")):
                broken.append(f"{doc.relative_to(ROOT)}: {path}#{fragment}")
    assert broken == [], "links to anchors the page does not have:\n" + "\n".join(broken)


def test_anchor_finder_numbers_repeats_and_skips_code():
    text = (
        "# The claims registry (`claims.yaml`)\n## Speed: the cache and both cores\n"
        "## Notes\n## Notes\n```yaml\n# >>> guards:claim x\n```\n"
        '### [Linked](x.md) **bold** heading ##\n<a id="kept"></a>\n'
    )
    assert anchors(text) == {
        "the-claims-registry-claimsyaml",
        "speed-the-cache-and-both-cores",
        "notes",
        "notes-1",
        "linked-bold-heading",
        "kept",
    }
    assert fragment_links("[a](b.md#c) [d](#e) [f](https://x.org/#g) `[h](i.md#j)`") == [
        ("b.md", "c"),
        ("", "e"),
    ]


def test_readme_is_a_newcomers_page():
    size = len(README.read_bytes())
    assert size <= README_LIMIT, (
        f"README.md is {size:,} bytes, over {README_LIMIT:,}: move a section to docs/ "
        "and link it from README's More"
    )


def test_readme_links_every_docs_page():
    linked = {
        (ROOT / target.split("#", 1)[0]).resolve()
        for target in relative_links(README.read_text(encoding="utf-8"))
    }
    unlinked = [
        str(page.relative_to(ROOT))
        for page in sorted((ROOT / "docs").glob("*.md"))
        if page.resolve() not in linked
    ]
    assert unlinked == [], "docs pages the README does not link: " + ", ".join(unlinked)


def test_readme_rules_table_is_generated_from_the_rules():
    """The README's table is ``guards.rules.docs.readme_table`` between its markers: the ids,
    names and summaries of docs/rules.md, so a rule added or reworded shows here too."""
    rules = guards.rules.all_rules()
    committed = README.read_text(encoding="utf-8")
    expected = guards.rules.docs.with_readme_table(committed, rules)
    if committed != expected:
        pytest.fail(
            "the rules table in README.md is out of date; regenerate it with\n"
            f"    {REGENERATE_README_TABLE}\n"
            "or paste this between its markers:\n" + guards.rules.docs.readme_table(rules),
            pytrace=False,
        )


def test_readme_table_and_rules_reference_agree_row_for_row():
    rules = guards.rules.all_rules()
    row = re.compile(r"^\| \[(\w+)\]\(([^)]*)\) \| ([\w-]+) \|(?: \w+ \|)? (.*) \|$", re.MULTILINE)
    readme = [(i, n, s) for i, _, n, s in row.findall(guards.rules.docs.readme_table(rules))]
    reference = [
        (i, n, s) for i, _, n, s in row.findall(guards.rules.docs.markdown(rules).split("\n## ")[0])
    ]
    assert readme == reference and len(readme) == len(rules)


def test_readme_table_splice_replaces_only_the_table():
    rules = guards.rules.all_rules()[:2]
    docs = guards.rules.docs
    stale = f"# x\n\n{docs.README_TABLE_START}\n| old |\n{docs.README_TABLE_END}\n\nrest\n"
    fresh = docs.with_readme_table(stale, rules)
    assert fresh == (
        f"# x\n\n{docs.README_TABLE_START}\n{docs.readme_table(rules)}\n{docs.README_TABLE_END}"
        "\n\nrest\n"
    )
    assert docs.with_readme_table(fresh, rules) == fresh
    assert "| [S001](docs/rules.md#s001-header-present) | header-present |" in fresh
    with pytest.raises(ValueError, match="markers"):
        docs.with_readme_table("# no table here\n", rules)


def module_map(text: str) -> set[str]:
    """The paths the Layout block of docs/architecture.md lists under ``guards/``: a line's
    indent (two spaces a level) places its first word under the folder above it."""
    block = text.split("## Layout\n", 1)[1].split("```\n", 2)[1]
    listed: set[str] = set()
    folders: list[str] = []
    for line in block.splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.split()[0] if line.strip() else ""
        if depth == 0:
            folders = [name] if name == "guards/" else []
        elif folders and name:
            folders = folders[:depth]
            listed.add("".join(folders[1:]) + name)
            if name.endswith("/"):
                folders.append(name)
    return listed


def package_files() -> set[str]:
    """Every module, package and data file of ``guards``; a folder that is not a package (the
    templates) counts as one entry."""
    found: set[str] = set()
    for path in (ROOT / "guards").rglob("*"):
        if "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        parent = path.parent
        while parent != ROOT / "guards" and (parent / "__init__.py").exists():
            parent = parent.parent
        if parent != ROOT / "guards":  # inside a folder that is not a package
            continue
        name = str(path.relative_to(ROOT / "guards"))
        found.add(f"{name}/" if path.is_dir() else name)
    return found


def test_architecture_module_map_is_the_package():
    listed = module_map((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    actual = package_files()
    assert sorted(actual - listed) == [], "in guards/ but not in docs/architecture.md's Layout"
    assert sorted(listed - actual) == [], "in docs/architecture.md's Layout but not in guards/"


def test_module_map_reader_follows_the_indent():
    text = (
        "## Layout\n\n```\nguards/\n  a.py   what a holds\n  pkg/   a package\n"
        "    __init__.py  its docstring\n    b.py  b\n  c.py  c\ntests/   not the package\n```\n"
    )
    assert module_map(text) == {"a.py", "pkg/", "pkg/__init__.py", "pkg/b.py", "c.py"}
