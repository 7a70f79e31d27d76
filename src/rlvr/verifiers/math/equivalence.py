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

Percentages (`MathConfig.percent`, decided in issue 31): by default ("strip", the GSM8K/MATH
convention, whose golds drop the sign) a percent sign is dropped and the number compared as written,
so `40\%` equals `40` and neither `0.4` nor `\frac{2}{5}`, in both directions; accepting both `40`
and `0.4` would pass answers off by a factor of 100. "fraction" reads N% as N/100 (`40\%` equals
`0.4`, not `40`); "strict" wants the sign on both sides. A percent sign after a box is the answer's.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

from rlvr.verifiers.math.config import MathConfig
from rlvr.verifiers.math.exact import work_done
from rlvr.verifiers.math.extract import ALTERNATIVE_SEP
from rlvr.verifiers.math.forms import (
    LABEL_RE,
    MAX_ITEMS,
    Brackets,
    assignments,
    brackets,
    canon,
    dedupe,
    distinct_labels,
    expand_pm,
    indexed_values,
    is_closed,
    is_set,
    label_key,
    labelled_tuples,
    rename_bound,
    split_relation,
    split_union,
    strip_labels,
    tuple_assignment,
    unwrap_set,
)
from rlvr.verifiers.math.normalize import Normalized, normalize_answer, split_top_level, unit_key
from rlvr.verifiers.math.scalar import HEDGED, base_equal, choice_letter, clock_equal, scalar_equal
from rlvr.verifiers.math.symbolic import fingerprint

__all__: list[str] = []
_MAX_DEPTH = 4


@dataclass(frozen=True)
class Equivalence:
    """Whether one prediction is equivalent to one gold answer, and by which rule (`how`)."""

    equal: bool
    how: str
    gold: str
    pred: str


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
        same = canon(g_text) == canon(p_text)
        return Equivalence(same, "string (answer too long to parse)", g_text, p_text)
    false_chain = None if canon(g_text) == canon(p_text) else _false_chain(p_text, config)
    if false_chain is not None:
        return Equivalence(False, f"the prediction states a false equation ({false_chain})", g_text, p_text)
    how = _equal(g_text, p_text, config, 0)
    return Equivalence(how is not None, how or "not equivalent", g_text, p_text)


def _measure(n: Normalized) -> str | None:
    """What the stated unit measures (`unit_key`), `percent` for a percent sign; None when nothing is stated."""
    return "percent" if n.percent and not n.unit else unit_key(n.unit)


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
        parts = split_relation(re.sub(r"={2,}", "=", re.sub(r"\\approx.*$", "", item)).strip())
        if len(parts) < 2 or not all(parts):
            continue
        for i, (left, right) in enumerate(itertools.pairwise(parts)):
            named = any(not is_closed(side) and LABEL_RE.match(side) for side in (left, right))
            if named or (i == 0 and not is_closed(left)):
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
    if canon(g) == canon(p):
        return "string"
    if depth > _MAX_DEPTH:
        return None
    letter = choice_letter(g)
    if letter is not None and letter != HEDGED:
        return "choice" if choice_letter(p, any_case=letter in "ABCDE") == letter else None
    based = base_equal(g, p)
    if based is not None:
        return "numeric (base)" if based else None
    clock = clock_equal(g, p)
    if clock is not None:
        return clock if isinstance(clock, str) else None
    labelled = _labelled_equal(g, p, cfg, depth)
    if labelled is not None:
        return labelled if isinstance(labelled, str) else None
    g, p = strip_labels(g, p)
    if canon(g) == canon(p):
        return "string"
    structural = _structural_equal(g, p, cfg, depth)
    if structural is not None:
        return structural if isinstance(structural, str) else None
    return scalar_equal(g, p, cfg)


def _labelled_equal(g: str, p: str, cfg: MathConfig, depth: int) -> str | bool | None:
    r"""Labels bind values: `x=1, y=2` equals `y=2, x=1` but neither `x=2, y=1` nor `y=1`; None: not labelled.

    Both sides labelled: the same labels, each with an equal value (pairs in any order, `x = \pm 2` as its
    two values). Two single equations with different left sides (`y=2x+3` vs `x=(y-3)/2`) compare as
    equations; two definitions of one function in other variables (`g(t) = t^2` vs `g(x) = x^2`) compare
    with the variables renamed (`forms.rename_bound`).

    Labelled values against an unlabelled tuple or list (red team M5) never match, in either
    direction, when two or more names are involved: the tuple's order is the question's, and
    `verify(response, reference)` never sees the question, so neither the prediction's nor the
    gold's listing order can stand for it (`y=1, x=2` against gold `(1, 2)` binds x=2 under the
    usual `(x, y)`, but reads (1, 2) by position; gold `x=1, y=2` against `(2, 1)` is right if the
    question asked for `(y, x)`). Exceptions, where no order has to be guessed: a gold written as a
    tuple assignment `(x, y) = (1, 2)` names its own order, so a bare `(1, 2)` is compared with its
    tuple by position; indices of one name (`x_1 = 2, x_2 = 3`) are positions, so they match a bare
    list in index order (`forms.indexed_values`); and a predicted tuple assignment of several
    solutions (`(x, y) = (5, 8), (8, 5)`) matches bare gold tuples when it does under every order
    of the names (`_order_free_tuples`). A dataset whose golds are ordered tuples and whose models
    answer with labels should write the golds as tuple assignments.
    """
    gp = assignments(g) if "=" in g else None
    pp = assignments(p) if "=" in p else None
    if gp is None:
        return _labelled_prediction(g, p, pp, cfg, depth)
    if pp is None:
        if len(gp) < 2 or distinct_labels(gp) < len(gp):
            return None  # one labelled value, or several values of one name (roots): compared without labels
        if tuple_assignment(g):
            return None  # `(x, y) = (1, 2)`: the gold's own tuple, compared by position
        values = indexed_values(gp)
        if values is not None:  # `x_1 = 2, x_2 = 3`: a bare list states the values in index order
            return "indexed values" if _equal(f"({', '.join(values)})", p, cfg, depth + 1) else False
        return False  # labelled gold, bare prediction: which value is which name is not stated
    renamed = _renamed_values(gp, pp)
    if renamed is not None:  # `g(t) = t^2` against `g(x) = x^2`: the variable is bound
        ok = _unordered(expand_pm([v for _, v in gp]), expand_pm(renamed), cfg, depth)
        return "function, variables renamed" if ok else False
    if len(gp) == 1 and len(pp) == 1 and label_key(gp[0][0]) != label_key(pp[0][0]):
        equation = scalar_equal(g, p, cfg)  # another name: equal only as equations (`y=2x+3`, `x=(y-3)/2`)
        return f"{equation} equation" if equation else False
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for k, v in gp:
        groups.setdefault(label_key(k), ([], []))[0].append(v)
    for k, v in pp:
        if label_key(k) not in groups:
            return False  # a label the gold does not have
        groups[label_key(k)][1].append(v)
    ok = all(_unordered(expand_pm(gv), expand_pm(pv), cfg, depth) for gv, pv in groups.values())
    return "labelled values" if ok else False


def _renamed_values(gp: list[tuple[str, str]], pp: list[tuple[str, str]]) -> list[str] | None:
    """The predicted values with their function's variables renamed to the gold's (`forms.rename_bound`).

    Only when every label on each side is the one function (`W(x) = 1, W(x) = -1` against
    `W(n) = 1, W(n) = -1`, or `g(t) = t^2` against `g(x) = x^2`); None otherwise.
    """
    g_labels, p_labels = {label_key(k) for k, _ in gp}, {label_key(k) for k, _ in pp}
    if len(g_labels) != 1 or len(p_labels) != 1 or g_labels == p_labels:
        return None
    renamed = [rename_bound(gp[0][0], pp[0][0], v) for _, v in pp]
    return None if any(r is None for r in renamed) else [r for r in renamed if r is not None]


def _labelled_prediction(g: str, p: str, pp: list[tuple[str, str]] | None, cfg: MathConfig,
                         depth: int) -> str | bool | None:
    """`_labelled_equal` for an unlabelled gold: a labelled prediction matches only where no order is guessed."""
    if split_relation(g) != [g]:
        return None
    if pp is not None and distinct_labels(pp) >= 2:
        values = indexed_values(pp)
        if values is not None:  # `x_1 = 2, x_2 = 3` against a bare `2, 3`: the values, in index order
            return "indexed values" if _equal(g, ", ".join(values), cfg, depth + 1) else False
        return False  # labelled prediction, unlabelled gold: the question's order is unknown
    solutions = labelled_tuples(p) if pp is None and "=" in p else None
    return None if solutions is None else _order_free_tuples(g, solutions, cfg, depth)


def _order_free_tuples(g: str, solutions: list[list[str]], cfg: MathConfig, depth: int) -> str | bool:
    """Predicted solution tuples of a tuple assignment against bare gold tuples, under every order of the names.

    `(x, y) = (5, 8), (8, 5)` names its order (x, y); the gold `(5, 8), (8, 5)` lists the question's,
    unknown here. The prediction is right whatever that order when its tuples equal the gold's with
    the positions permuted in every way (`(5, 8), (8, 5)` is symmetric; `(5, 8), (3, 5)` is not).
    """
    gb = brackets(g)
    gold = [g] if gb is not None and gb[0] == "(" and not split_top_level(g)[1:] else split_top_level(g)
    width = len(solutions[0])
    if width > 4 or any((b := brackets(t)) is None or b[0] != "(" or len(b[2]) != width for t in gold):
        return False
    for order in itertools.permutations(range(width)):
        permuted = [f"({', '.join(tup[i] for i in order)})" for tup in solutions]
        if not _unordered(gold, permuted, cfg, depth):
            return False
    return "solution tuples, in any order of the names"


def _structural_equal(g: str, p: str, cfg: MathConfig, depth: int) -> str | bool | None:
    """Compare lists, sets, tuples, intervals and unions; None when neither side is structured.

    Returns a description when equal, False when the structures differ. A gold tuple needs an
    ordered match (a bare predicted list is read as that tuple), a gold set or bare list an
    unordered one; a gold tuple never equals a predicted set.
    """
    if "\\cup" in g or "\\cup" in p:
        return _union_equal(g, p, cfg, depth)
    gb, pb = brackets(g), brackets(p)
    g_raw, p_raw = split_top_level(g), split_top_level(p)
    # `1 \pm \sqrt{19}` against a list or set of answers states its two values (a tuple's order it does not state)
    g_listed, p_listed = _several(g_raw, gb), _several(p_raw, pb)
    g_items = gb[2] if gb else expand_pm(g_raw, listed=p_listed)
    p_items = pb[2] if pb else expand_pm(p_raw, listed=g_listed)
    if len(g_items) <= 1 and len(p_items) <= 1:
        if is_set(gb) or is_set(pb):
            return "set" if _equal(unwrap_set(g, gb), unwrap_set(p, pb), cfg, depth + 1) else False
        if gb and pb and (gb[0], gb[1]) != (pb[0], pb[1]):
            return False
        return None
    if len(g_items) == 1 and gb is None and pb is None:
        # One gold answer, several predicted forms of it ("\\boxed{15\\frac{39}{40}} or \\boxed{\\frac{639}{40}}").
        ok = len(p_items) <= MAX_ITEMS and all(_equal(g, item, cfg, depth + 1) for item in p_items)
        return "every listed form equal" if ok else False
    if not (gb is not None and not is_set(gb)) and (is_set(gb) or len(dedupe(g_items)) == len(g_items)):
        # a set, or a bare list without repeats: repeats in the prediction are one answer; a bare gold
        # list that repeats a value (`2, 2, 3`: roots with multiplicity) counts them (red team)
        g_items, p_items = dedupe(g_items), dedupe(p_items)
    if len(g_items) != len(p_items) and 1 in (len(g_items), len(p_items)) and (gb is None or pb is None):
        return None  # one side is a single expression (`-2 \\le x \\le 7` vs `[-2, 7]`): sympy decides
    if len(g_items) != len(p_items) or len(g_items) > MAX_ITEMS:
        return False
    return _items_equal(g_items, p_items, gb, pb, cfg, depth)


def _several(items: list[str], b: Brackets) -> bool:
    """True for a bare list or a set of two or more answers."""
    return len(items) > 1 or (b is not None and is_set(b) and len(b[2]) > 1)


def _items_equal(g_items: list[str], p_items: list[str], gb: Brackets, pb: Brackets, cfg: MathConfig,
                 depth: int) -> str | bool:
    """Compare equally long item lists: ordered for a gold tuple/interval, unordered otherwise."""
    if gb is not None and not is_set(gb):  # gold tuple, point or interval: ordered
        if pb is not None and ((gb[0], gb[1]) != (pb[0], pb[1]) and (len(g_items) == 2 or is_set(pb))):
            return False  # (a,b) vs [a,b] are different intervals; a tuple is not a set
        ok = all(_equal(a, b, cfg, depth + 1) for a, b in zip(g_items, p_items, strict=True))
        return "tuple" if ok else False
    if is_set(gb) and pb is not None and not is_set(pb):
        return False
    return "set" if _unordered(g_items, p_items, cfg, depth) else False


def _union_equal(g: str, p: str, cfg: MathConfig, depth: int) -> str | bool | None:
    gu, pu = split_union(g), split_union(p)
    if len(gu) > 1 and len(gu) == len(pu):
        return "union" if _unordered(gu, pu, cfg, depth) else False
    return None  # different numbers of pieces: let sympy simplify the unions


# Values compared at points (`exact.work_done`) one unordered comparison may spend: a list of 40 items written
# another way each (40 x 16 points in the usual orders) fits; 40 x 40 heavy comparisons (seconds) do not.
_LIST_WORK = 3_000


def _unordered(g_items: list[str], p_items: list[str], cfg: MathConfig, depth: int) -> bool:
    """Multiset equality: each gold item matches a distinct predicted item.

    Candidates are tried in the likely order first (the same string, the same place, the mirrored place:
    a list given in reverse), so a list in any of those orders costs one comparison per item. A
    comparison that spends more than `_LIST_WORK` point values in all is undecided, so not equal (a
    false fail at worst, never a pass by exhaustion); the count is deterministic, not a clock.
    """
    if len(g_items) != len(p_items) or len(g_items) > MAX_ITEMS:
        return False
    start, unused = work_done(), list(enumerate(p_items))
    for i, item in enumerate(g_items):
        for j in _likely_first(item, i, len(g_items), unused):
            if work_done() - start > _LIST_WORK:
                return False
            if _equal(item, unused[j][1], cfg, depth + 1):
                del unused[j]
                break
        else:
            return False
    return True


def _likely_first(item: str, i: int, n: int, unused: list[tuple[int, str]]) -> list[int]:
    """Indices into `unused` (place, item) in the order to try for gold item `item` at place `i` of `n`.

    The same string first, then the nearest value at a fixed point (`symbolic.fingerprint`), then the same
    place, the mirrored place: only the order of the tries, never which items may match.
    """
    key, value = canon(item), fingerprint(item)

    def rank(j: int) -> tuple[int, float, int, int]:
        place, cand = unused[j]
        other = fingerprint(cand) if value is not None else None
        distance = abs(value - other) / max(1.0, abs(value), abs(other)) if value is not None and other is not None \
            else float("inf")
        return (0 if canon(cand) == key else 1, distance, 0 if place == i else 1 if place == n - 1 - i else 2, j)

    return sorted(range(len(unused)), key=rank)
