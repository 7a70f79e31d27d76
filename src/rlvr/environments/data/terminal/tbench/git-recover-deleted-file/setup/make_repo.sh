#!/bin/bash
# Build /app/repo with a fixed, reproducible history (run once from the Dockerfile).
set -euo pipefail
export GIT_AUTHOR_NAME="Dana Ops" GIT_AUTHOR_EMAIL="dana@example.com"
export GIT_COMMITTER_NAME="Dana Ops" GIT_COMMITTER_EMAIL="dana@example.com"
n=0
commit() {
  n=$((n + 1))
  export GIT_AUTHOR_DATE="2024-03-0${n}T09:00:00+00:00" GIT_COMMITTER_DATE="2024-03-0${n}T09:00:00+00:00"
  git add -A
  git commit -q -m "$1"
}
mkdir -p /app/repo && cd /app/repo
git init -q -b main
printf '# inventory-api\n\nSmall HTTP service for the warehouse inventory.\n' > README.md
mkdir -p src docs
printf 'def main():\n    print("inventory-api")\n' > src/app.py
printf 'Old design notes, superseded by the wiki.\n' > docs/old-design.md
commit "Initial commit"

mkdir -p deploy
cat > deploy/config.yaml <<'YAML'
service: inventory-api
replicas: 1
image: registry.example.com/inventory-api:1.0.0
resources:
  cpu: 250m
  memory: 256Mi
YAML
commit "Add deployment config"

cat > deploy/config.yaml <<'YAML'
service: inventory-api
replicas: 3
image: registry.example.com/inventory-api:1.2.0
resources:
  cpu: 500m
  memory: 512Mi
healthcheck:
  path: /healthz
  interval: 10s
YAML
commit "Tune deployment config for production"

printf '# Changelog\n\n## 1.2.0\n- health checks\n' > CHANGELOG.md
commit "Add changelog"

git rm -q deploy/config.yaml docs/old-design.md
commit "Remove unused files"

printf '# inventory-api\n\nSmall HTTP service for the warehouse inventory.\n\nRun with `python src/app.py`.\n' > README.md
commit "Document how to run the service"
