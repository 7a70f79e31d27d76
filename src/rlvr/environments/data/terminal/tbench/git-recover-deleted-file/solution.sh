#!/bin/bash
set -euo pipefail
cd /app/repo
git log --oneline --stat
# The last commit that touched the path is the one that deleted it; its parent has the final version.
deleting=$(git rev-list -n 1 HEAD -- deploy/config.yaml)
git show --stat "$deleting"
git checkout "${deleting}^" -- deploy/config.yaml
git config user.name "Restore Bot"
git config user.email "restore@example.com"
git commit -m "Restore deploy/config.yaml"
git log --oneline
git status --short
