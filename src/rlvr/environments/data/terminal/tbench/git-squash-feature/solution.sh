#!/bin/bash
set -euo pipefail
cd /app/repo
git log --oneline --graph --all
git config user.name "Review Bot"
git config user.email "review@example.com"
git checkout -q feature/csv-parser
# Squash the branch's own commits (since it forked), then replay the result on main.
base=$(git merge-base main feature/csv-parser)
git reset -q --soft "$base"
git commit -q -m "Add CSV parser"
git rebase -q main
git log --oneline --graph --all
git status --short
