"""The tiny project `rlvr forge` tests write themselves, and real sdists when fetched (shared test helpers).

`tinycalc` is a flat-layout project with a `tests/` folder: functions its tests exercise (and one
they never run), a test that always fails (never kept) and a test inherited from a mixin (the
grader cannot sign it: never kept). Real PyPI sdists are fetched by `scripts/setup.sh` into
`.cache/forge-sdists/`; tests that need them skip cleanly when they are absent.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SDISTS = ROOT / ".cache" / "forge-sdists"

CORE = '''"""Small helpers."""


def clamp(x, lo, hi):
    """`x` limited to [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    total = 0
    for value in values:
        total += value
    return total / len(values)


def is_even(n):
    return n % 2 == 0


def parse_pairs(text):
    out = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        out[key.strip()] = int(value)
    return out


def never_tested(x):
    return x * 2
'''

TESTS = '''import pytest

from tinycalc import clamp, is_even, mean, parse_pairs


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_edges():
    assert clamp(0, 0, 10) == 0 and clamp(10, 0, 10) == 10


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


@pytest.mark.parametrize("n,even", [(1, False), (2, True), (7, False), (10, True)])
def test_is_even(n, even):
    assert is_even(n) is even


def test_parse_pairs():
    assert parse_pairs("a=1, b = 2") == {"a": 1, "b": 2}


def test_always_fails():
    assert clamp(1, 0, 2) == 2


class Base:
    def test_inherited(self):
        assert mean([2]) == 2


class TestSub(Base):
    pass
'''


def write_tinycalc(root: Path) -> Path:
    """Write the `tinycalc` project under `root` and return its folder."""
    project = root / "tinycalc"
    (project / "tinycalc").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "tinycalc"\nversion = "1.0"\n'
                                            'requires-python = ">=3.8"\n')
    (project / "README.md").write_text("# tinycalc\n")
    (project / "tinycalc" / "__init__.py").write_text(
        "from tinycalc.core import clamp, is_even, mean, never_tested, parse_pairs\n")
    (project / "tinycalc" / "core.py").write_text(CORE)
    (project / "tests" / "test_core.py").write_text(TESTS)
    return project


def real_sdist(pattern: str) -> Path:
    """The fetched sdist matching `pattern` in .cache/forge-sdists (skip when absent)."""
    found = sorted(SDISTS.glob(pattern))
    if not found:
        pytest.skip(f"no {pattern} in {SDISTS}: run `bash scripts/setup.sh core` to fetch the forge test sdists")
    return found[-1]


needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")


@contextlib.contextmanager
def vendored_copy(files: dict[str, str]) -> Iterator[Path]:
    """Files planted under a fresh folder of /usr/local/share (a path every sandbox reads), removed after.

    A program that vendors the project (as google-cloud-sdk vendors inflection) looks like this to
    the sandbox. Skips the test when /usr/local/share cannot be written here.
    """
    base = Path("/usr/local/share")
    if not os.access(base, os.W_OK):
        pytest.skip(f"{base} is not writable here: no vendored copy can be planted")
    root = base / f"rlvr-forge-vendored-{uuid.uuid4().hex[:10]}"
    try:
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fix_hunk(task_dir: Path) -> tuple[str, str, str]:
    """(path, buggy text, fixed text) of the first hunk of a forge task's reverse patch (`solution/fix.patch`)."""
    lines = (task_dir / "solution" / "fix.patch").read_text().splitlines()
    path = lines[1][len("+++ b/"):]
    hunk = lines[lines.index(next(line for line in lines if line.startswith("@@"))) + 1:]
    hunk = hunk[:next((i for i, line in enumerate(hunk) if line.startswith("@@")), len(hunk))]
    old = "".join(line[1:] + "\n" for line in hunk if line[:1] in (" ", "-"))
    new = "".join(line[1:] + "\n" for line in hunk if line[:1] in (" ", "+"))
    return path, old, new
