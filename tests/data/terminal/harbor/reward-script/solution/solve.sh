#!/bin/bash
awk -F, 'NR > 1 && $2 + 0 > 10 { print $1 }' /app/prices.csv > /app/expensive.txt
