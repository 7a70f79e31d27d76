"""Grader for git-recover-deleted-file: inspect /app/repo with git."""

import subprocess

REPO = "/app/repo"
FINAL_CONFIG = """\
service: inventory-api
replicas: 3
image: registry.example.com/inventory-api:1.2.0
resources:
  cpu: 500m
  memory: 512Mi
healthcheck:
  path: /healthz
  interval: 10s
"""
ORIGINAL_SUBJECTS = [
    "Document how to run the service",
    "Remove unused files",
    "Add changelog",
    "Tune deployment config for production",
    "Add deployment config",
    "Initial commit",
]


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout


def test_new_commit_on_top_of_unchanged_history():
    subjects = git("log", "--format=%s", "main").splitlines()
    assert subjects == ["Restore deploy/config.yaml", *ORIGINAL_SUBJECTS]
    assert git("log", "-1", "--format=%B", "main").strip() == "Restore deploy/config.yaml"
    # Original commits keep their author dates (no rebase/amend).
    dates = git("log", "--format=%ad", "--date=format:%Y-%m-%d", "main~1").split()
    assert dates == [f"2024-03-0{i}" for i in range(6, 0, -1)]


def test_commit_restores_only_the_config():
    changes = git("diff", "--name-status", "main~1", "main").splitlines()
    assert changes == ["A\tdeploy/config.yaml"]
    assert git("show", "main:deploy/config.yaml") == FINAL_CONFIG


def test_working_tree_clean_and_file_present():
    assert git("rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git("status", "--porcelain") == ""
    with open(f"{REPO}/deploy/config.yaml") as fh:
        assert fh.read() == FINAL_CONFIG
