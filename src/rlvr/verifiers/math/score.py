"""`score_math`: the pure scoring function run inside verifier worker processes.

Pipeline: cap input sizes -> extract the gold answer from the reference (answer or full
solution) -> extract the final answer from the response -> normalise -> check equivalence
(`rlvr.verifiers.math.equivalence`). Arbitrary text never raises: unparseable answers are
equivalent only as equal strings. Only an internal bug propagates, and the `Verifier` base turns
it into `status="error"`.
"""

from __future__ import annotations

import numbers
import time

from rlvr.core.types import Verdict
from rlvr.verifiers.math.config import MathConfig
from rlvr.verifiers.math.equivalence import check_equivalence
from rlvr.verifiers.math.extract import extract_answer, extract_reference
from rlvr.verifiers.math.markers import Extraction
from rlvr.verifiers.math.reasoning import final_part

__all__ = ["score_math"]


def _clip(text: str, limit: int) -> str:
    """Keep the last `limit` characters: the final answer sits at the end of a response."""
    return text if len(text) <= limit else text[-limit:]


def _input_problem(response: object, reference: object) -> str | None:
    """Why the inputs cannot be scored (a broken grader input is an error, never a silent 0), or None."""
    if reference is None or isinstance(reference, bool) or not isinstance(reference, (str, numbers.Number)):
        return (f"the reference must be a string or a number, got {type(reference).__name__} {reference!r:.80}; "
                "fix the dataset's reference/gold field")
    if response is not None and not isinstance(response, str):
        return f"the response must be a string (or None for no answer), got {type(response).__name__}"
    return None


# Final answers, written differently from the chosen one, that a response may state before it counts as a hedge
# without comparing them (each comparison may parse and evaluate): a response restating its answer 16 ways is rare.
_MAX_STATEMENTS = 16


def _same_answer(a: str, b: str, config: MathConfig) -> bool:
    r"""Two final answers of one response are the same answer when either reads as the other.

    `(b,c)=(6,5)` then `\boxed{(6,5)}`: the tuple assignment names the order of its own tuple.
    """
    return check_equivalence(a, b, config).equal or check_equivalence(b, a, config).equal


def _not_the_answer(pred: Extraction, config: MathConfig) -> str | None:
    r"""Why the extracted answer is not the response's one answer, or None when it is.

    An operator glued outside its box (`-\boxed{5}`: the response shows another value), more than
    `_MAX_STATEMENTS` other final answers written differently, another final answer that differs
    (`\boxed{204}` then "Final Answer: 203") or an answer hidden from the reader that differs.
    """
    if pred.outside:
        return (f"the box holds {pred.text!r} but {pred.outside!r} written outside it changes the value the response "
                "shows")
    if len(pred.rivals) + len(pred.hidden) > _MAX_STATEMENTS:  # each would be compared: a bound on the work
        return (f"{len(pred.rivals) + len(pred.hidden)} other final answers written differently from {pred.text!r} "
                f"(more than {_MAX_STATEMENTS}: a hedge)")
    hedge = next((r for r in pred.rivals if not _same_answer(pred.text, r, config)), None)
    if hedge is not None:
        return f"two different final answers {hedge!r} and {pred.text!r}"
    hidden = next((h for h in pred.hidden if not _same_answer(pred.text, h, config)), None)
    if hidden is not None:
        return (f"an answer hidden from the reader ({hidden!r}: \\phantom, white text, a comment) differs from "
                f"{pred.text!r}")
    return None


def score_math(config: MathConfig, response: str, reference: str) -> Verdict:
    r"""Score one response against one math reference.

    Args:
        config: the verifier configuration (rewards, extraction and equivalence rules).
        response: free-form model output. Its final part (after the last closing reasoning marker,
            found in the whole text) is read; a final part longer than `config.max_response_chars`
            is `no_answer`: cutting it could drop a competing answer or the start of a hidden block.
        reference: the gold answer (LaTeX or plain) or a full reference solution ending in
            `\boxed{...}` or `#### N`.

    Returns:
        A Verdict: `correct`/`incorrect` with `components={"correct": 1.0 | 0.0}`, `no_answer` when
        nothing could be extracted, or `error` when the reference itself is empty.
    """
    start = time.perf_counter()
    problem = _input_problem(response, reference)
    if problem:
        return Verdict.error(f"math verifier: {problem}", elapsed_s=time.perf_counter() - start)
    response = final_part(response or "")
    if len(response) > config.max_response_chars:
        return Verdict(
            status="no_answer", reward=config.no_answer_reward, components={"correct": 0.0}, extracted=None,
            detail=f"the response's final part (after any reasoning block) has {len(response)} characters, over "
            f"max_response_chars={config.max_response_chars}: not read (a cut could drop a competing answer)",
            elapsed_s=time.perf_counter() - start,
        )
    reference = _clip(str(reference), config.max_response_chars)
    gold = extract_reference(reference)
    if not gold.text.strip():
        return Verdict.error("math verifier: the reference is empty; give a gold answer or solution",
                             elapsed_s=time.perf_counter() - start)
    pred = extract_answer(response, last_number_fallback=config.last_number_fallback)
    if pred is None or not pred.text.strip():
        return Verdict(
            status="no_answer",
            reward=config.no_answer_reward,
            components={"correct": 0.0},
            extracted=None,
            detail=f"no final answer found in the response (no \\boxed, '####', 'answer' marker or number); "
            f"gold {gold.text!r}",
            elapsed_s=time.perf_counter() - start,
        )
    unread = _not_the_answer(pred, config)
    if unread is not None:
        return Verdict(status="incorrect", reward=config.incorrect_reward, components={"correct": 0.0},
                       extracted=pred.text, elapsed_s=time.perf_counter() - start,
                       detail=f"{unread} ({pred.source}); gold {gold.text!r}")
    result = check_equivalence(gold.text, pred.text, config)
    relation = "==" if result.equal else "!="
    detail = f"{pred.source} {result.pred!r} {relation} gold {result.gold!r} ({result.how})"
    return Verdict(
        status="correct" if result.equal else "incorrect",
        reward=config.correct_reward if result.equal else config.incorrect_reward,
        components={"correct": 1.0 if result.equal else 0.0},
        extracted=pred.text,
        detail=detail,
        elapsed_s=time.perf_counter() - start,
    )
