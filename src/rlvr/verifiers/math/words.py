"""Words in and around an answer: number words, and words that deny, bound, retract or operate on a value.

`number_from_words`: English number words as digits ("five" -> 5, "twenty-one" -> 21, "two hundred and
six" -> 206); only an answer made entirely of number words is read (so "one of them" or "the second"
stays text); "negative"/"minus" or a leading `-` makes it negative; scales up to a trillion.
`negated_at`, `rejected_at`, `operand_at`: a value that words deny ("not 5", "不是5"), retract ("5 is
wrong", "5不对") or operate on ("half of 5", "5以上") is not the answer a sentence states.
"""

from __future__ import annotations

import re

__all__: list[str] = []

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_WORDS_RE = re.compile(r"[a-z]+")


def number_from_words(text: str) -> str | None:
    """The integer spelled by `text` as a digit string, or None when `text` is not only number words.

    Args:
        text: an extracted answer ("five", "Twenty-one.", "minus three", "two hundred and six").

    Returns:
        The decimal digits ("5", "21", "-3", "206"), or None.
    """
    s = re.sub(r"\\text\s*\{([^{}]*)\}", r"\1", text).strip().strip(".").strip().lower()
    if not s or len(s) > 120 or not re.fullmatch(r"[a-z\s-]+", s):
        return None
    sign = 1
    if s.startswith("-"):  # `-three`, `-\text{nineteen}`: the sign is kept (red team M9)
        sign, s = -1, s[1:].strip()
    words = [w for w in _WORDS_RE.findall(s) if w != "and"]
    if words and words[0] in ("negative", "minus"):
        sign, words = -sign, words[1:]
    if not words:
        return None
    total, current, seen = 0, 0, False
    for word in words:
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
        seen = True
    return str(sign * (total + current)) if seen else None


# Words before an answer that deny or bound it ("not 5", "at least 5", "less than 5", "cannot be 5"): the value
# after them is not the answer. "not 3 but 5" names 5 (`AFFIRM_AFTER_NEGATION_RE`).
_NEGATION = (
    r"(?:\bnot|\bnever|\bcannot|\bcan'?t|n't|\bno\b|\bnor|\bneither|\bhardly|\bless\s+than|\bfewer\s+than"
    r"|\bmore\s+than|\bgreater\s+than|\blarger\s+than|\bbigger\s+than|\bsmaller\s+than|\bhigher\s+than|\blower\s+than"
    r"|\bat\s+(?:least|most)|\bup\s+to|\bother\s+than|\bexcept|\bbesides|\brather\s+than|\binstead\s+of|\bbelow"
    r"|\babove|\bunder|\bover|\bexceeds?|\bexceeding|\bbeyond|\bnearly|\balmost|\bunequal\s+to|\\neq?\b|\\[lg]eq?\b"
    r"|\\[lg]t\b|\\nless|\\ngtr|≠|≤|≥"
    # Chinese: "not", "not equal to", "less / lower than", "more / greater than", "at least / most", "except"
    r"|不是|不为|不等于|并非|而非|绝非|不会是|不可能是|不到|不足|少于|小于|低于|多于|大于|高于|超过|不止|至少|至多|最多|最少|除了)"
)
_FILLER = r"(?:\s+(?:equal\s+to|exactly|quite|be|definitely|necessarily|really|simply|just|even|the\s+number|to|as))*"
NEGATED_LEAD_RE = re.compile(rf"\s*(?:(?:definitely|certainly|surely|clearly|unknown,?)\s+)?{_NEGATION}{_FILLER}\s*",
                             re.IGNORECASE)
# Searched in the 40 characters before a candidate answer: the lookahead (the first character of every branch of
# `_NEGATION`) gives the same matches about 3x faster than trying each branch at every position.
_NEGATED_BEFORE_RE = re.compile(
    rf"(?=[nchlfmgbsauoeri\\≠≤≥不并而绝少小低多大高超至最除]){_NEGATION}{_FILLER}[\s$(\[{{]*$", re.IGNORECASE
)
AFFIRM_AFTER_NEGATION_RE = re.compile(r"\b(?:but|rather|instead|it\s+is|it's|it\s+equals)\b\s*(?:it\s+is\s+)?",
                                      re.IGNORECASE)
# After an answer: a retraction ("\boxed{5} is wrong", "5? No.", "5 is not the answer").
REJECTED_AFTER_RE = re.compile(
    r"[\s$)}\]]*(?:\?\s*(?:no|nope|wrong)\b|(?:is|was|would\s+be)\s+(?:wrong|incorrect|false|a\s+mistake|not\s+(?:the\s+"
    r"(?:right\s+|correct\s+|final\s+)?answer|right|correct))"
    # a judgement in brackets or a retraction after it: "5 (wrong)", "5 (not really)", "5 -- just kidding", "5, not!"
    r"|\(\s*(?:wrong|incorrect|false|not\s+really|not|just\s+kidding|kidding)\s*[.!]?\s*\)"
    r"|\W{0,4}\s*(?:just\s+)?kidding\b|[\s,.…]*\bnot\s*[!.]*(?=\s*(?:\n|$))"
    # Chinese: "is wrong", "not right", "incorrect"
    r"|[\s,，。、]*(?:是?错的|错了|不对|不正确|是错误的|有误))",
    re.IGNORECASE,
)
# Words that make a number in a sentence an operand, not the value stated ("half of 5", "the square of 5",
# "5 less than x", "5 times the radius"): the answer the sentence names is another number (red team).
_OPERATED_BEFORE_RE = re.compile(
    r"(?:\b(?:half|twice|double|triple|thrice)(?:\s+of)?|\b(?:square|cube|root|reciprocal|inverse|negative|opposite"
    r"|logarithm|log|factorial|exponential|sine|cosine|tangent|power|multiple|fraction|percentage|sum|product"
    r"|difference|quotient|remainder)\s+of(?:\s+the\s+number)?|比)[\s$(\[{]*$",  # 比: "than" (`比300多5`)
    re.IGNORECASE,
)
_OPERATED_AFTER_RE = re.compile(
    r"[\s$)}\]]*(?:(?:less|more|fewer|greater|smaller|larger|bigger|higher|lower)\s+than\b|times\s+(?!as\b)(?=[a-z\d(\\$])"
    r"|(?:plus|minus|divided\s+by|multiplied\s+by|to\s+the\s+power|raised\s+to|squared|cubed|factorial|percent\s+of)\b"
    # Chinese: "and above / below / within", "-odd", "not quite", "plus / minus / times / divided by", "half of", ...
    r"|以上|以下|以内|以外|多|余|不到|出头|开外|加(?!仑)|[减乘除]|的(?:一半|两倍|\d+倍|平方|立方|倒数|相反数|平方根))",
    re.IGNORECASE,
)
# Words that hedge a value without denying it: "approximately 5" reads as 5.
APPROXIMATE_LEAD_RE = re.compile(
    r"\s*(?:(?:approximately|approx\.?|about|around|roughly)\s+|(?:\\approx|\\sim|\\simeq)(?![a-zA-Z])\s*|≈\s*|约为?|大约)"
    r"(?=[-+$\\\d.])", re.IGNORECASE
)
BELOW_ZERO_RE = re.compile(
    r"\s*([+]?\d+(?:\.\d+)?)\s*(?:°|\^\s*\{?\\circ\}?|degrees?)?\s*(?:[CFK]\b|celsius|fahrenheit|kelvin)?\s*below\s+zero\b",
    re.IGNORECASE,
)


def negated_at(text: str, pos: int) -> bool:
    """True when the words just before `pos` (same line) deny or bound what follows ("not", "at least")."""
    line_start = text.rfind("\n", 0, pos) + 1
    return _NEGATED_BEFORE_RE.search(text[max(line_start, pos - 40) : pos]) is not None


def rejected_at(text: str, end: int) -> bool:
    """True when the words just after `end` retract the answer before it ("is wrong", "? No")."""
    return REJECTED_AFTER_RE.match(text, end) is not None


def operand_at(text: str, start: int, end: int) -> bool:
    """True when words around `text[start:end]` make it an operand ("half of 5", "5 less than x"; red team)."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 40) : start]
    return bool(_OPERATED_BEFORE_RE.search(before) or _OPERATED_AFTER_RE.match(text, end))
