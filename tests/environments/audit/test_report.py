"""The audit's report and exit status: a weak verifier is caught, a verifier of no known domain gets the generic
families, the JSON schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rlvr.core.types import EnvSpec, Task, Verdict
from rlvr.environments.audit import audit, verifier_domain
from rlvr.environments.registry import registry
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.runners.cli import app
from rlvr.verifiers.math import MathVerifier
from rlvr.verifiers.testing import ConstantVerifier
from rlvr.verifiers.wrappers import FormatReward

GOLDS = ["18", "\\frac{1}{2}", "x=1, y=2", "(B)"]
TASKS = [Task(id=f"t{i}", prompt=[{"role": "user", "content": "q"}], reference=g) for i, g in enumerate(GOLDS)]


class AlwaysCorrectMath(MathVerifier):
    """A weak math verifier (a test double): every response is correct."""

    def scorer(self) -> Callable[[str, Any], Verdict]:
        return ConstantVerifier().scorer()


class NeverCorrectMath(MathVerifier):
    """A broken math verifier (a test double): nothing is correct, so every control fails."""

    def scorer(self) -> Callable[[str, Any], Verdict]:
        return ConstantVerifier("incorrect", 0.0).scorer()


def _env(verifier: Any) -> SingleTurnEnv:
    return SingleTurnEnv(TASKS, verifier, EnvSpec(id="test/audit-v1"))


def test_a_weak_verifier_has_every_wrong_probe_as_a_false_pass() -> None:
    report = audit(_env(AlwaysCorrectMath(scoring="inline")), n=len(TASKS))
    assert report.domain == "math" and report.n == 4
    assert report.tried > 40 and report.false_passes == report.tried
    assert report.controls_failed == 0 and report.controls.tried >= 8
    assert set(report.families) == {"value", "suffix", "hedge", "injection", "glued", "empty", "format-only", "guess"}
    example = report.families["value"].examples[0]
    assert set(example) == {"task_id", "family", "probe", "response", "status", "reward", "detail"}
    assert example["status"] == "correct" and len(report.families["value"].examples) == 5


def test_a_verifier_that_rejects_everything_fails_every_control() -> None:
    report = audit(_env(NeverCorrectMath(scoring="inline")), n=2)
    assert report.false_passes == 0 and report.controls_failed == report.controls.tried > 0
    assert not report.passed


def test_the_real_math_verifier_is_audited_through_a_wrapper() -> None:
    env = _env(FormatReward(MathVerifier(scoring="inline"), weight=0.1))
    assert verifier_domain(env.verifier) == "math"
    report = audit(env, n=1)
    assert report.tried and report.controls.tried


def test_json_report_schema() -> None:
    data = audit(_env(AlwaysCorrectMath(scoring="inline")), n=2).to_json()
    assert json.loads(json.dumps(data)) == data
    assert {"tried", "false_passes", "controls_failed", "families"} <= set(data)
    assert all(isinstance(data[k], int) for k in ("tried", "false_passes", "controls_failed"))
    assert data["tried"] == sum(f["tried"] for f in data["families"].values())
    assert data["false_passes"] == sum(f["false_passes"] for f in data["families"].values())
    for family in data["families"].values():
        assert {"tried", "false_passes", "examples"} <= set(family) and isinstance(family["examples"], list)
    assert set(data["controls"]) == {"tried", "failed", "errors", "examples"}


def test_a_verifier_of_no_known_domain_gets_every_generic_family_and_each_probe_counts() -> None:
    report = audit(_env(ConstantVerifier()), n=len(TASKS))
    assert report.domain == "generic" and report.n == 4 and not report.skipped
    assert set(report.families) == {"empty", "echo", "format-only", "guess"}
    assert report.false_passes == report.tried >= 10 * report.n and report.controls.tried == 0
    sound = audit(_env(ConstantVerifier("incorrect", 0.0)), n=len(TASKS))
    assert sound.domain == "generic" and sound.tried == report.tried and sound.false_passes == 0 and sound.passed


runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    registry.register("test/audit-weak-v1", lambda: _env(AlwaysCorrectMath(scoring="inline")), override=True)
    registry.register("test/audit-constant-v1", lambda: _env(ConstantVerifier()), override=True)


def test_cli_exits_1_on_a_false_pass_and_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    result = runner.invoke(app, ["check", "test/audit-weak-v1", "--adversarial", "-n", "2", "--report", str(out)])
    assert result.exit_code == 1, result.output
    assert "scored correct" in result.output and "hedge" in result.output
    data = json.loads(out.read_text())
    assert data["false_passes"] == data["tried"] > 0 and data["env_id"] == "test/audit-v1"


def test_cli_exits_0_on_a_number_gold_the_verifier_grades_soundly(tmp_path: Path) -> None:
    registry.register("test/audit-number-v1", lambda: SingleTurnEnv(TASKS[:1], MathVerifier(scoring="inline"),
                                                                    EnvSpec(id="test/audit-v1")), override=True)
    out = tmp_path / "audit.json"
    result = runner.invoke(app, ["check", "test/audit-number-v1", "--adversarial", "--report", str(out)])
    data = json.loads(out.read_text())
    assert result.exit_code == (1 if data["false_passes"] else 0), result.output
    assert data["tried"] > 10 and data["controls_failed"] == 0


def test_cli_audits_a_verifier_of_no_known_domain_and_refuses_a_report_without_the_audit() -> None:
    result = runner.invoke(app, ["check", "test/audit-constant-v1", "--adversarial"])
    assert result.exit_code == 1 and "generic" in result.output and "echo" in result.output, result.output
    result = runner.invoke(app, ["check", "test/audit-constant-v1", "--report", "x.json"])
    assert result.exit_code == 2 and "--adversarial" in result.output
