r"""Generic probes: wrong responses that need no knowledge of the verifier's domain, for any verifier.

A user's own verifier (a scaffolded `rlvr init` environment, a subclass of nothing rlvr knows)
gets these families, and so does every built-in one, beside its domain's:

- `empty`: the empty response, and one of whitespace only;
- `echo`: the prompt sent back -- the last user message, and the whole prompt's text;
- `format-only`: the shape of an answer with nothing in it: the reference response with the
  answer cut out (`The answer is \boxed{}` for `The answer is \boxed{42}`), and the usual answer
  markers alone (`\boxed{}`, `<answer></answer>`, `#### `, `Final answer:`);
- `guess`: answers written without the reference -- a few constants (`0`, `1`, `yes`, `true`,
  `A`), all of them at once (a hedge), and another task's reference response.

A probe that could be right is never built: a guess or another task's answer that occurs as a
word in this task's reference response (or its reference's text) is left out, all the constants
at once only when none of them does, and an echo that is the reference response is dropped. What
is left is wrong for any task, so a `correct` verdict on it is a false pass whatever the verifier.

The math domain gets no `echo` (the driver passes `echo=False`): the math verifier scores an
expression equal in value to the gold as correct, so "Evaluate $\lceil 3.6 \rceil^2$." sent back
is a right answer written another way under its rules (a restated expression is what
`IntegerAnswer` exists to refuse where the task needs the value).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rlvr.core.types import Task
from rlvr.environments.audit.math import parse_number
from rlvr.environments.audit.probe import Probe

__all__ = ["ANSWER_MARKERS", "GUESSES", "generic_probes"]

ANSWER_MARKERS: tuple[str, ...] = ("\\boxed{}", "<answer></answer>", "#### ", "Final answer:")
"""Answer markers with no answer inside (`format-only`)."""

GUESSES: tuple[str, ...] = ("0", "1", "yes", "true", "A")
"""Constant answers a policy may try on any task (`guess`)."""


def generic_probes(task: Task, verifier: Any, others: Sequence[Task] = (), echo: bool = True) -> list[Probe]:
    """Wrong probes for `task` that need no domain knowledge (module docstring for the families).

    Args:
        task: the audited task (its prompt and reference).
        verifier: the environment's verifier; its `reference_response(task.reference)` is the right
            answer the format-only probe is cut from and that guesses are checked against.
        others: other tasks of the environment; the first whose reference response is not a word of
            this task's gives the `other-task` guess.
        echo: build the `echo` family (False for verifiers that score an equal expression correct).

    Returns:
        Wrong probes only (no controls), each response distinct.
    """
    right = _reference_response(verifier, task.reference)
    known = f"{right}\n{task.reference}"
    user = [m.content for m in task.prompt if m.role == "user"]
    probes = [Probe("empty", "empty", ""), Probe("empty", "whitespace", " \n\t ")]
    if echo:
        probes += [Probe("echo", "last-user-message", user[-1] if user else ""),
                   Probe("echo", "whole-prompt", "\n\n".join(m.content for m in task.prompt))]
    probes += [Probe("format-only", f"marker {marker.strip()}", marker) for marker in ANSWER_MARKERS]
    cut = _cut_answer(right, task.reference)
    if cut is not None:
        probes.append(Probe("format-only", "answer-cut", cut))
    guesses = [guess for guess in GUESSES if not _mentions(known, guess)]
    probes += [Probe("guess", f"constant {guess}", guess) for guess in guesses]
    if len(guesses) == len(GUESSES):
        probes.append(Probe("guess", "all-constants", " ".join(GUESSES)))
    other = _other_answer(verifier, others, task, known)
    if other is not None:
        probes.append(Probe("guess", "other-task", other))
    unique: dict[str, Probe] = {}
    for probe in probes:
        if probe.response.strip() != right.strip():
            unique.setdefault(probe.response, probe)
    return list(unique.values())


def _reference_response(verifier: Any, reference: Any) -> str:
    try:
        return str(verifier.reference_response(reference))
    except (ValueError, TypeError, KeyError):
        return str(reference)


def _mentions(text: str, word: str) -> bool:
    """True when `word` occurs in `text` as a whole word, case-insensitively."""
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags=re.IGNORECASE) is not None


def _cut_answer(right: str, reference: Any) -> str | None:
    """The reference response with the reference answer cut out, or None when the answer is not in it."""
    answer = str(reference).strip()
    if not answer or answer not in right or right.strip() == answer:
        return None
    cut = right.replace(answer, "")
    return cut if cut.strip() else None


def _other_answer(verifier: Any, others: Sequence[Task], task: Task, known: str) -> str | None:
    """Another task's reference response that cannot be this task's answer, or None.

    Left out: an empty one, one that occurs in this task's reference response or reference, and one
    whose reference is this task's reference or the same number written another way (`18.0`, `18`).
    """
    gold = str(task.reference).strip()
    for other in others:
        answer = _reference_response(verifier, other.reference).strip()
        theirs = str(other.reference).strip()
        if other.id == task.id or not answer or not theirs or _mentions(known, answer) or _same_value(theirs, gold):
            continue
        return answer
    return None


def _same_value(a: str, b: str) -> bool:
    """True when `a` and `b` are the same text, or plain numbers of the same value (`math.parse_number`)."""
    if a == b:
        return True
    x, y = parse_number(a), parse_number(b)
    return x is not None and y is not None and x[0] == y[0]
