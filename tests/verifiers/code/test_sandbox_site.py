"""pytest-format tests work wherever the checkout lives (CI clones into a directory we do not control).

The CI situation: running as root, the project venv sits under a mode-0700 directory (e.g. a
checkout in /root), so the sandbox uid (65534) cannot read the pytest installed there. These tests
rebuild that situation with a real copy of pytest and its requirements under a 0700 directory and
check that the sandbox gets a staged, read-only copy instead (`rlvr.sandbox.site_packages`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from rlvr.core.errors import SandboxError
from rlvr.sandbox import LocalSandbox, find_bwrap
from rlvr.sandbox.isolation import sandbox_python
from rlvr.sandbox.site_packages import (
    STAGE_PREFIX,
    _files,
    distribution_closure,
    sandbox_python_version,
    sandbox_site_path,
    stage_files,
)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox runs as another uid only for root")
needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")

SQUARE_TESTS = {"format": "pytest", "files": {"test_sq.py": "from solution import square\n\n"
                                                            "def test_three():\n    assert square(3) == 9\n\n"
                                                            "def test_four():\n    assert square(4) == 16\n"}}


@pytest.fixture
def stage_root():
    """A world-enterable directory for staged copies (as /tmp is), removed afterwards."""
    root = tempfile.mkdtemp(prefix="rlvr-stage-test-", dir="/tmp")  # outside pytest's 0700 tmp
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def closed_site(tmp_path):
    """A venv-like site-packages with a real copy of pytest and its requirements, under a 0700 directory."""
    closed = tmp_path / "root-home"
    site = closed / "ci-checkout" / ".venv" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
        "site-packages"
    site.mkdir(parents=True)
    for dist in distribution_closure(["pytest"]):
        for rel, source in _files(dist):
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, site / rel)
    os.chmod(closed, 0o700)
    return site


def _staged(root: str) -> list[Path]:
    return sorted(Path(root).glob(f"{STAGE_PREFIX}-*"))


def test_closure_is_pytest_and_its_runtime_requirements_only():
    names = {d.metadata["Name"].lower() for d in distribution_closure(["pytest"])}
    assert {"pytest", "pluggy", "iniconfig", "packaging"} <= names
    if sys.version_info >= (3, 11):
        assert not names & {"exceptiongroup", "tomli"}  # python_version < "3.11" markers
    assert not names & {"hypothesis", "xmlschema", "numpy"}  # extra == "dev" requirements are not runtime ones
    with pytest.raises(SandboxError, match="pip install no-such-dist-rlvr"):
        distribution_closure(["no-such-dist-rlvr"])


@needs_root
def test_unreachable_packages_are_staged_read_only_and_reused(closed_site, stage_root):
    sandbox_site_path.cache_clear()
    (path,) = sandbox_site_path(("pytest",), sandbox_python(), (str(closed_site),), stage_root)
    assert Path(path).parent == Path(stage_root) and _staged(stage_root) == [Path(path)]
    for top in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging"):
        assert (Path(path) / top / "__init__.py").is_file(), top
    for dirpath, dirs, names in os.walk(path):
        assert "__pycache__" not in dirs
        for entry in [dirpath, *(os.path.join(dirpath, n) for n in names)]:
            info = os.lstat(entry)
            assert info.st_uid == 0 and stat.S_IMODE(info.st_mode) == (0o755 if entry == dirpath else 0o644), entry
    inode = os.stat(path).st_ino
    sandbox_site_path.cache_clear()
    assert sandbox_site_path(("pytest",), sandbox_python(), (str(closed_site),), stage_root) == (path,)
    assert os.stat(path).st_ino == inode and len(_staged(stage_root)) == 1  # reused, not rebuilt
    assert not [p for p in Path(stage_root).iterdir() if p.name.startswith(".")]  # no half-built leftovers


@needs_root
def test_reachable_packages_are_mounted_in_place(stage_root):
    """This environment's own site-packages stay as they are when the sandbox uid can read them."""
    sandbox_site_path.cache_clear()
    paths = sandbox_site_path(("pytest",), sandbox_python(), None, stage_root)
    import pytest as this_pytest

    if not all(os.access(p, os.R_OK) for p in paths) or str(Path(this_pytest.__file__).parents[1]) not in paths:
        pytest.skip("this environment's pytest is not where the sandbox uid can read it")
    assert _staged(stage_root) == []


@needs_root
@needs_bwrap
def test_sandbox_imports_the_staged_copy_and_cannot_change_it(closed_site, stage_root):
    sandbox_site_path.cache_clear()
    (path,) = sandbox_site_path(("pytest",), sandbox_python(), (str(closed_site),), stage_root)
    with pytest.raises(SandboxError, match="not readable by the sandbox uid"):
        LocalSandbox(python_path=(str(closed_site),), pool_size=0)  # the unstaged directory stays an error
    box = LocalSandbox(python_path=(path,), pool_size=0, require_full_isolation=True)
    probe = ("import os, pytest, pluggy\nprint(pytest.__file__)\ntry:\n    open(os.path.join(os.path.dirname("
             "pytest.__file__), 'x.py'), 'w')\nexcept OSError as exc:\n    print('refused', exc.errno)\n")
    result = box.run([box.python, "-c", probe], timeout_s=30)
    assert result.ok, result.stderr
    first, second = result.stdout.decode().splitlines()
    assert first == f"{path}/pytest/__init__.py" and second.startswith("refused")


@needs_root
def test_a_foreign_or_linked_stage_directory_is_refused(closed_site, stage_root):
    """Another user could pre-create the (predictable) directory name in /tmp and plant a pytest in it."""
    files = [(rel, src) for d in distribution_closure(["pytest"], [str(closed_site)]) for rel, src in _files(d)]
    path = stage_files(files, "key-1", stage_root)
    os.chown(path, 65534, 65534)
    with pytest.raises(SandboxError, match="cannot be trusted"):
        stage_files(files, "key-1", stage_root)
    shutil.rmtree(path)
    os.symlink(str(closed_site), path)
    with pytest.raises(SandboxError, match="cannot be trusted"):
        stage_files(files, "key-1", stage_root)


def test_sandbox_python_of_another_version_is_a_clear_error(tmp_path):
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    others = [p for d in ("/usr/bin", "/usr/local/bin") for p in sorted(Path(d).glob("python3.[0-9]*"))
              if re.fullmatch(r"python3\.\d+", p.name) and p.name[6:] != here and os.access(p, os.X_OK)]
    broken = tmp_path / "python-missing"
    with pytest.raises(SandboxError, match="cannot read the version of the sandbox Python"):
        sandbox_python_version(str(broken))
    if not others:
        pytest.skip(f"no Python other than {here} installed to show the version check")
    sandbox_site_path.cache_clear()
    with pytest.raises(SandboxError, match=rf"is \d+\.\d+ but .* Python {here}"):
        sandbox_site_path(("pytest",), str(others[0]))


_CI_SCRIPT = textwrap.dedent("""
    import json, sys
    import pytest
    from rlvr.verifiers.code import UnitTestVerifier
    from rlvr.verifiers.code.pytest_format import pytest_python_path
    ref = json.loads(sys.argv[1])
    v = UnitTestVerifier(test_timeout_s=20, timeout_s=60, sandbox={"pool_size": 0, "require_full_isolation": True})
    good = v.verify("def square(x):\\n    return x * x\\n", ref)
    bad = v.verify("def square(x):\\n    return x + x\\n", ref)
    print(json.dumps({"pytest": pytest.__file__, "path": pytest_python_path(), "good": good.status,
                      "bad": bad.status, "detail": good.detail + " | " + bad.detail}))
""")


@needs_root
@needs_bwrap
def test_ci_checkout_under_a_closed_directory_gives_real_verdicts(closed_site, stage_root):
    """End to end in a fresh process whose pytest is imported from the closed venv-like directory."""
    env = {**os.environ, "PYTHONPATH": str(closed_site), "TMPDIR": stage_root, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _CI_SCRIPT, json.dumps(SQUARE_TESTS)], env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["pytest"].startswith(str(closed_site))  # the packages really come from the closed directory
    (path,) = report["path"]
    assert Path(path).parent == Path(stage_root)
    assert (report["good"], report["bad"]) == ("correct", "incorrect"), report["detail"]
