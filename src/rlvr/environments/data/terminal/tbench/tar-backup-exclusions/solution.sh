#!/bin/bash
set -euo pipefail
cd /app
find project -path project/.git -prune -o -print | sort
mkdir -p backups
# --exclude patterns without a slash match a name at any depth; ./project/.env is anchored.
tar -C /app -czf backups/project.tar.gz \
  --exclude=node_modules --exclude=__pycache__ --exclude=.git \
  --exclude='*.log' --exclude='*.pyc' \
  --exclude=project/.env \
  project
tar -tzf backups/project.tar.gz
cd backups && sha256sum project.tar.gz > project.tar.gz.sha256 && sha256sum -c project.tar.gz.sha256
