import unittest
from decimal import Decimal

from shopcart.pricing import apply_coupon, cart_total, line_total


class LineTotalTest(unittest.TestCase):
    def test_small_quantity_has_no_discount(self):
        self.assertEqual(line_total("2.00", 3), Decimal("6.00"))

    def test_bulk_discount_from_ten(self):
        self.assertEqual(line_total("1.00", 10), Decimal("9.50"))

    def test_bulk_discount_from_fifty(self):
        self.assertEqual(line_total("1.00", 50), Decimal("45.00"))


class CouponTest(unittest.TestCase):
    def test_percent_coupon(self):
        self.assertEqual(apply_coupon(Decimal("100"), "SAVE15"), Decimal("85"))


class CartTotalTest(unittest.TestCase):
    def test_tax_added(self):
        self.assertEqual(cart_total([("10.00", 1)]), Decimal("10.80"))

    def test_rounds_half_up(self):
        self.assertEqual(cart_total([("0.375", 1)]), Decimal("0.41"))


if __name__ == "__main__":
    unittest.main()
