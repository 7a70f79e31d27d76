#!/bin/bash
for d in a b c; do mkdir -p /app/out/$d && echo $d > /app/out/$d/id.txt; done
