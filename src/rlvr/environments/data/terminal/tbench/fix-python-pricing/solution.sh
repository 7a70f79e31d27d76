#!/bin/bash
set -euo pipefail
cd /app
cat README.md
./run_tests.sh || true
python3 - <<'PY'
from pathlib import Path

path = Path("shopcart/pricing.py")
src = path.read_text()
fixes = [
    # >= 50, as documented (the 50-item line got only 5 %).
    ("    if quantity > 50:\n", "    if quantity >= 50:\n"),
    # SAVE<N> is N percent, not N tenths.
    ("Decimal(percent) / 10)", "Decimal(percent) / 100)"),
    # FLAT<N> never takes the subtotal below zero.
    ("        return subtotal - amount\n", "        return max(subtotal - amount, Decimal(0))\n"),
    # round() on a Decimal rounds half to even; the README asks for half up.
    ("    return round(total, 2)\n", '    return total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n'),
    ("from decimal import Decimal\n", "from decimal import ROUND_HALF_UP, Decimal\n"),
]
for old, new in fixes:
    assert src.count(old) == 1, old
    src = src.replace(old, new)
path.write_text(src)
PY
cat shopcart/pricing.py
./run_tests.sh
