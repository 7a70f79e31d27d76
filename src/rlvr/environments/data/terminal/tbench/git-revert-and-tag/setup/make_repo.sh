#!/bin/bash
# Build /app/repo: a linear history with one bad commit in the middle.
set -euo pipefail
export GIT_AUTHOR_NAME="Kim Lee" GIT_AUTHOR_EMAIL="kim@example.com"
export GIT_COMMITTER_NAME="Kim Lee" GIT_COMMITTER_EMAIL="kim@example.com"
n=0
commit() {
  n=$((n + 1))
  export GIT_AUTHOR_DATE="2024-02-0${n}T08:30:00+00:00" GIT_COMMITTER_DATE="2024-02-0${n}T08:30:00+00:00"
  git add -A
  git commit -q -m "$1"
}
mkdir -p /app/repo && cd /app/repo
git init -q -b main
cat > settings.json <<'JSON'
{
  "timeout_seconds": 30,
  "retries": 3,
  "endpoint": "https://api.example.com/v2",
  "cache": {
    "enabled": true,
    "ttl_seconds": 600
  },
  "features": {
    "search": true,
    "export": false
  }
}
JSON
printf 'Release notes\n=============\n\n1.4.0: search\n' > NOTES.txt
commit "Initial configuration"

sed -i 's/"retries": 3,/"retries": 3,\n  "log_level": "info",/' settings.json
commit "Add log level setting"

sed -i 's/"timeout_seconds": 30/"timeout_seconds": 0/' settings.json
printf '\nDEBUG: timeout disabled while profiling\n' >> NOTES.txt
commit "Disable request timeout for profiling"

sed -i 's/"export": false/"export": true/' settings.json
commit "Enable export feature"

printf '# client\n\nSee settings.json for configuration.\n' > README.md
commit "Add README"
