#!/bin/bash
set -euo pipefail
cd /app/repo
git log --oneline --graph --all
git config user.name "Merge Bot"
git config user.email "merge@example.com"
git merge --no-edit feature/i18n || true
git status --short
git diff || true
cat > greeting.py <<'PY'
"""Greetings for the command line."""

GREETINGS = {"en": "Hello", "fr": "Bonjour", "es": "Hola"}


def greet(name, lang="en"):
    return f"{GREETINGS[lang]}, {name}!"


if __name__ == "__main__":
    import sys

    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))
PY
printf '[app]\nname = greeter\ntimeout = 30\nuser_agent = greeter/2.0\ndefault_lang = en\n' > config.ini
python3 greeting.py Ana
git add greeting.py config.ini
git commit --no-edit
git log --oneline --graph -6
