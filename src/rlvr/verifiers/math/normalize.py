r"""String normalisation of an extracted answer, before parsing.

Most rules come from the MATH answer normaliser (hendrycks/math ``math_equivalence.py``:
``\left``/``\right``, ``\dfrac``, units in ``\text{}``, degree signs, trailing periods) and from
Minerva's ``normalize_final_answer`` (Lewkowycz et al. 2022, appendix D: units words, ``\$``,
thousands separators, "x =" prefixes, handled here and in `compare`). Percent signs and units are
recorded as flags so `compare` can apply `MathConfig.percent` / `MathConfig.units` explicitly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Normalized", "join_digit_groups", "normalize_answer", "split_top_level"]


@dataclass(frozen=True)
class Normalized:
    """A normalised answer string and what was stripped from it."""

    text: str
    percent: bool = False
    unit: str = ""


_SPACING_RE = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big|displaystyle|textstyle)(?![a-zA-Z])|\\[!,;:]")
_QUAD_RE = re.compile(r"\\q?quad|~|(?<!\\)\\ ")
_FRAC_RE = re.compile(r"\\[dtc]frac(?![a-zA-Z])")
_TEXTCMD_RE = re.compile(
    r"\\(?:textbf|textit|textrm|textnormal|textsf|texttt|mathrm|mathbf|mathit|mathsf|mbox|operatorname|text)\s*\{"
)
_DEGREE_RE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\circ(?![a-zA-Z])|\\degree(?![a-zA-Z])")
_PERCENT_RE = re.compile(
    r"\s*(?:\\%|%|\\text\{\s*(?:percent|percentage|pct)\s*\}|\b(?:percent(?:age)?|pct)\b)\s*$", re.IGNORECASE
)
_CURRENCY_RE = re.compile(r"\\\$|\$|€|£|¥|\\euro\b|\\pounds\b|\bUSD\b|\bRs\.?|₹")
_THOUSANDS_RE = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_THOUSANDS_SPACE_RE = re.compile(r"^-?\d{1,3}(?: \d{3})+(?:\.\d+)?$")
_REL_REPLACEMENTS = (
    (re.compile(r"\\(?:leqslant|leq|le)(?![a-zA-Z])|≤|<="), r"\\leq "),
    (re.compile(r"\\(?:geqslant|geq|ge)(?![a-zA-Z])|≥|>="), r"\\geq "),
    (re.compile(r"\\(?:neq|ne)(?![a-zA-Z])|≠|!="), r"\\neq "),
    (re.compile(r"\\lt(?![a-zA-Z])"), "<"),
    (re.compile(r"\\gt(?![a-zA-Z])"), ">"),
    (re.compile(r"\\infinity|(?<![\\a-zA-Z])infinity|∞"), r"\\infty "),
    (re.compile(r"\\mathrm\{e\}|\\text\{e\}"), "e"),
    (re.compile(r"\\(?:dots|ldots|cdots)(?![a-zA-Z])"), r"\\ldots "),
    (re.compile(r"√"), r"\\sqrt"),
    (re.compile(r"±"), r"\\pm "),
    (re.compile(r"∓"), r"\\mp "),
    (re.compile(r"π"), r"\\pi "),
    (re.compile(r"×|\\times(?![a-zA-Z])"), r"\\cdot "),
    (re.compile(r"\\(?:varnothing|O)(?![a-zA-Z])|∅|\\\{\s*\\\}"), r"\\emptyset "),
)
# A zero term added to a matrix (`\begin{pmatrix}..\end{pmatrix} + 0`): sympy cannot add a scalar to a matrix.
_MATRIX_ZERO_RE = re.compile(r"(?<=matrix\})\s*[+-]\s*0(?![\d.])\s*$|^\s*0\s*\+\s*(?=\\begin\{[a-zA-Z]*matrix\})")
_CONNECTIVE_RE = re.compile(
    r"\s*(?:\\text\{\s*(?:and|or|,)\s*\}|(?<![a-zA-Z\\])(?:and|or)(?![a-zA-Z]))\s*", re.IGNORECASE
)
# Unit words after a number (Minerva's `normalize_final_answer` list, abridged, and common model outputs).
# Single letters (m, g, s, ...) are units only inside `\text{}`: a bare `5 x`, `2 n`, `5 i` keeps its variable.
_UNIT_WORDS = (
    "square units|sq units|units?|cubic|square|sq|"
    "dollars?|cents?|yuan|euros?|rupees?|pounds?|"
    "degrees?|radians?|"
    "km|cm|mm|meters?|metres?|kilometers?|centimeters?|millimeters?|inches|inch|in|feet|foot|ft|yards?|miles?|mi|"
    "kg|grams?|kilograms?|mg|lbs?|ounces?|oz|tons?|"
    "liters?|litres?|ml|gallons?|gal|"
    "hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|months?|years?|yrs?|"
    "mph|km/h|kmh|m/s|"
    "people|persons?|students?|apples?|eggs?|pages?|points?|ways?|times|items?|pieces?|boxes|books?|cookies?|"
    "marbles?|balls?|cars?|trees?|bags?|cups?|steps?|hats?|pairs?|sides?|edges?|vertices|faces?|"
    "numbers?|integers?|digits?|terms?|solutions?|values?|cases?|questions?|problems?|games?|rounds?|"
    "men|women|children|kids|boys|girls|members|workers|friends|animals|dogs|cats|birds|chickens|cows"
)
_SHORT_UNITS = "m|g|l|h|s|L"
_POWER = r"(?:\s*\^\s*\{?\d\}?|[²³])?"
# A bare unit word after a number; a `\text{unit}` after any expression (`4\pi \text{ cm}^2`).
_UNIT_SUFFIX_RE = re.compile(
    rf"(?:(?<=[\d}}).])\s*(?:{_UNIT_WORDS})\b|(?<=\S)\s*\\text\{{\s*(?:{_UNIT_WORDS}|{_SHORT_UNITS})\s*\}})"
    rf"{_POWER}\s*(?:\.|$)",
    re.IGNORECASE,
)
# "12 tomatoes": a number and only words, each of 3+ letters or a unit word (never a variable like `5 x`, `2 n`).
_NUMBER_WORDS_RE = re.compile(
    rf"^(-?\d+(?:[.,]\d+)*)\s+((?:(?:[A-Za-z][A-Za-z'-]{{2,}}|{_UNIT_WORDS})(?:\s+|$))+)$", re.IGNORECASE
)
# A trailing condition: "... \text{ for } k \in \mathbb{Z}", "..., where k is an integer".
_CONDITION_RE = re.compile(
    r"\s*,?\s*(?:\\text\{\s*(?:for|where|with)\b[^{}]*\}|\b(?:for all|for any|for some|where)\b).*$"
)
_TRAILING_TEXT_RE = re.compile(r"(?<=[\d}).])\s*\\text\{[^{}]*\}(?:\s*\^\s*\{?\d\}?|[²³])?\s*$")


_DIGIT_GROUP_RE = re.compile(r"(?<=\d)\s*(?:,\\!|\{\s*,\s*\}|\\[,!;]|\\thinspace\s*)\s*(?=\d{3}(?!\d))")


def join_digit_groups(s: str) -> str:
    r"""Join LaTeX thousands groups: `32,\!348`, `1{,}234`, `1\,234` -> `32348`, `1234`, `1234`."""
    return _DIGIT_GROUP_RE.sub("", s)


def _unwrap_text_commands(s: str) -> str:
    r"""Rewrite `\mathrm{..}`, `\textbf{..}`, `\mbox{..}` ... to `\text{..}` with balanced braces."""
    if "\\" not in s:
        return s
    return _TEXTCMD_RE.sub(r"\\text{", s)


def _strip_outer_text(s: str) -> str:
    r"""`\text{(B)}` -> `(B)`: drop a `\text{}` wrapping the whole answer."""
    m = re.fullmatch(r"\\text\{(.*)\}", s, re.DOTALL)
    if m and "}" not in m.group(1).replace("\\}", ""):
        return m.group(1).strip()
    return s


def _strip_units(s: str) -> tuple[str, str]:
    r"""Remove a trailing unit (`\text{ cm}^2`, `meters`, `dollars`) after a number; return (text, unit)."""
    unit = ""
    for _ in range(2):
        m = _UNIT_SUFFIX_RE.search(s) or _TRAILING_TEXT_RE.search(s)
        if not m or m.start() == 0:
            break
        unit = (m.group(0).strip() + " " + unit).strip()
        s = s[: m.start()].rstrip()
    return s, unit


def _fix_numbers(s: str) -> str:
    r"""Thousands separators (`7,425,000`, `1 000`, `11,\!111`) and leading-dot decimals (`.4`)."""
    if _THOUSANDS_SPACE_RE.match(s) or _THOUSANDS_RE.fullmatch(s):
        s = s.replace(" ", "").replace(",", "")
    return re.sub(r"(?<![\d}])\.(?=\d)", "0.", s)


def normalize_answer(raw: str, *, strip_units: bool = True) -> Normalized:
    """Normalise one answer string.

    Args:
        raw: the extracted answer (LaTeX or plain text).
        strip_units: drop trailing units and degree signs (`MathConfig.units == "strip"`).

    Returns:
        The Normalized answer: canonical text (single spaces, no surrounding `$`), with the
        percent sign and unit removed and recorded.
    """
    s = raw.strip()
    if "matrix" not in s and "array" not in s:
        s = re.sub(r"\\\\(?=[a-zA-Z])", r"\\", s)  # doubly escaped commands (`\\frac`)
    s = join_digit_groups(s)  # `11,\!111`, `14{,}916`, `1\,234`
    s = _SPACING_RE.sub("", s)
    s = _QUAD_RE.sub(" ", s)
    s = _FRAC_RE.sub(r"\\frac", s)
    s = _unwrap_text_commands(s)
    s = _CURRENCY_RE.sub("", s)
    for pattern, repl in _REL_REPLACEMENTS:
        s = pattern.sub(repl, s)
    s = re.sub(r"\s+", " ", s).strip()
    s = _MATRIX_ZERO_RE.sub("", s)
    s = _CONDITION_RE.sub("", s).strip()
    s = re.sub(r"^\\text\{\s*\}|\\text\{\s*\}$", "", s).strip()
    s = re.sub(r"(?:\s*\\text\{\.?\}|[.,;:。])+$", "", s).strip()
    percent = False
    m = _PERCENT_RE.search(s)
    if m and m.start() > 0:
        percent, s = True, s[: m.start()].strip()
    unit = ""
    if strip_units:
        if _DEGREE_RE.search(s):
            s, unit = _DEGREE_RE.sub("", s).strip(), "degree"
        s, found = _strip_units(s)
        unit = unit or found
    s = _CONNECTIVE_RE.sub(",", s).strip(", ")
    if strip_units:
        m = _NUMBER_WORDS_RE.match(s)
        if m:  # "12 tomatoes", "20 workers": a number followed only by words
            s, unit = m.group(1), (unit or m.group(2))
    s = _strip_outer_text(s)
    s = _fix_numbers(s)
    s = re.sub(r"\s+", " ", s).strip()
    return Normalized(s, percent, unit)


_OPEN = "([{"
_CLOSE = ")]}"


def split_top_level(s: str, seps: str = ",;") -> list[str]:
    r"""Split `s` on separators not nested inside (), [], {} or a `\begin..\end` block.

    Escaped braces (`\{`) count as brackets; `\\` row separators are left alone.
    """
    parts: list[str] = []
    depth = 0
    env = 0
    start = 0
    i = 0
    while i < len(s):
        if s.startswith("\\begin", i):
            env += 1
        elif s.startswith("\\end", i):
            env -= 1
        ch = s[i]
        if ch == "\\" and i + 1 < len(s) and s[i + 1] in "{}":
            depth += 1 if s[i + 1] == "{" else -1
            i += 2
            continue
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch in seps and depth == 0 and env == 0:
            parts.append(s[start:i])
            start = i + 1
        i += 1
    parts.append(s[start:])
    return [p.strip() for p in parts]
