#!/bin/bash
# build.sh --mode debug|release
# Builds dist/bundle.txt from the modules in src/. A full build takes about 10 seconds.
set -euo pipefail
cd "$(dirname "$0")"

mode=""
while [ $# -gt 0 ]; do
  case $1 in
    --mode) mode=${2:-}; shift 2 || shift ;;
    --mode=*) mode=${1#*=}; shift ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case $mode in
  debug|release) ;;
  *) echo "usage: build.sh --mode debug|release" >&2; exit 2 ;;
esac

mkdir -p dist
rm -f dist/bundle.txt dist/bundle.tmp
# Each stage is slow on purpose: the build stands in for a real compile.
build() {
  echo "[1/3] resolving dependencies"
  sleep 2
  echo "[2/3] compiling modules (mode=$mode)"
  for src in src/*.mod; do
    name=$(basename "$src" .mod)
    sleep 1
    digest=$(python3 tools/derive.py "$mode" "$src")
    echo "  compiled $name"
    printf '%s %s\n' "$name" "$digest" >> dist/bundle.tmp
  done
  echo "[3/3] linking"
  sleep 2
  build_id=$(sha256sum dist/bundle.tmp | cut -d' ' -f1)
  printf 'MODE %s\nBUILD-ID %s\n' "$mode" "$build_id" >> dist/bundle.tmp
  mv dist/bundle.tmp dist/bundle.txt
  echo "build finished: $build_id"
}

build 2>&1 | tee dist/build.log
exit "${PIPESTATUS[0]}"
