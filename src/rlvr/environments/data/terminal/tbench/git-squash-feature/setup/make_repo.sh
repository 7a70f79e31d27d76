#!/bin/bash
# Build /app/repo: feature/csv-parser has four messy commits; main moved on after it branched.
set -euo pipefail
export GIT_AUTHOR_NAME="Riley Dev" GIT_AUTHOR_EMAIL="riley@example.com"
export GIT_COMMITTER_NAME="Riley Dev" GIT_COMMITTER_EMAIL="riley@example.com"
n=0
commit() {
  n=$((n + 1))
  export GIT_AUTHOR_DATE="2024-06-0${n}T10:00:00+00:00" GIT_COMMITTER_DATE="2024-06-0${n}T10:00:00+00:00"
  git add -A
  git commit -q -m "$1"
}
mkdir -p /app/repo && cd /app/repo
git init -q -b main
printf '# tabular\n\nTools for tabular data.\n' > README.md
mkdir -p tabular
printf '"""Tools for tabular data."""\n' > tabular/__init__.py
commit "Initial project"

git checkout -q -b feature/csv-parser
cat > tabular/parser.py <<'PY'
def parse_line(line):
    return line.split(",")
PY
commit "WIP parser"
sed -i 's/def parse_line(line):/def parse_line(line, sep=","):/; s/line.split(",")/line.split(sep)/' tabular/parser.py
commit "wip: separator"
cat > tabular/parser.py <<'PY'
def parse_line(line, sep=","):
    """Split one CSV line, honouring double-quoted fields."""
    fields, field, quoted = [], "", False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            fields.append(field)
            field = ""
        else:
            field += ch
    fields.append(field)
    return fields
PY
commit "handle quoted fields"
cat > tabular/test_parser.py <<'PY'
from tabular.parser import parse_line


def test_quoted():
    assert parse_line('a,"b,c",d') == ["a", "b,c", "d"]
PY
commit "fix tests"

git checkout -q main
printf '# tabular\n\nTools for tabular data.\n\n## Install\n\n    pip install tabular\n' > README.md
commit "Document installation"
printf 'MIT License\n' > LICENSE
commit "Add license"
