r"""Equivalence of a predicted answer with a gold answer.

Cheap checks first, sympy last:

1. normalised string equality;
2. multiple-choice letters ("(B)", "B", "\text{(B)}");
3. answer labels and chains: ``x = 11``, ``(p,q) = (3,2)``, ``x = 5+6 = 11`` compare by their last
   right-hand side (Math-Verify's rule for assignment-like equations); an equation whose left side
   is an expression (``3x+4y+14=0``) stays an equation;
4. structure: answer lists (unordered, "1, -3"), sets ``\{..\}`` (unordered), tuples and points
   (ordered), intervals (bracket kinds must agree), unions ``\cup`` (unordered), matrices;
5. exact rationals for numeric literals (``18.00 == 18``, ``1/2 == 0.5``; ``50 != 0.5``);
6. sympy: numbers by relative difference at 30 digits (so ``1/2004!`` and ``1/2006!`` differ:
   no absolute tolerance unless one side is exactly zero), expressions by evaluation at fixed
   points named per symbol and then ``simplify`` of the difference, equations equal **up to a
   nonzero constant factor** (``2x+4y-3=0`` equals ``y=-x/2+3/4``; ``3x+4y+14=0`` does not equal
   ``3x-y+13=0``), inequalities up to a positive factor;
7. text answers: case- and space-insensitive.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Any

import sympy

from rlvr.verifiers.math.config import MathConfig
from rlvr.verifiers.math.extract import ALTERNATIVE_SEP
from rlvr.verifiers.math.normalize import Normalized, normalize_answer, split_top_level, unit_key
from rlvr.verifiers.math.parse import parse_number, to_sympy
from rlvr.verifiers.math.symbolic import exact_zero, sympy_equal

__all__ = ["Equivalence", "check_equivalence"]

_MAX_DEPTH = 4
_MAX_ITEMS = 40
_CHOICE_RE = re.compile(r"^\(?\s*([A-J])\s*\)?(?:[.:]|\s|$)")
_TIME_RE = re.compile(r"^(\d{1,2}):([0-5]\d)$")
_COLON_RE = re.compile(r"^(\d+):(\d+)$")
_OTHER_CHOICE_RE = re.compile(r"(?<![A-Za-z\\])([A-J])(?![A-Za-z])")
_HEDGED = "hedged"  # several option letters: never equal to a gold letter
_LABEL_RE = re.compile(r"^(?![\d.])[A-Za-z\\{}_^0-9|(),:'\s]{1,40}$")


@dataclass(frozen=True)
class Equivalence:
    """Whether one prediction is equivalent to one gold answer, and by which rule (`how`)."""

    equal: bool
    how: str
    gold: str
    pred: str


def _canon(s: str) -> str:
    return s.replace(" ", "")


# -- entry point ----------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def check_equivalence(gold_raw: str, pred_raw: str, config: MathConfig) -> Equivalence:
    """Whether an extracted prediction is equivalent to an extracted gold answer under `config`.

    Percent signs follow `config.percent` ("strip": 50% == 50; "fraction": 50% == 0.5;
    "strict": a percent only equals a percent); units follow `config.units`. A pure function of its
    arguments, so it is cached per process: the samples of one GRPO group often state the same answer.
    """
    if ALTERNATIVE_SEP in gold_raw:
        return _compare_alternatives(gold_raw.split(ALTERNATIVE_SEP), pred_raw, config)
    strip_units = config.units == "strip"
    g = normalize_answer(gold_raw, strip_units=strip_units)
    p = normalize_answer(pred_raw, strip_units=strip_units)
    if not strip_units and g.unit != p.unit:
        return Equivalence(False, f"units differ ({g.unit!r} vs {p.unit!r})", g.text, p.text)
    g_key, p_key = _measure(g), _measure(p)
    if g_key and p_key and g_key != p_key:  # stripped, but both stated: `5 cm` is not `5 m` (red team)
        return Equivalence(False, f"the answers state different units ({g_key} vs {p_key})", g.text, p.text)
    g_text, p_text = _apply_percent(g, p, config)
    if g_text is None or p_text is None:
        return Equivalence(False, "percent sign differs (percent='strict')", g.text, p.text)
    if not g_text or not p_text:
        return Equivalence(False, "empty answer", g_text or "", p_text or "")
    if len(p_text) > config.max_answer_chars or len(g_text) > config.max_answer_chars:
        same = _canon(g_text) == _canon(p_text)
        return Equivalence(same, "string (answer too long to parse)", g_text, p_text)
    false_chain = None if _canon(g_text) == _canon(p_text) else _false_chain(p_text, config)
    if false_chain is not None:
        return Equivalence(False, f"the prediction states a false equation ({false_chain})", g_text, p_text)
    how = _equal(g_text, p_text, config, 0)
    return Equivalence(how is not None, how or "not equivalent", g_text, p_text)


def _measure(n: Normalized) -> str | None:
    """What the stated unit measures (`unit_key`), `percent` for a percent sign; None when nothing is stated."""
    return "percent" if n.percent and not n.unit else unit_key(n.unit)


_LETTER_RE = re.compile(r"[A-Za-z]")
_COMMAND_RE = re.compile(r"\\(?:frac|sqrt|pi|cdot|times|div|left|right|binom|dfrac|tfrac)(?![a-zA-Z])")


def _closed(part: str) -> bool:
    r"""True when `part` names no variable: digits, operators and `\frac`, `\sqrt`, `\pi` only (`2+2`, `\sqrt{9}`)."""
    return _LETTER_RE.search(_COMMAND_RE.sub(" ", part)) is None


def _false_chain(p: str, cfg: MathConfig) -> str | None:
    r"""The first false link of an equation chain in the prediction's items, or None (red team M6).

    A chain is accepted only when it is true: `x = 5 + 6 = 11` states 11, `x = 3 = 5`, `2+2=5` and
    `3 = 4` state nothing (each is false, so no side of it is an answer). Each link must hold
    (`a+b = 3+4 = 7`), except one with a name on either side (`AB = BC = 5`: both names are 5;
    `5 = x`) or whose left side is the first side and holds a variable (`|r-s| = 16` states a value;
    it cannot be checked). A link that cannot be shown equal (`x = 2y = 6`) makes the chain false.
    """
    for item in split_top_level(p):
        if "=" not in item or "\\in" in item:
            continue
        # `==` / `===` (a programmer's equality) is one link: `3 == 5` is the false `3 = 5`, not "5"
        parts = _split_relation(re.sub(r"={2,}", "=", re.sub(r"\\approx.*$", "", item)).strip())
        if len(parts) < 2 or not all(parts):
            continue
        for i, (left, right) in enumerate(itertools.pairwise(parts)):
            named = any(not _closed(side) and _LABEL_RE.match(side) for side in (left, right))
            if named or (i == 0 and not _closed(left)):
                continue  # a name (`5 = x`), or the first side in variables: it states, it is not checked
            if _equal(left, right, cfg, 1) is None:
                return f"{left} = {right}"
    return None


def _compare_alternatives(golds: list[str], pred_raw: str, config: MathConfig) -> Equivalence:
    """A gold given in several alternative forms: the prediction may equal any one (or list them all)."""
    last: Equivalence | None = None
    for gold in [*golds, ",".join(golds)]:
        last = check_equivalence(gold, pred_raw, config)
        if last.equal:
            return Equivalence(True, f"{last.how}; one of {len(golds)} alternative gold forms", last.gold, last.pred)
    pred = last.pred if last is not None else pred_raw
    return Equivalence(False, "not equal to any alternative gold form", " or ".join(golds), pred)


def _apply_percent(g: Normalized, p: Normalized, config: MathConfig) -> tuple[str | None, str | None]:
    if g.percent == p.percent or config.percent == "strip":
        return g.text, p.text
    if config.percent == "strict":
        return None, None
    # "fraction": N% means N/100.
    g_text = f"\\frac{{{g.text}}}{{100}}" if g.percent else g.text
    p_text = f"\\frac{{{p.text}}}{{100}}" if p.percent else p.text
    return g_text, p_text


# -- structural comparison ------------------------------------------------------------------
def _equal(g: str, p: str, cfg: MathConfig, depth: int) -> str | None:
    """Return how `g` and `p` matched, or None when they are not equivalent."""
    if _canon(g) == _canon(p):
        return "string"
    if depth > _MAX_DEPTH:
        return None
    letter = _choice_letter(g)
    if letter is not None and letter != _HEDGED:
        return "choice" if _choice_letter(p, any_case=letter in "ABCDE") == letter else None
    based = _base_equal(g, p)
    if based is not None:
        return "numeric (base)" if based else None
    clock = _clock_equal(g, p)
    if clock is not None:
        return clock if isinstance(clock, str) else None
    labelled = _labelled_equal(g, p, cfg, depth)
    if labelled is not None:
        return labelled if isinstance(labelled, str) else None
    g, p = _strip_labels(g, p)
    if _canon(g) == _canon(p):
        return "string"
    structural = _structural_equal(g, p, cfg, depth)
    if structural is not None:
        return structural if isinstance(structural, str) else None
    return _scalar_equal(g, p, cfg)


def _choice_letter(s: str, *, any_case: bool = False) -> str | None:
    """The option letter of a multiple-choice answer: "(B)", "B", "B.", "(B) 12"; None otherwise.

    With `any_case` (the gold is a choice A-E) a lowercase "b" / "(b)" reads as "B".
    """
    s = s.replace("\\text{", "").replace("}", "").strip()
    if any_case:
        s = re.sub(r"^(\(?\s*)([a-e])(?=\s*\)?(?:[.:]|\s|$))", lambda m: m.group(1) + m.group(2).upper(), s)
    m = _CHOICE_RE.match(s)
    if m is None or (len(s) > 3 and not s.startswith("(")):
        return None
    if any(other != m.group(1) for other in _OTHER_CHOICE_RE.findall(s[m.end():])):
        return _HEDGED  # "(B) (C)", "(A B C D)", "(B) or (D)": several choices are no choice
    return m.group(1)


_BASED_RE = re.compile(r"^([0-9A-Za-z]{1,60})_\{?(\d{1,2})\}?$")


def _based_value(s: str) -> int | None:
    m = _BASED_RE.match(_canon(s))
    if m is None or not 2 <= int(m.group(2)) <= 36:
        return None
    try:
        return int(m.group(1), int(m.group(2)))
    except ValueError:  # a digit the base does not have (`41121_3`)
        return -1


def _base_equal(g: str, p: str) -> bool | None:
    """Two numbers both written with a base subscript compare by value (`101_2` is 5, not `101_3`); None otherwise.

    One side without a subscript keeps the digit reading (`1202_7` vs `1202`, as the grammar reads them);
    a digit the base does not have (`41121_3`) equals nothing.
    """
    gv, pv = _based_value(g), _based_value(p)
    if gv is None or pv is None:
        return None
    return gv == pv and gv >= 0


def _clock_equal(g: str, p: str) -> str | bool | None:
    """A gold time `h:mm` (`1:30`) against a predicted `a:b`: equal only as the same time, never as a ratio.

    Other `a:b` golds (`1:2`, `3:4`) are ratios and compare as the quotient a/b (the parser's reading),
    so `2:4` equals `1:2`; a time `1:30` does not equal `2:60`. None: not a time question.
    """
    gm, pm = _TIME_RE.match(_canon(g)), _COLON_RE.match(_canon(p))
    if gm is None or pm is None:
        return None
    same = (int(gm.group(1)), int(gm.group(2))) == (int(pm.group(1)), int(pm.group(2)))
    return "time" if same else False


def _rhs_of_label(s: str) -> str | None:
    r"""`x = 11` -> `11`; `x = 5+6 = 11` -> `11`; `x \in [0,1]` -> `[0,1]`; None when not a labelled answer."""
    if len(split_top_level(s)) > 1:
        return None  # a list: labels are stripped item by item
    s = re.sub(r"\\approx.*$", "", s).strip() if "=" in s else s
    parts = _split_relation(s)
    if len(parts) < 2 or not (len(parts) >= 3 or _LABEL_RE.match(parts[0])):
        return None
    return parts[-1]


def _split_relation(s: str) -> list[str]:
    r"""Split on top-level `=` and `\in` (not inside brackets, not `\leq`/`\geq`/`\neq`)."""
    protected = re.sub(r"\\in(?![a-zA-Z])", "\x00", s)
    if "=" not in protected and "\x00" not in protected:
        return [s]
    parts = split_top_level(protected, seps="=\x00")
    return [part.replace("\x00", "\\in") for part in parts]


_Pairs = list[tuple[str, str]]


def _label_key(label: str) -> str:
    return re.sub(r"[\s{}]", "", label)


def _assignments(s: str) -> _Pairs | None:
    r"""`x=1, y=2` -> [(x, 1), (y, 2)]; `(x, y) = (1, 2)` -> the same pairs; None unless every item is labelled.

    A label is a name (`x`, `a_1`, `f(x)`, `\angle A`); a chain `x = 5+6 = 11` binds its last value.
    """
    items = split_top_level(s)
    wrapped = _brackets(s) if len(items) == 1 else None
    if wrapped is not None and wrapped[0] in "([" and len(wrapped[2]) > 1 and all("=" in item for item in wrapped[2]):
        items = wrapped[2]  # `( f(n) = n, g(n) = 1 )`: a bracketed list of labelled values
    if len(items) > _MAX_ITEMS:
        return None
    pairs: _Pairs = []
    for item in items:
        parts = _split_relation(re.sub(r"\\approx.*$", "", item).strip() if "=" in item else item)
        if len(parts) < 2 or "\\in" in item or not _LABEL_RE.match(parts[0]) or not parts[-1]:
            return None
        label, value = parts[0].strip(), parts[-1].strip()
        lb, vb = _brackets(label), _brackets(value)
        if lb is not None and vb is not None and len(lb[2]) == len(vb[2]) > 1 and lb[0] == "(":
            pairs += list(zip(lb[2], vb[2], strict=True))  # (x, y) = (1, 2)
        else:
            pairs.append((label, value))
    return pairs


def _labelled_equal(g: str, p: str, cfg: MathConfig, depth: int) -> str | bool | None:
    """Labels bind values: `x=1, y=2` equals `y=2, x=1` but neither `x=2, y=1` nor `y=1`; None: not labelled.

    Both sides labelled: the same labels, each with an equal value (pairs in any order). Two
    single equations with different left sides (`y=2x+3` vs `x=(y-3)/2`) compare as equations.

    Labelled values against an unlabelled tuple or list (red team M5) never match, in either
    direction, when two or more names are involved: the tuple's order is the question's, and
    `verify(response, reference)` never sees the question, so neither the prediction's nor the
    gold's listing order can stand for it (`y=1, x=2` against gold `(1, 2)` binds x=2 under the
    usual `(x, y)`, but reads (1, 2) by position; gold `x=1, y=2` against `(2, 1)` is right if the
    question asked for `(y, x)`). The one exception is a gold written as a tuple assignment
    `(x, y) = (1, 2)`: the gold itself names the tuple's order, so a bare `(1, 2)` is compared with
    its tuple by position. A dataset whose golds are ordered tuples and whose models answer with
    labels should write the golds that way.
    """
    gp = _assignments(g) if "=" in g else None
    pp = _assignments(p) if "=" in p else None
    if gp is None:
        if pp is not None and _names(pp) >= 2 and _split_relation(g) == [g]:
            return False  # labelled prediction, unlabelled gold: the question's order is unknown
        return None
    if pp is None:
        if len(gp) < 2 or _names(gp) < len(gp):
            return None  # one labelled value, or several values of one name (roots): compared without labels
        if _tuple_assignment(g):
            return None  # `(x, y) = (1, 2)`: the gold's own tuple, compared by position
        return False  # labelled gold, bare prediction: which value is which name is not stated
    if len(gp) == 1 and len(pp) == 1 and _label_key(gp[0][0]) != _label_key(pp[0][0]):
        equation = _scalar_equal(g, p, cfg)  # another name: equal only as equations (`y=2x+3`, `x=(y-3)/2`)
        return f"{equation} equation" if equation else False
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for k, v in gp:
        groups.setdefault(_label_key(k), ([], []))[0].append(v)
    for k, v in pp:
        if _label_key(k) not in groups:
            return False  # a label the gold does not have
        groups[_label_key(k)][1].append(v)
    ok = all(_unordered(gv, pv, cfg, depth) for gv, pv in groups.values())
    return "labelled values" if ok else False


def _names(pairs: _Pairs) -> int:
    """How many distinct labels the pairs use."""
    return len({_label_key(k) for k, _ in pairs})


def _tuple_assignment(s: str) -> bool:
    """True for one assignment of a value tuple to a label tuple: `(x, y) = (1, 2)`."""
    items = split_top_level(s)
    parts = _split_relation(items[0]) if len(items) == 1 else []
    if len(parts) < 2:
        return False
    lb, vb = _brackets(parts[0].strip()), _brackets(parts[-1].strip())
    return lb is not None and vb is not None and lb[0] == "(" and len(lb[2]) == len(vb[2]) > 1


def _strip_labels(g: str, p: str) -> tuple[str, str]:
    """Drop assignment-like left sides; keep a real equation when the gold is one."""
    g_rhs = _rhs_of_label(g)
    g = g_rhs if g_rhs is not None else g
    if len(_split_relation(g)) >= 2 and len(_split_relation(p)) >= 2:
        return g, p  # both equations: compare as equations
    p_rhs = _rhs_of_label(p)
    if p_rhs is None and len(_split_relation(g)) == 1:
        parts = _split_relation(p)
        if len(parts) == 2 and "\\in" not in p and parse_number(parts[1]) is not None:
            p_rhs = parts[1]  # `|r-s| = 16`, `2+2+2 = 6` against a gold number: the stated value
    return g, (p_rhs if p_rhs is not None else p)


def _brackets(s: str) -> tuple[str, str, list[str]] | None:
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


def _is_set(b: tuple[str, str, list[str]] | None) -> bool:
    return b is not None and b[0] in ("\\{", "{")


def _structural_equal(g: str, p: str, cfg: MathConfig, depth: int) -> str | bool | None:
    """Compare lists, sets, tuples, intervals and unions; None when neither side is structured.

    Returns a description when equal, False when the structures differ. A gold tuple needs an
    ordered match (a bare predicted list is read as that tuple), a gold set or bare list an
    unordered one; a gold tuple never equals a predicted set.
    """
    if "\\cup" in g or "\\cup" in p:
        return _union_equal(g, p, cfg, depth)
    gb, pb = _brackets(g), _brackets(p)
    g_items = gb[2] if gb else _expand_pm(split_top_level(g))
    p_items = pb[2] if pb else _expand_pm(split_top_level(p))
    if len(g_items) <= 1 and len(p_items) <= 1:
        if _is_set(gb) or _is_set(pb):
            return "set" if _equal(_unwrap_set(g, gb), _unwrap_set(p, pb), cfg, depth + 1) else False
        if gb and pb and (gb[0], gb[1]) != (pb[0], pb[1]):
            return False
        return None
    if len(g_items) == 1 and gb is None and pb is None:
        # One gold answer, several predicted forms of it ("\\boxed{15\\frac{39}{40}} or \\boxed{\\frac{639}{40}}").
        ok = len(p_items) <= _MAX_ITEMS and all(_equal(g, item, cfg, depth + 1) for item in p_items)
        return "every listed form equal" if ok else False
    if not (gb is not None and not _is_set(gb)) and (_is_set(gb) or len(_dedupe(g_items)) == len(g_items)):
        # a set, or a bare list without repeats: repeats in the prediction are one answer; a bare gold
        # list that repeats a value (`2, 2, 3`: roots with multiplicity) counts them (red team)
        g_items, p_items = _dedupe(g_items), _dedupe(p_items)
    if len(g_items) != len(p_items) and 1 in (len(g_items), len(p_items)) and (gb is None or pb is None):
        return None  # one side is a single expression (`-2 \\le x \\le 7` vs `[-2, 7]`): sympy decides
    if len(g_items) != len(p_items) or len(g_items) > _MAX_ITEMS:
        return False
    return _items_equal(g_items, p_items, gb, pb, cfg, depth)


_Brackets = tuple[str, str, list[str]] | None


def _items_equal(g_items: list[str], p_items: list[str], gb: _Brackets, pb: _Brackets, cfg: MathConfig,
                 depth: int) -> str | bool:
    """Compare equally long item lists: ordered for a gold tuple/interval, unordered otherwise."""
    if gb is not None and not _is_set(gb):  # gold tuple, point or interval: ordered
        if pb is not None and ((gb[0], gb[1]) != (pb[0], pb[1]) and (len(g_items) == 2 or _is_set(pb))):
            return False  # (a,b) vs [a,b] are different intervals; a tuple is not a set
        ok = all(_equal(a, b, cfg, depth + 1) for a, b in zip(g_items, p_items, strict=True))
        return "tuple" if ok else False
    if _is_set(gb) and pb is not None and not _is_set(pb):
        return False
    return "set" if _unordered(g_items, p_items, cfg, depth) else False


def _union_equal(g: str, p: str, cfg: MathConfig, depth: int) -> str | bool | None:
    gu, pu = _split_union(g), _split_union(p)
    if len(gu) > 1 and len(gu) == len(pu):
        return "union" if _unordered(gu, pu, cfg, depth) else False
    return None  # different numbers of pieces: let sympy simplify the unions


def _expand_pm(items: list[str]) -> list[str]:
    r"""`a \pm b` -> `a + b`, `a - b` (one `\pm` per item; only in lists of several answers)."""
    if len(items) < 2 and not any(item.startswith("\\pm") for item in items):
        return items
    out: list[str] = []
    for item in items:
        if item.count("\\pm") == 1 and "\\mp" not in item:
            out += [item.replace("\\pm", "+"), item.replace("\\pm", "-")]
        else:
            out.append(item)
    return out


def _dedupe(items: list[str]) -> list[str]:
    """Drop repeated items of a set-like answer (compared after removing spaces)."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = _canon(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _unwrap_set(s: str, b: tuple[str, str, list[str]] | None) -> str:
    if b is None or not _is_set(b):
        return s
    return s[len(b[0]) : len(s) - len(b[1])].strip()


def _split_union(s: str) -> list[str]:
    protected = s.replace("\\cup", "\x01")
    return [x for x in split_top_level(protected, seps="\x01") if x]


def _unordered(g_items: list[str], p_items: list[str], cfg: MathConfig, depth: int) -> bool:
    """Multiset equality: each gold item matches a distinct predicted item."""
    if len(g_items) != len(p_items) or len(g_items) > _MAX_ITEMS:
        return False
    unused = list(p_items)
    for item in g_items:
        for j, cand in enumerate(unused):
            if _equal(item, cand, cfg, depth + 1):
                del unused[j]
                break
        else:
            return False
    return True


# -- scalar comparison ----------------------------------------------------------------------
def _scalar_equal(g: str, p: str, cfg: MathConfig) -> str | None:
    gn, pn = parse_number(g), parse_number(p)
    if gn is not None and pn is not None:
        if gn.value == pn.value:
            return "numeric"
        if _rounded_match(gn.value, pn.value, pn.decimals, cfg):
            return f"numeric, rounded to {cfg.float_rounding} decimals"
        return None
    ga = None if _kinds_differ(g, p) else to_sympy(g)
    pa = None if ga is None else to_sympy(p)  # an unparsed gold (prose) compares as text: no parse of the prediction
    if ga is not None and pa is not None:
        try:
            if sympy_equal(ga, pa, cfg) and _decimals_agree(g, p, cfg):
                return "symbolic"
        except Exception:  # sympy raises many types on odd objects: treat as "not shown equal"
            pass
    if _is_text(g) and _text_key(g) == _text_key(p):
        return "text"
    return None


_RELATION_RE = re.compile(r"[<>]|\\(?:leq|geq|neq|in)(?![a-zA-Z])")


def _kind(s: str) -> str:
    """`scalar`, `list` (a list, tuple or interval of 2+ items), `matrix`, `relation` or `other` (sets, unions)."""
    if "\\{" in s or "\\cup" in s or "\\cap" in s or "\\emptyset" in s or "\\mathbb" in s or "\\setminus" in s:
        return "other"
    if _RELATION_RE.search(s) or len(_split_relation(s)) > 1:
        return "relation"
    if "\\begin" in s:
        return "matrix"
    b = _brackets(s)
    return "list" if len(split_top_level(s)) > 1 or (b is not None and len(b[2]) > 1) else "scalar"


# Kinds sympy never finds equal (`sympy_equal` compares expressions with expressions, matrices with
# matrices, relations with relations or sets): a scalar with a tuple, a tuple with a matrix, ...
_NEVER_EQUAL = frozenset(frozenset(pair) for pair in (("scalar", "list"), ("scalar", "matrix"), ("scalar", "relation"),
                                                       ("list", "matrix"), ("relation", "matrix")))


def _kinds_differ(g: str, p: str) -> bool:
    """True when the two answers are of kinds sympy never finds equal (`_NEVER_EQUAL`).

    They are then not parsed at all: the grammar costs 0.1-0.4 s on a tuple or a matrix.
    """
    return frozenset((_kind(g), _kind(p))) in _NEVER_EQUAL


_DECIMAL_LIT_RE = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?![\d.])")


def _rationalize(s: str) -> str:
    r"""Decimal literals as the exact fractions they write: `6227020801.0` -> `\frac{62270208010}{10}`."""
    return _DECIMAL_LIT_RE.sub(lambda m: f"\\frac{{{int(m.group(1) + m.group(2))}}}{{{10 ** len(m.group(2))}}}", s)


def _decimals_agree(g: str, p: str, cfg: MathConfig) -> bool:
    r"""A decimal equals an exact value only within half a unit of its last written digit.

    The relative tolerance alone would let `6227020801.0` equal `13!` or `2^{4097}+0.0` equal
    `2^{4097}+1` (sympy rounds the sum to 15 digits). So a closed answer holding decimal literals
    is re-read with each literal as its exact fraction, and the exact difference must be at most
    `0.5 * 10^-k` for the most precise literal's k decimals (`3.14159265358979` equals `\pi`,
    `3.14159` does not: the relative tolerance still applies). With variables (expressions,
    equations) the literals are the exact fractions they write and the comparison is exact:
    `0.5x` equals `\frac{x}{2}`, `1.0 \cdot 2^{n} + 10^{-12}` is not `2^{n}` and `0.3333333333333x`
    is not `\frac{x}{3}` (red team M2: a written `1.0` must not buy a tolerance for an exact term).
    `float_rounding` replaces this rule.
    """
    lits = _DECIMAL_LIT_RE.findall(g) + _DECIMAL_LIT_RE.findall(p)
    if not lits or cfg.float_rounding is not None:
        return True
    ra, rb = to_sympy(_rationalize(g)), to_sympy(_rationalize(p))
    if not (isinstance(ra, sympy.Basic) and isinstance(rb, sympy.Basic)):
        return True  # no exact reading (the grammar rejects the rewritten literal): the float comparison stands
    if ra.free_symbols or rb.free_symbols:
        return bool(sympy_equal(ra, rb, cfg))
    if not (isinstance(ra, sympy.Expr) and isinstance(rb, sympy.Expr)):
        return True
    diff = sympy.Add(ra, -rb, evaluate=False)
    if exact_zero(diff):
        return True
    places = max(len(frac) for _, frac in lits)
    return bool(abs(diff.evalf(30)) <= sympy.Rational(1, 2) / 10**places)


def _rounded_match(gold: Any, pred: Any, decimals: int | None, cfg: MathConfig) -> bool:
    """`config.float_rounding` (k): a response given to at least k decimals matches when both round alike."""
    k = cfg.float_rounding
    if k is None or decimals is None or decimals < k:
        return False
    return bool(round(gold, k) == round(pred, k))


def _is_text(s: str) -> bool:
    return re.search(r"[A-Za-z]{2,}", s.replace("\\text", "")) is not None


def _text_key(s: str) -> str:
    s = s.replace("\\text{", "").replace("{", "").replace("}", "")
    return re.sub(r"[\s.]+", "", s).lower()
