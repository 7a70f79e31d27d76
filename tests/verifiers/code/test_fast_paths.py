"""The code verifier's fast paths keep their guarantees: prelude namespaces, version-tag restore, instrument cache."""

from __future__ import annotations

import ast
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.sandbox import LocalSandbox
from rlvr.verifiers.code import UnitTestVerifier
from rlvr.verifiers.code.execution import CHILD_SOURCE
from rlvr.verifiers.code.rewrite import _Rewriter, instrument, instrument_cached

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing (apt install bubblewrap)")

PRELUDE = "COUNTER = [0]\nimport math\n"


@needs_bwrap
def test_prelude_namespace_is_private_per_job():
    box = LocalSandbox(timeout_s=5, pool_size=1)
    try:
        outs = [box.run_python("COUNTER[0] += 1\nmath.pi = 3\nprint(COUNTER[0], math.pi)", prelude=PRELUDE).stdout
                for _ in range(3)]
        assert outs == [b"1 3\n"] * 3  # each job starts from the prelude's state, not the last job's
        broken = box.run_python("print('after')", prelude="raise ValueError('bad prelude')\n")
        assert b"ValueError: bad prelude" in broken.stderr and broken.exit_code == 1
        assert box.run_python("print(COUNTER)", prelude=PRELUDE).stdout == b"[0]\n"  # the worker survived
    finally:
        box.close()


def test_version_reader_detects_writes_in_the_sandbox_python():
    """The version-tag fast path is active for the interpreter sandboxes use, and sees every kind of write."""
    code = ("import math, builtins\n" + CHILD_SOURCE + "\n"
            "assert _READ_VERSION is not None\n"
            "v = _version(builtins.__dict__); assert _version(builtins.__dict__) == v\n"
            "builtins.abs = round; assert _version(builtins.__dict__) != v\n"
            "v = _version(math.__dict__); setattr(math, 'isclose', max); assert _version(math.__dict__) != v\n"
            "v = _version(math.__dict__); math.__dict__.pop('tau'); assert _version(math.__dict__) != v\n"
            "print('ok')\n")
    out = subprocess.run(["/usr/bin/python3", "-I", "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "ok", out.stderr


@needs_bwrap
@pytest.mark.parametrize("patch", [
    "import builtins; builtins.abs = lambda x: 0",
    "import math; math.__dict__['isclose'] = lambda *a, **k: True",
    "import sys, types; fake = types.ModuleType('math'); fake.isclose = lambda *a, **k: True; "
    "sys.modules['math'] = fake",
])
def test_patches_are_still_undone_before_the_tests(patch):
    verifier = UnitTestVerifier()
    try:
        tests = "import math\nassert abs(f(1) - 2.5) < 1e-6\nassert math.isclose(f(2), 7.0)\n"
        verdict = verifier.verify(f"{patch}\ndef f(x):\n    return 0.0\n", {"format": "assert", "tests": tests})
        assert verdict.status == "incorrect", verdict.detail
        good = verifier.verify("def f(x):\n    return x + 1.5 if x == 1 else 7.0\n",
                               {"format": "assert", "tests": tests})
        assert good.status == "correct", good.detail
    finally:
        verifier.close()


SOURCES = [
    "assert f(1) == 2\n",
    "def check(c):\n    assert c('é') == 'ÉÉ', 'msg'\n    assert c(\n        [1,\n 2]) == [2,\n 1]\n",
    "x = 1\r\nassert x in (1, 2)\r\nassert not f('\\u00e9\\f') != 'é'\n",
    "import math\nfrom os import path\nif True:\n    assert math.isclose(g(), 1.0)  # 中文\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_segments_match_ast_get_source_segment(source):
    rewriter = _Rewriter(source)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assert, ast.expr)):
            assert rewriter.segment(node) == ast.get_source_segment(source, node)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["é", "x", "1", " ", "'a'", "中", "\\t"]), min_size=1, max_size=8))
def test_segments_match_for_generated_asserts(parts):
    source = f"assert f({', '.join(parts)!r}) == {''.join(parts)!r}\n    \nassert (\n  g({len(parts)})\n)\n"
    rewriter = _Rewriter(source)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assert, ast.expr)):
            assert rewriter.segment(node) == ast.get_source_segment(source, node)


def test_instrument_cache_returns_equal_results_and_imports():
    source = "import math\nimport os.path as p\nfrom collections import Counter\nfrom . import x\n" \
             "def check(c):\n    import json\n    assert c(1) == 2\n"
    first = instrument_cached(source)
    assert instrument_cached(source) is first
    assert first.imports == ("collections", "json", "math", "os.path")
    code, sites = instrument(source)
    assert (code, tuple(sites)) == (first.code, first.sites)
    sites.clear()  # a caller's copy: the cache is unaffected
    assert len(instrument_cached(source).sites) == 1
