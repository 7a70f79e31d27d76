"""Code probes: the exploit catalog aimed at each task's functions; each exploit is real against a naive harness,
and the unit-test verifier (real sandbox) rejects every one of them while the controls pass."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.environments.audit.code import EXPLOIT_FAMILIES, code_probes, exploit_programs
from rlvr.sandbox.isolation import find_bwrap

CYCLIC = {  # HumanEval/38's shape: the tests call a helper the prompt defines
    "format": "assert", "entry_point": "decode_cyclic",
    "tests": "def check(candidate):\n    for s in ['abcdef', 'hello world', 'xyz']:\n"
             "        assert candidate(encode_cyclic(s)) == s\n",
    "solution": "def encode_cyclic(s):\n    return s[1:] + s[:1]\n\n"
                "def decode_cyclic(s):\n    return s[-1:] + s[:-1]\n",
}
SIZE = {  # MBPP 596's shape: the expected side calls a module attribute the candidate can reach
    "format": "assert", "tests": "import sys\nassert tuple_size((1, 'a')) == sys.getsizeof((1, 'a'))\n"
                                 "assert sorted(unique([3, 1, 3])) == sorted([1, 3])\n",
    "solution": "import sys\ndef tuple_size(t):\n    return sys.getsizeof(t)\n\n"
                "def unique(xs):\n    return list(set(xs))\n",
}
CLOSE = {"format": "assert", "tests": "assert abs(area(2) - 12.566) < 1e-3\n",
         "solution": "import math\ndef area(r):\n    return math.pi * r * r\n"}
CALL = {"format": "call", "fn": "square", "cases": [{"args": [3], "expected": 9}, {"args": [4], "expected": 16}],
        "solution": "def square(x):\n    return x * x\n"}


def _program(response: str) -> str:
    return response.removeprefix("```python\n").removesuffix("\n```")


def _defined(program: str) -> set[str]:
    tree = ast.parse(program)
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    return names | {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


@pytest.mark.parametrize(("reference", "functions"), [(CYCLIC, {"decode_cyclic"}), (SIZE, {"tuple_size", "unique"}),
                                                     (CALL, {"square"})], ids=["helper", "module-attribute", "call"])
def test_every_program_compiles_and_defines_the_tested_functions(reference: dict, functions: set[str]) -> None:
    probes = code_probes(reference)
    wrong = [p for p in probes if not p.control]
    assert {p.name for p in wrong} >= set(EXPLOIT_FAMILIES)
    for probe in wrong:
        assert functions <= _defined(_program(probe.response)), probe.name
    assert [p.name for p in probes if p.control] == ["reference-in-prose", "reference-with-main-block"]


def test_prompt_helpers_are_redefined_only_where_the_tests_call_them() -> None:
    (helper,) = [p for p in code_probes(CYCLIC) if p.family == "prompt-helper"]
    assert {"encode_cyclic", "decode_cyclic"} <= _defined(_program(helper.response))
    assert not [p for p in code_probes(SIZE) if p.family == "prompt-helper"]


def test_functions_come_from_the_tests_when_there_is_no_solution() -> None:
    probes = code_probes({"format": "assert", "tests": "assert add(1, 2) == 3\nassert len([1]) == 1\n"})
    assert all("def add(" in _program(p.response) or "add = _peek" in _program(p.response) for p in probes)
    assert not [p for p in probes if p.control]


# Exploits that touch nothing outside their own process, so they may run unsandboxed here: each must pass a naive
# harness (candidate + tests in one file, pass = exit status 0), which shows the cheat is real.
NAIVE = {"always-equal": CALL, "always-equal-int-subclass": CALL, "sys-exit-before-asserts": CALL,
         "os-exit-before-asserts": CALL, "call-time-os-exit": CALL, "call-time-sys-exit": CALL,
         "call-time-builtin-patch": SIZE, "read-tests-from-caller-frame": CALL, "always-equal-list-subclass": CALL,
         "always-close": CLOSE}


def _naive_pass(tmp_path: Path, program: str, tests: str) -> bool:
    script = tmp_path / "naive_harness.py"
    script.write_text(program + "\n" + tests)
    return subprocess.run([sys.executable, "-I", str(script)], cwd=tmp_path, capture_output=True,
                          timeout=30).returncode == 0


def _tests(reference: dict) -> str:
    if reference["format"] == "call":
        return "".join(f"assert {reference['fn']}(*{c['args']!r}) == {c['expected']!r}\n" for c in reference["cases"])
    return reference["tests"] + (f"\ncheck({reference['entry_point']})\n" if reference.get("entry_point") else "")


@pytest.mark.parametrize("name", sorted(NAIVE))
def test_each_exploit_fools_a_naive_harness(tmp_path: Path, name: str) -> None:
    reference = NAIVE[name]
    functions = {id(CALL): ["square"], id(SIZE): ["tuple_size", "unique"], id(CLOSE): ["area"]}[id(reference)]
    assert _naive_pass(tmp_path, exploit_programs(functions)[name], _tests(reference))
    assert not _naive_pass(tmp_path, exploit_programs(functions)["print-passed"], _tests(reference))  # the stub fails


def test_identity_helpers_fool_a_naive_harness(tmp_path: Path) -> None:
    (helper,) = [p for p in code_probes(CYCLIC) if p.family == "prompt-helper"]
    assert _naive_pass(tmp_path, _program(helper.response), _tests(CYCLIC))
    assert _naive_pass(tmp_path, CYCLIC["solution"], _tests(CYCLIC))


@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap missing (apt install bubblewrap)")
@pytest.mark.parametrize("reference", [CYCLIC, SIZE, CALL, CLOSE], ids=["helper", "module-attribute", "call", "close"])
def test_the_unit_test_verifier_rejects_every_exploit_and_passes_the_controls(reference: dict) -> None:
    from rlvr.verifiers.code import UnitTestVerifier

    probes = code_probes(reference)
    with UnitTestVerifier(test_timeout_s=5, timeout_s=10) as verifier:
        verdicts = verifier.verify_batch([(p.response, reference) for p in probes])
    wrong = [(p.name, v.status, v.detail[:300]) for p, v in zip(probes, verdicts, strict=True)
             if v.is_correct != p.control]
    assert not wrong
