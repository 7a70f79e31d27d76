"""Grader for git-merge-conflict: check the merge commit, its parents and the merged content."""

import configparser
import subprocess

REPO = "/app/repo"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout


def test_merge_commit_and_parents():
    parents = git("rev-list", "--parents", "-n", "1", "main").split()[1:]
    assert len(parents) == 2, "main's tip must be a merge commit with two parents"
    first, second = parents
    assert git("log", "-1", "--format=%s", first).strip() == "Raise timeout and set user agent"
    assert second == git("rev-parse", "feature/i18n").strip()
    assert git("log", "-1", "--format=%s", "feature/i18n").strip() == "Document languages"
    assert git("log", "-1", "--format=%s", "main").strip() == "Merge branch 'feature/i18n'"
    assert git("rev-list", "--count", "main").strip() == "6"


def test_greeting_merged():
    source = git("show", "main:greeting.py")
    assert "<<<<<<<" not in source and ">>>>>>>" not in source and "=======" not in source
    namespace = {"__name__": "greeting"}
    exec(compile(source, "greeting.py", "exec"), namespace)
    greet = namespace["greet"]
    assert greet("Ana") == "Hello, Ana!"
    assert greet("Ana", "en") == "Hello, Ana!"
    assert greet("Luc", "fr") == "Bonjour, Luc!"
    assert greet("Eva", lang="es") == "Hola, Eva!"
    run = subprocess.run(["python3", "greeting.py", "Ana"], cwd=REPO, capture_output=True, text=True)
    assert run.stdout == "Hello, Ana!\n"


def test_config_and_other_changes_kept():
    parser = configparser.ConfigParser()
    parser.read_string(git("show", "main:config.ini"))
    assert parser.sections() == ["app"]
    assert dict(parser["app"]) == {
        "name": "greeter",
        "timeout": "30",
        "user_agent": "greeter/2.0",
        "default_lang": "en",
    }
    files = set(git("ls-tree", "-r", "--name-only", "main").split())
    assert files == {"README.md", "CHANGELOG.md", "config.ini", "docs/i18n.md", "greeting.py"}
    assert git("rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git("status", "--porcelain") == ""
