"""Code extraction, value comparison and the assert rewriter (no sandbox)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.sandbox.guest import rlvr_code_child
from rlvr.verifiers.code.equivalence import normalize_output, values_equal
from rlvr.verifiers.code.extract import extract_code
from rlvr.verifiers.code.rewrite import evaluate_site, instrument


@pytest.mark.parametrize(("response", "code"), [
    ("```python\nx = 1\n```", "x = 1\n"),
    ("Here:\n```py\na = 1\n```\nthen better:\n```python\na = 2\n```", "a = 2\n"),
    ("```\nplain = 1\n```", "plain = 1\n"),
    ("```bash\nls\n```\n```python\nok = 1\n```", "ok = 1\n"),
    ("~~~python\ny = 2\n~~~", "y = 2\n"),
    ("def f():\n    return 1", "def f():\n    return 1"),
    ("```python\ndef f():\n    return 1", "def f():\n    return 1"),
    ("I cannot solve this.", None),
    ("", None),
    ("```bash\nls\n```", None),
], ids=["fence", "last-python", "untagged", "skip-other-lang", "tilde", "raw", "unclosed", "prose", "empty",
        "bash-only"])
def test_extract(response, code):
    assert extract_code(response) == code


@pytest.mark.parametrize(("got", "expected", "strict", "equal"), [
    (1, 1, True, True), (True, 1, True, False), (1, 1.0, True, False), (1, 1.0, False, True),
    ([1, 2], (1, 2), True, False), ([1, 2], (1, 2), False, True), (0.1 + 0.2, 0.3, True, True),
    (float("nan"), float("nan"), True, True), ({"a": [1.0]}, {"a": [1.0000000001]}, True, True),
    ("a", "a ", True, False), (None, 0, True, False), ({1, 2}, {2, 1}, True, True),
])
def test_values_equal(got, expected, strict, equal):
    assert values_equal(got, expected, type_strict=strict) is equal


def test_normalize_output():
    assert normalize_output("1 2  \r\n3\n\n") == normalize_output("1 2\n3") == ["1 2", "3"]
    assert normalize_output("1\n\n2") != normalize_output("1\n2")


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: st.lists(inner) | st.tuples(inner, inner) | st.dictionaries(st.text(), inner)
    | st.frozensets(st.integers()), max_leaves=20)


@given(plain)
def test_encode_roundtrip_is_type_exact(value):
    back = rlvr_code_child.decode(rlvr_code_child.encode(value))
    assert type(back) is type(value) and values_equal(back, value)


def test_encode_rejects_foreign_objects():
    class AlwaysEqual:
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    for value in (AlwaysEqual(), [AlwaysEqual()], type("S", (str,), {})("x"), type("I", (int,), {})(1)):
        with pytest.raises(rlvr_code_child.Unencodable):
            rlvr_code_child.encode(value)
    assert math.isinf(rlvr_code_child.decode(rlvr_code_child.encode(float("inf"))))


def test_instrument_keeps_literals_in_parent():
    code, sites = instrument("assert f(2) == [1, 'secret']\nif x:\n    assert g(1)\nassert not h(3) < -4.5")
    assert "secret" not in code and "4.5" not in code
    assert [(s.kind, s.negate) for s in sites] == [("compare", False), ("truth", False), ("compare", True)]
    assert [s.required for s in sites] == [True, False, True]
    assert evaluate_site(sites[0], [[1, "secret"], None])
    assert not evaluate_site(sites[0], [[1, "other"], None])
    assert evaluate_site(sites[2], [0, None]) and not evaluate_site(sites[2], [-5, None])
