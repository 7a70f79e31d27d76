"""Grader for git-squash-feature."""

import subprocess

REPO = "/app/repo"
PARSER = '''\
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
'''
TEST_PARSER = """\
from tabular.parser import parse_line


def test_quoted():
    assert parse_line('a,"b,c",d') == ["a", "b,c", "d"]
"""


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout


def test_main_unchanged():
    assert git("log", "--format=%s", "main").splitlines() == [
        "Add license",
        "Document installation",
        "Initial project",
    ]
    dates = git("log", "--format=%ad", "--date=format:%Y-%m-%d", "main").split()
    assert dates == ["2024-06-07", "2024-06-06", "2024-06-01"]


def test_single_commit_on_top_of_main():
    ahead = git("rev-list", "main..feature/csv-parser").split()
    assert len(ahead) == 1, f"feature/csv-parser has {len(ahead)} commits over main, want 1"
    assert git("rev-parse", "feature/csv-parser^").strip() == git("rev-parse", "main").strip()
    assert git("log", "-1", "--format=%B", "feature/csv-parser").strip() == "Add CSV parser"


def test_tree_content():
    files = set(git("ls-tree", "-r", "--name-only", "feature/csv-parser").split())
    assert files == {"README.md", "LICENSE", "tabular/__init__.py", "tabular/parser.py", "tabular/test_parser.py"}
    assert git("show", "feature/csv-parser:tabular/parser.py") == PARSER
    assert git("show", "feature/csv-parser:tabular/test_parser.py") == TEST_PARSER
    assert git("show", "feature/csv-parser:README.md") == git("show", "main:README.md")
    assert git("status", "--porcelain") == ""
