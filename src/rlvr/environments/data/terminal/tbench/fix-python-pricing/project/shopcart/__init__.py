"""Price calculation for the web shop."""

from shopcart.pricing import apply_coupon, bulk_discount, cart_total, line_total

__all__ = ["apply_coupon", "bulk_discount", "cart_total", "line_total"]
