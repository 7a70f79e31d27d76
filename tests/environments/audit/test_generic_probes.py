"""The generic families (`rlvr.environments.audit.generic`): wrong for any task, never a probe that could be right."""

from __future__ import annotations

from rlvr.core.types import Task
from rlvr.environments.audit.generic import ANSWER_MARKERS, GUESSES, generic_probes
from rlvr.verifiers.math import MathVerifier


class Boxed:
    """A verifier-like double: its reference response is the gold in a sentence."""

    def reference_response(self, reference: str) -> str:
        return f"The answer is \\boxed{{{reference}}}."


def _task(id: str, gold: str, question: str = "How many apples?") -> Task:
    return Task(id=id, prompt=[{"role": "system", "content": "Answer in a box."},
                               {"role": "user", "content": question}], reference=gold)


def test_every_family_for_a_gold_no_guess_can_hit() -> None:
    task, other = _task("t0", "42"), _task("t1", "7")
    probes = {(p.family, p.name): p.response for p in generic_probes(task, Boxed(), [task, other])}
    assert probes[("empty", "empty")] == "" and not probes[("empty", "whitespace")].strip()
    assert probes[("echo", "last-user-message")] == "How many apples?"
    assert probes[("echo", "whole-prompt")] == "Answer in a box.\n\nHow many apples?"
    assert probes[("format-only", "answer-cut")] == "The answer is \\boxed{}."
    assert {probes[("format-only", f"marker {m.strip()}")] for m in ANSWER_MARKERS} == set(ANSWER_MARKERS)
    assert [probes[("guess", f"constant {g}")] for g in GUESSES] == list(GUESSES)
    assert probes[("guess", "all-constants")] == " ".join(GUESSES)
    assert probes[("guess", "other-task")] == "The answer is \\boxed{7}."
    assert all(p.control is False for p in generic_probes(task, Boxed(), [task, other]))


def test_a_probe_that_could_be_right_is_never_built() -> None:
    task = _task("t0", "1", question="The answer is \\boxed{1}.")
    same_value = _task("t1", "1.0")
    responses = [p.response for p in generic_probes(task, Boxed(), [task, same_value])]
    assert "1" not in responses and "0 1 yes true A" not in responses  # the gold is one of the guesses
    assert "The answer is \\boxed{1.0}." not in responses  # another task's answer of the same value
    assert "The answer is \\boxed{1}." not in responses  # an echo that is the reference response
    assert "0" in responses and "yes" in responses


def test_no_echo_when_asked_and_each_response_once() -> None:
    task = _task("t0", "42", question="0")
    probes = generic_probes(task, Boxed(), [task], echo=False)
    assert not [p for p in probes if p.family == "echo"]
    assert len({p.response for p in probes}) == len(probes)


def test_the_math_verifier_rejects_every_generic_probe_of_a_number_gold() -> None:
    verifier = MathVerifier(scoring="inline")
    task, other = _task("t0", "42", "Tom has 5 apples and buys 37 more. How many?"), _task("t1", "7")
    probes = generic_probes(task, verifier, [task, other], echo=False)
    verdicts = verifier.verify_batch([(p.response, task.reference) for p in probes])
    assert len(probes) >= 10 and not [p.name for p, v in zip(probes, verdicts, strict=True) if v.is_correct]


def test_a_terminal_verifier_gets_only_the_empty_family() -> None:
    # a terminal response is shell commands replayed in the task's sandbox: `yes` would flood until the
    # command timeout and an echo would run the prompt's words; the terminal families hold the rest
    from rlvr.environments.audit.driver import domain_generic_probes

    task, other = _task("t0", "42"), _task("t1", "7")
    terminal = domain_generic_probes(task, Boxed(), [task, other], "terminal")
    assert terminal and {p.family for p in terminal} == {"empty"}
    assert "yes" not in [p.response for p in terminal]
    math = {p.family for p in domain_generic_probes(task, Boxed(), [task, other], "math")}
    assert math == {"empty", "format-only", "guess"}  # no echo: an equal expression is right under math's rules
    assert "echo" in {p.family for p in domain_generic_probes(task, Boxed(), [task, other], "sql")}
