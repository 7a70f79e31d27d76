#!/bin/bash
set -euo pipefail
cd /app/repo
git log --oneline
bad=$(git log --format=%H -G'"timeout_seconds": 0' -- settings.json | tail -n 1)
git show "$bad"
git config user.name "Release Bot"
git config user.email "release@example.com"
git revert --no-edit "$bad"
git tag -a v1.4.1 -m "Hotfix release 1.4.1"
git branch hotfix/1.4.1
git log --oneline --decorate
