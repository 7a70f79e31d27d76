#!/bin/bash
set -euo pipefail
cd /app
ls releases
# Stable versions only, sorted numerically field by field (sort -V would also do).
mapfile -t stable < <(ls releases | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sed 's/^v//' |
  sort -t. -k1,1n -k2,2n -k3,3n | sed 's/^/v/')
echo "stable: ${stable[*]}"
ln -sfn "releases/${stable[-1]}" current
ln -sfn "releases/${stable[-2]}" previous
mkdir -p bin
ln -sfn ../current/bin/app bin/app
bin/app
find shared -type l -printf '%p -> %l\n'
# -xtype l: a link whose final target does not exist.
find shared -xtype l -print -delete
find shared -printf '%y %p\n'
