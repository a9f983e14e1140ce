"""The settings schema: shipped as printed, a valid JSON schema, accepting every config the
loader accepts here and refusing the ones it refuses."""

import functools
import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from guards.errors import GuardsError
from guards.rules import all_rules
from guards.rules.options import load_options
from guards.run.schema import config_schema
from guards.run.suppress import rule_names
from guards.sources.configfile import load_config
from guards.sources.directives import path_ignores

from ..cli_helpers import run_guards

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "guards" / "run" / "config.schema.json"


@functools.cache
def validator():
    """The schema's validator, made once (the schema is derived from 36 option models)."""
    schema = config_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def as_json(value):
    """A TOML table as an editor hands it to a JSON schema: dates become strings."""
    return json.loads(json.dumps(value, default=str))


def test_guards_schema_prints_the_shipped_file(capsys):
    result = run_guards(capsys, "schema")
    assert result.code == 0
    assert result.out == SHIPPED.read_text(encoding="utf-8"), (
        "run `guards schema > guards/run/config.schema.json`"
    )
    assert json.loads(result.out)["$schema"] == "http://json-schema.org/draft-07/schema#"


def test_the_configs_in_this_repository_validate():
    check = validator()
    tables = [tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["guards"]]
    tables += [tomllib.loads(p.read_text()) for p in sorted((ROOT / "tests").rglob("guards.toml"))]
    assert len(tables) >= 3
    for table in tables:
        check.validate(as_json(table))


ACCEPTED = [
    'composes = "composes/**/*.yml"\nselect = "K"\n',
    'notes = ["learnings/*.md"]\nignore = ["C001", "knobs"]\nmax-file-mb = 10\n',
    'rules-url = "https://example.org/guards/rules.html"\n',
    '[rules.K001]\ndefault-ceiling = 0.92\nseverity = "warning"\n',
    '[rules.max-num-seqs]\nseverity = "info"\n',
    '[per-path-ignores."composes/legacy/**"]\nrules = ["K002", "drafter-depth"]\n'
    'reason = "frozen until the 2027 migration"\nuntil = 2027-03-01\n',
    '[per-path-ignores."a.yml"]\nrules = "K002"\nreason = "x"\n',
    '[header]\npreset = "profile"\n[by-status]\ndeprecated = "skip"\nexperimental = "warning"\n',
    '[header]\nmarker = "Model card"\nrequired = ["Model"]\n[header.statuses]\nready = ["✅", "ready"]\n',
]
REFUSED = [
    'composse = ["x"]\n',
    "max-file-mb = 0\n",
    'composes = ["../outside/*.yml"]\n',
    'templates = "/abs"\n',
    'rules-url = "ftp://example.org/"\n',
    "[rules.K001]\ndefault-ceiling = 1.5\n",
    '[rules.K001]\nseverity = "fatal"\n',
    "[rules.K001]\nceiling = 0.9\n",
    '[rules.K999]\nseverity = "info"\n',
    '[per-path-ignores."a.yml"]\nrules = ["K002"]\n',
    '[per-path-ignores."a.yml"]\nrules = ["K999"]\nreason = "x"\n',
    '[per-path-ignores."a.yml"]\nrules = ["K002"]\nreason = " "\n',
    '[per-path-ignores."a.yml"]\nrules = []\nreason = "x"\n',
    '[per-path-ignores."a.yml"]\nrules = ["K002"]\nreason = "x"\nwhy = "y"\n',
    '[by-status]\nretired = "skip"\n',
    '[by-status]\ndeprecated = "ignore"\n',
    '[header]\npreset = "card"\n',
    '[header]\nmarker = "Card"\nlayout = "yaml"\n',
]


def loader_accepts(tmp_path, text):
    (tmp_path / "guards.toml").write_text(text, encoding="utf-8")
    try:
        config = load_config(tmp_path)
        load_options(config, all_rules())
        path_ignores(config, rule_names())
    except GuardsError:
        return False
    return True


@pytest.mark.parametrize("text", ACCEPTED)
def test_what_the_loader_accepts_the_schema_accepts(tmp_path, text):
    assert loader_accepts(tmp_path, text)
    assert validator().is_valid(as_json(tomllib.loads(text)))


@pytest.mark.parametrize("text", REFUSED)
def test_what_the_loader_refuses_the_schema_refuses(tmp_path, text):
    assert not loader_accepts(tmp_path, text)
    assert not validator().is_valid(as_json(tomllib.loads(text)))
