r"""The shape of an answer string: brackets and items, relations, unions, labels (`x = 5`, `(x, y) = (1, 2)`).

Pure string analysis, shared by the comparison stages (`equivalence`, `scalar`): which bracket
group an answer is (`brackets`), its top-level relation sides (`split_relation`), its kind for
sympy (`kinds_differ`), its labelled values (`assignments`: `x=1, y=2` -> [(x, 1), (y, 2)]).
"""

from __future__ import annotations

import re

from rlvr.verifiers.math.normalize import split_top_level
from rlvr.verifiers.math.parse import parse_number

__all__: list[str] = []

MAX_ITEMS = 40


def canon(s: str) -> str:
    """`s` without spaces: the key two answers written alike share."""
    return s.replace(" ", "")


def brackets(s: str) -> tuple[str, str, list[str]] | None:
    r"""(open, close, items) when `s` is one bracketed group `(..)`, `[..)`, `\{..\}`, `{..}`."""
    for opener in ("\\{", "(", "[", "{"):
        if not s.startswith(opener):
            continue
        inner_start = len(opener)
        for closer in ("\\}", ")", "]", "}"):
            if s.endswith(closer) and len(s) >= inner_start + len(closer):
                inner = s[inner_start : len(s) - len(closer)]
                if _balanced(inner):
                    return opener, closer, split_top_level(inner)
        return None
    return None


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s.replace("\\{", "(").replace("\\}", ")"):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def is_set(b: tuple[str, str, list[str]] | None) -> bool:
    r"""True for a set bracket group (`\{..\}` or `{..}`)."""
    return b is not None and b[0] in ("\\{", "{")


Brackets = tuple[str, str, list[str]] | None


def split_union(s: str) -> list[str]:
    r"""The pieces of a union `A \cup B \cup C` (one piece when there is no top-level `\cup`)."""
    protected = s.replace("\\cup", "\x01")
    return [x for x in split_top_level(protected, seps="\x01") if x]


def expand_pm(items: list[str], *, listed: bool = False) -> list[str]:
    r"""`a \pm b` -> `a + b`, `a - b` (one `\pm` per item) in a list of answers.

    A single item is expanded when it starts with `\pm` or when `listed` (the other side is a list of
    several answers, so `1 \pm \sqrt{19}` states the two values of `1+\sqrt{19}, 1-\sqrt{19}`).
    """
    if len(items) < 2 and not listed and not any(item.startswith("\\pm") for item in items):
        return items
    out: list[str] = []
    for item in items:
        if item.count("\\pm") == 1 and "\\mp" not in item:
            out += [item.replace("\\pm", "+"), item.replace("\\pm", "-")]
        else:
            out.append(item)
    return out


def dedupe(items: list[str]) -> list[str]:
    """Drop repeated items of a set-like answer (compared after removing spaces)."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = canon(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def unwrap_set(s: str, b: tuple[str, str, list[str]] | None) -> str:
    """The inside of a set answer `s` (its bracket group `b`); `s` itself when it is no set."""
    if b is None or not is_set(b):
        return s
    return s[len(b[0]) : len(s) - len(b[1])].strip()


def split_relation(s: str) -> list[str]:
    r"""Split on top-level `=` and `\in` (not inside brackets, not `\leq`/`\geq`/`\neq`)."""
    protected = re.sub(r"\\in(?![a-zA-Z])", "\x00", s)
    if "=" not in protected and "\x00" not in protected:
        return [s]
    parts = split_top_level(protected, seps="=\x00")
    return [part.replace("\x00", "\\in") for part in parts]


_RELATION_RE = re.compile(r"[<>]|\\(?:leq|geq|neq|in)(?![a-zA-Z])")


def _kind(s: str) -> str:
    """`scalar`, `list` (a list, tuple or interval of 2+ items), `matrix`, `relation` or `other` (sets, unions)."""
    if "\\{" in s or "\\cup" in s or "\\cap" in s or "\\emptyset" in s or "\\mathbb" in s or "\\setminus" in s:
        return "other"
    if _RELATION_RE.search(s) or len(split_relation(s)) > 1:
        return "relation"
    if "\\begin" in s:
        return "matrix"
    b = brackets(s)
    return "list" if len(split_top_level(s)) > 1 or (b is not None and len(b[2]) > 1) else "scalar"


# Kinds sympy never finds equal (`sympy_equal` compares expressions with expressions, matrices with
# matrices, relations with relations or sets): a scalar with a tuple, a tuple with a matrix, ...
_NEVER_EQUAL = frozenset(frozenset(pair) for pair in (("scalar", "list"), ("scalar", "matrix"), ("scalar", "relation"),
                                                       ("list", "matrix"), ("relation", "matrix")))


def kinds_differ(g: str, p: str) -> bool:
    """True when the two answers are of kinds sympy never finds equal (`_NEVER_EQUAL`).

    They are then not parsed at all: the grammar costs 0.1-0.4 s on a tuple or a matrix.
    """
    return frozenset((_kind(g), _kind(p))) in _NEVER_EQUAL
LABEL_RE = re.compile(r"^(?![\d.])[A-Za-z\\{}_^0-9|(),:'\s]{1,40}$")
_LETTER_RE = re.compile(r"[A-Za-z]")
_COMMAND_RE = re.compile(r"\\(?:frac|sqrt|pi|cdot|times|div|left|right|binom|dfrac|tfrac)(?![a-zA-Z])")


def is_closed(part: str) -> bool:
    r"""True when `part` names no variable: digits, operators and `\frac`, `\sqrt`, `\pi` only (`2+2`, `\sqrt{9}`)."""
    return _LETTER_RE.search(_COMMAND_RE.sub(" ", part)) is None


def _rhs_of_label(s: str) -> str | None:
    r"""`x = 11` -> `11`; `x = 5+6 = 11` -> `11`; `x \in [0,1]` -> `[0,1]`; None when not a labelled answer."""
    if len(split_top_level(s)) > 1:
        return None  # a list: labels are stripped item by item
    s = re.sub(r"\\approx.*$", "", s).strip() if "=" in s else s
    parts = split_relation(s)
    if len(parts) < 2 or not (len(parts) >= 3 or LABEL_RE.match(parts[0])):
        return None
    return parts[-1]


_Pairs = list[tuple[str, str]]


def label_key(label: str) -> str:
    """A label without spaces and braces: `x_{1}` and `x_1` are one name."""
    return re.sub(r"[\s{}]", "", label)


def assignments(s: str) -> _Pairs | None:
    r"""`x=1, y=2` -> [(x, 1), (y, 2)]; `(x, y) = (1, 2)` -> the same pairs; None unless every item is labelled.

    A label is a name (`x`, `a_1`, `f(x)`, `\angle A`); a chain `x = 5+6 = 11` binds its last value.
    """
    items = split_top_level(s)
    wrapped = brackets(s) if len(items) == 1 else None
    if wrapped is not None and wrapped[0] in "([" and len(wrapped[2]) > 1 and all("=" in item for item in wrapped[2]):
        items = wrapped[2]  # `( f(n) = n, g(n) = 1 )`: a bracketed list of labelled values
    if len(items) > MAX_ITEMS:
        return None
    pairs: _Pairs = []
    for item in items:
        parts = split_relation(re.sub(r"\\approx.*$", "", item).strip() if "=" in item else item)
        if len(parts) < 2 or "\\in" in item or not LABEL_RE.match(parts[0]) or not parts[-1]:
            return None
        label, value = parts[0].strip(), parts[-1].strip()
        lb, vb = brackets(label), brackets(value)
        if lb is not None and vb is not None and len(lb[2]) == len(vb[2]) > 1 and lb[0] == "(":
            pairs += list(zip(lb[2], vb[2], strict=True))  # (x, y) = (1, 2)
        else:
            pairs.append((label, value))
    return pairs


def distinct_labels(pairs: _Pairs) -> int:
    """How many distinct labels the pairs use."""
    return len({label_key(k) for k, _ in pairs})


def tuple_assignment(s: str) -> bool:
    """True for one assignment of a value tuple to a label tuple: `(x, y) = (1, 2)`."""
    items = split_top_level(s)
    parts = split_relation(items[0]) if len(items) == 1 else []
    if len(parts) < 2:
        return False
    lb, vb = brackets(parts[0].strip()), brackets(parts[-1].strip())
    return lb is not None and vb is not None and lb[0] == "(" and len(lb[2]) == len(vb[2]) > 1


def strip_labels(g: str, p: str) -> tuple[str, str]:
    """Drop assignment-like left sides; keep a real equation when the gold is one."""
    g_rhs = _rhs_of_label(g)
    g = g_rhs if g_rhs is not None else g
    if len(split_relation(g)) >= 2 and len(split_relation(p)) >= 2:
        return g, p  # both equations: compare as equations
    p_rhs = _rhs_of_label(p)
    if p_rhs is None and len(split_relation(g)) == 1:
        parts = split_relation(p)
        if len(parts) == 2 and "\\in" not in p and parse_number(parts[1]) is not None:
            p_rhs = parts[1]  # `|r-s| = 16`, `2+2+2 = 6` against a gold number: the stated value
    return g, (p_rhs if p_rhs is not None else p)


_INDEXED_RE = re.compile(r"^([A-Za-z]|\\[a-zA-Z]+)_\{?(\d{1,3})\}?$")


def indexed_values(pairs: _Pairs) -> list[str] | None:
    """The values of labels that index one name (`x_1`, `x_{2}`), in index order; None for other labels."""
    keys = [_INDEXED_RE.match(label_key(k)) for k, _ in pairs]
    if len(pairs) < 2 or any(m is None for m in keys) or len({m.group(1) for m in keys if m}) != 1:
        return None
    indices = [int(m.group(2)) for m in keys if m]
    if len(set(indices)) != len(indices):
        return None
    return [value for _, value in sorted(zip(indices, (v for _, v in pairs), strict=True))]


def labelled_tuples(s: str) -> list[list[str]] | None:
    """`(x, y) = (5, 8), (8, 5)` -> [['5', '8'], ['8', '5']]: several solution tuples under one tuple of names."""
    items = split_top_level(s)
    parts = split_relation(items[0]) if len(items) >= 2 else []
    if len(parts) != 2:
        return None
    names = brackets(parts[0].strip())
    if names is None or names[0] != "(" or len(names[2]) < 2 or not all(LABEL_RE.match(n) for n in names[2]):
        return None
    out = []
    for item in [parts[1].strip(), *items[1:]]:
        b = brackets(item)
        if b is None or b[0] != "(" or len(b[2]) != len(names[2]) or "=" in item:
            return None
        out.append(b[2])
    return out


_FUNCTION_LABEL_RE = re.compile(r"^([A-Za-z](?:_\{?\w+\}?)?)\(([^()]*)\)$")
_VARIABLE_RE = re.compile(r"[A-Za-df-hj-z]")  # one letter; `e` and `i` are constants
_LETTER_TOKEN_RE = re.compile(r"(?<![A-Za-z\\])([A-Za-z])(?![A-Za-z])")


def rename_bound(gold_label: str, pred_label: str, pred_value: str) -> str | None:
    r"""`pred_value` with the prediction's function variables renamed to the gold's, or None when not applicable.

    `g(t) = t^2` against gold `g(x) = ...` gives `x^2`; `f(y, x) = y + 2x` against `f(x, y)` gives `x + 2y`.
    Only one-letter variables of the same function, renamed all at once, and only when the prediction
    uses none of the gold's variables freely (`g(t) = x^2` is a constant function of t: not renamed) nor
    a variable inside a longer name (`dt`, `t_1`).
    """
    gm, pm = _FUNCTION_LABEL_RE.match(label_key(gold_label)), _FUNCTION_LABEL_RE.match(label_key(pred_label))
    if gm is None or pm is None or gm.group(1) != pm.group(1):
        return None
    gold_vars, pred_vars = gm.group(2).split(","), pm.group(2).split(",")
    if len(gold_vars) != len(pred_vars) or len(set(gold_vars)) != len(gold_vars) or len(set(pred_vars)) != len(
            pred_vars) or not all(_VARIABLE_RE.fullmatch(v) for v in gold_vars + pred_vars):
        return None
    plain = re.sub(r"\\[a-zA-Z]+", " ", pred_value)
    free = set(_LETTER_TOKEN_RE.findall(plain))
    if (free & set(gold_vars)) - set(pred_vars):
        return None
    if any(re.search(rf"[A-Za-z]{v}|{v}[A-Za-z_]", plain) for v in pred_vars):
        return None
    mapping = dict(zip(pred_vars, gold_vars, strict=True))
    return _LETTER_TOKEN_RE.sub(lambda m: str(mapping.get(m.group(1), m.group(1))), pred_value)
