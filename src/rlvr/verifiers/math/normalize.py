r"""String normalisation of an extracted answer, before parsing.

Most rules come from the MATH answer normaliser (hendrycks/math ``math_equivalence.py``:
``\left``/``\right``, ``\dfrac``, units in ``\text{}``, degree signs, trailing periods) and from
Minerva's ``normalize_final_answer`` (Lewkowycz et al. 2022, appendix D: units words, ``\$``,
thousands separators, "x =" prefixes, handled here and in `equivalence`). Percent signs and units are
recorded as flags so `equivalence` can apply `MathConfig.percent` / `MathConfig.units` explicitly.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction

from rlvr.verifiers.math.cjk import CJK_UNIT_KEYS
from rlvr.verifiers.math.cjk import magnitude as cjk_magnitude
from rlvr.verifiers.math.cjk import quantity as cjk_quantity
from rlvr.verifiers.math.words import APPROXIMATE_LEAD_RE, number_from_words

__all__: list[str] = []


@dataclass(frozen=True)
class Normalized:
    """A normalised answer string and what was stripped from it."""

    text: str
    percent: bool = False
    unit: str = ""


_SPACING_RE = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big|displaystyle|textstyle)(?![a-zA-Z])|\\[!,;:]")
_QUAD_RE = re.compile(r"\\q?quad|~|(?<!\\)\\ ")
_ONE_CHARACTER_GROUP_RE = re.compile(r"(?<!\\)([_^])\{\s*([A-Za-z0-9])\s*\}")
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
_THOUSANDS_UNDERSCORE_RE = re.compile(r"-?\d{1,3}(?:_\d{3})+(?:\.\d+)?")
_THOUSANDS_SPACE_RE = re.compile(r"^-?\d{1,3}(?: \d{3})+(?:\.\d+)?$")
_REL_REPLACEMENTS = (
    # `\not` negates the relation after it (red team): `x \not= 5` is `x \neq 5`, `x \not\in A` is `x \notin A`
    (re.compile(r"\\(?:not|centernot)\s*(?:=|\{\s*=\s*\})"), r"\\neq "),
    (re.compile(r"\\(?:not|centernot)\s*\\in(?![a-zA-Z])"), r"\\notin "),
    (re.compile(r"\\(?:leqslant|leq|le)(?![a-zA-Z])|≤|<="), r"\\leq "),
    (re.compile(r"\\(?:geqslant|geq|ge)(?![a-zA-Z])|≥|>="), r"\\geq "),
    (re.compile(r"\\(?:neq|ne)(?![a-zA-Z])|≠|!="), r"\\neq "),
    (re.compile(r"\\lt(?![a-zA-Z])"), "<"),
    (re.compile(r"\\gt(?![a-zA-Z])"), ">"),
    (re.compile(r"\\infinity|(?<![\\a-zA-Z])(?:infinity|oo)(?![a-zA-Z])|∞"), r"\\infty "),  # `oo`: sympy's name
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
# "and"/"or" between answers; also glued to a value and the next label (`x=2orx=-2`, `a=1andb=2`).
_CONNECTIVE_RE = re.compile(
    r"\s*(?:\\text\{\s*(?:and|or|,)\s*\}|(?<![a-zA-Z\\])(?:and|or)(?![a-zA-Z])"
    r"|(?<=[\d)}\]])(?:and|or)(?=[a-zA-Z](?:_\{?\w+\}?)?(?:\([^()=]{1,20}\))?\s*=))\s*",
    re.IGNORECASE,
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
# A counted thing ("12 tomatoes"): a lower-case plural noun that is no operator word. Magnitude words
# (`thousands`, `hundredths`) multiply before units are stripped; other words (`squared`, `Friday`) stay.
_PLURAL_NOUN = r"(?-i:(?!(?:plus|minus|less|thus|was|does|has|is)\b)[a-z]{2,}s)"
_POWER = r"(?:\s*\^\s*\{?\d\}?|[²³])?"
# A bare unit word after a number; a `\text{unit}` after any expression (`4\pi \text{ cm}^2`).
_UNIT_SUFFIX_RE = re.compile(
    rf"(?:(?<=[\d}}).])\s*(?:{_UNIT_WORDS})\b|(?<=\S)\s*\\text\{{\s*(?:{_UNIT_WORDS}|{_SHORT_UNITS})\s*\}})"
    rf"{_POWER}\s*(?:\.|$)",
    re.IGNORECASE,
)
# "12 tomatoes": a number and only words, each of 3+ letters or a unit word (never a variable like `5 x`, `2 n`).
_NUMBER_WORDS_RE = re.compile(
    rf"^(-?\d+(?:[.,]\d+)*)\s+((?:(?:{_UNIT_WORDS}|{_PLURAL_NOUN})(?:\s+|$))+)$", re.IGNORECASE
)
# A trailing condition: "... \text{ for } k \in \mathbb{Z}", "..., where k is an integer".
_CONDITION_RE = re.compile(
    r"\s*,?\s*(?:\\text\{\s*(?:for|where|with)\b[^{}]*\}|\b(?:for all|for any|for some|where)\b).*$"
)
_TRAILING_TEXT_RE = re.compile(
    rf"(?<=[\d}}).])\s*\\text\{{\s*(?:(?:{_UNIT_WORDS}|{_PLURAL_NOUN})\s*)+\}}(?:\s*\^\s*\{{?\d\}}?|[²³])?\s*$",
    re.IGNORECASE,
)


_DIGIT_GROUP_RE = re.compile(r"(?<=\d)\s*(?:,\\!|\{\s*,\s*\}|\\[,!;]|\\thinspace\s*)\s*(?=\d{3}(?!\d))")


def join_digit_groups(s: str) -> str:
    r"""Join LaTeX thousands groups: `32,\!348`, `1{,}234`, `1\,234` -> `32348`, `1234`, `1234`."""
    return _DIGIT_GROUP_RE.sub("", s)


# Dashes that stand for a minus sign: U+2212 MINUS SIGN always; U+2010/2011 hyphens, U+2012 FIGURE DASH,
# U+2013 EN DASH, U+02D7, U+2043, U+2796, U+208B, U+FE63, U+FF0D right before a number; U+207B (superscript
# minus) before a plain digit when it follows no base (`⁻3`, not `10⁻³`) (red team M14).
_MINUS_RE = re.compile(
    r"\u2212|[\u2010\u2011\u2012\u2013\u02d7\u2043\u2796\u208b\ufe63\uff0d](?=\s?[\d.])|(?<![\w)}\]])\u207b(?=[\d.])"
)
_SUPERSCRIPTS = {"⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8", "⁹": "9",
                 "⁻": "-", "⁺": "+", "ⁿ": "n"}
_FULL_WIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
_SUPERSCRIPT_RE = re.compile("[" + "".join(_SUPERSCRIPTS) + "]+")
_VULGAR = {"½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅖": (2, 5), "⅗": (3, 5),
           "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅐": (1, 7), "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8), "⅞": (7, 8),
           "⅑": (1, 9), "⅒": (1, 10)}
_VULGAR_RE = re.compile(r"(\d*)\s*([" + "".join(_VULGAR) + "])")


def normalize_unicode(s: str) -> str:
    r"""Unicode math as LaTeX.

    Minus signs (U+2212; U+2010-2013, U+02D7, U+2043, U+2796, U+208B, U+207B before a number) -> `-`;
    superscripts `x²`, `10⁻³` -> `x^{2}`, `10^{-3}`; vulgar fractions `½`, `2¾` -> `\frac{1}{2}`, `(2+\frac{3}{4})`;
    full-width digits `３００` -> `300`.
    """
    if s.isascii():
        return s
    s = _MINUS_RE.sub("-", s).translate(_FULL_WIDTH_DIGITS)
    s = _SUPERSCRIPT_RE.sub(lambda m: "^{" + "".join(_SUPERSCRIPTS[c] for c in m.group(0)) + "}", s)

    def vulgar(m: re.Match[str]) -> str:
        num, den = _VULGAR[m.group(2)]
        frac = f"\\frac{{{num}}}{{{den}}}"
        return f"({m.group(1)}+{frac})" if m.group(1) else frac

    return _VULGAR_RE.sub(vulgar, s)


# Repeating decimals: `0.\overline{3}`, `0.1\overline{6}`, `0.\dot{3}`, `1.\overline{142857}`.
_REPEATING_RE = re.compile(r"(-?)(\d*)\.(\d*)\\(?:overline|dot)\s*\{?\s*(\d+)\s*\}?")


def _repeating_decimals(s: str) -> str:
    r"""`0.1\overline{6}` -> `\frac{1}{6}` (exact): the repeating block's value is block / (10^k - 1)."""
    if "\\overline" not in s and "\\dot" not in s:
        return s

    def exact(m: re.Match[str]) -> str:
        sign, whole, fixed, block = m.group(1), m.group(2) or "0", m.group(3), m.group(4)
        value = Fraction(int(whole)) + (Fraction(int(fixed), 10 ** len(fixed)) if fixed else 0)
        value += Fraction(int(block), (10 ** len(block) - 1) * 10 ** len(fixed))
        return f"{sign}\\frac{{{value.numerator}}}{{{value.denominator}}}"

    return _REPEATING_RE.sub(exact, s)


# Magnitude words multiply ("3 million", "2.5 Billion", "3 millions", "2 dozen", `3\text{ lakh}`), any case,
# plural or not (red team M8: a magnitude word is never dropped as a unit); `k`/`K` only right after a number.
_MAGNITUDES: dict[str, Fraction] = {
    "hundred": Fraction(10**2), "thousand": Fraction(10**3), "million": Fraction(10**6), "billion": Fraction(10**9),
    "trillion": Fraction(10**12), "quadrillion": Fraction(10**15), "quintillion": Fraction(10**18),
    "lakh": Fraction(10**5), "lac": Fraction(10**5), "crore": Fraction(10**7), "dozen": Fraction(12),
    "ten": Fraction(10),
    "bn": Fraction(10**9), "mln": Fraction(10**6), "mil": Fraction(10**6), "mn": Fraction(10**6),
    "tenth": Fraction(1, 10), "hundredth": Fraction(1, 100), "thousandth": Fraction(1, 1000),
    "millionth": Fraction(1, 10**6), "billionth": Fraction(1, 10**9),
    "half": Fraction(1, 2), "halve": Fraction(1, 2), "third": Fraction(1, 3), "quarter": Fraction(1, 4),
    # plural only (red team): `5 sixths` is 5/6, while `5 sixth graders` keeps its 5
    "fourths": Fraction(1, 4), "fifths": Fraction(1, 5), "sixths": Fraction(1, 6), "sevenths": Fraction(1, 7),
    "eighths": Fraction(1, 8), "ninths": Fraction(1, 9),
    "k": Fraction(10**3),
}
MAGNITUDE_WORDS = "|".join(sorted((w for w in _MAGNITUDES if w != "k"), key=len, reverse=True))
_MAGNITUDE_WORD = rf"(?:{MAGNITUDE_WORDS})s?"
_MAGNITUDE_RE = re.compile(
    rf"^(-?\d+(?:\.\d+)?)\s*(?:\\text\{{\s*)?({_MAGNITUDE_WORD}|k|K)\s*\}}?(?![A-Za-z])(.*)$", re.IGNORECASE
)
_MAGNITUDE_AFTER_RE = re.compile(
    rf"^(.+?)\s*(?:\\text\{{\s*({_MAGNITUDE_WORD})\s*\}}|\s({_MAGNITUDE_WORD}))\s*$", re.IGNORECASE
)


def _magnitude(word: str) -> Fraction:
    """The factor of a magnitude word (`Millions` -> 10^6, `hundredths` -> 1/100)."""
    key = word.lower()
    return _MAGNITUDES[key] if key in _MAGNITUDES else _MAGNITUDES[key[:-1]]


def _fraction_latex(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _apply_magnitude(s: str) -> str:
    r"""`2.5 million` -> `2500000`; `1.5\text{k}` -> `1500`; what follows (a unit word) is kept.

    A magnitude word after any expression multiplies it: `\frac{11}{36}\text{ million}` ->
    `(\frac{11}{36})\cdot 1000000`.
    """
    m = _MAGNITUDE_RE.match(s)
    if m is None:
        after = _MAGNITUDE_AFTER_RE.match(s)
        if after is not None:
            word = after.group(2) or after.group(3)
            return f"({after.group(1).strip()})\\cdot {_fraction_latex(_magnitude(word))}"
        return s
    value = Fraction(m.group(1)) * _magnitude(m.group(2))
    return (_fraction_latex(value) + m.group(3)).strip()


# `\text{i}` / `\mathrm{i}` is the imaginary unit; `\text{x}` (one letter, not a unit) the variable x.
_TEXT_LETTER_RE = re.compile(r"\\text\s*\{\s*([a-zA-Z])\s*\}")
_SINGLE_LETTER_UNITS = frozenset("mglhsL")


def _text_letters(s: str) -> str:
    r"""`3\text{i}` -> `3i`, `3\text{x}` -> `3x`; one-letter units (`\text{m}`, `\text{g}`) stay text."""
    return _TEXT_LETTER_RE.sub(lambda m: m.group(0) if m.group(1) in _SINGLE_LETTER_UNITS else m.group(1), s)


def _unwrap_text_commands(s: str) -> str:
    r"""Rewrite `\mathrm{..}`, `\textbf{..}`, `\mbox{..}` ... to `\text{..}` with balanced braces."""
    if "\\" not in s:
        return s
    return _TEXTCMD_RE.sub(r"\\text{", s)


def _strip_grouping(s: str) -> str:
    r"""`{2,5}` -> `2,5`: braces around the whole answer are LaTeX grouping (shown as nothing), not a set `\{2,5\}`."""
    while len(s) > 2 and s[0] == "{" and s[-1] == "}" and _closes_at_end(s):
        s = s[1:-1].strip()
    return s


def _closes_at_end(s: str) -> bool:
    """True when the brace opening `s` closes at its last character."""
    depth = 0
    for i, ch in enumerate(s):
        depth += 1 if ch == "{" else -1 if ch == "}" else 0
        if depth == 0:
            return i == len(s) - 1
    return False


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


# Measurement units by what they measure (red team): two answers that state different ones state different
# quantities (`5 \text{ cm}` is not `5 \text{ m}`, `30^\circ` is not `30` radians). Counted things, `units`
# and words of two readings (`pounds`: money or mass) have no key and are never compared.
_UNIT_NAMES = {
    "mm": "millimeters? millimetres?", "cm": "centimeters? centimetres?", "m": "meters? metres?",
    "km": "kilometers? kilometres?", "in": "inch inches", "ft": "foot feet", "yd": "yards?", "mi": "miles?",
    "mg": "milligrams?", "g": "grams?", "kg": "kilograms?", "lb": "lbs?", "oz": "ounces?", "ton": "tons?",
    "ml": "milliliters? millilitres?", "l": "liters? litres?", "gal": "gallons?",
    "s": "secs? seconds?", "min": "mins? minutes?", "h": "hours? hrs?", "day": "days?", "week": "weeks?",
    "month": "months?", "year": "years? yrs?", "mph": "", "km/h": "kmh", "m/s": "",
    "degree": "degrees?", "radian": "radians? rad", "dollar": "dollars?", "cent": "cents?", "euro": "euros?",
    "yuan": "", "rupee": "rupees?",
}
_UNIT_KEYS = {alias: key for key, names in _UNIT_NAMES.items() for alias in
              [key, *(form for name in names.split() for form in ((name[:-2], name[:-1]) if name.endswith("s?")
                                                                   else (name,)))]}
_UNIT_POWER_RE = re.compile(r"\^\s*(\d)\s*$")


def unit_key(unit: str) -> str | None:
    r"""What a stripped unit measures, as `name^power` (`\text{ sq cm}` -> `cm^2`); None: not a measurement unit."""
    if unit in CJK_UNIT_KEYS:
        named = CJK_UNIT_KEYS[unit]
        return named if "^" in named else f"{named}^1"
    s = re.sub(r"\\text\s*\{|[{}]", " ", unit).replace("²", "^2").replace("³", "^3")
    m = _UNIT_POWER_RE.search(s)
    power = int(m.group(1)) if m else 1
    words = (s[: m.start()] if m else s).lower().split()
    if len(words) == 2 and words[0] in ("square", "sq", "cubic"):
        power, words = (3 if words[0] == "cubic" else 2), words[1:]
    key = _UNIT_KEYS.get(words[0]) if len(words) == 1 else None
    return None if key is None else f"{key}^{power}"


def _fix_numbers(s: str) -> str:
    r"""Thousands separators (`7,425,000`, `1 000`, `1_000`, `11,\!111`) and leading-dot decimals (`.4`).

    `1_000` is Python's grouping of 1000, never 1 with a subscript 000 (no base; red team).
    """
    if _THOUSANDS_SPACE_RE.match(s) or _THOUSANDS_RE.fullmatch(s) or _THOUSANDS_UNDERSCORE_RE.fullmatch(s):
        s = s.replace(" ", "").replace(",", "").replace("_", "")
    return re.sub(r"(?<![\d}])\.(?=\d)", "0.", s)


@functools.lru_cache(maxsize=4096)
def normalize_answer(raw: str, *, strip_units: bool = True) -> Normalized:
    """Normalise one answer string (cached per process: a pure function, and gold answers repeat).

    Args:
        raw: the extracted answer (LaTeX or plain text).
        strip_units: drop trailing units and degree signs (`MathConfig.units == "strip"`).

    Returns:
        The Normalized answer: canonical text (single spaces, no surrounding `$`), with the
        percent sign and unit removed and recorded.
    """
    s = normalize_unicode(raw.strip())
    s = APPROXIMATE_LEAD_RE.sub("", s, count=1) if APPROXIMATE_LEAD_RE.match(s) else s  # `\approx 5`, `约300`
    worded = number_from_words(s)
    if worded is not None:  # "five", "twenty-one", "two hundred": the number
        s = worded
    if "matrix" not in s and "array" not in s:
        s = re.sub(r"\\\\(?=[a-zA-Z])", r"\\", s)  # doubly escaped commands (`\\frac`)
    s = join_digit_groups(s)  # `11,\!111`, `14{,}916`, `1\,234`
    s = _SPACING_RE.sub("", s)
    s = _QUAD_RE.sub(" ", s)
    s = _FRAC_RE.sub(r"\\frac", s)
    s = _ONE_CHARACTER_GROUP_RE.sub(r"\1\2", s)  # `a_{2}` is `a_2`, `x^{2}` is `x^2`: one name, one power
    s = _unwrap_text_commands(s)
    s = _text_letters(s)
    s = _repeating_decimals(s)
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
    s = cjk_magnitude(_apply_magnitude(s))
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
        counted = cjk_quantity(s)
        if counted:  # `300分钟`, `3页`, `3个苹果`
            s, unit = counted[0], (unit or counted[1])
    s = _strip_grouping(_strip_outer_text(s))
    s = _fix_numbers(s)
    s = re.sub(r"\s+", " ", s).strip()
    return Normalized(s, percent, unit)


_OPEN = "([{"
_CLOSE = ")]}"


def split_top_level(s: str, seps: str = ",;") -> list[str]:
    r"""Split `s` on separators not nested inside (), [], {} or a `\begin..\end` block.

    Escaped braces (`\{`) count as brackets; `\\` row separators are left alone.
    """
    if not any(sep in s for sep in seps):
        return [s.strip()]
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
