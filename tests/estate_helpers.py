from pathlib import Path

from guards.config import Config
from guards.estate import load_estate
from guards.options import load_options
from guards.rules import all_rules, select
from guards.suite import run


def build(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def findings(
    root: Path,
    rules: str,
    env: dict | None = None,
    options: dict | None = None,
    remarks: list | None = None,
):
    config = Config(
        root=root, composes=("composes/*.yml",), notes=("learnings/*.md",), rules=options or {}
    )
    estate = load_estate(config, env=env)
    assert estate.errors == [], estate.errors
    rules_ = all_rules()
    result = run(estate, select(rules_, rules.split(","), []), load_options(config, rules_))
    if remarks is not None:
        remarks.extend(result.remarks)
    return [(f.rule, f.line, f.message) for f in result.findings]
