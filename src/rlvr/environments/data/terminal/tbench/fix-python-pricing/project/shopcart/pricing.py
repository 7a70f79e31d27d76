"""Line totals, coupons and cart totals (see README.md for the rules)."""

from decimal import Decimal

TAX_RATE = Decimal("0.08")


def bulk_discount(quantity):
    """Discount rate for a line of `quantity` items."""
    if quantity > 50:
        return Decimal("0.10")
    if quantity >= 10:
        return Decimal("0.05")
    return Decimal("0")


def line_total(unit_price, quantity):
    """Price of one cart line after the bulk discount (not rounded)."""
    if quantity < 0:
        raise ValueError("quantity must not be negative")
    price = Decimal(str(unit_price)) * quantity
    return price * (1 - bulk_discount(quantity))


def apply_coupon(subtotal, code=None):
    """Subtotal after the coupon `code`."""
    if not code:
        return subtotal
    code = code.upper()
    if code.startswith("SAVE"):
        percent = int(code[4:])
        if not 1 <= percent <= 50:
            raise ValueError(f"invalid coupon {code!r}")
        return subtotal * (1 - Decimal(percent) / 10)
    if code.startswith("FLAT"):
        amount = int(code[4:])
        if amount <= 0:
            raise ValueError(f"invalid coupon {code!r}")
        return subtotal - amount
    raise ValueError(f"unknown coupon {code!r}")


def cart_total(items, coupon=None):
    """Total to pay for `items`, tax included, rounded to cents."""
    subtotal = sum(line_total(price, qty) for price, qty in items)
    subtotal = apply_coupon(subtotal, coupon)
    total = subtotal * (1 + TAX_RATE)
    return round(total, 2)
