#!/bin/bash
# Build /app/repo: main and feature/i18n diverged and conflict in two files.
set -euo pipefail
export GIT_AUTHOR_NAME="Sam Dev" GIT_AUTHOR_EMAIL="sam@example.com"
export GIT_COMMITTER_NAME="Sam Dev" GIT_COMMITTER_EMAIL="sam@example.com"
n=0
commit() {
  n=$((n + 1))
  export GIT_AUTHOR_DATE="2024-04-1${n}T12:00:00+00:00" GIT_COMMITTER_DATE="2024-04-1${n}T12:00:00+00:00"
  git add -A
  git commit -q -m "$1"
}
mkdir -p /app/repo && cd /app/repo
git init -q -b main
cat > greeting.py <<'PY'
"""Greetings for the command line."""


def greet(name):
    return "Hello, " + name


if __name__ == "__main__":
    import sys

    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))
PY
printf '[app]\nname = greeter\ntimeout = 10\n' > config.ini
printf '# greeter\n\nSays hello.\n' > README.md
commit "Initial greeter"

git checkout -q -b feature/i18n
cat > greeting.py <<'PY'
"""Greetings for the command line."""

GREETINGS = {"en": "Hello", "fr": "Bonjour", "es": "Hola"}


def greet(name, lang="en"):
    return GREETINGS[lang] + ", " + name


if __name__ == "__main__":
    import sys

    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))
PY
printf '[app]\nname = greeter\ntimeout = 15\ndefault_lang = en\n' > config.ini
commit "Add i18n greetings"
mkdir -p docs
printf '# Languages\n\nSupported: en, fr, es.\n' > docs/i18n.md
commit "Document languages"

git checkout -q main
cat > greeting.py <<'PY'
"""Greetings for the command line."""


def greet(name):
    return f"Hello, {name}!"


if __name__ == "__main__":
    import sys

    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))
PY
commit "Add exclamation mark to greeting"
printf '[app]\nname = greeter\ntimeout = 30\nuser_agent = greeter/2.0\n' > config.ini
printf '# Changelog\n\n- greetings end with "!"\n- timeout raised to 30s\n' > CHANGELOG.md
commit "Raise timeout and set user agent"
