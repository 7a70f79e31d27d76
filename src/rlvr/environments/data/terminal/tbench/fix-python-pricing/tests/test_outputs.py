"""Grader for fix-python-pricing: the README's rules, beyond what the shipped tests check."""

import hashlib
import importlib
import subprocess
import sys
from decimal import Decimal

import pytest

sys.path.insert(0, "/app")
VISIBLE_TESTS_SHA256 = "775f8f0ba664d33a890c865a82064a471a897873f75360b4441394663f771722"


def _pricing():
    sys.modules.pop("shopcart.pricing", None)
    sys.modules.pop("shopcart", None)
    return importlib.import_module("shopcart.pricing")


def test_shipped_suite_passes_unchanged():
    with open("/app/tests/test_pricing.py", "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == VISIBLE_TESTS_SHA256, "do not edit the tests"
    proc = subprocess.run(["bash", "/app/run_tests.sh"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "Ran 6 tests" in proc.stderr


def test_bulk_discount_boundaries():
    p = _pricing()
    expected = {0: "0", 1: "0", 9: "0", 10: "0.05", 11: "0.05", 49: "0.05", 50: "0.10", 51: "0.10", 500: "0.10"}
    for qty, rate in expected.items():
        assert p.bulk_discount(qty) == Decimal(rate), qty
    assert p.line_total("2.50", 50) == Decimal("112.5")
    assert p.line_total(Decimal("3"), 9) == Decimal("27")
    assert p.line_total(4, 0) == 0
    with pytest.raises(ValueError):
        p.line_total("1.00", -1)


def test_coupons():
    p = _pricing()
    assert p.apply_coupon(Decimal("80"), None) == Decimal("80")
    assert p.apply_coupon(Decimal("80"), "") == Decimal("80")
    assert p.apply_coupon(Decimal("200"), "SAVE50") == Decimal("100")
    assert p.apply_coupon(Decimal("200"), "save1") == Decimal("198")
    assert p.apply_coupon(Decimal("30"), "FLAT10") == Decimal("20")
    assert p.apply_coupon(Decimal("30"), "flat45") == Decimal("0")
    for bad in ("SAVE0", "SAVE51", "SAVEX", "FLAT0", "WINTER10", "FREE"):
        with pytest.raises(ValueError):
            p.apply_coupon(Decimal("30"), bad)


def test_cart_totals_and_rounding():
    p = _pricing()
    cases = [
        ([], None, "0.00"),
        ([("0.25", 10)], None, "2.57"),
        ([("1.25", 10)], None, "12.83"),
        ([("0.625", 3)], None, "2.03"),
        ([("1.00", 50), ("2.00", 3)], None, "55.08"),
        ([("19.99", 2), ("5", 10)], "SAVE10", "85.03"),
        ([("12.00", 1)], "FLAT20", "0.00"),
        ([("100", 1)], "flat5", "102.60"),
    ]
    for items, coupon, want in cases:
        got = p.cart_total(items, coupon)
        assert isinstance(got, Decimal), f"{items}: {type(got).__name__}"
        assert got.as_tuple().exponent == -2, f"{items}: {got} must have two decimal places"
        assert got == Decimal(want), f"cart_total({items}, {coupon}) = {got}, want {want}"
