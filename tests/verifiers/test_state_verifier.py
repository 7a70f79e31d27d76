"""StateVerifier: expected end-state facts against observed ones (golden cases with ids, and properties)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.verifiers.registry import get_verifier
from rlvr.verifiers.state import StateVerifier, score_state

EXPECTED = {"branch": "main", "staged_files": [], "head_subject": "Add notes"}

CASES = [
    ("all-match", {**EXPECTED, "extra": 1}, "correct", 1.0),
    ("one-differs", {**EXPECTED, "branch": "dev"}, "incorrect", 2 / 3),
    ("missing-fact", {"branch": "main", "staged_files": []}, "incorrect", 2 / 3),
    ("list-order-matters", {**EXPECTED, "staged_files": []}, "correct", 1.0),
    ("null-is-not-absent", {**EXPECTED, "head_subject": None}, "incorrect", 2 / 3),
    ("string-not-number", {"n": "1"}, "incorrect", 0.0),
]


@pytest.mark.parametrize(("case", "observed", "status", "share"), CASES, ids=[c[0] for c in CASES])
def test_golden(case: str, observed: dict[str, object], status: str, share: float) -> None:
    reference = {"n": 1} if case == "string-not-number" else EXPECTED
    verdict = score_state(json.dumps(observed), reference)
    assert verdict.status == status
    assert verdict.reward == (1.0 if status == "correct" else 0.0)
    assert verdict.components["facts"] == pytest.approx(share)


def test_numbers_compare_as_json_values() -> None:
    assert score_state('{"n": 1.0}', {"n": 1}).status == "incorrect"  # JSON 1.0 and 1 are written differently
    assert score_state('{"n": 1}', {"n": 1}).status == "correct"


@pytest.mark.parametrize("response", ["", "not json", "[1, 2]", "null", '"text"'])
def test_a_state_that_is_not_a_json_object_is_a_broken_grader(response: str) -> None:
    verdict = score_state(response, EXPECTED)
    assert verdict.status == "error" and verdict.reward is None


@pytest.mark.parametrize("reference", [{}, [], "x", None])
def test_a_reference_without_facts_is_an_error(reference: object) -> None:
    assert score_state(json.dumps(EXPECTED), reference).status == "error"


def test_registered_inline_and_its_reference_response_is_correct() -> None:
    verifier = get_verifier("state")
    assert isinstance(verifier, StateVerifier) and verifier.config.scoring == "inline"
    assert verifier.check(EXPECTED).status == "correct"


facts = st.dictionaries(st.text(min_size=1, max_size=8),
                        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10),
                                  st.lists(st.text(max_size=5), max_size=3)), min_size=1, max_size=5)


@given(facts)
def test_observing_exactly_the_expected_facts_is_correct(expected: dict[str, object]) -> None:
    assert score_state(json.dumps(expected), expected).status == "correct"


@given(facts, st.text(max_size=50))
def test_never_raises_and_the_reward_is_in_range(expected: dict[str, object], response: str) -> None:
    verdict = score_state(response, expected)
    assert verdict.reward in (None, 0.0, 1.0)
