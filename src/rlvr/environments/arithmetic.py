"""Seeded arithmetic problems that need a calculator: multi-digit products and mixed expressions.

The task family behind `math/calculator-arithmetic-v1` (`rlvr.environments.math_tool`): problems a
small model cannot do in its head (a 3-digit by 3-digit product is right by luck about once in a
million guesses) but can solve exactly by copying the expression into the `calculator` tool.

Each problem is one of the `FORMS` (a template over operands of `digits` digits), asked in one of
the `QUESTIONS` phrasings. The answer is computed here with Python integers from the operands, not
by the calculator, so the calculator and the references check each other.

Splits are disjoint by construction: a problem belongs to the split its *key* hashes to
(`split_of`: SHA-256 of the form and the sorted operands, so `a * b` and `b * a` are one problem),
80 % `train`, 10 % `validation`, 10 % `test`. A generator for one split rejects every draw that
hashes elsewhere, so no seed of `train` can produce a problem of `test`, whatever the seeds. Within
one split and seed the problems are distinct, and the first `size` problems do not depend on
`size` (one random stream, cut at `size`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rlvr.core.errors import ConfigError

__all__: list[str] = []

FORMS: dict[str, tuple[str, Callable[..., int]]] = {
    "product": ("{0} * {1}", lambda a, b: a * b),
    "product_plus": ("{0} * {1} + {2}", lambda a, b, c: a * b + c),
    "product_minus": ("{0} * {1} - {2}", lambda a, b, c: a * b - c),
    "sum_of_products": ("{0} * {1} + {2} * {3}", lambda a, b, c, d: a * b + c * d),
    "difference_of_products": ("{0} * {1} - {2} * {3}", lambda a, b, c, d: a * b - c * d),
    "sum_times": ("({0} + {1}) * {2}", lambda a, b, c: (a + b) * c),
    "difference_times": ("({0} - {1}) * {2}", lambda a, b, c: (a - b) * c),
}
"""Problem forms: name -> (expression template over the operands, the exact value from the operands)."""

QUESTIONS: tuple[str, ...] = (
    "What is {expression}?",
    "Calculate {expression}.",
    "Compute the value of {expression}.",
    "Evaluate {expression}.",
)
"""Phrasings of a problem; each task draws one."""

SPLITS: dict[str, tuple[int, int]] = {"train": (20, 100), "validation": (10, 20), "test": (0, 10)}
"""Split -> the half-open range of hash buckets (0-99) it owns (80 / 10 / 10 %)."""

_MAX_DRAWS_PER_PROBLEM = 1000
"""Rejected draws allowed per problem before the generator gives up (the space is exhausted)."""


@dataclass(frozen=True)
class Problem:
    """One generated problem.

    Attributes:
        question: the user's question, e.g. 'What is 347 * 829?'.
        expression: the expression in calculator syntax, e.g. '347 * 829'.
        answer: its exact value (an integer, possibly negative).
        form: the `FORMS` name.
        operands: the operands, in template order.
    """

    question: str
    expression: str
    answer: int
    form: str
    operands: tuple[int, ...]

    @property
    def key(self) -> str:
        """What identifies the problem across splits: the form and the sorted operands."""
        return f"{self.form}:{','.join(str(x) for x in sorted(self.operands))}"


def split_of(key: str) -> str:
    """The split that owns a problem key (`Problem.key`): its SHA-256 bucket (0-99) in `SPLITS`.

    Example:
        >>> split_of("product:347,829") in SPLITS
        True
    """
    bucket = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % 100
    return next(name for name, (lo, hi) in SPLITS.items() if lo <= bucket < hi)


def _check(split: str, size: int, seed: int, forms: Sequence[str], digits: int) -> None:
    if split not in SPLITS:
        raise ConfigError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ConfigError(f"size must be an int >= 1 (number of tasks), got {size!r}; e.g. size=1000")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"seed must be an int, got {seed!r}; e.g. seed=0")
    if isinstance(digits, bool) or not isinstance(digits, int) or not 2 <= digits <= 6:
        raise ConfigError(f"digits must be an int from 2 to 6 (digits of each operand), got {digits!r}")
    if isinstance(forms, str) or not forms:
        raise ConfigError(f"forms must be a non-empty list of form names ({', '.join(FORMS)}), got {forms!r}; "
                          'e.g. forms=["product"] (CLI: -a \'forms=["product"]\')')
    unknown = [f for f in forms if f not in FORMS]
    if unknown:
        raise ConfigError(f"unknown forms {unknown}; known: {', '.join(FORMS)}")


def generate(split: str, size: int, seed: int, forms: Sequence[str] = tuple(FORMS), digits: int = 3) -> list[Problem]:
    """`size` distinct problems of `split`, reproducible from (split, seed, forms, digits).

    Args:
        split: 'train', 'validation' or 'test' (`SPLITS`).
        size: number of problems.
        seed: generation seed.
        forms: the `FORMS` to draw from, uniformly.
        digits: digits of every operand (3: 100-999).

    Returns:
        The problems, in generation order; the first k do not depend on `size`.

    Raises:
        ConfigError: bad arguments, or the split holds fewer than `size` problems of these forms
            (e.g. `digits=2` with a large `size`).
    """
    _check(split, size, seed, forms, digits)
    rng = random.Random(f"rlvr-arithmetic:{split}:{seed}")
    low, high = 10 ** (digits - 1), 10**digits - 1
    problems: list[Problem] = []
    seen: set[str] = set()
    while len(problems) < size:
        for _ in range(_MAX_DRAWS_PER_PROBLEM):
            form = forms[rng.randrange(len(forms))]
            template, value = FORMS[form]
            arity = template.count("{")
            operands = tuple(rng.randint(low, high) for _ in range(arity))
            phrasing = QUESTIONS[rng.randrange(len(QUESTIONS))]
            expression = template.format(*operands)
            problem = Problem(question=phrasing.format(expression=expression), expression=expression,
                              answer=value(*operands), form=form, operands=operands)
            if problem.key not in seen and split_of(problem.key) == split:
                break
        else:
            raise ConfigError(f"the {split} split has fewer than {size} distinct problems of forms {list(forms)} "
                              f"with {digits}-digit operands; lower size or raise digits")
        assert split_of(problem.key) == split  # the disjointness guarantee, by construction
        seen.add(problem.key)
        problems.append(problem)
    return problems
