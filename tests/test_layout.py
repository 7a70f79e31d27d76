"""The test tree itself: every test module has a unique basename.

The suites run in pytest's default `prepend` import mode with no `__init__.py` files, where two
test files of one name in different folders stop the whole collection ("import file mismatch").
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_module_has_a_unique_basename() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if "data" not in p.relative_to(TESTS).parts[:1])
    assert not [name for name, n in names.items() if n > 1]
