#!/bin/bash
cd /app/docs
: > /app/counts.tsv
total=0
while IFS= read -r f; do
  n=$(wc -w < "$f")
  printf '%s\t%s\n' "${f#./}" "$n" >> /app/counts.tsv
  total=$((total + n))
done < <(find . -name '*.txt' -type f | LC_ALL=C sort)
echo "$total" > /app/total.txt
