"""rlvr as users install it: the built wheel holds every package file, and the quick start runs from it.

The wheel is built with `uv build`, installed with `uv pip` into a fresh venv outside the checkout, and
the README's core quick start (its `readme-test: core` shell blocks) runs there with that venv's `rlvr`,
in a folder away from the checkout, so nothing is read from `src/`. Catches package data left out of
the wheel (the terminal task fixtures, the Chinook questions) and imports of files that only the
checkout has.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from doc_blocks import README, ROOT, blocks

pytestmark = pytest.mark.slow


def _uv() -> str:
    found = shutil.which("uv") or next((str(p) for p in [ROOT / ".cache/bootstrap/bin/uv"] if p.is_file()), None)
    if found is None:
        pytest.skip("uv is not installed (scripts/setup.sh installs it into .cache/bootstrap)")
    return found


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([_uv(), "build", "--wheel", "--out-dir", str(out), str(ROOT)], cwd=ROOT)
    (path,) = out.glob("rlvr-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("venv") / "v"
    uv = _uv()
    _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], cwd=venv.parent)
    # the `terminal` extra (pytest) is what the quick start's terminal blocks need, as the README says
    _run([uv, "pip", "install", "-q", "--python", str(venv / "bin/python"), f"rlvr[terminal] @ {wheel.as_uri()}"],
         cwd=venv.parent)
    return venv


def test_wheel_holds_every_package_file(wheel: Path) -> None:
    tracked = _run(["git", "ls-files", "-z", "src/rlvr"], cwd=ROOT).split("\0")
    expected = {p.removeprefix("src/") for p in tracked if p and "__pycache__" not in p}
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    missing = sorted(expected - names)
    assert not missing, f"{len(missing)} package files are not in the wheel, e.g. {missing[:5]}"


def test_quick_start_runs_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{installed / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    where = _run([str(installed / "bin/python"), "-c", "import rlvr; print(rlvr.__file__)"], cwd=tmp_path, env=env)
    assert str(installed) in where and str(ROOT / "src") not in where, where
    quick_start = blocks("core", "bash", [README])
    assert quick_start, "the README must show the CLI quick start"
    for block in quick_start:
        _run(["bash", "-euo", "pipefail", "-c", block.code], cwd=tmp_path, env=env, timeout=900)


def test_installed_package_loads_its_shipped_tasks(installed: Path, tmp_path: Path) -> None:
    code = (
        "import rlvr\n"
        "env = rlvr.make('terminal/tbench-v1')\n"
        "print(len(env.tasks))\n"
        "env.close()\n"
        "from rlvr.environments.sql_data import chinook_rows\n"
        "print(len(list(chinook_rows())))\n"
    )
    out = _run([str(installed / "bin/python"), "-c", code], cwd=tmp_path).split()
    assert int(out[0]) >= 20 and int(out[1]) >= 20, out
