#!/bin/bash
# No pytest: compare the output with the expected list and write the reward.
mkdir -p /logs/verifier
if diff -u /tests/expected.txt /app/expensive.txt; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
