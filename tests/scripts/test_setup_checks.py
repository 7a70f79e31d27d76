"""scripts/setup.sh (and so scripts/demo.sh and scripts/test.sh) refuses a machine it cannot set up with one
line naming what is missing, before it installs anything. The machine's facts are faked with commands
placed first on PATH (`uname`, `df`, a Python that reports another version)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _setup(tmp_path: Path, *args: str, fakes: dict[str, str] | None = None,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in (fakes or {}).items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    full = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **(env or {})}
    return subprocess.run(["bash", str(ROOT / "scripts/setup.sh"), *args], cwd=tmp_path, env=full,
                          capture_output=True, text=True, timeout=60)


def _one_line_error(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 1, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("setup: "), lines
    for word in words:
        assert word in lines[0], lines[0]
    assert "==" not in proc.stdout, "nothing may be installed before the checks"


def test_not_linux_is_refused(tmp_path: Path) -> None:
    _one_line_error(_setup(tmp_path, "demo", fakes={"uname": "echo Darwin"}), "Linux", "Darwin")


def test_missing_python_is_refused(tmp_path: Path) -> None:
    _one_line_error(_setup(tmp_path, "demo", env={"PYTHON": "no-such-python3"}), "no-such-python3", "3.10")


def test_old_python_is_refused(tmp_path: Path) -> None:
    # a python3 that fails the version check and reports 3.8.18
    old = 'case "$2" in *platform*) echo 3.8.18 ;; *) exit 1 ;; esac'
    _one_line_error(_setup(tmp_path, "demo", fakes={"python3": old}, env={"PYTHON": "python3"}), "3.10", "3.8.18")


def test_full_disk_is_refused(tmp_path: Path) -> None:
    df = 'printf "Filesystem 1M-blocks Used Available Capacity Mounted\\n/dev/x 1000 990 10 99%% /work\\n"'
    _one_line_error(_setup(tmp_path, "demo", fakes={"df": df}), "10 MiB free", "/work")


@pytest.mark.parametrize("profile", ["gpu", "everything"])
def test_unknown_profile_is_refused(tmp_path: Path, profile: str) -> None:
    _one_line_error(_setup(tmp_path, profile), profile, "demo")
