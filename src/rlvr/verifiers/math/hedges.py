r"""Hedges: more than one final answer in a response, which is then no answer the reader can rely on.

A response states its final answer once; every other final-answer statement that differs from the chosen
one (`statements`: boxes, ``####``, "final answer", "the answer is", ``<answer>`` tags, bold answer lines,
values offered beside one of them: "3 (or 4)", "\\boxed{3} or maybe 4"), a rival stated just before it
(`rivals`), a correction after it (`corrections`) or an answer hidden from the reader (`hidden_answers`)
makes the response a hedge (`score_math`: incorrect). An earlier answer withdrawn by reasoning or followed
by more work (`superseded`) was an intermediate result.
"""

from __future__ import annotations

import re

from rlvr.verifiers.math.markers import ANSWER_RE, FINAL_RE, Extraction, answer_phrases, last_marker, markers
from rlvr.verifiers.math.spans import has_words, line_after, line_end, refine_span, strip_delimiters
from rlvr.verifiers.math.words import negated_at, rejected_at

__all__: list[str] = []


# What may stand between two final answers that are one statement (a hedge when they differ): spaces,
# `$`, brackets, punctuation and the words of an answer phrase ("So the final answer is"), no reasoning.
_BETWEEN_RIVALS_RE = re.compile(
    r"(?:[\s$.,;:*()\[\]\\=]|\b(?:so|thus|therefore|hence|the|final|answer|answers|is|are|i\.e|that|in|conclusion|"
    r"summary|we|get|have|it|its|this|gives|our|result|boxed)\b)*",
    re.IGNORECASE,
)


def rivals(text: str, start: int, chosen: Extraction) -> tuple[str, ...]:
    r"""Final answers stated right before the chosen one (at `start`) that differ from it (red team M12).

    Walking back from the chosen answer, each earlier marker separated from the next only by an
    answer phrase (`_BETWEEN_RIVALS_RE`: "\boxed{3}. So the answer is \boxed{5}", "Final answer: 3",
    then "Final answer: 5") is one more final answer; a marker followed by reasoning is an
    intermediate result and ends the walk. Markers overlapping the current one ("Final Answer:
    \boxed{5}") are the same statement.
    """
    out: list[str] = []
    cur = start
    for a, b, found in reversed(markers(text)):
        if a >= cur:
            continue  # the chosen answer itself, a box inside it, or a later part of its group
        if b > cur:
            continue  # overlaps the current statement ("Final Answer: \boxed{5}")
        if _BETWEEN_RIVALS_RE.fullmatch(text[b:cur]) is None:
            break
        if found.text != chosen.text and found.text not in out:
            out.append(found.text)
        cur = a
    return tuple(out)


def hidden_answers(pieces: list[str]) -> tuple[str, ...]:
    """The answers marked in hidden pieces of a response (boxes, 'final answer', 'the answer is')."""
    out: list[str] = []
    for piece in pieces:
        piece = re.sub(r"<!--|-->|<[^>]*>", " ", piece)
        answers = [found.text for _, _, found in markers(piece)]
        span = last_marker(ANSWER_RE, piece)
        out += [a for a in ([*answers, span] if span else answers) if a.strip() and a not in out]
    return tuple(out)


# Reasoning that withdraws an earlier final answer: only an answer before the chosen one can be superseded, so a
# response is still paid for its last answer alone ("\boxed{5}. No wait, the answer is 3." keeps both: a hedge).
_RETRACTION_RE = re.compile(
    r"\b(?:however|wait|actually|mistake|error|incorrect|wrong|re-?(?:check|evaluate|examine|consider|calculate|do|"
    r"think|visit)|double[- ]check|let\s+me|let's|correction|on\s+second\s+thought|hmm+|oops|reconsider)\b",
    re.IGNORECASE,
)
# Work done after an earlier answer (an equation, an operation): that answer was an intermediate result.
_WORK_RE = re.compile(r"=|\\(?:frac|dfrac|cdot|times|div|sqrt)\b|\d\s*[-+*/×÷·]\s*\d")
# A markdown heading "#### Part 1: ..." is no GSM8K answer line.
_HEADING_RE = re.compile(r"####\s*(?:[A-Za-z]{2,}|[^\n]*:\s*$)", re.MULTILINE)
_NESTED_GAP_RE = re.compile(r"[\s*:$]*(?:the\s+)?", re.IGNORECASE)
_NESTED_MARKER_RE = re.compile(rf"{FINAL_RE.pattern}|{ANSWER_RE.pattern}", re.IGNORECASE)
# A bold line that is only an answer: "**3**", "**Answer: 3**", "**$x = 5$**" (no words: "**Step 1**" is a heading).
_BOLD_LINE_RE = re.compile(r"^[ \t>*-]*\*\*([^*\n]{1,120})\*\*[ \t.:$]*$", re.MULTILINE)
_ANSWER_LEAD_RE = re.compile(r"\s*(?:final\s+)?answer\s*[:：]?\s*", re.IGNORECASE)
# A value offered next to a final answer as another one: "3 (or 4)", "\boxed{3} or maybe 4", "3, though 4 is also
# possible", "3 (if n is even), otherwise 5", "$3$ or $\boxed{5}$".
_VALUE = r"(\\boxed\s*\{[^{}\n]*\}|\$[^$\n]{1,40}\$|\\\([^\n]{1,40}?\\\)|-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?{letter})"
_ALT_WORDS = r"(?:or|otherwise|alternatively|though|although|else)"
# Softer words offer a value only in brackets or after a comma (red team, second pass): "3 (maybe 4)", "3, possibly 4",
# "3 (also 4)", "3 (alt: 4)", "3 (if not, 4)", "3 (could also be 4)"; "3. Maybe 4 people agree" is another sentence.
_SOFT_ALT_WORDS = r"(?:maybe|perhaps|possibly|also|alt\.?\s*:?|if\s+not,?|could\s+(?:also\s+)?be)(?![a-z])"
_ALT_FILLER = (r"(?:\s+(?:maybe|possibly|perhaps|else|also|just|even|equivalently|alternatively|it(?:'s|\s+is|\s+could"
               r"\s+be|\s+might\s+be|\s+may\s+be)|could\s+be|might\s+be|may\s+be))*")
_ALT_AFTER = (rf"[\s$)}}\]]*(?:[.,;]?\s*(?:\([^()\n]{{0,60}}\)\s*[.,;]?\s*)?\(?\s*\b{_ALT_WORDS}\b"
              rf"|,?\s*\(\s*{_SOFT_ALT_WORDS}|,\s*{_SOFT_ALT_WORDS}){_ALT_FILLER}\s*[$(\[]*\s*{_VALUE}")
_ALT_AFTER_RE = re.compile(_ALT_AFTER.replace("{letter}", ""), re.IGNORECASE)
_ALT_AFTER_LETTER_RE = re.compile(_ALT_AFTER.replace("{letter}", r"|\(?[A-E]\)?(?![A-Za-z])"), re.IGNORECASE)
_ALT_BEFORE_RE = re.compile(
    _VALUE.replace("{letter}", "") + r"[\s$)]*,?\s*\bor\b\s*[$(\[]*\s*(?:\\boxed\s*\{)?$", re.IGNORECASE
)
# A correction after the chosen answer names another one: "Correction: it is 3", "that's wrong; it should be 3".
_CORRECTION_RE = re.compile(
    r"\b(?:correction|that'?s\s+wrong|that\s+is\s+wrong|(?:a|my)\s+mistake|oops|no,?\s+wait|on\s+second\s+thought)"
    r"[^\n.]{0,40}?(?:\bit\s+is|\bit's|\bshould\s+be|\bis\s+actually|:)\s*[$(\[]*\s*"
    + _VALUE.replace("{letter}", ""),
    re.IGNORECASE,
)
_CHOICE_RE = re.compile(r"\(?[A-E]\)?")


def _nested(text: str, start: int, end: int) -> bool:
    """True when another answer marker directly follows the one at `start` (the inner one states the answer)."""
    first = _NESTED_MARKER_RE.match(text, start)
    if first is None:
        return False
    gap = _NESTED_GAP_RE.match(text, first.end())
    return _NESTED_MARKER_RE.match(text, gap.end() if gap else first.end(), end) is not None


def _value_text(value: str) -> str:
    inner = re.fullmatch(r"\\boxed\s*\{(.*)\}", value.strip())
    return strip_delimiters(inner.group(1) if inner else value).strip()


def _alternatives(text: str, answer: str, start: int, end: int) -> list[str]:
    """Values offered as alternatives right before `start` or right after `end` on the same line."""
    out: list[str] = []
    line_end = text.find("\n", end)
    tail = text[end : len(text) if line_end < 0 else line_end][:160]
    after = (_ALT_AFTER_LETTER_RE if _CHOICE_RE.fullmatch(answer.strip()) else _ALT_AFTER_RE).match(tail)
    if after:
        out.append(_value_text(after.group(1)))
    line_start = text.rfind("\n", 0, start) + 1
    before = _ALT_BEFORE_RE.search(text[max(line_start, start - 80) : start])
    if before:
        out.append(_value_text(before.group(1)))
    return [o for o in out if o]


def _answer_end(text: str, answer: str, lo: int, hi: int) -> int:
    """End of `answer` written between `lo` and `hi` (its first occurrence), or -1."""
    i = text.find(answer, lo, hi)
    return i + len(answer) if i >= 0 else -1


def statements(text: str, tagged: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    r"""Every final-answer statement of a response as (start, end, answer), and the alternatives offered beside one.

    Boxes (not those denied, "not \\boxed{3}", or retracted, "\\boxed{5} is wrong"), '####' (not a markdown
    heading), 'final answer', 'the answer is' / 'my answer is' / 'Answer:' (not denied: "not 5" is no statement),
    `<answer>` tags (`tagged`: their spans and answers, read by the caller), a bold line that is only an answer. An
    alternative has the span (-1, -1): it is never part of another statement.
    """
    return _marker_statements(text) + _phrase_statements(text) + tagged + _bold_statements(text)


def superseded(text: str, lo: int, hi: int) -> bool:
    """True when `text[lo:hi]`, between an earlier answer and the chosen one, withdraws it or works on past it."""
    return bool(_RETRACTION_RE.search(text, lo, hi) or _WORK_RE.search(text, lo, hi))


def corrections(text: str, end: int) -> list[str]:
    r"""Values that a correction after `end` names ("\boxed{5}. Correction: it is 3." -> ["3"])."""
    return [value for m in _CORRECTION_RE.finditer(text, end) if (value := _value_text(m.group(1)))]


def _marker_statements(text: str) -> list[tuple[int, int, str]]:
    """`statements` of the boxes, '####' lines and 'final answer' markers."""
    out: list[tuple[int, int, str]] = []
    for a, b, found in markers(text):
        if found.source == "boxed" and (negated_at(text, a) or rejected_at(text, b)):
            continue
        if found.source == "gsm8k" and _HEADING_RE.match(text, a):
            continue
        if found.source == "final_answer" and _nested(text, a, b):
            continue  # "Final Answer: The final answer is 7": the inner marker states it
        out.append((a, b, found.text))
        stop = b if found.source == "boxed" else _answer_end(text, found.text, a, line_end(text, a + 1))
        if stop >= 0:
            out += [(-1, -1, alt) for alt in _alternatives(text, found.text, a, stop)]
    return out


_CHECK_BEFORE_RE = re.compile(r"\b(?:check|verify|confirm|double-check)\w*\s+(?:our|my|the|this)?\s*$", re.IGNORECASE)


def _phrase_statements(text: str) -> list[tuple[int, int, str]]:
    """`statements` of 'the answer is' / 'my answer is' / 'Answer:'."""
    out: list[tuple[int, int, str]] = []
    for m in answer_phrases(text):
        if _CHECK_BEFORE_RE.search(text[max(0, m.start() - 30) : m.start()]):
            continue  # "We may check our answer: 17 * 44 = 748": a check, not a second answer (MATH-500)
        span = refine_span(line_after(text, m.end()))
        end = line_end(text, m.end())
        if re.fullmatch(r"(?:correct|right|wrong|incorrect|verified|confirmed)", span, re.IGNORECASE):
            continue  # "so our answer is correct": a judgement of the answer, not one
        if span and not _nested(text, m.start(), end):
            stop = _answer_end(text, span, m.end(), end)
            out.append((m.start(), end if stop < 0 else stop, span))
            if stop >= 0:
                out += [(-1, -1, alt) for alt in _alternatives(text, span, m.end(), stop)]
    return out


def _bold_statements(text: str) -> list[tuple[int, int, str]]:
    """`statements` of bold lines that hold only an answer ("**3**", "**Answer: 3**"; not "**Step 1:**")."""
    out: list[tuple[int, int, str]] = []
    for m in _BOLD_LINE_RE.finditer(text):
        content = m.group(1)
        lead = _ANSWER_LEAD_RE.match(content)
        if lead and re.match(r"\s*(?:final\s+)?answer", content, re.IGNORECASE):
            span = refine_span(content[lead.end() :])
        elif re.search(r"\d", content) and not re.search(r"[:=]", content) and not has_words(content):
            span = refine_span(content)
        else:
            continue
        if span:
            out.append((m.start(), m.end(), span))
    return out


# A value stated in prose right before the final answer and leading to it: "I think it is 3, and so \boxed{5}",
# "it's 3, therefore the answer is 5". Only connectives and an answer phrase may stand between (issue 31).
_PROSE_VALUE_RE = re.compile(
    r"\b(?:it|this|that)\s*(?:is|'s|equals|=|must\s+be|should\s+be|would\s+be|will\s+be)\s+(?:equal\s+to\s+)?"
    r"(-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?|\$[^$\n]{1,40}\$|\\\([^\n]{1,40}?\\\))"
    r"[\s,;.]*(?:and\s+)?(?:so|thus|hence|therefore|then)\b[\s,]*(?:the\s+(?:final\s+)?answer\s+is\s*:?)?[\s$(\[]*$",
    re.IGNORECASE,
)
_CONSEQUENCE_RE = re.compile(r"\b(?:so|thus|hence|therefore|then)\b", re.IGNORECASE)
# Several choices called right on the answer's line: "Options B and C are both correct: \boxed{B}".
_CHOICES = r"\(?([A-E])\)?((?:\s*(?:,|and|or|&|/)\s*\(?[A-E]\)?)+)"
_SEVERAL_CHOICES_RE = re.compile(
    rf"\b(?:options?|choices?|answers?)\s+{_CHOICES}\s+(?:are|both|all|could|can|may|might|would|seem)\b"
    rf"|\bboth\s+{_CHOICES}\s+(?:are|could|can|may|might|would|seem)\b",
    re.IGNORECASE,
)
_RIGHT_RE = re.compile(r"(?<!not )(?<!n't )\b(?:correct|right|true|valid|possible|work)\b", re.IGNORECASE)


def prose_rivals(text: str, start: int, answer: str) -> list[str]:
    r"""Values a sentence states as the answer right before the chosen one at `start`, without an answer marker.

    "I think it is 3, and so \boxed{5}" states 3 (a value, "it is", a consequence word, the answer);
    "Options B and C are both correct: \boxed{B}" names C too (several choices called right on the line).
    """
    line = text[max(text.rfind("\n", 0, start) + 1, start - 240) : start]  # the sentence before the answer
    out = []
    m = _PROSE_VALUE_RE.search(line) if _CONSEQUENCE_RE.search(line[-60:]) else None
    if m:
        out.append(_value_text(m.group(1)))
    if re.fullmatch(r"\(?[A-E]\)?", answer.strip()):
        for m in _SEVERAL_CHOICES_RE.finditer(line):
            if _RIGHT_RE.search(line, m.end()):
                letters = re.findall(r"[A-E]", (m.group(1) or m.group(3)) + (m.group(2) or m.group(4)))
                out += [letter for letter in letters if letter != answer.strip("() ")]
    return out
