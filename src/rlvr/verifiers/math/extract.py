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
from dataclasses import dataclass

from rlvr.verifiers.math.normalize import MAGNITUDE_WORDS, join_digit_groups, normalize_unicode
from rlvr.verifiers.math.visible import split_visible
from rlvr.verifiers.math.words import (
    AFFIRM_AFTER_NEGATION_RE,
    APPROXIMATE_LEAD_RE,
    BELOW_ZERO_RE,
    NEGATED_BEFORE_RE,
    NEGATED_LEAD_RE,
    OPERATED_AFTER_RE,
    OPERATED_BEFORE_RE,
    REJECTED_AFTER_RE,
    number_from_words,
)

__all__ = [
    "ALTERNATIVE_SEP", "Extraction", "extract_answer", "extract_reference", "final_part", "find_boxed", "match_brace",
    "refine_span",
]

# Joins the alternative forms of one gold answer ("\boxed{15\frac{39}{40}}, or \boxed{\frac{639}{40}}")
# in `extract_reference`'s text; `check_equivalence` accepts a prediction equal to any of them.
ALTERNATIVE_SEP = "\x1f"


@dataclass(frozen=True)
class Extraction:
    """An extracted answer: `text` (raw answer string) and `source` (which stage found it)."""

    text: str
    source: str
    rivals: tuple[str, ...] = ()  # other final-answer markers just before this one (a hedge if they differ)
    hidden: tuple[str, ...] = ()  # answers in text the reader does not see (`\phantom`, white, comments)


_BOX_RE = re.compile(r"\\(?:boxed|fbox)\b\s*")
_SEPARATOR_RE = re.compile(r"\b(?:and|or)\b|,|;")
_GSM8K_RE = re.compile(r"####\s*([^\n]*)")
_FINAL_RE = re.compile(r"(?:final\s+answer\s*(?:is|:|=)?|最终答案\s*(?:是|为)?)\s*(?:\*\*)?\s*[:：]?", re.IGNORECASE)
# The leading lookahead names the first letter of every branch: the same matches, scanned about 3x faster.
_ANSWER_RE = re.compile(
    # "the correct/true/real answer is" too (red team, second pass: a correction after the box is a second answer)
    r"(?=[tmoa答])"
    r"(?:\b(?:the|my|our)\s+(?:(?:correct|true|real|right|actual|revised|corrected)\s+)?answer\s+(?:is|=)"
    r"|\banswer\s*:|\bAnswer\b(?=\s*[$\\(])|答案\s*(?:是|为|:|：))\s*(?:\*\*)?\s*[:：]?",
    re.IGNORECASE,
)


def _mentions_answer(text: str) -> bool:
    """False when no match of `_ANSWER_RE` or `_FINAL_RE` can be in `text`, which is then not scanned.

    Every match holds "answer" in some case (U+017F, the long s, is the one character that matches a letter
    of it under IGNORECASE without lowering to it) or "答案"; two responses in three have neither.
    """
    return "答案" in text or "answer" in text.lower() or "\u017f" in text


def _answer_phrases(text: str) -> list[re.Match[str]]:
    """`_ANSWER_RE.finditer(text)` as a list."""
    return list(_ANSWER_RE.finditer(text)) if _mentions_answer(text) else []


def _final_phrases(text: str) -> list[re.Match[str]]:
    """`_FINAL_RE.finditer(text)` as a list."""
    return list(_FINAL_RE.finditer(text)) if _mentions_answer(text) else []


_TAG_RE = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
# Where the answer after a marker ends: "18 because ...", "7, which ...", "7 (since 3 + 4 = 7)", "34. Then".
_CLAUSE = (
    r"\s+(?:because|since|which|where|but)\b|,\s*(?:which|since|because|so|where|as|but|not)\b|[.!?;]\s"
    r"|\s+(?:--?|[—–])\s+(?![-+]?[\d(.\\]|[a-z]\b|(?:sqrt|exp|log|ln|sin|cos|tan|pi|e)\b)|\s*\((?=[^()]*(?:(?<![\\a-zA-Z])[a-zA-Z]{2,}|=))"
)
_CLAUSE_RE = re.compile(_CLAUSE, re.IGNORECASE)
# Also "18 and the eggs cost $2": only where the part before it is a whole formula.
_FORMULA_END_RE = re.compile(_CLAUSE + r"|\s+and\s+(?=[A-Za-z]{2,}\b)", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.!?]\s+(?=[A-Z\[(])")
_INLINE_DELIM_RE = re.compile(r"\\[()]|(?<!\\)\$")
_ALTERNATIVE_RE = re.compile(r"(?:or|equivalently|i\.\s*e|that is|alternatively)", re.IGNORECASE)
_BOLD_RE = re.compile(r"\*\*([^*\n]{1,200}?)\*\*")
# Led by a lookahead on the first character of both branches: the same matches, scanned about 2x faster.
_NUMBER_RE = re.compile(
    r"(?=[-.\d])(?:(?<![A-Za-z_^])(?<!\^\{)-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
    rf"(?:\s*/\s*\d+|\s+(?i:{MAGNITUDE_WORDS})s?\b)?|-?\.\d+)"
)
_ENV_RE = re.compile(r"\\\[(.+?)\\\]|\\\((.+?)\\\)|\$\$(.+?)\$\$|\$([^$]+?)\$", re.DOTALL)
_WORD_RE = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z']{2,}")
_LATEX_WORDS = frozenset({"frac", "sqrt", "text", "dfrac", "tfrac", "left", "right", "cdot", "infty", "circ", "times",
                          "quad", "mathrm", "mathbf", "textbf", "begin", "pmatrix", "bmatrix", "matrix", "array", "end",
                          "boxed", "pm", "sin", "cos", "tan", "log", "ln", "pi", "cup", "cap", "leq", "geq", "neq",
                          "approx", "mbox", "overline", "degree", "percent"})
_SENTENCE_WORDS = frozenset({"is", "are", "was", "the", "so", "thus", "therefore", "we", "answer", "of", "it", "it's",
                             "be", "has", "have", "get", "find", "not", "this", "that"})


def match_brace(text: str, open_pos: int) -> int | None:
    """Index of the `}` closing the `{` at `open_pos`, or None when unbalanced."""
    depth = 0
    for i in range(open_pos, len(text)):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


_QUOTED_RE = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”")


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    if "`" not in text and '"' not in text and "“" not in text:
        return []
    return [(m.start(), m.end()) for m in _QUOTED_RE.finditer(text) if "\\boxed" in m.group(0)]


# The scans of one response that several stages read (the chosen answer, its rivals, every statement) are
# cached for the last few texts: pure functions of the text, returning tuples nobody mutates.
_scan_cache = functools.lru_cache(maxsize=32)


@_scan_cache
def _boxes(text: str) -> tuple[tuple[int, int, str], ...]:
    r"""All `\boxed`/`\fbox` contents as (start, end, content), in text order."""
    out: list[tuple[int, int, str]] = []
    quoted = _quoted_spans(text)
    for m in _BOX_RE.finditer(text):
        if any(a <= m.start() < b for a, b in quoted):
            continue  # a box quoted in `code` or "quotes" is talk about an answer, not the answer
        pos = m.end()
        if pos < len(text) and text[pos] == "{":
            close = match_brace(text, pos)
            if close is None:
                out.append((m.start(), len(text), text[pos + 1 :].strip()))
                continue
            out.append((m.start(), close + 1, text[pos + 1 : close].strip()))
        elif pos < len(text):  # `\boxed 5`: one token
            tok = re.match(r"[^\s$.,]+", text[pos:])
            if tok:
                out.append((m.start(), pos + tok.end(), tok.group(0)))
    return tuple(out)


@_scan_cache
def _trailing_group(text: str) -> tuple[tuple[tuple[int, int, str], ...], tuple[str, ...]]:
    """The trailing group of boxes (see `find_boxed`) as (start, end, content), and the texts between them."""
    boxes = [b for b in _boxes(text) if not _negated_at(text, b[0])]  # "\boxed{5}, not \boxed{3}": 3 is talk
    if not boxes:
        return (), ()
    chosen, betweens = [boxes[-1]], list[str]()
    for prev in reversed(boxes[:-1]):
        between = text[prev[1] : chosen[0][0]]
        near = len(between) < 10 or (len(between) < 70 and _SEPARATOR_RE.search(between) is not None)
        if not near:
            break
        if prev[2] != chosen[0][2]:
            chosen.insert(0, prev)
            betweens.insert(0, between)
    return tuple(chosen), tuple(betweens)


def _box_group(text: str) -> tuple[list[str], list[str]]:
    """The contents of the trailing group of boxes and the texts between them (see `find_boxed`)."""
    chosen, betweens = _trailing_group(text)
    return [b[2] for b in chosen], list(betweens)


def find_boxed(text: str) -> str | None:
    """Content of the last box; trailing boxes separated by a short connective are joined with ','.

    Joining follows Math-Verify's ``extract_boxed_content``: neighbours closer than 10 characters,
    or closer than 70 with a separator ("and", "or", ",", ";") and different content.
    """
    contents, _ = _box_group(text)
    return ",".join(contents) if contents else None


def _is_alternative(between: str) -> bool:
    r"""True when the text between two boxes offers another form of one answer (", or", "equivalently")."""
    words = re.sub(r"\\(?:text|mbox|mathrm|quad|qquad)\b|[{}$,;:()]|\\[()\[\]]", " ", between)
    return _ALTERNATIVE_RE.fullmatch(re.sub(r"\s+", " ", words).strip(" .")) is not None


def _line_after(text: str, pos: int) -> str:
    """The rest of the line from `pos`; the next non-empty line when that rest is empty."""
    rest = text[pos:]
    lines = rest.split("\n")
    first = lines[0].strip(" *:")
    if first:
        # A display block opened on this line continues to its close.
        if first.startswith(("\\[", "$$")) and not re.search(r"\\\]|\$\$.*\$\$", first):
            return _close_display(rest)
        return lines[0]
    for line in lines[1:6]:
        if line.strip(" *:"):
            if line.strip().startswith(("\\[", "$$")) and not re.search(r"\\\]|\$\$.*\$\$", line):
                return _close_display(rest)
            return line
    return ""


def _close_display(text: str) -> str:
    m = re.search(r"\\\[.*?\\\]|\$\$.*?\$\$", text, re.DOTALL)
    return m.group(0) if m else text.split("\n")[0]


def _last_marker(pattern: re.Pattern[str], text: str) -> str | None:
    """The refined span after the last match of `pattern`, or None."""
    matches = list(pattern.finditer(text))
    for m in reversed(matches):
        span = refine_span(_line_after(text, m.end()))
        if span:
            return span
    return None


def _is_formula(span: str) -> bool:
    """True when `span` reads as one math answer, not a sentence (few plain words)."""
    plain = re.sub(r"\\text\{[^{}]*\}", "", span)
    words = [w.lower() for w in _WORD_RE.findall(plain) if w.lower() not in _LATEX_WORDS]
    words = [w for w in words if w not in ("and", "or")]
    return len(words) <= 1 and ":" not in plain and not _SENTENCE_WORDS.intersection(words) and len(span) <= 300


_REJECTED_SPAN_RE = re.compile(rf"[^\s?]{{1,40}}?(?:{REJECTED_AFTER_RE.pattern})", re.IGNORECASE)


def refine_span(span: str) -> str:
    """Reduce a marker's span ("The largest $n$ is 34.") to its answer expression.

    The first complete answer expression after the marker wins, never a later number: the span
    is cut at its first clause boundary outside math (`cut_clause`: "18 because 9 eggs sell for
    $2" -> "18", "7 (since 3 + 4 = 7)" -> "7"); a part that reads as one formula is used whole,
    else the last math expression or number of the first clause, else of the first sentence.

    Args:
        span: text after an answer marker, up to the end of its line.

    Returns:
        The answer string, or "" when the span holds no answer.
    """
    span = _trim(span.replace('\\"', '"'))
    span = APPROXIMATE_LEAD_RE.sub("", span, count=1)
    negated = NEGATED_LEAD_RE.match(span)
    if negated and negated.end() > 0 and re.match(r"\s*\S", span[negated.end() :]):
        # "not 5", "at least 5", "less than 5": no answer; "not 3 but 5" names 5.
        affirm = AFFIRM_AFTER_NEGATION_RE.search(span, negated.end())
        return refine_span(span[affirm.end() :]) if affirm else ""
    below = BELOW_ZERO_RE.match(span)
    if below:
        return "-" + below.group(1).lstrip("+")  # "5 degrees below zero"
    if _REJECTED_SPAN_RE.match(span):
        return ""  # "5? No.", "5 is wrong"
    clause = _trim(cut_clause(span))
    if number_from_words(clause) is not None:
        return clause  # "two hundred and six", "negative three"
    found = _as_formula(_trim(cut_clause(span, _FORMULA_END_RE)))
    if found is None:
        clause = _trim(cut_clause(span))
        found = _as_formula(clause) or _last_math_or_number(clause)
    if found is None:
        sentence = _trim(cut_clause(span, _SENTENCE_END_RE))
        found = _as_formula(sentence) or _last_math_or_number(sentence)
    return found or ""


def _trim(span: str) -> str:
    """Drop surrounding spaces, quotes, bold stars and trailing sentence punctuation."""
    span = span.strip().strip("*\"'").strip()
    return re.sub(r"[\s.。!\"'*,;:]+$", "", span).strip()


def _as_formula(span: str) -> str | None:
    """The boxed content of `span`, or `span` itself when it reads as one formula; else None."""
    if not span:
        return None
    boxed = find_boxed(span)
    if boxed is not None:
        return boxed
    bare = _strip_delimiters(span.strip("$ "))
    if not _is_formula(bare):
        return None
    # "\(52\) candles": the delimiters of complete inline math inside a one-formula answer go.
    balanced = bare.count("\\(") == bare.count("\\)") and len(re.findall(r"(?<!\\)\$", bare)) % 2 == 0
    return _INLINE_DELIM_RE.sub("", bare).strip() if balanced else bare


def cut_clause(span: str, boundary: re.Pattern[str] = _CLAUSE_RE) -> str:
    r"""Cut `span` at its first clause boundary outside math and braces.

    Boundaries: " because", " since", ", which", ", so", " and the ...", a parenthetical holding
    words or "=" ("7 (since 3 + 4 = 7)"), a sentence end (". ", "; "). `$..$`, `\(..\)`, `\[..\]`
    and `{..}` are never cut; a boundary at the very start is ignored.
    """
    depth, in_math, i = 0, False, 0
    while i < len(span):
        ch = span[i]
        if ch == "\\" and i + 1 < len(span):
            nxt = span[i + 1]
            if nxt in "([":
                in_math = True
            elif nxt in ")]":
                in_math = False
            i += 2
            continue
        if ch == "$":
            in_math = not in_math
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
        elif not in_math and depth == 0 and span[:i].strip() and boundary.match(span, i):
            return span[:i].rstrip(" ,")
        i += 1
    return span


def _negated_at(text: str, pos: int) -> bool:
    """True when the words just before `pos` (same line) deny or bound what follows ("not", "at least")."""
    line_start = text.rfind("\n", 0, pos) + 1
    return NEGATED_BEFORE_RE.search(text[max(line_start, pos - 40) : pos]) is not None


def _rejected_at(text: str, end: int) -> bool:
    """True when the words just after `end` retract the answer before it ("is wrong", "? No")."""
    return REJECTED_AFTER_RE.match(text, end) is not None


def _operand_at(text: str, start: int, end: int) -> bool:
    """True when words around `text[start:end]` make it an operand ("half of 5", "5 less than x"; red team)."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 40) : start]
    return bool(OPERATED_BEFORE_RE.search(before) or OPERATED_AFTER_RE.match(text, end))


def _last_math_or_number(text: str) -> str | None:
    """The last math environment or number, whichever ends later in `text`."""
    text = join_digit_groups(text)  # `\$32,\!348`, `1{,}234`: one number, not `348`, `234`
    text = re.sub(r"(=\s*)-\s+(?=\d)", r"\1-", text)  # `x = - 3`: the number -3
    env_end, env_text = -1, ""
    for m in _ENV_RE.finditer(text):
        content = next(g for g in m.groups() if g is not None).strip()
        if content and not re.fullmatch(r"[a-zA-Z]", content):  # `$n$` names a variable, not an answer
            env_end, env_text = m.end(), content
    num_end, num_text = -1, ""
    for m in _NUMBER_RE.finditer(text):
        num_end, num_text = m.end(), m.group(0)
    num_start = num_end - len(num_text)
    if num_end >= 0 and (_negated_at(text, num_start) or _rejected_at(text, num_end)
                         or _operand_at(text, num_start, num_end)):
        num_end, num_text = -1, ""  # "it cannot be 5", "5? No.", "half of 5": the last number is no answer
    if env_end < 0 and num_end < 0:
        return None
    # A number inside the last environment ends before the environment's closing delimiter.
    return env_text if env_end >= num_end else num_text


def _line_end(text: str, pos: int) -> int:
    """End of the line holding `pos`; the end of the next non-empty line when the rest of that line is empty."""
    newline = text.find("\n", pos)
    if newline < 0:
        return len(text)
    if text[pos:newline].strip(" *:$"):
        return newline
    for m in re.finditer(r"[^\n]*", text[newline + 1 :]):
        if m.group(0).strip(" *:$"):
            return newline + 1 + m.end()
    return len(text)


@_scan_cache
def _markers(text: str) -> tuple[tuple[int, int, Extraction], ...]:
    """Every explicit final-answer marker as (start, end, extraction), in text order.

    Each box, each GSM8K '####' line and each 'final answer' line.
    """
    found = [(a, b, Extraction(c, "boxed")) for a, b, c in _boxes(text) if c.strip()]
    for m in _GSM8K_RE.finditer(text):
        span = m.group(1)
        if span.strip():
            found.append((m.start(), m.end(), Extraction(refine_span(span) or span.strip(), "gsm8k")))
    for m in _final_phrases(text):
        span = refine_span(_line_after(text, m.end()))
        if span:
            found.append((m.start(), _line_end(text, m.end()), Extraction(span, "final_answer")))
    return tuple(sorted(found, key=lambda f: (f[0], f[1])))


def _strong_candidates(text: str) -> list[tuple[int, int, Extraction]]:
    """The latest answer of each explicit marker kind as (position, start, extraction).

    The trailing group of boxes (joined; position: its last box, start: its first), the last GSM8K
    '####', the last 'final answer'.
    """
    found: list[tuple[int, int, Extraction]] = []
    group, _ = _trailing_group(text)
    boxed = ",".join(b[2] for b in group)
    if group and boxed.strip():
        found.append((group[-1][0], group[0][0], Extraction(boxed, "boxed")))
    gsm = list(_GSM8K_RE.finditer(text))
    if gsm and gsm[-1].group(1).strip():
        span = gsm[-1].group(1)
        found.append((gsm[-1].start(), gsm[-1].start(), Extraction(refine_span(span) or span.strip(), "gsm8k")))
    for m in reversed(_final_phrases(text)):
        span = refine_span(_line_after(text, m.end()))
        if span:
            found.append((m.start(), m.start(), Extraction(span, "final_answer")))
            break
    return found


# What may stand between two final answers that are one statement (a hedge when they differ): spaces,
# `$`, brackets, punctuation and the words of an answer phrase ("So the final answer is"), no reasoning.
_BETWEEN_RIVALS_RE = re.compile(
    r"(?:[\s$.,;:*()\[\]\\=]|\b(?:so|thus|therefore|hence|the|final|answer|answers|is|are|i\.e|that|in|conclusion|"
    r"summary|we|get|have|it|its|this|gives|our|result|boxed)\b)*",
    re.IGNORECASE,
)


def _rivals(text: str, start: int, chosen: Extraction) -> tuple[str, ...]:
    r"""Final answers stated right before the chosen one (at `start`) that differ from it (red team M12).

    Walking back from the chosen answer, each earlier marker separated from the next only by an
    answer phrase (`_BETWEEN_RIVALS_RE`: "\boxed{3}. So the answer is \boxed{5}", "Final answer: 3",
    then "Final answer: 5") is one more final answer; a marker followed by reasoning is an
    intermediate result and ends the walk. Markers overlapping the current one ("Final Answer:
    \boxed{5}") are the same statement.
    """
    rivals: list[str] = []
    cur = start
    for a, b, found in reversed(_markers(text)):
        if a >= cur:
            continue  # the chosen answer itself, a box inside it, or a later part of its group
        if b > cur:
            continue  # overlaps the current statement ("Final Answer: \boxed{5}")
        if _BETWEEN_RIVALS_RE.fullmatch(text[b:cur]) is None:
            break
        if found.text != chosen.text and found.text not in rivals:
            rivals.append(found.text)
        cur = a
    return tuple(rivals)


def _hidden_answers(pieces: list[str]) -> tuple[str, ...]:
    """The answers marked in hidden pieces of a response (boxes, 'final answer', 'the answer is')."""
    out: list[str] = []
    for piece in pieces:
        piece = re.sub(r"<!--|-->|<[^>]*>", " ", piece)
        answers = [found.text for _, _, found in _markers(piece)]
        span = _last_marker(_ANSWER_RE, piece)
        out += [a for a in ([*answers, span] if span else answers) if a.strip() and a not in out]
    return tuple(out)


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
    text, pieces = split_visible(_after_reasoning(normalize_unicode(text)))
    found = _visible_answer(text, last_number_fallback=last_number_fallback)
    hidden = _hidden_answers(pieces) if pieces else ()
    if found is None or not hidden:
        return found
    return Extraction(found.text, found.source, found.rivals, hidden)


def _visible_answer(text: str, *, last_number_fallback: bool) -> Extraction | None:
    """`extract_answer` on text that holds only what a reader sees.

    The chosen answer's rivals are every other final-answer statement of the text that differs from it
    (`_statements`: boxes, '####', 'final answer', 'the answer is', 'Answer:', `<answer>` tags, a bold line,
    an "or"-alternative next to one of them): more than one final answer that disagree is a hedge (issue 20).
    """
    chosen = _choose(text, last_number_fallback=last_number_fallback)
    if chosen is None:
        return None
    found, start, end = chosen
    if found.source == "boxed" and _rejected_at(text, end):
        return None  # "\boxed{5} is not the answer": a retracted answer is none
    rivals = list(found.rivals)
    for a, b, answer in _statements(text):
        if start <= a and b <= end:
            continue  # part of the chosen statement (a box in it, one box of its group)
        if 0 <= b <= start and (_RETRACTION_RE.search(text, b, start) or _WORK_RE.search(text, b, start)):
            continue  # superseded: withdrawn ("However, ...") or followed by more work before the chosen answer
        if answer != found.text and answer not in rivals:
            rivals.append(answer)
    for m in _CORRECTION_RE.finditer(text, end):  # "\boxed{5}. Correction: it is 3." after the chosen answer
        value = _value_text(m.group(1))
        if value and value != found.text and value not in rivals:
            rivals.append(value)
    return Extraction(found.text, found.source, tuple(rivals)) if rivals else found


def _choose(text: str, *, last_number_fallback: bool) -> tuple[Extraction, int, int] | None:
    """The answer `extract_answer` reports and the span (start, end) of the statement that gives it."""
    for m in reversed(list(_TAG_RE.finditer(text))):
        inner = _visible_answer(m.group(1).strip(), last_number_fallback=True)
        if inner is not None and inner.text.strip():
            return Extraction(inner.text, "answer_tag", inner.rivals), m.start(), m.end()
    strong = _strong_candidates(text)
    if strong:
        _, start, chosen = max(strong, key=lambda c: c[0])
        rivals = _rivals(text, start, chosen)
        end = _statement_end(text, start, chosen)
        return (Extraction(chosen.text, chosen.source, rivals) if rivals else chosen), start, end
    for m in reversed(_answer_phrases(text)):
        span = refine_span(_line_after(text, m.end()))
        if span:
            return Extraction(span, "answer_is"), m.start(), _line_end(text, m.end())
    bolds = [(m, refine_span(m.group(1))) for m in _BOLD_RE.finditer(text) if re.search(r"\d", m.group(1))]
    bolds = [(m, span) for m, span in bolds if span]
    if bolds:
        return Extraction(bolds[-1][1], "bold"), bolds[-1][0].start(), bolds[-1][0].end()
    bare = text.strip().strip("$ ").strip()
    if re.fullmatch(r"\\(?:boxed|fbox)\s*\{\s*\}", bare):
        return None  # an empty box is no answer, not the formula `\boxed{}`
    if bare and "\n" not in bare and "$" not in bare and _is_formula(bare):
        return Extraction(_strip_delimiters(bare), "whole"), 0, len(text)
    if last_number_fallback:
        last = _last_math_or_number(text)
        if last:
            return Extraction(last, "last_number"), len(text), len(text)
    return None


def _statement_end(text: str, start: int, chosen: Extraction) -> int:
    """End of the strong statement starting at `start`: its box group, its '####' line or 'final answer' line."""
    if chosen.source == "boxed":
        group, _ = _trailing_group(text)
        return group[-1][1] if group else start
    return _line_end(text, start + 1)


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
_NESTED_MARKER_RE = re.compile(rf"{_FINAL_RE.pattern}|{_ANSWER_RE.pattern}", re.IGNORECASE)
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


def _has_words(text: str) -> bool:
    return any(w.lower() not in _LATEX_WORDS for w in _WORD_RE.findall(text))


def _nested(text: str, start: int, end: int) -> bool:
    """True when another answer marker directly follows the one at `start` (the inner one states the answer)."""
    first = _NESTED_MARKER_RE.match(text, start)
    if first is None:
        return False
    gap = _NESTED_GAP_RE.match(text, first.end())
    return _NESTED_MARKER_RE.match(text, gap.end() if gap else first.end(), end) is not None


def _value_text(value: str) -> str:
    inner = re.fullmatch(r"\\boxed\s*\{(.*)\}", value.strip())
    return _strip_delimiters(inner.group(1) if inner else value).strip()


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


def _statements(text: str) -> list[tuple[int, int, str]]:
    r"""Every final-answer statement of a response as (start, end, answer), and the alternatives offered beside one.

    Boxes (not those denied, "not \\boxed{3}", or retracted, "\\boxed{5} is wrong"), '####' (not a markdown
    heading), 'final answer', 'the answer is' / 'my answer is' / 'Answer:' (not denied: "not 5" is no statement),
    `<answer>` tags, a bold line that is only an answer. An alternative has the span (-1, -1): it is never part of
    another statement.
    """
    out = _marker_statements(text) + _phrase_statements(text)
    for m in _TAG_RE.finditer(text):
        inner = _visible_answer(m.group(1).strip(), last_number_fallback=True)
        if inner is not None and inner.text.strip():
            out.append((m.start(), m.end(), inner.text))
    return out + _bold_statements(text)


def _marker_statements(text: str) -> list[tuple[int, int, str]]:
    """`_statements` of the boxes, '####' lines and 'final answer' markers."""
    out: list[tuple[int, int, str]] = []
    for a, b, found in _markers(text):
        if found.source == "boxed" and (_negated_at(text, a) or _rejected_at(text, b)):
            continue
        if found.source == "gsm8k" and _HEADING_RE.match(text, a):
            continue
        if found.source == "final_answer" and _nested(text, a, b):
            continue  # "Final Answer: The final answer is 7": the inner marker states it
        out.append((a, b, found.text))
        stop = b if found.source == "boxed" else _answer_end(text, found.text, a, _line_end(text, a + 1))
        if stop >= 0:
            out += [(-1, -1, alt) for alt in _alternatives(text, found.text, a, stop)]
    return out


_CHECK_BEFORE_RE = re.compile(r"\b(?:check|verify|confirm|double-check)\w*\s+(?:our|my|the|this)?\s*$", re.IGNORECASE)


def _phrase_statements(text: str) -> list[tuple[int, int, str]]:
    """`_statements` of 'the answer is' / 'my answer is' / 'Answer:'."""
    out: list[tuple[int, int, str]] = []
    for m in _answer_phrases(text):
        if _CHECK_BEFORE_RE.search(text[max(0, m.start() - 30) : m.start()]):
            continue  # "We may check our answer: 17 * 44 = 748": a check, not a second answer (MATH-500)
        span = refine_span(_line_after(text, m.end()))
        end = _line_end(text, m.end())
        if re.fullmatch(r"(?:correct|right|wrong|incorrect|verified|confirmed)", span, re.IGNORECASE):
            continue  # "so our answer is correct": a judgement of the answer, not one
        if span and not _nested(text, m.start(), end):
            stop = _answer_end(text, span, m.end(), end)
            out.append((m.start(), end if stop < 0 else stop, span))
            if stop >= 0:
                out += [(-1, -1, alt) for alt in _alternatives(text, span, m.end(), stop)]
    return out


def _bold_statements(text: str) -> list[tuple[int, int, str]]:
    """`_statements` of bold lines that hold only an answer ("**3**", "**Answer: 3**"; not "**Step 1:**")."""
    out: list[tuple[int, int, str]] = []
    for m in _BOLD_LINE_RE.finditer(text):
        content = m.group(1)
        lead = _ANSWER_LEAD_RE.match(content)
        if lead and re.match(r"\s*(?:final\s+)?answer", content, re.IGNORECASE):
            span = refine_span(content[lead.end() :])
        elif re.search(r"\d", content) and not re.search(r"[:=]", content) and not _has_words(content):
            span = refine_span(content)
        else:
            continue
        if span:
            out.append((m.start(), m.end(), span))
    return out


# Reasoning blocks: `<think>` (R1, Qwen3), `<thinking>`, `<reasoning>`, `<scratchpad>`, `<reflection>`, `<thought>`,
# `<analysis>`, `<seed:think>` (ByteDance Seed), `<|begin_of_thought|>`...`<|end_of_thought|>` (Bespoke/OpenThoughts),
# `<|think|>`...`<|/think|>`, `[THINK]`...`[/THINK]` (Mistral Magistral), `◁think▷`...`◁/think▷` (Kimi), and
# gpt-oss harmony channels: `<|channel|>analysis<|message|>` (also `commentary`) opens reasoning,
# `<|channel|>final<|message|>` starts the answer (openai/harmony, "Channels").
_THINK_TAGS = r"think|thinking|reasoning|scratchpad|reflection|thought|analysis|seed:think"
_THINK_CLOSE_RE = re.compile(
    rf"</\s*(?:{_THINK_TAGS})\s*>|<\|end_of_thought\|>|<\|/think\|>|\[/THINK\]|◁/think▷"
    r"|<\|channel\|>\s*final\s*(?:<\|constrain\|>[^<]*)?<\|message\|>",
    re.IGNORECASE,
)
_THINK_OPEN_RE = re.compile(
    rf"<(?:{_THINK_TAGS})\s*>|<\|begin_of_thought\|>|<\|think\|>|\[THINK\]|◁think▷"
    r"|<\|channel\|>\s*(?:analysis|commentary)\b",
    re.IGNORECASE,
)


_FENCE_RE = re.compile(r"^[ \t]*```[^\n]*\n.*?^[ \t]*```", re.DOTALL | re.MULTILINE)


def final_part(text: str) -> str:
    r"""The part of a response an answer is read from: after the last closing reasoning marker.

    The whole text is searched (linear time), so a length limit applied afterwards can never cut
    a response's opening `<think>` away and turn its reasoning into its answer.
    """
    return _after_reasoning(text)


def _after_reasoning(text: str) -> str:
    r"""The text after the last `</think>`; an unclosed `<think>` is all reasoning (no answer after it).

    A trial `\boxed{5}` inside the reasoning block is never the answer: with a closing tag
    the answer comes from what follows the last one; text before an unclosed `<think>` (also one
    opened after the last closing tag) is kept.
    """
    if "<" not in text and "[" not in text and "◁" not in text:
        return text
    fences = [(m.start(), m.end()) for m in _FENCE_RE.finditer(text)] if "```" in text else []
    closes = [m for m in _THINK_CLOSE_RE.finditer(text) if not any(a <= m.start() < b for a, b in fences)]
    if closes:
        text = text[closes[-1].end() :]  # a block opened again after it and never closed is reasoning too
    opened = _THINK_OPEN_RE.search(text)
    return text[: opened.start()] if opened else text


def _strip_delimiters(s: str) -> str:
    r"""Drop one pair of surrounding `\[ \]`, `\( \)` or `$` delimiters."""
    s = s.strip()
    for left, right in (("\\[", "\\]"), ("\\(", "\\)"), ("$$", "$$"), ("$", "$")):
        if s.startswith(left) and s.endswith(right) and len(s) >= len(left) + len(right):
            return s[len(left) : len(s) - len(right)].strip()
    return s


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
    contents, betweens = _box_group(reference)
    if betweens and all(_is_alternative(b) for b in betweens):
        return Extraction(ALTERNATIVE_SEP.join(contents), "boxed alternatives")
    boxed = ",".join(contents)
    if boxed.strip():
        return Extraction(boxed, "boxed")
    gsm = _GSM8K_RE.findall(reference)
    if gsm and gsm[-1].strip():
        return Extraction(gsm[-1].strip(), "gsm8k")
    text = reference.strip()
    if len(text) > 300 and not _is_formula(text):
        found = extract_answer(text, last_number_fallback=True)
        if found is not None:
            return found
    return Extraction(text, "reference")
