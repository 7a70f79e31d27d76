#!/bin/bash
set -euo pipefail
cd /app
tar -tzvf incoming/backup.tar.gz
mkdir -p restored
tar -xzf incoming/backup.tar.gz -C restored
cd restored
find site -name '*.zip' -print0 | while IFS= read -r -d '' z; do
  unzip -l "$z"
  dest="$(dirname "$z")/$(basename "$z" .zip)"
  mkdir -p "$dest"
  unzip -o -q "$z" -d "$dest"
  rm -f -- "$z"
done
find site -name '*.gz' -print0 | while IFS= read -r -d '' g; do
  gunzip -f -- "$g"
done
find site -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum > MANIFEST.sha256
sha256sum -c MANIFEST.sha256
