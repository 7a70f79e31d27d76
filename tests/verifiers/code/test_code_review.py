"""Regressions from the review of the code verifier and sandbox (exploits beyond `test_exploits.py`).

Each test runs the real sandbox. Candidates are wrong solutions that try to pass anyway.
"""

from __future__ import annotations

import os
import time

import pytest

from rlvr.core.errors import SandboxError
from rlvr.sandbox import LocalSandbox
from rlvr.verifiers.code import UnitTestVerifier
from rlvr.verifiers.code._pytest import run_pytest
from rlvr.verifiers.code.spec import as_test_spec
from rlvr.verifiers.code.verifier import CodeConfig, _Clock, _SandboxFailure

TRUNCATE = {"format": "assert", "entry_point": "truncate",
            "tests": "def check(candidate):\n    assert abs(candidate(1.33) - 0.33) < 1e-6\n"}
AREA = {"format": "assert", "tests": "import math\nassert math.isclose(area(2), 12.566, rel_tol=0.01)"}
AREA_NO_IMPORT = {"format": "assert", "tests": "assert math.isclose(area(2), 12.566, rel_tol=0.01)"}
SQUARE = {"format": "assert", "tests": "assert square(3) == 9\nassert square(4) == 16"}

# Wrong solutions that change what the tests' own expressions compute (shared interpreter state).
STATE_TAMPERING = {
    "builtins-abs": ("def truncate(x):\n    return 7.0\nimport builtins\nbuiltins.abs = lambda x: 0\n", TRUNCATE),
    "builtins-dict-swap": ("def truncate(x):\n    return 7.0\n__builtins__ = dict(vars(__import__('builtins')), "
                           "abs=lambda x: 0)\n", TRUNCATE),
    "module-attribute": ("import math\nmath.isclose = lambda *a, **k: True\ndef area(r):\n    return 1.0\n", AREA),
    "sys-modules-entry": ("import sys, types\nfake = types.ModuleType('math')\nfake.isclose = lambda *a, **k: True\n"
                          "sys.modules['math'] = fake\ndef area(r):\n    return 1.0\n", AREA),
    "module-name-rebound": ("class math:\n    isclose = staticmethod(lambda *a, **k: True)\ndef area(r):\n"
                            "    return 1.0\n", AREA_NO_IMPORT),
    "module-imported-by-tests-only": ("import cmath\ncmath.isclose = lambda *a, **k: True\ndef area(r):\n"
                                      "    return 1.0\n",
                                      {"format": "assert",
                                       "tests": "import cmath\nassert cmath.isclose(area(2), 12.566)"}),
}


@pytest.fixture(scope="module")
def verifier():
    v = UnitTestVerifier(test_timeout_s=2, timeout_s=4, sandbox={"pool_size": 1})
    yield v
    v.close()


@pytest.mark.parametrize("name", sorted(STATE_TAMPERING))
def test_candidate_cannot_change_what_the_tests_compute(verifier, name):
    code, ref = STATE_TAMPERING[name]
    verdict = verifier.verify(code, ref)
    assert verdict.status == "incorrect", verdict.detail


def test_honest_solutions_still_pass_with_restored_state(verifier):
    """Restoring state must not break candidates that import and use the same modules as the tests."""
    code = "import math\nfrom collections import Counter\ndef area(r):\n    return math.pi * r * r\n"
    assert verifier.verify(code, AREA).status == "correct"
    assert verifier.verify(code, AREA_NO_IMPORT).status == "correct"
    truncate = "import builtins\ndef truncate(x):\n    return x - int(x)\n"
    assert verifier.verify(truncate, TRUNCATE).status == "correct"
    # MBPP 126 style: the function under test is named like a builtin
    # (known from the reference solution, or named in `functions`)
    code = "def sum(a, b):\n    return len([d for d in range(1, min(a, b)) if a % d == 0 and b % d == 0]) + 6 - 2\n"
    summed = {"format": "assert", "tests": "assert sum(10, 15) == 6", "solution": code}
    assert verifier.verify(code, summed).status == "correct"
    assert verifier.verify(code, {"format": "assert", "tests": "assert sum(10, 15) == 6",
                                  "functions": ["sum"]}).status == "correct"


@pytest.mark.parametrize("attack", ["import os\nos.kill(os.getppid(), 9)\n", "import os\nos.kill(-1, 9)\n"])
def test_killing_the_supervisor_is_incorrect_not_error(verifier, attack):
    """An error verdict (reward None) is dropped by trainers: a policy must not escape a 0 by killing its grader."""
    verdict = verifier.verify("def square(x):\n    return x + 1\n" + attack, SQUARE)
    assert verdict.status == "incorrect" and verdict.reward == 0.0, verdict.detail
    assert "killed its sandbox supervisor" in verdict.detail
    assert verifier.verify("def square(x):\n    return x * x\n", SQUARE).status == "correct"


def test_job_sees_no_supervisor_file_descriptors():
    """A job inherits only stdin/stdout/stderr and its result channel, not the supervisor's pipes."""
    with LocalSandbox(pool_size=1) as box:
        result = box.run_python("import os\nprint(sorted(int(f) for f in os.listdir('/proc/self/fd')))\n", timeout_s=5)
    assert result.ok, result.stderr
    assert eval(result.stdout) in ([0, 1, 2, 3], [0, 1, 2, 3, 4])  # 4: the fd listdir itself opened


def test_timeout_is_not_stretched_by_the_cleanup():
    """A timed-out job is reaped before leftovers are hunted (the cleanup used to spin 3 s on its zombie)."""
    with LocalSandbox(pool_size=1) as box:
        box.warm()
        start = time.monotonic()
        result = box.run_python("import time\ntime.sleep(60)\n", timeout_s=1.0)
        elapsed = time.monotonic() - start
        after = box.run_python("print(1)", timeout_s=5)
    assert result.timed_out
    assert elapsed < 3.5, elapsed  # the 1 s limit plus reaping, not plus a 3 s kill loop (a contract, not a speed goal)
    assert after.stdout == b"1\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox runs as another uid only when the caller is root")
def test_unreadable_python_path_is_a_clear_error_not_a_weaker_sandbox(tmp_path):
    """A mount the sandbox uid cannot read used to make bubblewrap fail its probe and fall back silently."""
    closed = tmp_path / "closed" / "site-packages"
    closed.mkdir(parents=True)
    os.chmod(closed.parent, 0o700)
    with pytest.raises(SandboxError, match=r"python_path entry .* not readable by the sandbox uid"):
        LocalSandbox(python_path=(str(closed),), pool_size=0)


def test_pytest_missing_in_the_sandbox_is_an_error_verdict():
    """`No module named pytest` is the grader's fault: error (reward None), never a 0 for the candidate."""
    box = LocalSandbox(pool_size=0)  # no python_path: the sandbox's Python alone
    if box.run([box.python, "-c", "import pytest"], timeout_s=30).ok:
        pytest.skip(f"{box.python} has pytest itself")
    config = CodeConfig()
    spec = as_test_spec({"format": "pytest", "files": {"test_sq.py": "from solution import square\n\n"
                                                                   "def test_sq():\n    assert square(3) == 9\n"}})
    with pytest.raises(_SandboxFailure, match="pytest cannot be imported in the sandbox"):
        run_pytest(spec, "def square(x):\n    return x * x\n", config, box, _Clock(30))
