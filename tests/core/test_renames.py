"""Renamed words keep working: old CLI flags warn on stderr, old keyword arguments and config fields
warn `DeprecationWarning` naming the new name, and files written under the old names still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.core.renames import renamed_keys
from rlvr.runners.cli import app
from rlvr.runners.resumable import RunRecord, meta_path

runner = CliRunner()
ENV = ["--env", "math/reasoning-gym-v1", "-a", "task=basic_arithmetic", "-a", "size=4", "-a", "scoring=inline"]


def test_a_run_record_with_old_key_names_resumes(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    meta_path(out).write_text(json.dumps({"model_engine": "vllm", "verifier_config": {"backend": "local"}}))
    RunRecord(out, {"generator": "vllm", "verifier_config": {"provider": "local"}}).check()  # no ConfigError
    RunRecord(out, {"generator": "vllm", "verifier_config": {"backend": "local"}}).check()  # old name given again
    assert renamed_keys({"model_engine": "x", "generator": "y"}) == {"generator": "x"}


# -- model engine -> generator ----------------------------------------------------------------------
@pytest.mark.parametrize("command", ["eval", "synth"])
def test_model_engine_flag_warns_and_still_counts(tmp_path: Path, command: str) -> None:
    args = [command, *ENV, "--model", str(tmp_path), "--model-engine", "foo", "-o",
            str(tmp_path / "out"), *(["-n", "1"] if command == "synth" else [])]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "--model-engine was renamed --generator" in result.stderr
    assert "--generator must be 'transformers' or 'vllm', got 'foo'" in result.stderr


def test_model_engine_field_warns_and_still_counts(tmp_path: Path) -> None:
    from rlvr.runners.eval import EvalConfig

    with pytest.warns(DeprecationWarning, match="'model_engine' was renamed 'generator'"):
        config = EvalConfig.build(env="math/gsm8k-v1", output=tmp_path / "o.jsonl", model_engine="vllm")
    assert config.generator == "vllm"


# -- container engine -> container runtime (podman/docker); podman's --runtime -> OCI runtime -----------
def test_container_config_engine_and_runtime_fields_warn_and_still_count() -> None:
    from rlvr.sandbox.runtimes import ContainerConfig

    with pytest.warns(DeprecationWarning, match="'engine' was renamed 'container_runtime'"):
        assert ContainerConfig(engine="docker").container_runtime == "docker"  # type: ignore[call-arg]
    with pytest.warns(DeprecationWarning, match="'runtime' was renamed 'oci_runtime'"):
        assert ContainerConfig(runtime="runc").oci_runtime == "runc"  # type: ignore[call-arg]


def test_image_functions_take_engine_with_a_warning(tmp_path: Path) -> None:
    from rlvr.core.errors import SandboxError
    from rlvr.sandbox.runtimes import build_image, image_env, image_exists

    with pytest.warns(DeprecationWarning, match="'engine' was renamed 'runtime'"):
        assert image_exists("rlvr-none", engine="/nonexistent/podman") is False  # type: ignore[call-arg]
    with pytest.warns(DeprecationWarning, match="'engine' was renamed 'runtime'"), \
            pytest.raises(SandboxError, match="/nonexistent/podman"):
        image_env("rlvr-none", engine="/nonexistent/podman")  # type: ignore[call-arg]
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    with pytest.warns(DeprecationWarning, match="'engine' was renamed 'runtime'"), \
            pytest.raises(SandboxError, match="container runtime"):
        build_image(tmp_path / "Dockerfile", tmp_path, engine="/nonexistent/podman")  # type: ignore[call-arg]


@pytest.mark.parametrize(("old", "new"), [("container_engine", "container_runtime"), ("engine_info", "runtime_info"),
                                          ("EngineInfo", "RuntimeInfo")])
def test_old_container_names_warn_and_still_resolve(old: str, new: str) -> None:
    from rlvr.sandbox import container

    with pytest.warns(DeprecationWarning, match=f"{old} was renamed {new}"):
        assert getattr(container, old) is getattr(container, new)


# -- sandbox backend -> sandbox provider ----------------------------------------------------------------
def test_code_verifier_backend_warns_and_still_counts() -> None:
    from rlvr.verifiers.code.verifier import CodeConfig, UnitTestVerifier

    with pytest.warns(DeprecationWarning, match="'backend' was renamed 'provider'"):
        assert CodeConfig(backend="local").provider == "local"  # type: ignore[call-arg]
    with pytest.warns(DeprecationWarning, match="'backend' was renamed 'provider'"):
        assert UnitTestVerifier(backend="local").config.provider == "local"


def test_terminal_env_backend_warns_and_still_counts() -> None:
    from rlvr.environments.terminal_data import make_tbench

    with pytest.warns(DeprecationWarning, match="'backend' was renamed 'provider'"):
        env = make_tbench(limit=1, backend="local")  # type: ignore[call-arg]
    assert len(env.tasks) == 1


def test_harbor_env_backend_warns_and_still_counts(tmp_path: Path) -> None:
    from rlvr.core.errors import DataError
    from rlvr.environments.terminal_data import make_harbor

    with pytest.warns(DeprecationWarning, match="'backend' was renamed 'provider'"), pytest.raises(DataError):
        make_harbor(tmp_path, backend="local")  # type: ignore[call-arg]  # an empty folder: no Harbor task


# -- SQL backend -> SQL dialect -------------------------------------------------------------------------
def test_sql_backend_warns_and_still_counts(tmp_path: Path) -> None:
    import sqlite3

    from rlvr.verifiers.sql.config import SQLReference
    from rlvr.verifiers.sql.execute import execute, execute_bounded

    db = tmp_path / "d.sqlite"
    sqlite3.connect(db).close()
    with pytest.warns(DeprecationWarning, match="SQLReference.backend was renamed dialect"):
        assert SQLReference(gold="SELECT 1", db=str(db)).backend == "sqlite"
    for run in (execute, execute_bounded):
        with pytest.warns(DeprecationWarning, match="'backend' was renamed 'dialect'"):
            assert run(str(db), "SELECT 1", backend="sqlite").rows == [(1,)]  # type: ignore[call-arg]


# -- scoring isolation -> scoring (sandbox isolation levels keep the word) --------------------------------
def test_verifier_isolation_warns_and_still_counts() -> None:
    from rlvr.verifiers.base import VerifierConfig
    from rlvr.verifiers.registry import get_verifier

    with pytest.warns(DeprecationWarning, match="'isolation' was renamed 'scoring'"):
        assert VerifierConfig(isolation="inline").scoring == "inline"  # type: ignore[call-arg]
    with pytest.warns(DeprecationWarning, match="'isolation' was renamed 'scoring'"):
        assert get_verifier("math", isolation="inline").config.scoring == "inline"


def test_make_isolation_warns_and_still_counts() -> None:
    import rlvr

    with pytest.warns(DeprecationWarning, match="'isolation' was renamed 'scoring'"):
        env = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=2, isolation="inline")
    assert env.verifier.config.scoring == "inline"


# -- SQL result comparison -> equivalence ----------------------------------------------------------------
def test_sql_compare_names_warn_and_still_count(tmp_path: Path) -> None:
    from rlvr.verifiers import sql
    from rlvr.verifiers.sql import config
    from rlvr.verifiers.sql.config import EquivalenceRules, SQLConfig, SQLReference

    for module in (sql, config):
        with pytest.warns(DeprecationWarning, match="CompareRules was renamed EquivalenceRules"):
            assert module.CompareRules is EquivalenceRules
    with pytest.warns(DeprecationWarning, match="'compare' was renamed 'rules'"):
        assert SQLReference(gold="SELECT 1", db="x.sqlite", compare={"order": "never"}).rules == {"order": "never"}
    with pytest.warns(DeprecationWarning, match="empty_gold='compare' was renamed empty_gold='score'"):
        assert SQLConfig(empty_gold="compare").empty_gold == "score"  # type: ignore[arg-type]


def test_load_sql_tasks_compare_warns_and_still_counts(tmp_path: Path) -> None:
    import sqlite3

    from rlvr.environments.sql_data import load_sql_tasks

    db = tmp_path / "d.sqlite"
    sqlite3.connect(db).close()
    with pytest.warns(DeprecationWarning, match="'compare' was renamed 'rules'"):
        tasks = load_sql_tasks([{"question": "one?", "SQL": "SELECT 1"}], db=db,  # type: ignore[call-arg]
                               compare={"order": "never"})
    assert tasks[0].reference["rules"] == {"order": "never"}


def test_a_run_record_with_old_sql_names_resumes(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    meta_path(out).write_text(json.dumps({"verifier_config": {"empty_gold": "compare", "isolation": "inline"},
                                          "env_args": {"compare": {"order": "never"}}}))
    RunRecord(out, {"verifier_config": {"empty_gold": "score", "scoring": "inline"},
                    "env_args": {"rules": {"order": "never"}}}).check()
