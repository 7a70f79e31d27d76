#!/bin/bash
set -euo pipefail
cd /app/site
find . -printf '%m %y %p\n' | sort -k3
find . -type d -exec chmod 755 {} +
find . -type f -exec chmod 644 {} +
find . -type f -name '*.sh' -exec chmod 755 {} +
find private -type d -exec chmod 700 {} +
find private -type f -exec chmod 600 {} +
find private -type f -name '*.sh' -exec chmod 700 {} +
find . -printf '%m %y %p\n' | sort -k3
