r"""What is written around a ``\boxed{}`` answer: an operator glued outside the box changes its value.

``-\boxed{5}`` shows -5, ``\frac{1}{\boxed{5}}`` shows 1/5, ``\boxed{5}^2`` shows 25: the box holds
5, but the response states another value, so the box is not its answer (`score_math`: incorrect;
reading the whole expression instead would have to guess where it starts). `glued_operator` names the
operator; only the same line counts, and these stand around a box without changing it:

- before: the line start, a markdown bullet or list number (``- \boxed{5}``, ``2. \boxed{5}``), words,
  ``=``, ``:``, ``,``, ``\approx``, ``\equiv``, arrows (``\Rightarrow``, ``=>``), a unary ``+``,
  currency (``\$``), math delimiters, bold ``**``;
- after: the line end, punctuation (``.``, ``,``, ``;``, ``:``, not a decimal point), units
  (``\text{ cm}``, ``cm``, a degree sign ``^\circ``), ``\pmod{n}``, ``=``, spacing, closing
  delimiters (text mode follows them: ``$\boxed{5}$!`` is an exclamation);
- around: plain grouping braces and parentheses, and formatting commands (``\mathbf{}``,
  ``\textcolor{red}{}``, ``\underline{}``) are looked through.

Everything else that touches the box changes what it shows: a minus (also ``\pm``), a binary
operator after an operand (``1-``, ``2*``, ``\cdot``), a command taking the box as an argument
(``\sqrt{}``, ``\frac{}{}``, ``e^{}``, ``\overline{}``), absolute value and floor bars, a relation
(``x < \boxed{5}``: a bound, not a value), and after the box a power, a subscript (another base),
a factorial ``!``, a prime, a product (``\boxed{5}x``, ``\boxed{5}\pi``, a digit), a further term
(``\boxed{5} + 1``). A percent sign after the box belongs to the answer (`percent_after`:
``\boxed{5}\%`` is ``5\%``, compared under `MathConfig.percent`). Between the boxes of one group,
an operator (``\boxed{2}+\boxed{3}``) makes the group one expression, not a list.
"""

from __future__ import annotations

import re

from rlvr.verifiers.math.boxes import match_brace

__all__: list[str] = []

# Commands whose brace argument is changed by them (a function, a root, a fraction, a mark on the digits); any other
# command around a box (`\mathbf`, `\textcolor{red}`, `\smash`, `\underline`) only formats it.
_CHANGING = frozenset({
    "sqrt", "frac", "dfrac", "tfrac", "cfrac", "binom", "dbinom", "tbinom", "overline", "bar", "dot", "ddot", "hat",
    "vec", "tilde", "widetilde", "widehat", "overrightarrow", "mathring", "sin", "cos", "tan", "cot", "sec", "csc",
    "log", "ln", "lg", "exp", "operatorname", "not", "pmod", "bmod", "abs", "left", "right", "lfloor", "lceil",
})
# Commands that show a value (a function, a constant, an operator): next to a box they change what it shows.
_VALUE_COMMAND = (r"\\(?:sqrt|frac|dfrac|tfrac|cfrac|pi|sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|sinh|cosh|tanh"
                  r"|log|ln|lg|exp|binom|infty|lfloor|lceil|rfloor|rceil|lvert|rvert|vert|overline|bar|sum|prod|cdot"
                  r"|times|div|ast|pm|mp|neg)(?![a-zA-Z])")
_RELATION = r"(?:<(?![/A-Za-z!])|>|≤|≥|\\(?:le|ge|leq|geq|lt|gt|leqslant|geqslant|ll|gg)(?![a-zA-Z]))"
# -- before the box (the line up to it, trailing spaces removed) --------------------------------------------------
# `- \boxed{5}`, `- $\boxed{5}$`: a markdown item (a space after the mark); `> ` a quote
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+>]|\d{1,3}[.)])\s(?:\s|\\?\$|\\[(\[])*$")
_ARROW_END_RE = re.compile(
    r"(?:->|=>|[⇒→]|\\(?:to|Rightarrow|rightarrow|implies|Longrightarrow|iff)(?![a-zA-Z]))$"
)
_DELIMITERS_END_RE = re.compile(r"(?:\s|\\?\$|\\[(\[])+$")
_TAG_END_RE = re.compile(r"<[A-Za-z/][^<>]*>$")  # `<answer>\boxed{5}`
_MINUS_END_RE = re.compile(r"(?:-|[−±∓]|\\(?:pm|mp|neg)(?![a-zA-Z]))$")
_RELATION_END_RE = re.compile(_RELATION + "$")
_COMMAND_END_RE = re.compile(_VALUE_COMMAND + r"$")
# `1+`, `2*`, `x/`, `e^`; a unary `+` (`= +\boxed{5}`) or bold `**` is no operator
_BINARY_END_RE = re.compile(r"(?:[\w)}\]!]\s*[+*/]|[\^_/])$")
_GLUED_END_RE = re.compile(r"(?:\d\.?|\|)$")  # `2\boxed{5}`, `0.\boxed{5}`, `|\boxed{-5}|` (no space between)
# -- after the box (the rest of the line) ------------------------------------------------------------------------
_SPACING_RE = re.compile(r"(?:\\[,;:! ]|\\q?quad(?![a-zA-Z])|~|[ \t])+")
_DEGREE_RE = re.compile(r"\^\s*\{?\s*\\circ|°|\\circ(?![a-zA-Z])|\\degree(?![a-zA-Z])")
_HARMLESS_AFTER_RE = re.compile(
    r"(?:[$]|\\[)\]]|\*\*|\\\\|&|="  # the math ends (text follows), a row ends, `= x`
    r"|[.,;:?](?!\d)|[)\]]"  # punctuation (not a decimal point), an outer bracket
    r"|\\(?:text|mathrm|mbox|textbf|textit|pmod|bmod|mod|approx|equiv|tag|label|hfill|blacksquare|square|qed|"
    r"checkmark|end|right|quad|qquad)(?![a-zA-Z])"  # units, a congruence's modulus, layout
    r"|\\?%|[A-Za-z]{2,})"  # a percent sign (`percent_after`), a unit or a word
)
_OPERATOR_AFTER_RE = re.compile(
    r"(?:\.(?=\d)|[\^_!'*/]|" + _VALUE_COMMAND + "|" + _RELATION
    + r"|[-+±∓]\s*(?:[\d\\({.]|[A-Za-z](?![A-Za-z])))"
)
_GLUED_AFTER_RE = re.compile(r"(?:\d|\(|\||[A-Za-z](?![A-Za-z]))")  # `\boxed{5}0`, `\boxed{5}(x)`, `\boxed{5}x`
_PERCENT_AFTER_RE = re.compile(r"(?:[$)\]]|\\\)|\s)*(?:\\%|%|\\text\{\s*\\?%\s*\}|percent\b)", re.IGNORECASE)
_GROUP_OPERATOR_RE = re.compile(r"^[\s$]*(?:[-+*/^]|\\(?:cdot|times|div|pm|mp)(?![a-zA-Z]))[\s$]*$")
_CONTEXT = 80  # characters read on each side of a box
_OPENERS = (("\\left(", "\\right)"), ("\\left[", "\\right]"), ("(", ")"), ("[", "]"))


def _owner(text: str, open_pos: int) -> tuple[str, int]:
    """The command taking the brace group opened at `open_pos` as an argument, and where it starts.

    The command is '' for plain grouping, '^' or '_' for an exponent or a subscript.
    """
    i = open_pos - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    while i >= 0 and text[i] in "}]":  # earlier arguments: `\frac{1}{`, `\textcolor{red}{`, `\sqrt[3]{`
        closer, opener, depth = text[i], "{" if text[i] == "}" else "[", 0
        while i >= 0:
            depth += 1 if text[i] == closer else -1 if text[i] == opener else 0
            if depth == 0:
                break
            i -= 1
        i -= 1
    if i >= 0 and text[i] in "^_":
        return text[i], i
    m = re.search(r"\\([a-zA-Z]+)\*?$", text[: i + 1])
    return (m.group(1), m.start()) if m else ("", open_pos)


def _peel(text: str, lo: int, hi: int, line: tuple[int, int]) -> tuple[int, int, str]:
    """Widen `text[lo:hi]` over wrappers that show the box unchanged; the third item names a command that changes it."""
    while True:
        b = lo  # just after the last non-space before the box
        while b > line[0] and text[b - 1] in " \t":
            b -= 1
        a = hi  # the first non-space after it
        while a < line[1] and text[a] in " \t":
            a += 1
        if b > line[0] and a < line[1] and text[b - 1] == "{" and match_brace(text, b - 1) == a:
            owner, owner_start = _owner(text, b - 1)
            if owner in _CHANGING or owner in ("^", "_"):
                return lo, hi, f"{owner}{{...}}" if owner in "^_" else f"\\{owner}{{...}}"
            lo, hi = owner_start, a + 1
            continue
        wrapper = next(((o, c) for o, c in _OPENERS if text.endswith(o, line[0], b) and text.startswith(c, a)), None)
        if wrapper is None:
            return lo, hi, ""
        lo, hi = b - len(wrapper[0]), a + len(wrapper[1])


def _before(prefix: str) -> str:
    """The operator ending `prefix` (the line up to the box) that changes the box's value, or ''."""
    s = _DELIMITERS_END_RE.sub("", prefix.rstrip())  # `-$\boxed{5}$`, `-\$\boxed{5}`: look through `$`, `\$`, `\(`
    if not s or _LIST_MARK_RE.match(prefix) or _ARROW_END_RE.search(s) or _TAG_END_RE.search(s):
        return ""
    for pattern in (_MINUS_END_RE, _RELATION_END_RE, _COMMAND_END_RE, _BINARY_END_RE):
        m = pattern.search(s)
        if m:
            return m.group(0)[-1] if pattern is _BINARY_END_RE else m.group(0)
    m = _GLUED_END_RE.search(s) if s == prefix else None  # (`s` is `prefix` only when nothing stood between)
    return m.group(0) if m else ""


def _after(suffix: str) -> str:
    """The operator starting `suffix` (the line after the box) that changes the box's value, or ''."""
    rest = _SPACING_RE.sub(" ", suffix)
    s = rest.lstrip()
    if _DEGREE_RE.match(s) or s.startswith("**"):
        return ""  # a degree sign; bold
    m = _OPERATOR_AFTER_RE.match(s)
    if m:
        return m.group(0).rstrip()
    if not s or _HARMLESS_AFTER_RE.match(s):
        return ""
    m = _GLUED_AFTER_RE.match(s) if s == rest else None  # a product only when nothing stands between
    return m.group(0) if m else ""


def glued_operator(text: str, start: int, end: int) -> str:
    r"""The operator written outside the boxes `text[start:end]` that changes the value they show, or ''.

    Args:
        text: the response (its visible final part).
        start: where the first box of the answer's group starts (its `\boxed`).
        end: where the last box of the group ends (after its closing brace).

    Returns:
        The operator as written (`-`, `^`, `\sqrt{...}`, `<`), '' when the box's value is what the response shows.
    """
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = (line_start, len(text) if line_end < 0 else line_end)
    lo, hi, command = _peel(text, start, end, line)
    prefix = text[line[0] : lo]
    if len(prefix) > _CONTEXT:  # what touches the box is near it (a list mark only counts at the line's start)
        prefix = "  " + prefix[-_CONTEXT:]
    return command or _before(prefix) or _after(text[hi : min(line[1], hi + _CONTEXT)])


def group_operator(betweens: list[str]) -> str:
    r"""The operator joining two boxes of one group (`\boxed{2}+\boxed{3}`: an expression, not a list), or ''."""
    for between in betweens:
        m = _GROUP_OPERATOR_RE.match(between)
        if m:
            return m.group(0).strip(" $")
    return ""


def percent_after(text: str, end: int) -> bool:
    r"""True when a percent sign follows the box ending at `end` (`\boxed{5}\%`, `$\boxed{5}$%`, `5 percent`)."""
    return _PERCENT_AFTER_RE.match(text, end) is not None


# A name right before `= \boxed{..}`: a letter (or Greek letter) with an optional index, primes, arguments.
_GREEK = r"\\(?:alpha|beta|gamma|delta|epsilon|theta|lambda|mu|sigma|tau|phi|omega|rho|psi|xi|eta|zeta|kappa|nu|chi)"
_BOX_LABEL_RE = re.compile(
    rf"(?<![A-Za-z\\{{])((?:[A-Za-z]|{_GREEK})(?:_(?:\{{\w{{1,3}}\}}|\w))?'*(?:\(\w{{1,3}}(?:,\s*\w{{1,3}}){{0,3}}\))?)\s*=\s*[$\s]*$"
)
_NOT_A_LABEL_BEFORE = tuple("+-*/^_=<>|)}]0123456789")


def box_labels(text: str, group: tuple[tuple[int, int, str], ...]) -> list[str] | None:
    r"""The name each box of a group is assigned to (`x_1 = \boxed{2}, x_2 = \boxed{3}` -> x_1, x_2), or None.

    A name is a letter with an optional index, primes or arguments (`y_1`, `f(2)`, `\theta`), standing
    alone before `=` on the box's line (`x + y = \boxed{5}` names no one); None unless every box has one.
    """
    labels = []
    for i, (start, _, _) in enumerate(group):
        lo = max(text.rfind("\n", 0, start) + 1, group[i - 1][1] if i else 0, start - 60)
        m = _BOX_LABEL_RE.search(text, lo, start) if "=" in text[lo:start] else None
        if m is None or text[lo : m.start()].rstrip().endswith(_NOT_A_LABEL_BEFORE):
            return None
        labels.append(m.group(1))
    return labels
