"""Equivalence of two query results under named `EquivalenceRules`.

Values are first made canonical (`canonical`), so that equality and hashing follow the
`coerce`, `float_digits` and `nulls` rules; rows are then compared as an ordered list, a
multiset or a set. With `columns="permute"`, a gold column may match any prediction column
holding the same values (the candidate permutations are searched as in test-suite-sql-eval's
`result_eq`, with a bound on the number tried).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rlvr.verifiers.sql.config import EquivalenceRules

__all__: list[str] = []

MAX_PERMUTATIONS = 5_000
"""Column permutations tried at most (only permutations whose columns hold the same values are tried)."""
MAX_SEARCH_STEPS = 200_000
"""Candidate checks of the permutation search at most (bounds results with many look-alike columns)."""
MAX_PAIR_CELLS = 20_000_000
"""Values read at most by the column-pair checks that prune the permutation search."""

Row = tuple[Any, ...]


@dataclass(frozen=True)
class Equivalence:
    """Result of comparing a prediction's rows with the gold's.

    Attributes:
        equal: the results match under the rules.
        how: a short reason (which rule decided, or where the results differ).
    """

    equal: bool
    how: str


class _Unique:
    """A value equal only to itself: a NULL under `nulls='never_match'`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL"


def _number(value: float | int | Decimal, rules: EquivalenceRules) -> Any:
    if isinstance(value, Decimal):
        if value.is_nan():
            return "NaN"
        if value.is_finite() and value == value.to_integral_value():
            return int(value)
        value = float(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if rules.float_digits is not None and math.isfinite(value):
            # significant digits, but never coarser than units: an integral float stays equal to its int
            value = float(round(value)) if abs(value) >= 10**rules.float_digits else \
                float(f"{value:.{rules.float_digits}g}")
        if value.is_integer() and abs(value) < 2**63:
            return int(value)
    return value


def _text_number(text: str) -> float | None:
    stripped = text.strip()
    if not stripped or "_" in stripped or stripped.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return None
    try:
        return float(stripped)
    except ValueError:
        return None


def canonical(value: Any, rules: EquivalenceRules) -> Any:
    """The hashable form of one value under `rules` (see `EquivalenceRules` for each rule).

    Returns:
        A value whose `==` and `hash` implement the rules: under 'numeric', 1, 1.0 and
        Decimal('1') all become 1; under 'strict', numbers carry their type name.
    """
    if value is None:
        return _Unique() if rules.nulls == "never_match" else None
    if isinstance(value, bool):
        return ("bool", value) if rules.coerce == "strict" else int(value)
    if isinstance(value, (int, float, Decimal)):
        number = _number(value, rules)
        return (type(value).__name__, number) if rules.coerce == "strict" else number
    if isinstance(value, str):
        if rules.coerce == "loose":
            parsed = _text_number(value)
            if parsed is not None:
                return _number(parsed, rules)
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    try:
        hash(value)
    except TypeError:  # lists, dicts (PostgreSQL arrays/JSON, DuckDB LIST/STRUCT)
        return ("repr", repr(value))
    return value


def _rows_equal(gold: Sequence[Row], pred: Sequence[Row], ordered: bool, duplicates: str) -> bool:
    if ordered:
        if duplicates == "set":
            return list(dict.fromkeys(gold)) == list(dict.fromkeys(pred))
        return list(gold) == list(pred)
    if duplicates == "set":
        return set(gold) == set(pred)
    return len(gold) == len(pred) and Counter(gold) == Counter(pred)


def _signature(column: list[Any], duplicates: str) -> Any:
    if duplicates == "aligned":  # ordered multiset: a column must match value for value, row by row
        return tuple(column)
    return frozenset(column) if duplicates == "set" else frozenset(Counter(column).items())


class _Pairs:
    """Pruning of the permutation search by column pairs.

    Gold columns (a, b) mapped to prediction columns (c, d) must hold the same (multi)set of value
    pairs, a necessary condition of equal rows.
    """

    def __init__(self, gold_cols: list[list[Any]], pred_cols: list[list[Any]], duplicates: str) -> None:
        self.cols = {"g": gold_cols, "p": pred_cols}
        self.duplicates = duplicates
        self.cache: dict[tuple[str, int, int], Any] = {}
        self.cells = 0

    def _sig(self, side: str, a: int, b: int) -> Any:
        key = (side, a, b)
        if key not in self.cache:
            cols = self.cols[side]
            self.cells += 2 * len(cols[a])
            pairs = list(zip(cols[a], cols[b], strict=True))
            self.cache[key] = frozenset(pairs) if self.duplicates == "set" else frozenset(Counter(pairs).items())
        return self.cache[key]

    def consistent(self, perm: list[int], level: int, j: int, ambiguous: list[bool]) -> bool | None:
        """Whether mapping gold column `level` to `j` agrees with the earlier ambiguous choices (None: budget spent)."""
        if self.duplicates == "aligned" or not ambiguous[level]:
            return True
        for earlier in range(level):
            if ambiguous[earlier] and self._sig("g", earlier, level) != self._sig("p", perm[earlier], j):
                return False
        return None if self.cells > MAX_PAIR_CELLS else True


def _permutations(gold_cols: list[list[Any]], pred_cols: list[list[Any]],
                  duplicates: str) -> Iterator[list[int] | None]:
    """Maps gold column i -> prediction column perm[i] whose values agree, identity first.

    An iterative depth-first search (no recursion limit on wide results). Identical prediction
    columns are interchangeable, so only the first unused one of a group is tried; among look-alike
    columns a choice must agree pairwise with the earlier ones (`_Pairs`). The search stops after
    `MAX_SEARCH_STEPS` candidate checks or `MAX_PAIR_CELLS` values read, and then yields None (undecided).
    """
    pred_sigs = [_signature(c, duplicates) for c in pred_cols]
    candidates = []
    for i, col in enumerate(gold_cols):
        sig = _signature(col, duplicates)
        matches = [j for j, s in enumerate(pred_sigs) if s == sig]
        candidates.append(([i] if i in matches else []) + [j for j in matches if j != i])  # identity first
    first_of: dict[tuple[Any, ...], list[int]] = {}
    earlier: list[list[int]] = []  # identical prediction columns before each one
    for j, col in enumerate(pred_cols):
        group = first_of.setdefault(tuple(col), [])
        earlier.append(list(group))
        group.append(j)
    n = len(gold_cols)
    pairs = _Pairs(gold_cols, pred_cols, duplicates)
    ambiguous = [len(c) > 1 for c in candidates]
    perm = [-1] * n
    cursor = [0] * n
    used = [False] * len(pred_cols)
    level, steps = 0, 0
    while level >= 0:
        if level == n:
            yield list(perm)
            level -= 1
            continue
        if perm[level] >= 0:  # back at this level: release its previous choice
            used[perm[level]] = False
            perm[level] = -1
        options = candidates[level]
        chosen = -1
        while cursor[level] < len(options):
            j = options[cursor[level]]
            cursor[level] += 1
            steps += 1
            if steps > MAX_SEARCH_STEPS:
                yield None
                return
            if used[j] or not all(used[k] for k in earlier[j]):
                continue
            fits = pairs.consistent(perm, level, j, ambiguous)
            if fits is None:
                yield None
                return
            if fits:
                chosen = j
                break
        if chosen < 0:
            cursor[level] = 0
            level -= 1
            continue
        perm[level] = chosen
        used[chosen] = True
        level += 1


def check_equivalence(gold: Sequence[Row], pred: Sequence[Row], rules: EquivalenceRules, ordered: bool) -> Equivalence:
    """Compare prediction rows with gold rows.

    Args:
        gold: the gold query's rows (tuples of equal length).
        pred: the prediction's rows.
        rules: the equivalence rules.
        ordered: whether row order is significant (decided by the caller from `rules.order`
            and the gold query).

    Returns:
        A `Equivalence`. Two empty results are equal whatever their columns (as in
        test-suite-sql-eval); the caller applies the `empty_gold` policy.
    """
    if not gold and not pred:
        return Equivalence(True, "both results are empty")
    gold_width = len(gold[0]) if gold else 0
    pred_width = len(pred[0]) if pred else 0
    if gold and pred and gold_width != pred_width:
        return Equivalence(False, f"the gold has {gold_width} column(s), the prediction {pred_width}")
    if rules.duplicates == "multiset" and len(gold) != len(pred):
        return Equivalence(False, f"the gold has {len(gold)} row(s), the prediction {len(pred)}")
    g = [tuple(canonical(v, rules) for v in row) for row in gold]
    p = [tuple(canonical(v, rules) for v in row) for row in pred]
    order_word = "ordered" if ordered else "unordered"
    kind = f"{order_word} {rules.duplicates}"
    if not g or not p:
        return Equivalence(False, f"one result is empty ({len(gold)} gold row(s), {len(pred)} predicted)")
    if _rows_equal(g, p, ordered, rules.duplicates):
        return Equivalence(True, f"same rows ({kind})")
    if rules.columns == "strict" or gold_width == 1:
        return Equivalence(False, f"rows differ ({kind}, columns {rules.columns})")
    gold_cols = [list(c) for c in zip(*g, strict=True)]
    pred_cols = [list(c) for c in zip(*p, strict=True)]
    matching = "aligned" if ordered and rules.duplicates == "multiset" else rules.duplicates
    for tried, perm in enumerate(_permutations(gold_cols, pred_cols, matching)):
        if perm is None or tried >= MAX_PERMUTATIONS:
            return Equivalence(False, f"rows differ ({kind}; column permutation search stopped after "
                                     f"{min(tried, MAX_PERMUTATIONS)} permutations)")
        if perm != list(range(gold_width)) and _rows_equal(g, [tuple(r[j] for j in perm) for r in p], ordered,
                                                          rules.duplicates):
            return Equivalence(True, f"same rows with columns permuted {perm} ({kind})")
    return Equivalence(False, f"rows differ ({kind}, under any column permutation)")
