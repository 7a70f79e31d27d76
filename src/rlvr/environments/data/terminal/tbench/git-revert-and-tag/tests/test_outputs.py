"""Grader for git-revert-and-tag."""

import json
import subprocess

REPO = "/app/repo"
SUBJECTS = [
    "Add README",
    "Enable export feature",
    "Disable request timeout for profiling",
    "Add log level setting",
    "Initial configuration",
]


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout


def test_revert_commit_on_top():
    subjects = git("log", "--format=%s", "main").splitlines()
    assert subjects == ['Revert "Disable request timeout for profiling"', *SUBJECTS]
    body = git("log", "-1", "--format=%B", "main")
    bad = git("rev-list", "-n", "1", "--grep=^Disable request timeout", "main").strip()
    assert f"This reverts commit {bad}" in body
    dates = git("log", "--format=%ad", "--date=format:%Y-%m-%d", "main~1").split()
    assert dates == [f"2024-02-0{i}" for i in range(5, 0, -1)], "existing commits were rewritten"


def test_content_after_revert():
    settings = json.loads(git("show", "main:settings.json"))
    assert settings["timeout_seconds"] == 30
    assert settings["log_level"] == "info"
    assert settings["features"] == {"search": True, "export": True}
    assert git("show", "main:NOTES.txt") == "Release notes\n=============\n\n1.4.0: search\n"
    assert git("show", "main:README.md").startswith("# client")
    assert git("status", "--porcelain") == ""
    assert git("rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_tag_and_branch():
    head = git("rev-parse", "main").strip()
    assert git("cat-file", "-t", "v1.4.1").strip() == "tag", "v1.4.1 must be an annotated tag"
    assert git("rev-parse", "v1.4.1^{commit}").strip() == head
    assert git("tag", "-l", "--format=%(contents:subject)", "v1.4.1").strip() == "Hotfix release 1.4.1"
    assert git("rev-parse", "refs/heads/hotfix/1.4.1").strip() == head
