#!/bin/bash
# Run the shopcart test suite (standard-library unittest; no pytest needed).
cd "$(dirname "$0")" && exec python3 -m unittest discover -s tests -v
