"""The settings have one schema (guards.sources.settings); Config, the loader, the JSON schema and
the kept values all follow it."""

import dataclasses
from pathlib import Path

import pytest

from guards.errors import GuardsError
from guards.sources.config import Config
from guards.sources.configfile import from_kept, load_config
from guards.sources.settings import KEYS, Settings

PLACE = {"root", "named", "source", "source_text"}  # where the settings came from, not settings


def test_config_has_a_field_for_each_setting_and_the_same_defaults():
    config = Config(root=Path("."))
    fields = {f.name for f in dataclasses.fields(Config)} - PLACE
    assert fields == set(Settings.model_fields)
    assert {name: getattr(config, name) for name in fields} == Settings().model_dump()


def test_the_keys_are_the_fields_in_kebab_case():
    assert "max-file-mb" in KEYS and "per-path-ignores" in KEYS
    assert sorted(KEYS) == sorted(n.replace("_", "-") for n in Settings.model_fields)


class Memory:
    """A kept store that counts what it is asked."""

    def __init__(self):
        self.values, self.asked = {}, 0

    def get(self, text):
        self.asked += 1
        return self.values.get(text)

    def put(self, text, values):
        self.values[text] = values


def test_kept_values_give_the_config_validation_gives(tmp_path, monkeypatch):
    (tmp_path / "guards.toml").write_text('composes = "c/*.yml"\nmax-file-mb = 7\n')
    kept = Memory()
    first = load_config(tmp_path, kept=kept)
    monkeypatch.setattr("guards.sources.settings.validate", _not_called)
    again = load_config(tmp_path, kept=kept)
    assert again == first and again.composes == ("c/*.yml",) and again.max_bytes == 7_000_000


def test_kept_values_are_keyed_by_the_text(tmp_path):
    kept = Memory()
    (tmp_path / "guards.toml").write_text("max-file-mb = 7\n")
    load_config(tmp_path, kept=kept)
    (tmp_path / "guards.toml").write_text("max-file-mb = 0\n")
    with pytest.raises(GuardsError, match="max-file-mb"):
        load_config(tmp_path, kept=kept)


def test_kept_values_of_other_fields_are_not_used():
    assert from_kept({"composes": None}) is None
    assert from_kept([1]) is None
    values = Settings().model_dump()
    values = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
    assert from_kept(values)["notes"] == Settings().notes


def _not_called(*args):
    raise AssertionError("validated again")
