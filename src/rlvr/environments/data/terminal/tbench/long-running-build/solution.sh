#!/bin/bash
set -euo pipefail
cd /app
cat build.sh
time ./build.sh --mode release
cat dist/bundle.txt
build_id=$(awk '$1 == "BUILD-ID" { print $2 }' dist/bundle.txt)
printf '%s+%s\n' "$(tr -d '[:space:]' < version.txt)" "${build_id:0:12}" > dist/VERSION
cat dist/VERSION
