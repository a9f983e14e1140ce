import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guards.sources.compose.interpolate import TemplateError, interpolate

NAME_CHARS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@pytest.mark.parametrize(
    "template, env, expected",
    [
        ("${MAX_MODEL_LEN:-204800}", {}, "204800"),
        ("${MAX_MODEL_LEN:-204800}", {"MAX_MODEL_LEN": "131072"}, "131072"),
        ("${MAX_MODEL_LEN:-204800}", {"MAX_MODEL_LEN": ""}, "204800"),  # :- covers empty
        ("${MAX_MODEL_LEN-204800}", {"MAX_MODEL_LEN": ""}, ""),  # - covers unset only
        ("${MAX_MODEL_LEN-204800}", {}, "204800"),
        ("${MAX_MODEL_LEN:-${CTX:-262144}}", {}, "262144"),  # nested default
        ("${MAX_MODEL_LEN:-${CTX:-262144}}", {"CTX": "65536"}, "65536"),
        ("${A:-${B:-${C:-deep}}}", {}, "deep"),
        ("${PREFIX_CACHE_ARG:---enable-prefix-caching}", {}, "--enable-prefix-caching"),
        ("${VLLM_ENFORCE_EAGER:+--enforce-eager}", {}, ""),
        ("${VLLM_ENFORCE_EAGER:+--enforce-eager}", {"VLLM_ENFORCE_EAGER": "1"}, "--enforce-eager"),
        ("${VLLM_ENFORCE_EAGER:+--enforce-eager}", {"VLLM_ENFORCE_EAGER": ""}, ""),
        ("${VLLM_ENFORCE_EAGER+--enforce-eager}", {"VLLM_ENFORCE_EAGER": ""}, "--enforce-eager"),
        ('_spec_n="$${SPEC_N:-7}"', {"SPEC_N": "3"}, '_spec_n="${SPEC_N:-7}"'),  # $$ is literal
        ('exec vllm serve "$@"', {}, 'exec vllm serve "$@"'),  # lone $ stays
        ("$HOME/x", {"HOME": "/root"}, "/root/x"),
        ("cost $5", {}, "cost $5"),
        (
            '{"temperature":${TEMP:-${TEMPERATURE:-0.6}},"top_k":${TOP_K:-20}}',
            {},
            '{"temperature":0.6,"top_k":20}',
        ),
        (
            '{"enable_thinking": ${ENABLE_THINKING:-false}}',
            {"ENABLE_THINKING": "true"},
            '{"enable_thinking": true}',
        ),
        ("${X:-a}b${Y:-c}", {}, "abc"),
        ("${X:-{json}}", {}, "{json}"),
    ],
)
def test_interpolation_follows_compose(template, env, expected):
    assert interpolate(template, env).text == expected


def test_only_the_taken_branch_is_evaluated():
    value = interpolate("${A:-${B:?never evaluated}}", {"A": "set"})
    assert value.text == "set" and value.resolved


def test_variables_and_their_sources_are_tracked():
    value = interpolate("${SPEC_N:-${MTP_DRAFT_N_MAX:-3}}", {"MTP_DRAFT_N_MAX": "2"})
    assert value.text == "2"
    assert value.variables == ("SPEC_N", "MTP_DRAFT_N_MAX")
    assert value.from_env == ("MTP_DRAFT_N_MAX",)


def test_empty_env_value_that_falls_back_is_not_reported_as_from_env():
    assert interpolate("${A:-d}", {"A": ""}).from_env == ()


@pytest.mark.parametrize(
    "template, reason",
    [
        ("${TP}", "TP is unset and has no default"),
        ("$TP", "TP is unset and has no default"),
        ("${MODEL:?set MODEL to a checkpoint}", "required: set MODEL to a checkpoint"),
        ("${MODEL:?}", "required: MODEL is required"),
        ("${MODEL?x}", "required: x"),
    ],
)
def test_values_that_cannot_be_resolved_say_why(template, reason):
    value = interpolate(template, {})
    assert not value.resolved
    assert [u.reason for u in value.unresolved] == [reason]


def test_required_variable_set_to_empty_passes_with_question_mark_only():
    assert interpolate("${M?x}", {"M": ""}).resolved
    assert not interpolate("${M:?x}", {"M": ""}).resolved


@pytest.mark.parametrize(
    "template, offset",
    [
        ("abc ${UNCLOSED:-1", 4),
        ("${1BAD}", 0),
        ("x ${A/b/c}", 2),
        ("${}", 0),
    ],
)
def test_invalid_templates_raise_with_offset(template, offset):
    with pytest.raises(TemplateError) as caught:
        interpolate(template, {})
    assert caught.value.offset == offset


def test_unescape_off_keeps_double_dollar_for_already_unescaped_text():
    assert interpolate("$$ ${A:-x}", {}, unescape=False).text == "$$ x"


@given(
    st.text(alphabet="${}:-+?AB_x01 \"'", max_size=40),
    st.dictionaries(st.sampled_from(["A", "B", "x"]), st.text(max_size=3), max_size=3),
)
def test_any_input_interpolates_or_raises_template_error(template, env):
    """An error points at the `${` it is about; a value only reports variables the template
    consulted, and "from the environment" only for names the environment has."""
    try:
        value = interpolate(template, env)
    except TemplateError as exc:
        assert template.startswith("${", exc.offset)
    else:
        assert set(value.from_env) <= set(value.variables)
        assert set(value.from_env) <= set(env)
        assert {u.variable for u in value.unresolved} <= set(value.variables)
        assert set(value.variables) <= set(NAME_CHARS.findall(template))


@given(st.text(max_size=40), st.dictionaries(st.sampled_from(["A", "B"]), st.text(max_size=3)))
def test_text_without_a_dollar_is_returned_unchanged(text, env):
    text = text.replace("$", "")
    value = interpolate(text, env)
    assert (value.text, value.variables, value.unresolved) == (text, (), ())


@given(st.text(max_size=40))
def test_doubled_dollars_give_the_text_back(text):
    value = interpolate(text.replace("$", "$$"), {"A": "x", "B": "y"})
    assert (value.text, value.variables) == (text, ())
