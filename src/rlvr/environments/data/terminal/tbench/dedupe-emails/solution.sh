#!/bin/bash
set -euo pipefail
cd /app/data
head -5 subscribers.txt | cat -A
# Normalise: drop CR, trim, skip blanks and comments, lower-case.
tr -d '\r' < subscribers.txt |
  sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' |
  grep -v -e '^$' -e '^#' |
  tr '[:upper:]' '[:lower:]' > /tmp/entries.txt
re='^[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)+$'
grep -E "$re" /tmp/entries.txt | LC_ALL=C sort -u > clean.txt
grep -v -E "$re" /tmp/entries.txt | awk '!seen[$0]++' > invalid.txt
total=$(wc -l < /tmp/entries.txt)
valid=$(wc -l < clean.txt)
invalid=$(wc -l < invalid.txt)
printf 'valid=%d\ninvalid=%d\nduplicates=%d\n' "$valid" "$invalid" $((total - valid - invalid)) > stats.txt
cat stats.txt invalid.txt
