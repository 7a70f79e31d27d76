"""Math probes: wrong values are numerically wrong, controls are numerically the gold, hedges hold both."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from rlvr.environments.audit.math import format_number, math_probes, parse_number, wrong_values

NUMERIC_GOLDS = ["18", "70000", "-3", "0", "0.5", "2.75", "\\frac{11}{36}", "-\\frac{1}{2}", "3/4", "1,234,567", "5",
                 "\\frac{1}{7}"]


def _boxed(response: str) -> list[str]:
    """Every \\boxed{...} body, braces balanced."""
    out = []
    for m in re.finditer(r"\\boxed\{", response):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(response[i], 0)
            i += 1
        out.append(response[m.end():i - 1])
    return out


WORDS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                     "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                     "seventeen", "eighteen", "nineteen", "twenty"))}


def _answer(response: str) -> str:
    """The boxed answer, else what follows 'x = ' or 'The answer is '."""
    boxed = _boxed(response)
    if boxed:
        return boxed[-1]
    found = re.search(r"(?:x = |The answer is )(.+?)\.?$", response)
    assert found, response
    return found.group(1).replace("\u2212", "-")


def _value(latex: str) -> sympy.Expr:
    """An independent reading of a plain numeric answer: sympy on the LaTeX turned into Python syntax."""
    text = latex.strip().replace("\\$", "")
    if text in WORDS:
        return sympy.Integer(WORDS[text])
    repeating = re.fullmatch(r"(-?)(\d+)\.(\d*)\\overline\{(\d+)\}", text)
    if repeating:
        sign, whole, head, period = repeating.groups()
        scale = 10 ** len(head) * (10 ** len(period) - 1)
        value = sympy.Rational(int(whole + head + period) - int(whole + head), scale)
        return -value if sign else value
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+", text):
        text = text.replace(",", "")
    text = re.sub(r"\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}", r"((\1)/(\2))", text)
    return sympy.nsimplify(sympy.sympify(text, rational=True))


def _values(latex: str) -> tuple[sympy.Expr, ...]:
    inner = latex.strip().strip("()")
    return tuple(_value(p) for p in inner.split(", ")) if ", " in inner else (_value(latex),)


@pytest.mark.parametrize("gold", NUMERIC_GOLDS)
def test_value_mutations_differ_from_the_gold_numerically(gold: str) -> None:
    probes = [p for p in math_probes(gold) if p.family == "value"]
    assert {p.name for p in probes} >= {"plus-one", "minus-one"}
    for probe in probes:
        answer = _answer(probe.response)
        assert _value(answer) != _value(gold), (probe.name, answer)


@pytest.mark.parametrize("gold", NUMERIC_GOLDS)
def test_controls_equal_the_gold_numerically(gold: str) -> None:
    controls = [p for p in math_probes(gold) if p.control]
    assert any(p.name == "boxed-gold" for p in controls)
    for probe in controls:
        assert _value(_answer(probe.response)) == _value(gold), (probe.name, probe.response)


def test_equal_forms_of_a_fraction_and_a_decimal() -> None:
    forms = {p.name: _boxed(p.response)[0] for p in math_probes("\\frac{1}{2}") if p.control}
    assert forms["slash-fraction"] == "1/2" and forms["decimal"] == "0.5"
    forms = {p.name: _boxed(p.response)[0] for p in math_probes("0.5") if p.control}
    assert forms["latex-fraction"] == "\\frac{1}{2}" and forms["slash-fraction"] == "1/2"
    assert {p.name: _boxed(p.response)[0] for p in math_probes("70000") if p.control}["thousands-separator"] == \
        "70,000"


def test_sign_and_times_ten_are_never_applied_to_zero() -> None:
    names = {p.name for p in math_probes("0") if p.family == "value"}
    assert names == {"plus-one", "minus-one"}


def test_tuples_get_added_dropped_and_changed_elements() -> None:
    probes = {p.name: _boxed(p.response)[0] for p in math_probes("(1, 2, 3)") if p.family == "value"}
    assert probes == {"added-element": "(1, 2, 3, 4)", "dropped-element": "(1, 2)", "element-plus-one": "(2, 2, 3)"}
    for answer in probes.values():
        assert _values(answer) != (1, 2, 3)
    # an element the audit cannot read is kept as it is; a readable one is changed
    probes = {p.name: _boxed(p.response)[0] for p in math_probes("\\left( 3, \\frac{\\pi}{2} \\right)")
              if p.family == "value"}
    assert probes["element-plus-one"] == "(4, \\frac{\\pi}{2})"


def test_labelled_values_are_swapped_and_relabelled_and_reordering_is_a_control() -> None:
    probes = math_probes("x=1, y=2")
    wrong = {p.name: _boxed(p.response)[0] for p in probes if p.family == "value"}
    assert wrong["swap-labelled-values"] == "x=2, y=1"
    assert wrong["relabel"] == "z=1, y=2"
    controls = {p.name: _boxed(p.response)[0] for p in probes if p.control}
    assert controls["pairs-reordered"] == "y=2, x=1"
    # equal values: swapping changes nothing, so no swap probe (and no reorder control)
    assert "swap-labelled-values" not in {p.name for p in math_probes("a=3, b=3")}
    assert {p.name: _boxed(p.response)[0] for p in math_probes("x=3") if p.family == "value"}["relabel"] == "z=3"


def test_multiple_choice_hedges_name_more_than_one_letter() -> None:
    probes = math_probes("(B)")
    hedges = [p for p in probes if p.family == "hedge"]
    assert hedges
    for probe in hedges:
        assert len(set(re.findall(r"\b[A-E]\b", probe.response))) >= 2, probe.response
    assert {p.name for p in probes if p.control} == {"bare-letter", "answer-line"}
    assert all("B" not in _boxed(p.response)[0] for p in probes if p.name == "another-choice")


def test_hedges_and_injections_hold_the_gold_and_a_wrong_value() -> None:
    for probe in math_probes("18"):
        if probe.family in ("hedge", "injection") and probe.name != "answer-only-in-think-then-nothing":
            assert "19" in probe.response, probe.name  # the wrong value (gold + 1)
    think_only = next(p for p in math_probes("18") if p.name == "answer-only-in-think-then-nothing")
    assert think_only.response.split("</think>")[1].strip() == "I am not sure."


@pytest.mark.parametrize("gold", ["\\text{Evelyn}", "[2, 5)", "x \\in \\{1, 2\\}", "\\infty", "Monday"])
def test_golds_the_audit_cannot_read_get_no_value_mutation(gold: str) -> None:
    """Changing text or a set could keep it right (or be unparseable): the audit does not guess."""
    probes = math_probes(gold)
    assert not [p for p in probes if not p.control]
    assert all(p.control for p in probes)


def test_plain_expressions_get_plus_one() -> None:
    (probe,) = [p for p in math_probes("3\\sqrt{2}") if p.family == "value"]
    assert _boxed(probe.response)[0] == "\\left(3\\sqrt{2}\\right)+1"


_SHOWN = {"minus-outside": lambda g: -g, "difference-outside": lambda g: 1 - g, "square-outside": lambda g: g * g,
          "reciprocal-outside": lambda g: 1 / g, "root-outside": sympy.sqrt, "factorial-outside": sympy.factorial}


@pytest.mark.parametrize("gold", NUMERIC_GOLDS)
def test_glued_operators_change_the_value_shown(gold: str) -> None:
    """Each `glued` probe shows another value than its box's (issue 31); a bound shows no value at all."""
    probes = [p for p in math_probes(gold) if p.family == "glued"]
    value = _value(gold)
    assert "bound-outside" in {p.name for p in probes}
    assert {name for name, shown in _SHOWN.items() if name in ("minus-outside", "difference-outside", "square-outside")
            and shown(value) != value} <= {p.name for p in probes}  # every operator that changes this value
    for probe in probes:
        assert _value(_boxed(probe.response)[0]) == value, probe.response  # the box holds the gold ...
        if probe.name in _SHOWN:
            assert _SHOWN[probe.name](value) != value, (probe.name, gold)  # ... the response shows another value
    controls = {p.name for p in math_probes(gold) if p.control}
    assert {"label-outside", "bullet-outside"} <= controls


def test_probes_are_unique() -> None:
    responses = [p.response for p in math_probes("0.5")]  # minus-one and sign are both -0.5
    assert len(responses) == len(set(responses))


@given(st.fractions(max_denominator=10 ** 6), st.sampled_from(["int", "grouped", "decimal", "frac", "slash"]))
def test_wrong_values_differ_and_format_round_trips(value: Fraction, style: str) -> None:
    for _name, wrong in wrong_values(value):
        assert wrong != value
    written = format_number(value, style)
    parsed = parse_number(written)
    assert parsed is not None and parsed[0] == value, written


def test_suffixes_change_the_value_and_controls_read_as_the_number() -> None:
    probes = {p.name: p for p in math_probes("18")}
    names = ("times-i", "million", "k-suffix", "variable-suffix")
    suffixed = {name: _boxed(probes[name].response)[0] for name in names}
    assert suffixed == {"times-i": "18\\,\\mathrm{i}", "million": "18 \\text{ million}", "k-suffix": "18\\text{k}",
                        "variable-suffix": "18\\mathrm{x}"}
    assert all(probes[name].family == "suffix" for name in suffixed)
    minus = probes["unicode-minus-no-marker"].response
    assert "\u2212" in minus and "boxed" not in minus
    assert probes["number-word"].response == "The answer is eighteen." and probes["number-word"].control
    assert _boxed(next(p for p in math_probes("\\frac{1}{3}") if p.name == "repeating-decimal").response)[0] == \
        "0.\\overline{3}"
    assert not [p for p in math_probes("0") if p.family == "suffix"]  # 0 million is still 0


def _readable(latex: str) -> sympy.Expr | None:
    try:
        return _value(latex)
    except (sympy.SympifyError, TypeError, SyntaxError, ZeroDivisionError, AttributeError, ValueError):
        return None  # not a plain number sympy reads: not checked here


@pytest.mark.parametrize("source", ["gsm8k", "math500"])
def test_on_every_real_gold_value_mutations_are_wrong_and_controls_right(source: str, request: pytest.FixtureRequest,
                                                                         ) -> None:
    """Real golds (GSM8K test, MATH-500): mutated values differ and controls equal it, wherever sympy reads both."""
    import json

    path = request.getfixturevalue(f"{source}_path")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    golds = [r["answer"].split("####")[-1].strip().replace(",", "") if source == "gsm8k" else r["answer"] for r in rows]
    golds = golds[::3] if source == "gsm8k" else golds  # GSM8K golds are all plain integers: a third of them
    checked = 0
    for gold in golds:
        want = _readable(gold)
        for probe in math_probes(gold):
            if probe.family not in ("value", "control") or (not probe.control and not _boxed(probe.response) and
                                                             probe.name != "unicode-minus-no-marker"):
                continue
            got = _readable(_answer(probe.response)) if want is not None else None
            if got is None:
                continue
            checked += 1
            assert (got == want) == probe.control, (gold, probe.name, probe.response)
    assert checked > len(golds)  # most golds are plain numbers
