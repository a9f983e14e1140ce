"""D004's catalogs: YAML, TOML and JSON read with the exact line of every entry and field,
malformed catalogs and options stopping the run at their line, and the rule on real composes."""

import json
import random
import shutil
from dataclasses import replace

import pytest

from guards.errors import GuardsError
from guards.rules import all_rules, find
from guards.rules.catalog_drift import DEFAULT_FIELDS, KNOBS, Options
from guards.rules.options import load_options
from guards.run.estate import load_estate
from guards.run.suite import run
from guards.sources.catalog import KV_TYPES, NUMBERS, STATUS, read_catalog
from guards.sources.configfile import load_config

from ..cli_helpers import run_guards, tree_digest, write
from ..conftest import SAMPLES
from ..rule_cases import check

RULE = find(all_rules(), "D004")
FIELDS = {
    "max_ctx": "max_model_len",
    "tp": "tensor_parallel_size",
    "kv": "kv_cache_dtype",
    "status": "status",
    "model": "model",
}


def options(fields=FIELDS, **settings):
    table = {"fields": fields, **{k.replace("_", "-"): v for k, v in settings.items()}}
    return Options.validate(table)


def located(text, source, **settings):
    """(entry, its line, compose, {field: (line, as shown)}) for every entry of a catalog."""
    return [
        (e.name, e.line, e.compose, {f: (s.line, s.shown) for f, s in e.fields.items()})
        for e in read_catalog(text, source, options(**settings).layout)
    ]


# --- lines: YAML ----------------------------------------------------------------------------


def test_yaml_mapping_of_entries():
    text = (
        "# max_ctx: 1 in a comment\n"
        "base: &base\n"
        "  tp: 2\n"
        "entries:\n"
        "  m-dual:\n"
        "    compose_path: composes/m/dual.yml\n"
        "\n"
        "    max_ctx: 131072\n"
        "    status: ✅ Production\n"
        "  m-flow: {compose_path: ./composes/x/../m/flow.yml,\n"
        "           kv: fp8, max_ctx: '65536'}\n"
        "  m-merged:\n"
        "    <<: *base\n"
        "    compose_path: composes/m/merged.yml\n"
        "    max_ctx: ~\n"
    )
    assert located(text, "c.yaml") == [
        (
            "m-dual",
            5,
            "composes/m/dual.yml",
            {"max_ctx": (8, "131072"), "status": (9, "✅ Production")},
        ),
        ("m-flow", 10, "composes/m/flow.yml", {"max_ctx": (11, "65536"), "kv": (11, "fp8")}),
        ("m-merged", 12, "composes/m/merged.yml", {"tp": (3, "2")}),  # where the merge gives it
    ]


def test_yaml_list_of_entries_under_a_dotted_key():
    text = (
        "site:\n"
        "  catalog:\n"
        "    - compose_path: composes/a.yml\n"
        "      max_ctx: 0x10\n"
        "    -\n"
        "      compose_path: composes/b.yml\n"
        "      tp: 4\n"
    )
    assert located(text, "c.yml", entries="site.catalog") == [
        ("#1", 3, "composes/a.yml", {"max_ctx": (4, "0x10")}),
        ("#2", 6, "composes/b.yml", {"tp": (7, "4")}),
    ]


# --- lines: TOML ----------------------------------------------------------------------------


def test_toml_tables_inline_tables_and_dotted_keys():
    text = (
        "# [entries.fake] and max_ctx = 1 in a comment\n"
        'title = """\n'
        "[entries.fake]\n"
        "max_ctx = 2\n"
        '"""\n'
        "lit = '''\n"
        "max_ctx = 3'''\n"
        "\n"
        "[entries]\n"
        'inline = { compose_path = "composes/i.yml", max_ctx = 4, note = "}, max_ctx = 9" }\n'
        'dotted.compose_path = "composes/d.yml"\n'
        "dotted . max_ctx = 5  # a comment\n"
        "\n"
        '[entries."m.dual"]\n'
        "compose_path = 'composes/m.yml'\n"
        "max_ctx = 131_072\n"
        'kv = "fp8"\n'
        "[entries.sub.first]\n"
        "x = 1\n"
        "[entries.sub]\n"
        'compose_path = "composes/s.yml"\n'
        "  tp = 2\n"
    )
    assert located(text, "c.toml") == [
        ("inline", 10, "composes/i.yml", {"max_ctx": (10, "4")}),
        ("dotted", 11, "composes/d.yml", {"max_ctx": (12, "5")}),
        ("m.dual", 14, "composes/m.yml", {"max_ctx": (16, "131_072"), "kv": (17, "fp8")}),
        ("sub", 20, "composes/s.yml", {"tp": (22, "2")}),
    ]


def test_toml_arrays_of_tables_and_arrays_of_inline_tables():
    tables = (
        "[[profiles]]\n"
        'compose = "composes/a.yml"\n'
        "ctx = 1\n"
        "[[profiles.extra]]\n"
        "ctx = 9\n"
        "\n"
        "[[profiles]]\n"
        'compose = "composes/b.yml"\n'
        "[profiles.nested]\n"
        "ctx = 9\n"
        "[[profiles]]\n"
        'compose = "composes/c.yml"\n'
        "ctx = 3\n"
    )
    settings = {"entries": "profiles", "compose_key": "compose", "fields": {"ctx": "max_model_len"}}
    assert located(tables, "c.toml", **settings) == [
        ("#1", 1, "composes/a.yml", {"ctx": (3, "1")}),
        ("#2", 7, "composes/b.yml", {}),
        ("#3", 11, "composes/c.yml", {"ctx": (13, "3")}),
    ]
    inline = (
        "profiles = [\n"
        "  # { ctx = 9 } in a comment\n"
        '  { compose = "composes/a.yml", ctx = 1 }, { compose = "composes/b.yml", ctx = 2 },\n'
        "\n"
        '  { compose = "composes/c.yml", x = [3,\n'
        "    4], ctx = 3 },\n"
        "]\n"
    )
    assert located(inline, "c.toml", **settings) == [
        ("#1", 3, "composes/a.yml", {"ctx": (3, "1")}),
        ("#2", 3, "composes/b.yml", {"ctx": (3, "2")}),
        ("#3", 5, "composes/c.yml", {"ctx": (6, "3")}),
    ]


# --- lines: JSON ----------------------------------------------------------------------------


def test_json_nested_entries_with_look_alike_strings():
    text = (
        "{\n"
        '  "note": "\\"entries\\": {\\"max_ctx\\": 1}",\n'
        '  "catalog": {"entries": {\n'
        '    "a": {"compose_path": "composes/a.yml",\n'
        '          "max_ctx": 131072, "tp": "2"},\n'
        '    "b":\n'
        "      {\n"
        '        "compose_path": "composes/b.yml", "max_ctx": 1,\n'
        '        "max_ctx": 1.5e3\n'
        "      }\n"
        "  }}\n"
        "}\n"
    )
    assert located(text, "c.json", entries="catalog.entries") == [
        ("a", 4, "composes/a.yml", {"max_ctx": (5, "131072"), "tp": (5, "2")}),
        ("b", 6, "composes/b.yml", {"max_ctx": (9, "1.5e3")}),  # a repeated key: the last wins
    ]


def test_json_list_at_the_top_level():
    text = '[{"compose_path": "composes/a.yml", "max_ctx": 1},\n\n {"compose_path": "composes/b.yml",\n  "status": "preview"}]'
    assert located(text, "c.json", entries="") == [
        ("#1", 1, "composes/a.yml", {"max_ctx": (1, "1")}),
        ("#2", 3, "composes/b.yml", {"status": (4, "preview")}),
    ]


# --- lines: generated catalogs in every layout ----------------------------------------------


class Writer:
    """Text written line by line, remembering the line of each thing written."""

    def __init__(self):
        self.lines, self.at = [], {}

    def add(self, text, *marks):
        for mark in marks:
            self.at[mark] = len(self.lines) + 1
        self.lines.append(text)

    def filler(self, rng, blank_only=False):
        for _ in range(rng.randint(0, 2)):
            self.add(rng.choice(["", "  "] if blank_only else ["", "  ", "# max_ctx = 9, tp: 9"]))

    @property
    def text(self):
        return "\n".join(self.lines) + "\n"


def generated(rng, kind):
    """A catalog of a few entries in layouts picked at random, and what it must read as."""
    entries = []
    for n in range(rng.randint(1, 4)):
        fields = [
            (k, v) for k, v in (("max_ctx", 1024 * (n + 1)), ("tp", n + 1)) if rng.random() < 0.6
        ]
        entries.append((f"m{n}", f"composes/m{n}.yml", fields))
    writer = Writer()
    listed = {"yaml": _yaml, "toml": _toml, "json": _json}[kind](writer, rng, entries)
    expected = [
        (
            f"#{n}" if listed else name,
            writer.at[name],
            compose,
            {key: (writer.at[(name, key)], str(value)) for key, value in fields},
        )
        for n, (name, compose, fields) in enumerate(entries, 1)
    ]
    return writer.text, sorted(expected, key=lambda entry: entry[1])  # in the file's order


def _yaml(writer, rng, entries):
    listed = rng.random() < 0.5
    writer.add("entries:")
    for name, compose, fields in entries:
        writer.filler(rng)
        marks = [(name, key) for key, _ in fields]
        if rng.random() < 0.3:  # flow style, on one line
            body = ", ".join(f"{k}: {v}" for k, v in [("compose_path", compose), *fields])
            writer.add(f"  - {{{body}}}" if listed else f"  {name}: {{{body}}}", name, *marks)
            continue
        if listed:
            writer.add(f"  - compose_path: {compose}", name)
        else:
            writer.add(f"  {name}:", name)
            writer.add(f"    compose_path: {compose}")
        for key, value in fields:
            writer.filler(rng)
            writer.add(f"    {key}: {value}", (name, key))
    return listed


def _toml(writer, rng, entries):
    listed = rng.random() < 0.5
    writer.filler(rng)
    for line in ('title = """', "[entries.x]", "max_ctx = 9", '"""'):
        writer.add(line)
    if listed:
        for name, compose, fields in entries:
            writer.filler(rng)
            writer.add("[[entries]]", name)
            writer.add(f'compose_path = "{compose}"')
            for key, value in fields:
                writer.filler(rng)
                writer.add(f"{key} = {value}", (name, key))
        return listed
    inline = {name for name, _, _ in entries if rng.random() < 0.5}
    writer.add("[entries]")
    for name, compose, fields in entries:
        if name not in inline:
            continue
        writer.filler(rng)
        if rng.random() < 0.5:
            body = ", ".join([f'compose_path = "{compose}"'] + [f"{k} = {v}" for k, v in fields])
            writer.add(f"{name} = {{ {body} }}", name, *[(name, k) for k, _ in fields])
            continue
        writer.add(f'{name}.compose_path = "{compose}"', name)
        for key, value in fields:
            writer.add(f"{name} . {key} = {value}  # a comment", (name, key))
    for name, compose, fields in entries:
        if name in inline:
            continue
        writer.filler(rng)
        writer.add(f'[entries."{name}"]', name)
        writer.add(f"compose_path = '{compose}'")
        for key, value in fields:
            writer.filler(rng)
            writer.add(f"  {key} = {value}", (name, key))
    return listed


def _json(writer, rng, entries):
    listed = rng.random() < 0.5
    writer.add("{")
    writer.add('  "note": "{\\"max_ctx\\": 9}",')
    writer.add('  "entries": ' + ("[" if listed else "{"))
    for n, (name, compose, fields) in enumerate(entries, 1):
        members = [("compose_path", json.dumps(compose))] + [(k, str(v)) for k, v in fields]
        comma = "," if n < len(entries) else ""
        opening = "{" if listed else f'"{name}": {{'
        if rng.random() < 0.4:  # one line
            body = ", ".join(f'"{k}": {v}' for k, v in members)
            writer.add(f"    {opening}{body}}}{comma}", name, *[(name, k) for k, _ in fields])
            continue
        writer.add(f"    {opening}", name)
        for m, (key, value) in enumerate(members, 1):
            writer.filler(rng, blank_only=True)
            writer.add(f'      "{key}": {value}' + ("," if m < len(members) else ""), (name, key))
        writer.add(f"    }}{comma}")
    writer.add("  " + ("]" if listed else "}"))
    writer.add("}")
    return listed


@pytest.mark.parametrize("kind", ["yaml", "toml", "json"])
@pytest.mark.parametrize("seed", range(40))
def test_lines_of_generated_catalogs(kind, seed):
    text, expected = generated(random.Random(f"{kind}-{seed}"), kind)
    assert located(text, f"c.{kind}") == expected, text


# --- malformed catalogs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, text, error",
    [
        ("c.yaml", "entries: [\n", "c.yaml:2:1: YAML error: did not find expected node content"),
        (
            "c.toml",
            "[entries.a]\ncompose_path = \n",
            "c.toml:2:16: invalid TOML: Invalid value",
        ),
        (
            "c.json",
            '{"entries": {"a":\n  {"compose_path": "x.yml",}}}',
            "c.json:2:28: invalid JSON: Expecting property name enclosed in double quotes",
        ),
        ("c.yaml", "", "c.yaml:1: no `entries` (option entries)"),
        ("c.yaml", "profiles:\n  a: {}\n", "c.yaml:1: no `entries` (option entries)"),
        ("c.json", '[{"compose_path": "x.yml"}]', "c.json:1: no `entries` (option entries)"),
        (
            "c.toml",
            'entries = "all of them"\n',
            "c.toml:1: `entries` must be a mapping of id to entry or a list of entries",
        ),
        (
            "c.yaml",
            "entries:\n",
            "c.yaml:1: `entries` must be a mapping of id to entry or a list of entries",
        ),
        (
            "c.yaml",
            "entries:\n  a: composes/a.yml\n",
            "c.yaml:2: entry a must be a mapping of fields",
        ),
        (
            "c.json",
            '{"entries": [\n  ["composes/a.yml"]]}',
            "c.json:2: entry #1 must be a mapping of fields",
        ),
        (
            "c.toml",
            "[[entries]]\nmax_ctx = 1\n",
            "c.toml:1: entry #1 has no `compose_path` (option compose-key) or "
            "`service` (option service-key)",
        ),
        (
            "c.toml",
            "[entries.x.meta]\nnote = 'x has no fields of its own'\n",
            "c.toml:1: entry x has no `compose_path` (option compose-key) or "
            "`service` (option service-key)",
        ),
        (
            "c.yaml",
            "entries:\n  a:\n    compose_path:\n      - composes/a.yml\n",
            "c.yaml:3: entry a: `compose_path` must be a compose path or a service name, "
            "not \"['composes/a.yml']\"",
        ),
        (
            "c.json",
            '{"entries": {"a": {"compose_path": "x.yml",\n "max_ctx": "128 KiB"}}}',
            "c.json:2: entry a: `max_ctx` must be a number, not '128 KiB'",
        ),
        (
            "c.yaml",
            "entries:\n  a:\n    compose_path: x.yml\n    tp: yes\n",
            "c.yaml:4: entry a: `tp` must be a number, not 'yes'",
        ),
        (
            "c.toml",
            '[entries.a]\ncompose_path = "x.yml"\nmax_ctx = inf\n',
            "c.toml:3: entry a: `max_ctx` must be a number, not 'inf'",
        ),
        (
            "c.yaml",
            "entries:\n  a:\n    compose_path: x.yml\n    kv: 8\n",
            "c.yaml:4: entry a: `kv` must be a KV cache type, not '8'",
        ),
        (
            "c.yaml",
            "entries:\n  a:\n    compose_path: x.yml\n    status: prod\n",
            "c.yaml:4: entry a: `status` must be a status (caveats, deprecated, experimental, "
            "incubating, preview, production, upstream-gated), not 'prod'",
        ),
        (
            "c.toml",
            '[entries.a]\ncompose_path = "x.yml"\nmodel = 1979-05-27\n',
            "c.toml:3: entry a: `model` must be a string, not '1979-05-27'",
        ),
        (
            "c.json",
            "[" * 3000 + "]" * 3000,
            "c.json:1: invalid JSON: nested more than 100 levels deep",
        ),
    ],
)
def test_a_malformed_catalog_is_an_error_at_its_line(source, text, error):
    with pytest.raises(GuardsError) as caught:
        read_catalog(text, source, options().layout)
    assert str(caught.value) == error


def test_a_null_field_states_nothing():
    text = "entries:\n  a:\n    compose_path: x.yml\n    max_ctx: ~\n    status: null\n"
    assert located(text, "c.yaml") == [("a", 2, "x.yml", {})]


COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.27.1
    command: [--max-model-len, "65536"]
"""


@pytest.mark.parametrize(
    "settings, catalog, error",
    [
        (
            'catalogs = ["profiles.txt"]',
            "",
            "guards.toml:3: rules.catalog-drift.catalogs: catalog 'profiles.txt' is not a .yaml, "
            ".yml, .toml or .json file (got ['profiles.txt'])",
        ),
        (
            'catalogs = ["../profiles.yaml"]',
            "",
            "guards.toml:3: `rules.catalog-drift.catalogs` '../profiles.yaml' must be a path "
            "relative to the root, without '..'",
        ),
        (
            'catalogs = ["profiles.yaml"]\nentries = "site..entries"',
            "",
            "guards.toml:4: rules.catalog-drift.entries: 'site..entries' is not a dotted key "
            "(a.b.c) (got 'site..entries')",
        ),
        (
            'catalogs = ["profiles.yaml"]\nfields = {ctx = "max_context"}',
            "",
            "guards.toml:4: rules.catalog-drift.fields: ctx = 'max_context': not a knob name, its "
            "flag or status (got {'ctx': 'max_context'})",
        ),
        ('catalogs = ["profiles.yaml"]', None, "profiles.yaml: no such file"),
        (
            'catalogs = ["profiles.yaml"]',
            "entries:\n  m:\n    max_model_len: 65536\n",
            "profiles.yaml:2: entry m has no `compose_path` (option compose-key) or "
            "`service` (option service-key)",
        ),
    ],
)
def test_bad_settings_or_catalog_stop_the_run_and_write_nothing(
    capsys, tmp_path, settings, catalog, error
):
    files = {
        "guards.toml": f'composes = ["composes/*.yml"]\n[rules.catalog-drift]\n{settings}\n',
        "composes/c.yml": COMPOSE,
    }
    if catalog is not None:
        files["profiles.yaml"] = catalog
    write(tmp_path, files)
    before = tree_digest(tmp_path)
    result = run_guards(capsys, "check", "--root", str(tmp_path))
    assert (result.code, result.out, result.err) == (2, "", f"guards: error: {error}\n")
    assert tree_digest(tmp_path) == before


def test_a_catalog_runs_from_the_settings_file(capsys, tmp_path):
    write(
        tmp_path,
        {
            "guards.toml": 'composes = ["composes/*.yml"]\n'
            '[rules.catalog-drift]\ncatalogs = ["profiles.json"]\n'
            'fields = {ctx = "max_model_len"}\n',
            "profiles.json": '{"entries": {"m": {"compose_path": "composes/c.yml",\n'
            '  "ctx": 131072}}}\n',
            "composes/c.yml": COMPOSE,
        },
    )
    result = run_guards(capsys, "check", "--root", str(tmp_path), "--select", "D004", "--verbose")
    assert (result.code, result.out) == (
        1,
        "composes/c.yml:4:32: D004 max_model_len is 65536, but profiles.json:2 says ctx: 131072 "
        "(entry m)\n"
        "    hint: write ctx: 65536 in profiles.json, or change the compose\n"
        "guard suite: 0 pass / 1 fail\n",
    )


def test_entries_naming_no_compose_are_remarked_once_per_run(tmp_path):
    files = {f"composes/c{n}.yml": COMPOSE for n in range(3)}
    files["profiles.yaml"] = "entries:\n  gone:\n    compose_path: composes/gone.yml\n"
    settings = {"catalog-drift": {"catalogs": ["profiles.yaml"]}}
    result, errors = check(RULE.id, files, tmp_path, settings)
    assert errors == []
    assert [r for r in result.remarks if r.startswith("D004")] == [
        "D004 profiles.yaml:2: entry gone names composes/gone.yml, which is not among the "
        "composes checked"
    ]


def test_field_targets_are_knobs_the_engines_read():
    assert NUMBERS <= KNOBS and KV_TYPES <= KNOBS
    assert set(DEFAULT_FIELDS) <= KNOBS | {STATUS}
    assert {"max_model_len", "gpu_memory_utilization", "kv_cache_dtype", "port"} <= KNOBS


# --- the real samples (skipped when ../shared is absent) ------------------------------------

SAMPLE_STATUSES = {  # read by hand from each file's Status field
    "deepseek-v4-flash-0731/llamacpp-club3090/compose/multi4/unsloth-q8-kxl/moecache.yml": "🧪",
    "gemma-4-31b/vllm/compose/multi4/google-qat-w4a16/base.yml": "caveats",
    "qwen-agentworld-35b-a3b/vllm/compose/dual/cyankiwi-awq-int4/fp8.yml": "production",
    "qwen3.6-27b/ik-llama/compose/single/ubergarm-iq4ks/mtp.yml": "🗑️ Deprecated",
    "qwen3.6-27b/vllm/compose/single/autoround-int4/minimal.yml": "✅",
    "qwen3.6-35b-a3b/llama-cpp/compose/dual/morikomorizz-q6kp/mtp.yml": "experimental",
    "qwen3.8-27b/vllm/compose/dual/autoround-int4/dflash2.yml": "Experimental",
    "qwen3.8-27b/vllm/compose/single/nvfp4/mtp.yml": "experimental",
}


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared sample corpus absent")
def test_a_catalog_of_the_real_samples(tmp_path):
    """A catalog stating what each sample ships (the hand-checked values of test_samples)
    agrees with every sample; one wrong figure is one finding, at the knob."""
    from ..test_samples import EXPECTED, KEYS

    root = tmp_path / "estate"
    shutil.copytree(SAMPLES, root)
    stated = ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "max_num_seqs")
    stated += ("kv_cache_dtype", "drafter_depth")
    entries = {}
    for relative, values in EXPECTED.items():
        entry = {"compose_path": f"models/{relative}", "status": SAMPLE_STATUSES[relative]}
        entry.update((k, v) for k, v in zip(KEYS, values, strict=True) if k in stated and v)
        entries[relative.split("/")[0] + "/" + relative.rsplit("/", 1)[1]] = entry

    def d004(catalog):
        (root / "profiles.json").write_text(json.dumps({"entries": catalog}, indent=1))
        config = load_config(root)
        catalogs = {"catalog-drift": {"catalogs": ["profiles.json"]}}
        config = replace(config, rules=catalogs, header={"preset": "profile"})
        estate = load_estate(config)
        result = run(estate, [RULE], load_options(config, all_rules()))
        return [(f.path, f.line, f.message) for f in result.findings], result

    found, result = d004(entries)
    assert found == []
    assert len(result.results) == 8 and all(r.findings == () for r in result.results)
    assert [r for r in result.remarks if r.startswith("D004")] == [
        "D004 models/deepseek-v4-flash-0731/llamacpp-club3090/compose/multi4/unsloth-q8-kxl/"
        "moecache.yml: profiles.json:72: kv_cache_dtype (entry deepseek-v4-flash-0731/"
        "moecache.yml) not compared: the compose does not set kv_cache_dtype (no -ctk/-ctv: "
        "llama.cpp caches K and V as f16)"
    ]
    entries["qwen3.8-27b/dflash2.yml"]["max_model_len"] = "262144"
    found, _ = d004(entries)
    dflash2 = "models/qwen3.8-27b/vllm/compose/dual/autoround-int4/dflash2.yml"
    assert found == [
        (
            dflash2,
            215,
            "max_model_len is 204800, but profiles.json:7 says max_model_len: 262144 (entry "
            "qwen3.8-27b/dflash2.yml)",
        )
    ]


def test_an_edited_catalog_reads_or_raises_a_located_error():
    """Generated catalogs with a few random edits: read with every field at a line naming it,
    or one GuardsError whose line lies within the file; nothing else escapes."""
    rng = random.Random(2024)
    read = 0
    for _ in range(1500):
        kind = rng.choice(["yaml", "toml", "json"])
        text, _ = generated(rng, kind)
        for _ in range(rng.randint(1, 3)):
            at, cut = rng.randint(0, len(text)), rng.randint(0, 4)
            insert = "".join(rng.choice("[]{}\"'#=.,:\n \t\\-019aentu*&!|") for _ in range(3))
            text = text[:at] + insert[: rng.randint(0, 3)] + text[at + cut :]
        try:
            entries = read_catalog(text, f"c.{kind}", options().layout)
        except GuardsError as error:
            assert error.line is None or 1 <= error.line <= text.count("\n") + 1, text
            continue
        read += 1
        lines = text.split("\n")
        for entry in entries:
            for field, spot in entry.fields.items():
                assert field in lines[spot.line - 1], text
    assert read > 300
