r"""The answer expression in the text after a marker, and the fallback reading of a response's last number.

A marker's span ("The largest $n$ is 34.", "18 because 9 eggs sell for $2") is reduced by
`refine_span` to its first complete answer expression, cut at a clause boundary (`cut_clause`);
only a span that is a sentence falls back to its last math expression or number
(`last_math_or_number`: the "flexible-extract" filter of lm-evaluation-harness), which reads LaTeX
thousands groups (``32,\!348``, ``1{,}234``) as one number and skips a number that words deny,
retract or operate on ("not 5", "5? No.", "half of 5").
"""

from __future__ import annotations

import re

from rlvr.verifiers.math.boxes import find_boxed
from rlvr.verifiers.math.normalize import MAGNITUDE_WORDS, join_digit_groups
from rlvr.verifiers.math.words import (
    AFFIRM_AFTER_NEGATION_RE,
    APPROXIMATE_LEAD_RE,
    BELOW_ZERO_RE,
    NEGATED_LEAD_RE,
    REJECTED_AFTER_RE,
    negated_at,
    number_from_words,
    operand_at,
    rejected_at,
)

__all__: list[str] = []

# Where the answer after a marker ends: "18 because ...", "7, which ...", "7 (since 3 + 4 = 7)", "34. Then".
_CLAUSE = (
    r"\s+(?:because|since|which|where|but)\b|,\s*(?:which|since|because|so|where|as|but|not)\b|[.!?;]\s"
    r"|\s+(?:--?|[—–])\s+(?![-+]?[\d(.\\]|[a-z]\b|(?:sqrt|exp|log|ln|sin|cos|tan|pi|e)\b)|\s*\((?=[^()]*(?:(?<![\\a-zA-Z])[a-zA-Z]{2,}|=))"
    r"|[。！？；，]"  # full-width punctuation ends a Chinese clause without a space
)
_CLAUSE_RE = re.compile(_CLAUSE, re.IGNORECASE)
# Also "18 and the eggs cost $2": only where the part before it is a whole formula.
_FORMULA_END_RE = re.compile(_CLAUSE + r"|\s+and\s+(?=[A-Za-z]{2,}\b)", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.!?]\s+(?=[A-Z\[(])|[。！？]")
_INLINE_DELIM_RE = re.compile(r"\\[()]|(?<!\\)\$")
# Led by a lookahead on the first character of both branches: the same matches, scanned about 2x faster.
_NUMBER_RE = re.compile(
    r"(?=[-.\d])(?:(?<![A-Za-z_^])(?<!\^\{)-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
    rf"(?:\s*/\s*\d+|\s+(?i:{MAGNITUDE_WORDS})s?\b)?|-?\.\d+)"
)
_ENV_RE = re.compile(r"\\\[(.+?)\\\]|\\\((.+?)\\\)|\$\$(.+?)\$\$|\$([^$]+?)\$", re.DOTALL)
# A word: 2+ Latin letters, or a run of CJK characters (Chinese, Japanese kana, Hangul: no spaces between words).
_WORD_RE = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z']{2,}|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_LATEX_WORDS = frozenset({"frac", "sqrt", "text", "dfrac", "tfrac", "left", "right", "cdot", "infty", "circ", "times",
                          "quad", "mathrm", "mathbf", "textbf", "begin", "pmatrix", "bmatrix", "matrix", "array", "end",
                          "boxed", "pm", "sin", "cos", "tan", "log", "ln", "pi", "cup", "cap", "leq", "geq", "neq",
                          "approx", "mbox", "overline", "degree", "percent"})
_SENTENCE_WORDS = frozenset({"is", "are", "was", "the", "so", "thus", "therefore", "we", "answer", "of", "it", "it's",
                             "be", "has", "have", "get", "find", "not", "this", "that"})


_OPENS = ("\\[", "$$", "\\(")  # a math block that may run over several lines: \[ ... \], $$ ... $$, \( ... \)
_CLOSED_ON_LINE = re.compile(r"\\\]|\\\)|\$\$.*\$\$")
_BLOCK_RE = re.compile(r"\\\[.*?\\\]|\$\$.*?\$\$|\\\(.*?\\\)", re.DOTALL)


def line_after(text: str, pos: int) -> str:
    r"""The rest of the line from `pos`; the next non-empty line when that rest is empty.

    A math block opened there (`\[`, `$$` or `\(`) and not closed on its line continues to its close.
    """
    rest = text[pos:]
    lines = rest.split("\n")
    first = lines[0].strip(" *:")
    if first:
        if first.startswith(_OPENS) and not _CLOSED_ON_LINE.search(first):
            return _close_block(rest)
        return lines[0]
    for line in lines[1:6]:
        if line.strip(" *:"):
            if line.strip().startswith(_OPENS) and not _CLOSED_ON_LINE.search(line):
                return _close_block(rest)
            return line
    return ""


def _close_block(text: str) -> str:
    m = _BLOCK_RE.search(text)
    return m.group(0) if m else text.split("\n")[0]


def line_end(text: str, pos: int) -> int:
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


_CJK_LEAD_RE = re.compile(r"^\s*[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+\s*(?=[-\d.$\\(])")


def is_formula(span: str) -> bool:
    """True when `span` reads as one math answer, not a sentence (few plain words).

    Chinese words before the math (`计划的比例为13/28`, "the planned ratio is 13/28") make a sentence; after
    it they may be a measure word (`300分钟`).
    """
    if _CJK_LEAD_RE.match(span):
        return False
    plain = re.sub(r"\\text\{[^{}]*\}", "", span)
    words = [w.lower() for w in _WORD_RE.findall(plain) if w.lower() not in _LATEX_WORDS]
    words = [w for w in words if w not in ("and", "or")]
    return len(words) <= 1 and ":" not in plain and not _SENTENCE_WORDS.intersection(words) and len(span) <= 300


def has_words(text: str) -> bool:
    """True when `text` holds a word of 2+ letters that is no LaTeX command name."""
    return any(w.lower() not in _LATEX_WORDS for w in _WORD_RE.findall(text))


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
        found = _as_formula(clause) or last_math_or_number(clause)
    if found is None:
        sentence = _trim(cut_clause(span, _SENTENCE_END_RE))
        found = _as_formula(sentence) or last_math_or_number(sentence)
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
    bare = strip_delimiters(span.strip("$ "))
    if not is_formula(bare):
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


# A fraction, root or power written without math delimiters: one value (`\frac{2}{5}` is not 5, `\sqrt{2}` not 2).
_BARE_LATEX_RE = re.compile(
    r"(?=[-\d\\])(?:-\s*)?(?:\d+(?:\.\d+)?\s*)?(?:\\[dtc]?frac\s*\{[^{}]*\}\s*\{[^{}]*\}|\\sqrt\s*(?:\[[^\]]*\])?\s*\{[^{}]*\})"
    r"|(?:-\s*)?\d+(?:\.\d+)?\s*\^\s*(?:\{[^{}]*\}|\d)"
)


def last_math_or_number(text: str) -> str | None:
    """The last math environment, number or bare fraction, root or power, whichever ends later in `text`."""
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
    window = max(0, num_end - len(num_text) - 80)  # a fraction, root or power holding the last number starts near it
    for m in _BARE_LATEX_RE.finditer(text, window) if "\\" in text[window:] or "^" in text[window:] else ():
        if m.end() >= num_end:  # `\frac{2}{5}` outside `$`: the fraction, never its denominator 5
            num_end, num_text = m.end(), m.group(0)
    num_start = num_end - len(num_text)
    if num_end >= 0 and (negated_at(text, num_start) or rejected_at(text, num_end)
                         or operand_at(text, num_start, num_end)):
        num_end, num_text = -1, ""  # "it cannot be 5", "5? No.", "half of 5": the last number is no answer
    if env_end < 0 and num_end < 0:
        return None
    # A number inside the last environment ends before the environment's closing delimiter.
    return env_text if env_end >= num_end else num_text


def strip_delimiters(s: str) -> str:
    r"""Drop one pair of surrounding `\[ \]`, `\( \)` or `$` delimiters."""
    s = s.strip()
    for left, right in (("\\[", "\\]"), ("\\(", "\\)"), ("$$", "$$"), ("$", "$")):
        if s.startswith(left) and s.endswith(right) and len(s) >= len(left) + len(right):
            return s[len(left) : len(s) - len(right)].strip()
    return s
