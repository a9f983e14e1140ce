"""Hostile estate files. Each reader refuses what it cannot hold with one located line and exit
2, never a traceback or a hang: numbers past any plausible figure, nesting past
``nesting.MAX_DEPTH`` in YAML, TOML and JSON (written out, or built from YAML aliases), integers
past Python's digit limit, and scrapes whose size would make the work quadratic. Text taken
from a file is printed escaped: a line break in it cannot start a line of its own (a CI runner
reads ``::error::`` there) and an escape sequence never reaches the terminal."""

import re
import time

import pytest

from guards.errors import GuardsError, printable, printable_lines
from guards.run import evidence
from guards.sources import metrics
from guards.sources.config import parse_toml
from guards.sources.jsonsrc import parse as parse_json
from guards.sources.nesting import MAX_DEPTH
from guards.sources.yamlsrc import data as parse_yaml

from .cli_helpers import run_guards, tree_digest, write
from .conftest import FIXTURES
from .fuzz_props import best_time

GOOD = (FIXTURES / "scrapes" / "slow-after.prom").read_text(encoding="utf-8")
COMPOSE = "services:\n  a:\n    image: x\n"
DEEP = f"nested more than {MAX_DEPTH} levels deep"


def refused(capsys, root, *args):
    """The one error line of a command that must stop with exit 2 and write nothing."""
    before = tree_digest(root)
    result = run_guards(capsys, *args, cwd=root)
    assert (result.code, result.out) == (2, ""), result.err
    assert tree_digest(root) == before
    assert result.err.count("\n") == 1 and result.err.startswith("guards: error: ")
    return result.err[len("guards: error: ") : -1]


def grows_linearly(build, n, floor=0.25):
    """4n take less than 8 times as long as n (a quadratic scan takes 16)."""
    small = best_time(build(n), 2)
    bound = 8 * small + floor
    large = best_time(build(4 * n), 2, enough=bound)  # a second try only for a first run over it
    assert large < bound, f"n: {small:.3f} s, 4n: {large:.3f} s"
    return large


# -- scrapes: numbers --------------------------------------------------------------------------


def line_starting(text, prefix):
    return next(n for n, line in enumerate(text.split("\n"), 1) if line.startswith(prefix))


def with_value(name, value, text=GOOD):
    """The scrape with the first sample of ``name`` set to ``value``; and that line."""
    line = line_starting(text, name + "{")
    lines = text.split("\n")
    lines[line - 1] = lines[line - 1].rpartition("} ")[0] + "} " + value
    return "\n".join(lines), line


def with_label(key, value):
    text = re.sub(f'{key}="[^"]*"', f'{key}="{value}"', GOOD, count=1)
    return text, line_starting(text, "vllm:cache_config_info{")


def read_scrape(capsys, tmp_path, text, name="s.prom"):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return refused(capsys, tmp_path, "evidence", "read", name)


SUFFIXES = {"counter": ("_total",), "histogram": ("_sum", "_count", "_bucket"), "gauge": ("",)}
READ_METRICS = [  # every sample guards reads a figure from, that the fixture scrape has
    name + end
    for name, kind in metrics.TYPES.items()
    for end in SUFFIXES[kind]
    if f"\n{name}{end}{{" in GOOD
]
assert len(READ_METRICS) == 15, READ_METRICS  # all but the older KV gauge, vLLM < 0.9
OUT_OF_RANGE = [
    ("9" * 400, "99999999999999999999… (400 characters)"),  # an int past a float's range
    ("9" * 400 + ".5", "99999999999999999999… (402 characters)"),
    ("1e400", "1e400"),
    ("+Inf", "+Inf"),
    ("NaN", "NaN"),
    ("1e15", "1e+15"),
]


@pytest.mark.parametrize(
    "value, shown", OUT_OF_RANGE, ids=["int-400", "float-400", "1e400", "+Inf", "NaN", "1e15"]
)
@pytest.mark.parametrize("name", READ_METRICS)
def test_a_figure_past_any_plausible_count_is_refused_at_its_line(
    capsys, tmp_path, name, value, shown
):
    text, line = with_value(name, value)
    assert read_scrape(capsys, tmp_path, text) == (
        f"s.prom:{line}: {name} is {shown}: out of range for a server's figure (finite, from 0 "
        "to 10^15)"
    )


@pytest.mark.parametrize(
    "name, value, problem",
    [
        (
            "vllm:num_requests_running",
            "-1",
            "out of range for a server's figure (finite, from 0 to 10^15)",
        ),
        ("vllm:num_preemptions_total", "-Inf", "a counter is never negative"),
        ("vllm:kv_cache_usage_perc", "98.7", "KV cache usage is a fraction (1 means 100%)"),
        (
            "vllm:num_preemptions_total",
            "١٦",
            "not a number (Prometheus writes values in ASCII digits)",
        ),
        (
            "vllm:num_requests_waiting",
            "2\N{MATHEMATICAL BOLD DIGIT TWO}",
            "not a number (Prometheus writes values in ASCII digits)",
        ),
    ],
)
def test_a_value_no_server_writes_is_refused_at_its_line(capsys, tmp_path, name, value, problem):
    text, line = with_value(name, value)
    assert read_scrape(capsys, tmp_path, text) == f"s.prom:{line}: {name} is {value}: {problem}"


@pytest.mark.parametrize(
    "key, value, shown",
    [
        ("num_gpu_blocks", "1²", "1²"),  # str.isdigit says yes; int() refuses
        ("num_gpu_blocks", "١٥٧٦٨", "١٥٧٦٨"),  # int() reads it; no server writes it
        ("num_gpu_blocks", "9" * 3000, "99999999999999999999… (3,000 characters)"),
        ("num_gpu_blocks", "1" + "0" * 15, "1000000000000000"),
        ("block_size", "16.5", "16.5"),
        ("block_size", "-16", "-16"),
    ],
    ids=["superscript", "arabic-indic", "3000-digits", "1e15", "fraction", "negative"],
)
def test_a_pool_label_that_is_no_count_is_refused_at_its_line(capsys, tmp_path, key, value, shown):
    text, line = with_label(key, value)
    assert read_scrape(capsys, tmp_path, text) == (
        f's.prom:{line}: vllm:cache_config_info {key}="{shown}" is not a whole number below 10^15'
    )


def test_a_pool_label_the_engine_has_not_set_is_no_pool():
    text, _ = with_label("num_gpu_blocks", "None")
    (found,) = evidence.figures(metrics.parse(text, "s.prom"))
    assert found.pool is None


def test_a_timestamp_past_a_float_is_refused_at_its_line(capsys, tmp_path):
    text, line = with_value("vllm:num_preemptions_total", "16.0 " + "9" * 400)
    assert read_scrape(capsys, tmp_path, text) == (
        f"s.prom:{line}: not Prometheus text: a number in it is too large to read"
    )


def test_an_unread_counter_may_be_infinite_and_is_no_restart(capsys, tmp_path):
    """Only the metrics guards reads are bounded; the restart check skips what is not finite."""
    name = "vllm:prefix_cache_queries_created"
    before, _ = with_value(name, "NaN")
    after, _ = with_value(name, "NaN", GOOD.replace("} 16.0", "} 17.0"))
    write(tmp_path, {"before.prom": before, "after.prom": after})
    result = run_guards(capsys, "evidence", "read", "before.prom", "after.prom", cwd=tmp_path)
    assert (result.code, result.err) == (0, "")
    assert "  preemptions     1\n" in result.out


# -- scrapes: size -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        # prometheus_client copies the rest of the line at each blank of a comment, the text
        # before each escaped quote, the rest of the labels at each label
        "#" + " " * 20_000 + "x",
        "# HELP vllm:x " + "a " * 10_000,
        'vllm:x{a="' + '\\"' * 10_000 + '"} 1',
        "vllm:x{" + ",".join(f'a{i}="b"' for i in range(2_000)) + "} 1",
    ],
    ids=["comment-blanks", "help", "escaped-quotes", "many-labels"],
)
def test_a_line_longer_than_any_scrape_writes_is_refused_fast(capsys, tmp_path, line):
    lines = GOOD.split("\n")
    text = "\n".join([*lines[:3], line, *lines[3:]])  # line 4
    start = time.process_time()  # CPU time: another worker's load does not count
    error = read_scrape(capsys, tmp_path, text)
    assert time.process_time() - start < 2
    assert error == (
        f"s.prom:4: a line of {len(line):,} characters: longer than a /metrics line (10,000 at "
        "most)"
    )


def many_models(n):
    text = "# TYPE vllm:num_preemptions_total counter\n" + "".join(
        f'vllm:num_preemptions_total{{engine="0",model_name="m{i}"}} {i}\n' for i in range(n)
    )

    def work():
        scrape = metrics.parse(text, "s")
        return evidence.text(None, scrape, evidence.figures(scrape), None)

    return work


def many_series(n):
    name = "vllm:request_decode_time_seconds"
    text = f"# TYPE {name} histogram\n" + "".join(
        f'{name}_bucket{{engine="{i}",le="+Inf",model_name="m"}} 1\n'
        f'{name}_sum{{engine="{i}",model_name="m"}} 0.5\n'
        f'{name}_count{{engine="{i}",model_name="m"}} 1\n'
        for i in range(n)
    )
    return lambda: evidence.figures(metrics.parse(text, "s"))


def test_six_thousand_models_take_linear_time():
    """Was 69 s: every sample scanned for every model's every figure."""
    assert grows_linearly(many_models, 1_500) < 5


def test_ten_thousand_histogram_series_take_linear_time():
    """Was 14-45 s: every sample scanned for every series' _sum and _count."""
    assert grows_linearly(many_series, 2_500) < 5


# -- scrapes: what is printed ------------------------------------------------------------------

FORGED = "a\\n::error::x\x1b[31m"  # a label value: an escaped line break, then a raw escape


def no_raw_line(out):
    """No control character left but the line breaks, and no line a CI runner reads as a
    workflow command (GitHub's ignores the blanks before ``::``)."""
    assert all(c.isprintable() for c in out.replace("\n", ""))
    assert not [line for line in out.split("\n") if line.lstrip().startswith("::")]


def test_a_model_name_from_a_label_is_printed_escaped(capsys, tmp_path):
    text = f'vllm:num_preemptions_total{{model_name="{FORGED}"}} 3\n'
    (tmp_path / "s.prom").write_text(text, encoding="utf-8")
    result = run_guards(capsys, "evidence", "read", "s.prom", cwd=tmp_path)
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "s.prom: one scrape: counters are totals since the server started\n"
        "model a\\n::error::x\\x1b[31m\n"
        "  preemptions  3 since start\n"
    )
    no_raw_line(result.out)


def test_a_scrape_named_like_a_workflow_command_is_printed_as_a_path(capsys, tmp_path):
    (tmp_path / "::warning::x.prom").write_text("vllm:num_requests_running 1\n", encoding="utf-8")
    result = run_guards(capsys, "evidence", "read", "::warning::x.prom", cwd=tmp_path)
    assert result.out.split("\n")[0] == (
        "./::warning::x.prom: one scrape: counters are totals since the server started"
    )
    no_raw_line(result.out)


# -- baseline (JSON) ---------------------------------------------------------------------------


def baseline(entries):
    return '{\n  "version": 1,\n  "tool": "guards",\n  "entries": [\n' + entries + "\n  ]\n}\n"


ENTRY = '{"fingerprint": "f", "rule": "S001", "path": "c.yml", "line": %s, "message": "m"}'


@pytest.mark.parametrize(
    "text, error",
    [
        (
            baseline("    " + ENTRY % ("9" * 5000)),
            "b.json:5: not a baseline: invalid JSON: an integer of 5,000 digits (at most 4,300 "
            "can be read)",
        ),
        (
            baseline("    " + ENTRY % ("-" + "9" * 4301)),
            "b.json:5: not a baseline: invalid JSON: an integer of 4,301 digits (at most 4,300 "
            "can be read)",
        ),
        (
            '{\n  "version": ' + "1" * 4400 + ',\n  "entries": []\n}\n',
            "b.json:2: not a baseline: invalid JSON: an integer of 4,400 digits (at most 4,300 "
            "can be read)",
        ),
        (
            baseline("    " + ENTRY % "1" + ",\n    " + ENTRY % ("1" + "0" * 20)),
            "b.json:6: baseline entry has no valid `line` (a line number)",
        ),
        (
            baseline("    " + ENTRY % "0"),
            "b.json:5: baseline entry has no valid `line` (a line number)",
        ),
    ],
    ids=["huge-line", "huge-negative", "huge-version", "line-past-1e9", "line-0"],
)
def test_a_baseline_number_no_reader_can_hold_is_refused_at_its_line(capsys, tmp_path, text, error):
    write(tmp_path, {"c.yml": COMPOSE, "b.json": text})
    assert refused(capsys, tmp_path, "check", "--baseline", "b.json", "c.yml") == error


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 150, 100_000])
def test_a_baseline_nested_past_the_limit_is_refused_where_it_passes(capsys, tmp_path, depth):
    """One bracket a line: the document is level 1, ``entries`` level 2 (line 4), so level
    MAX_DEPTH + 1 opens on line MAX_DEPTH + 3. Deep enough, json itself recurses out."""
    text = baseline("[\n" * (depth - 2) + "]\n" * (depth - 2))
    write(tmp_path, {"c.yml": COMPOSE, "b.json": text})
    assert refused(capsys, tmp_path, "check", "--baseline", "b.json", "c.yml") == (
        f"b.json:{MAX_DEPTH + 3}: not a baseline: invalid JSON: {DEEP}"
    )


def test_json_at_the_limit_is_read():
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x.json") is not None
    with pytest.raises(GuardsError, match=DEEP):
        parse_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "x.json")


def test_a_large_baseline_loads_in_linear_time(tmp_path):
    """Was quadratic: each entry's line counted again from the top of the file."""
    from guards.run.baseline import load

    def build(n):
        path = tmp_path / f"b{n}.json"
        path.write_text(baseline(",\n".join("    " + ENTRY % (i + 1) for i in range(n))))
        return lambda: load(path, path.name)

    grows_linearly(build, 5_000)


# -- TOML: settings, D001 statuses -------------------------------------------------------------

TOML_DEEP = [
    ("x = " + "[" * 2000 + "]" * 2000, 1),  # past tomllib's own recursion
    ("x = " + "{a = " * 2000 + "1" + "}" * 2000, 1),
    ("a = 1\nx = [\n" + "[\n" * 150 + "]\n" * 151, MAX_DEPTH + 1),  # level 3 on line 3
    ("a = 1\n" + ".".join(["k"] * 150) + " = 1", 2),
    ("[" + ".".join(["t"] * 150) + "]\nx = 1", 1),
    ("[[" + ".".join(["t"] * (MAX_DEPTH - 1)) + "]]\nx = 1", 1),  # the array is a level
    ("[t]\nx.y = [{z = " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}]", 2),
]


@pytest.mark.parametrize(
    "text, line",
    TOML_DEEP,
    ids=[
        "arrays",
        "inline-tables",
        "a-bracket-a-line",
        "dotted-key",
        "header",
        "array-header",
        "mixed",
    ],
)
def test_toml_nested_past_the_limit_is_refused_where_it_passes(text, line):
    with pytest.raises(GuardsError) as caught:
        parse_toml(text + "\n", "x.toml")
    assert str(caught.value) == f"x.toml:{line}: invalid TOML: {DEEP}"


def test_toml_at_the_limit_is_read():
    inner = MAX_DEPTH - 1  # the document is one level
    assert parse_toml("x = " + "[" * inner + "]" * inner, "x.toml")
    assert parse_toml("[" + ".".join(["t"] * inner) + "]", "x.toml")
    assert parse_toml('x = "' + "[" * 500 + '"\ny = 1 # ' + "{" * 500, "x.toml")


@pytest.mark.parametrize(
    "files, error",
    [
        ({"guards.toml": "select = " + "[" * 2000 + "]" * 2000 + "\n"}, "guards.toml:1"),
        (
            {"pyproject.toml": "[tool.guards]\nx = " + "[" * 500 + "]" * 500 + "\n"},
            "pyproject.toml:2",
        ),
        (
            {
                "guards.toml": '[rules.header-drift]\nstatuses = "s.toml"\n',
                "s.toml": '"c.yml" = "x"\nd = ' + "[" * 2000 + "]" * 2000 + "\n",
            },
            "s.toml:2",
        ),
    ],
    ids=["guards.toml", "pyproject.toml", "D001-statuses"],
)
def test_deep_toml_in_the_estate_is_exit_2(capsys, tmp_path, files, error):
    write(tmp_path, {"c.yml": COMPOSE, **files})
    assert refused(capsys, tmp_path, "check") == f"{error}: invalid TOML: {DEEP}"


# -- YAML: registry, D001 statuses, composes ---------------------------------------------------


def chain(n):
    """Anchors each one level deeper than the last: written two levels deep, ``n`` deep."""
    return "".join(f"a{i}: &a{i} [{f'*a{i - 1}' if i else 1}]\n" for i in range(n))


def at(text, needle):
    """``line:column`` of the first ``needle`` in ``text``."""
    start = text.index(needle)
    return f"{text.count(chr(10), 0, start) + 1}:{start - text.rfind(chr(10), 0, start)}"


SHALLOW_FIRST = chain(150) + "x: [" + ", ".join(f"*a{i}" for i in reversed(range(150))) + "]"
YAML_DEEP = [
    # the document's mapping is level 1: the list at level MAX_DEPTH + 1 is the 100th bracket
    ("c.yml: " + "[" * 150 + "]" * 150, f"1:{7 + MAX_DEPTH}: YAML error: {DEEP}"),
    (
        "".join(" " * i + "k:\n" for i in range(150)) + " " * 150 + "k: 1",
        f"{MAX_DEPTH + 1}:{MAX_DEPTH + 1}: YAML error: {DEEP}",
    ),
    # libyaml's own limit: 1,000 levels, the document's mapping one of them
    (
        "c.yml: " + "[" * 2000 + "]" * 2000,
        f"1:{7 + 1000}: YAML error: exceeded maximum nesting depth",
    ),
    # the walk meets a149 first and follows the aliases down: a50 is level MAX_DEPTH + 1
    (chain(150), f"{at(chain(150), '&a50 ')}: YAML error: {DEEP}"),
    # the walk meets every anchor two levels down: the bottom-up count finds a100
    (SHALLOW_FIRST, f"{at(SHALLOW_FIRST, '&a100 ')}: YAML error: aliases make it {DEEP}"),
]


@pytest.mark.parametrize(
    "text, error", YAML_DEEP, ids=["flow", "block", "libyaml", "aliases", "aliases-bottom-up"]
)
def test_yaml_nested_past_the_limit_is_refused_where_it_passes(text, error):
    with pytest.raises(GuardsError) as caught:
        parse_yaml(text + "\n", "x.yml")
    assert str(caught.value) == f"x.yml:{error}"


def test_yaml_at_the_limit_is_read():
    inner = MAX_DEPTH - 1
    assert parse_yaml("a: " + "[" * inner + "]" * inner, "x.yml")
    assert parse_yaml(chain(inner), "x.yml")


def test_a_yaml_integer_past_the_digit_limit_is_refused_where_it_starts():
    with pytest.raises(GuardsError) as caught:
        parse_yaml("a: 1\nb: [1, " + "9" * 5000 + "]\n", "x.yml")
    assert str(caught.value) == (
        "x.yml:2:8: YAML error: an integer of 5,000 characters (at most 4,300 digits can be read)"
    )


REGISTRY = "version: 1\nclaims:\n  - id: a\n    title: t\n    status: active\n"
ALIASED = (
    REGISTRY
    + "    reason: ["
    + ", ".join(f"&a{i} [{f'*a{i - 1}' if i else 1}]" for i in range(1200))
    + "]\n"
)


@pytest.mark.parametrize(
    "files, error",
    [
        # the registry's mapping, `claims` and the claim are levels 1-3; `reason` opens level 4
        (
            {"claims.yaml": REGISTRY + "    reason: " + "[" * 995 + "]" * 995 + "\n"},
            f"claims.yaml:6:{12 + MAX_DEPTH - 2}: YAML error: {DEEP}",
        ),
        # levels 1-4 as above, its items 5: the walk meets a1199 first and follows the aliases
        # down, so a(1199 - 96) is level MAX_DEPTH + 1
        ({"claims.yaml": ALIASED}, f"claims.yaml:{at(ALIASED, '&a1103 ')}: YAML error: {DEEP}"),
        (
            {
                "guards.toml": '[rules.header-drift]\nstatuses = "s.yml"\n',
                "s.yml": "c.yml: " + "[" * 995 + "]" * 995 + "\n",
            },
            f"s.yml:1:{7 + MAX_DEPTH}: YAML error: {DEEP}",
        ),
        (
            {
                "guards.toml": '[rules.header-drift]\nstatuses = "s.yml"\n',
                "s.yml": "c.yml: " + "9" * 5000 + "\n",
            },
            "s.yml:1:8: YAML error: an integer of 5,000 characters (at most 4,300 digits can be "
            "read)",
        ),
    ],
    ids=["registry", "registry-aliases", "D001-statuses", "D001-huge-integer"],
)
def test_deep_yaml_in_the_estate_is_exit_2(capsys, tmp_path, files, error):
    write(tmp_path, {"c.yml": COMPOSE, **files})
    assert refused(capsys, tmp_path, "check") == error


def test_a_deep_compose_is_an_error_and_the_rest_is_checked(capsys, tmp_path):
    """Levels 1-3: the compose, `services`, the service; `labels` opens level 4."""
    deep = COMPOSE + "    labels: " + "[" * 995 + "]" * 995 + "\n"
    write(tmp_path, {"a.yml": deep, "b.yml": COMPOSE})
    result = run_guards(capsys, "check", cwd=tmp_path)
    assert (result.code, result.err) == (
        2,
        f"guards: error: a.yml:4:{12 + MAX_DEPTH - 2}: YAML error: {DEEP}\n",
    )
    assert result.out.endswith(" fail\n")


# -- D004 catalogs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, catalog, error",
    [
        (
            "profiles.json",
            "[\n" + "[" * 5000 + "]" * 5000 + "\n]\n",
            f"profiles.json:2: invalid JSON: {DEEP}",
        ),
        (
            "profiles.json",
            '[{"compose_path": "c.yml", "ctx": ' + "9" * 5000 + "}]\n",
            "profiles.json:1: invalid JSON: an integer of 5,000 digits (at most 4,300 can be read)",
        ),
        (
            "profiles.toml",
            "[entries.a]\nx = " + "[" * 2000 + "]" * 2000 + "\n",
            f"profiles.toml:2: invalid TOML: {DEEP}",
        ),
        (
            "profiles.yaml",
            "entries:\n  a: " + "[" * 995 + "]" * 995 + "\n",
            f"profiles.yaml:2:{5 + MAX_DEPTH - 1}: YAML error: {DEEP}",
        ),
    ],
    ids=["json", "json-integer", "toml", "yaml"],
)
def test_a_hostile_d004_catalog_is_exit_2(capsys, tmp_path, name, catalog, error):
    settings = f'[rules.catalog-drift]\ncatalogs = ["{name}"]\nfields = {{ctx = "max_model_len"}}\n'
    write(tmp_path, {"c.yml": COMPOSE, "guards.toml": settings, name: catalog})
    assert refused(capsys, tmp_path, "check") == error


# -- the registry, printed ---------------------------------------------------------------------

TITLE = "Spec tax\\n::error::x\\x1b[31m red"  # YAML escapes: a line break and an ESC


def test_claims_show_prints_registry_text_escaped(capsys, tmp_path):
    registry = (
        "version: 1\nclaims:\n"
        f'  - id: forged\n    title: "{TITLE}"\n    status: active\n'
        '    reason: "one\\n::warning file=a::b\\e]0;t\\a"\n'
        '    refs: ["a\\n::notice::b"]\n'
    )
    write(tmp_path, {"c.yml": COMPOSE, "claims.yaml": registry})
    result = run_guards(capsys, "claims", "show", "forged", cwd=tmp_path)
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "forged: Spec tax ::error::x\\x1b[31m red\n"
        "  status       active\n"
        "  defined at   claims.yaml:3\n"
        "  reason       one ::warning file=a::b\\x1b]0;t\\x07\n"
        "  refs         a ::notice::b\n"
        "places (0):\n"
    )
    no_raw_line(result.out)
    listed = run_guards(capsys, "claims", "list", cwd=tmp_path)
    no_raw_line(listed.out)


@pytest.mark.parametrize(
    "text, shown",
    [
        ("::error::x.yml", "\\x3a:error::x.yml"),
        ("  ::warning::x", "  \\x3a:warning::x"),
        ("a ##[error]b", "a ##\\x5berror]b"),
        ("x\x1b[31m\ny", "x\\x1b[31m\\ny"),
        ("fine :: text", "fine :: text"),
    ],
)
def test_printable_defuses_terminal_escapes_and_ci_commands(text, shown):
    assert printable(text, 100) == shown


def test_printable_lines_keeps_tabs_and_crlf_and_escapes_the_rest():
    text = "a\tb\r\n ::error::x\n##[group]y\nz\x1b[2J"
    assert printable_lines(text) == "a\tb\r\n \\x3a:error::x\n##\\x5bgroup]y\nz\\x1b[2J"


def test_a_diff_and_paths_from_the_estate_are_printed_escaped(capsys, tmp_path):
    """regen --diff prints compose lines (YAML holds no terminal escape, but a comment can
    hold a CI command), and a compose whose name starts like one: both reach the output
    escaped."""
    header = '[header]\npreset = "profile"\n'
    write(tmp_path, {"claims.yaml": "claims: []\n", "guards.toml": header})
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("new\n")
    body = "# >>> guards:t\n#  ::error::old ##[warning]x\n# <<< guards:t\n"
    (tmp_path / "::error::c.yml").write_text(
        "# ::error::forged\n" + body + "services:\n  a:\n    image: x\n"
    )
    result = run_guards(capsys, "regen", "--diff", cwd=tmp_path)
    assert result.code == 0, result.err
    assert "-#  ::error::old ##\\x5bwarning]x" in result.out.splitlines()
    no_raw_line(result.out)
    written = run_guards(capsys, "regen", cwd=tmp_path)
    assert written.out.splitlines()[0] == "regenerated ::error::c.yml"  # not at a line's start
    checked = run_guards(capsys, "check", cwd=tmp_path)
    assert checked.out.startswith("\\x3a:error::c.yml:1:1: ")
    no_raw_line(checked.out)
