r"""Final-answer extraction from free-form model output and from reference solutions.

The stages, tried in order (the first that finds something wins):

0. An R1-style ``<answer>...</answer>`` tag: its content is extracted by the stages below.
1. ``\boxed{...}`` / ``\fbox{...}`` with balanced braces; the last one wins, and boxes that end
   the text separated only by a short connective ("and", ",") are joined into a list
   (the rule of Math-Verify's ``extract_boxed_content``, huggingface/Math-Verify).
2. GSM8K's ``#### N`` marker (openai/grade-school-math, ``dataset.py``), last occurrence.
3. "final answer is" / "Final Answer:" / "最终答案是" (Minerva / lm-evaluation-harness ``minerva_math``).
4. "the answer is" / "Answer:" / "答案是" / "答案：" (lm-evaluation-harness ``gsm8k`` cot, MMLU-style prompts).
5. A bold markdown span ``**...**`` that holds a digit.
6. Optional fallback: the last LaTeX math environment or the last number in the text,
   whichever ends later (the "flexible-extract" filter of lm-evaluation-harness).

A marker's span is refined by `refine_span` to its first complete answer expression, cut at a
clause boundary ("18 because 9 eggs sell for $2" -> 18, "7 (since 3 + 4 = 7)" -> 7); only a span
that is a sentence ("The largest $n$ is 34.") falls back to its last math expression or number.
The fallback reads LaTeX thousands groups (``32,\!348``, ``1{,}234``) as one number.

Conventions (see `MathConfig`): the ``:`` of ``1:2`` is a ratio, read as division by the parser,
except against a gold clock time ``h:mm`` (`equivalence`); reference boxes joined by "or" /
"equivalently" / "i.e." are alternatives (`ALTERNATIVE_SEP`), by "and"/commas a multi-part answer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from rlvr.verifiers.math.boxes import box_group, is_alternative, trailing_group
from rlvr.verifiers.math.hedges import corrections, hidden_answers, prose_rivals, rivals, statements, superseded
from rlvr.verifiers.math.markers import BOLD_RE, GSM8K_RE, TAG_RE, Extraction, answer_phrases, strong_candidates
from rlvr.verifiers.math.normalize import normalize_unicode
from rlvr.verifiers.math.outside import box_labels, glued_operator, group_operator, percent_after
from rlvr.verifiers.math.reasoning import final_part
from rlvr.verifiers.math.spans import (
    is_formula,
    last_math_or_number,
    line_after,
    line_end,
    refine_span,
    strip_delimiters,
)
from rlvr.verifiers.math.visible import split_visible
from rlvr.verifiers.math.words import rejected_at

__all__: list[str] = []

# Joins the alternative forms of one gold answer ("\boxed{15\frac{39}{40}}, or \boxed{\frac{639}{40}}")
# in `extract_reference`'s text; `check_equivalence` accepts a prediction equal to any of them.
ALTERNATIVE_SEP = "\x1f"


def extract_answer(text: str, *, last_number_fallback: bool = True) -> Extraction | None:
    r"""Extract the final answer from a model response.

    The latest explicit marker wins (a "Final Answer: 10455" after an intermediate
    ``\boxed{200}`` is the answer); then "the answer is"/"Answer:", bold, a whole-formula
    response, and the optional fallback. Only text a reader sees is read (`visible.split_visible`:
    ``\phantom{}``, white text, comments, a box inside ``\text{}`` are not); the answers marked in
    hidden text come back in `Extraction.hidden`, earlier final answers of the same statement in
    `Extraction.rivals`.

    Args:
        text: the full response.
        last_number_fallback: when no marker is found, fall back to the last math
            environment or number; a short response that is itself a formula is always used whole.

    Returns:
        The Extraction, or None when no answer could be found.
    """
    text, pieces = split_visible(final_part(normalize_unicode(text)))
    found = _visible_answer(text, last_number_fallback=last_number_fallback)
    hidden = hidden_answers(pieces) if pieces else ()
    if found is None or not hidden:
        return found
    return replace(found, hidden=hidden)


def _visible_answer(text: str, *, last_number_fallback: bool) -> Extraction | None:
    """`extract_answer` on text that holds only what a reader sees.

    The chosen answer's rivals are every other final-answer statement of the text that differs from it
    (`statements`: boxes, '####', 'final answer', 'the answer is', 'Answer:', `<answer>` tags, a bold line,
    an "or"-alternative next to one of them): more than one final answer that disagree is a hedge (issue 20).
    """
    chosen = _choose(text, last_number_fallback=last_number_fallback)
    if chosen is None:
        return None
    found, start, end = chosen
    if found.source == "boxed" and rejected_at(text, end):
        return None  # "\boxed{5} is not the answer": a retracted answer is none
    others = list(found.rivals)
    for a, b, answer in statements(text, _tagged(text)):
        if start <= a and b <= end:
            continue  # part of the chosen statement (a box in it, one box of its group)
        if 0 <= b <= start and superseded(text, b, start):
            continue  # withdrawn ("However, ...") or followed by more work before the chosen answer
        if answer != found.text and answer not in others:
            others.append(answer)
    for value in corrections(text, end) + prose_rivals(text, start, found.text):  # "Correction: it is 3" after it;
        if value != found.text and value not in others:  # "I think it is 3, and so \boxed{5}" before it
            others.append(value)
    return replace(found, rivals=tuple(others)) if others else found


def _tagged(text: str) -> list[tuple[int, int, str]]:
    """Each `<answer>...</answer>` tag's span and the answer read inside it."""
    out = []
    for m in TAG_RE.finditer(text):
        inner = _visible_answer(m.group(1).strip(), last_number_fallback=True)
        if inner is not None and inner.text.strip():
            out.append((m.start(), m.end(), inner.text))
    return out


def _choose(text: str, *, last_number_fallback: bool) -> tuple[Extraction, int, int] | None:
    """The answer `extract_answer` reports and the span (start, end) of the statement that gives it."""
    for m in reversed(list(TAG_RE.finditer(text))):
        inner = _visible_answer(m.group(1).strip(), last_number_fallback=True)
        if inner is not None and inner.text.strip():
            return replace(inner, source="answer_tag", hidden=()), m.start(), m.end()
    strong = strong_candidates(text)
    if strong:
        _, start, chosen = max(strong, key=lambda c: c[0])
        end = _statement_end(text, start, chosen)
        before = rivals(text, start, chosen)
        chosen = replace(chosen, rivals=before) if before else chosen
        return (_boxed_as_shown(text, chosen) if chosen.source == "boxed" else chosen), start, end
    for m in reversed(answer_phrases(text)):
        span = refine_span(line_after(text, m.end()))
        if span:
            return Extraction(span, "answer_is"), m.start(), line_end(text, m.end())
    bolds = [(m, refine_span(m.group(1))) for m in BOLD_RE.finditer(text) if re.search(r"\d", m.group(1))]
    bolds = [(m, span) for m, span in bolds if span]
    if bolds:
        return Extraction(bolds[-1][1], "bold"), bolds[-1][0].start(), bolds[-1][0].end()
    bare = text.strip().strip("$ ").strip()
    if re.fullmatch(r"\\(?:boxed|fbox)\s*\{\s*\}", bare):
        return None  # an empty box is no answer, not the formula `\boxed{}`
    if bare and "\n" not in bare and "$" not in bare and is_formula(bare):
        return Extraction(strip_delimiters(bare), "whole"), 0, len(text)
    if last_number_fallback:
        last = last_math_or_number(text)
        if last:
            return Extraction(last, "last_number"), len(text), len(text)
    return None


def _boxed_as_shown(text: str, chosen: Extraction) -> Extraction:
    r"""The boxed answer with what is written outside its boxes: a percent sign joins it, an operator is recorded.

    `\boxed{5}\%` reads `5\%`; `x_1 = \boxed{2}, x_2 = \boxed{3}` reads `x_1 = 2, x_2 = 3` (`outside.box_labels`);
    `-\boxed{5}`, `\boxed{5}^2`, `\boxed{2}+\boxed{3}` record the operator in
    `Extraction.outside` (`outside.glued_operator`): the value shown is not the box's.
    """
    group, betweens = trailing_group(text)
    operator = glued_operator(text, group[0][0], group[-1][1]) or group_operator(list(betweens))
    if operator:
        return replace(chosen, outside=operator)
    if percent_after(text, group[-1][1]) and not chosen.text.rstrip().endswith("%"):
        return replace(chosen, text=chosen.text + "\\%")
    labels = box_labels(text, group)
    if labels is not None and not any("=" in box[2] for box in group):  # `y_1 = \boxed{5}`: the name is stated
        return replace(chosen, text=", ".join(f"{name} = {box[2]}" for name, box in zip(labels, group, strict=True)))
    return chosen


def _statement_end(text: str, start: int, chosen: Extraction) -> int:
    """End of the strong statement starting at `start`: its box group, its '####' line or 'final answer' line."""
    if chosen.source == "boxed":
        group, _ = trailing_group(text)
        return group[-1][1] if group else start
    return line_end(text, start + 1)


@functools.lru_cache(maxsize=1024)  # the gold of a GRPO group is read once per group, not per sample
def extract_reference(reference: str) -> Extraction:
    r"""Extract the gold answer from a reference: a bare answer or a full reference solution.

    A reference holding ``\boxed{}`` (MATH, hendrycks/math) or ``####`` (GSM8K) is reduced to
    that answer; any other reference is the answer itself. Boxes offered as alternative forms of
    one answer ("\boxed{15\frac{39}{40}}, or \boxed{\frac{639}{40}}"; joined by "or",
    "equivalently", "i.e.") are joined with `ALTERNATIVE_SEP`, and a prediction equal to any of
    them is correct; boxes joined by "and" or commas stay one multi-part answer.
    """
    reference = normalize_unicode(reference)
    contents, betweens = box_group(reference)
    if betweens and all(is_alternative(b) for b in betweens):
        return Extraction(ALTERNATIVE_SEP.join(contents), "boxed alternatives")
    boxed = ",".join(contents)
    if boxed.strip():
        return Extraction(boxed, "boxed")
    gsm = GSM8K_RE.findall(reference)
    if gsm and gsm[-1].strip():
        return Extraction(gsm[-1].strip(), "gsm8k")
    text = reference.strip()
    if len(text) > 300 and not is_formula(text):
        found = extract_answer(text, last_number_fallback=True)
        if found is not None:
            return found
    return Extraction(text, "reference")
