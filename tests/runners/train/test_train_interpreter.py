"""Which interpreter runs a backend, and what it can do there (`rlvr.runners.train.interpreter`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlvr.core.errors import BackendError, ConfigError
from rlvr.runners.cli import app
from rlvr.runners.train.interpreter import Probe, backend_python, probe, require_launchable

runner = CliRunner()


def test_backend_python_names_a_folder_and_the_cli_refuses_bad_backend_options(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder, not a Python interpreter"):
        backend_python("verl", tmp_path)
    result = runner.invoke(app, ["train", "--backend", "jax", "-o", str(tmp_path / "run")])
    assert result.exit_code == 2 and "--backend must be one of trl, verl, openrlhf; got 'jax'" in result.output
    result = runner.invoke(app, ["train", "--backend", "trl", "--n-gpus", "2", "-o", str(tmp_path / "run")])
    assert result.exit_code == 2 and "--n-gpus is for --backend verl|openrlhf" in result.output
    assert not (tmp_path / "run").exists()


def test_backend_python_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RLVR_VERL_PYTHON", raising=False)
    assert backend_python("verl") == sys.executable
    monkeypatch.setenv("RLVR_VERL_PYTHON", sys.executable)
    assert backend_python("verl") == sys.executable
    monkeypatch.setenv("RLVR_VERL_PYTHON", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match=r"\$RLVR_VERL_PYTHON .* does not exist"):
        backend_python("verl")
    assert backend_python("verl", sys.executable) == sys.executable  # the flag wins over the variable
    with pytest.raises(ConfigError, match="unknown backend 'jax'"):
        backend_python("jax")


def test_a_relative_backend_python_is_made_absolute_without_leaving_its_venv(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The trainer starts in its run folder, so `--backend-python .venvs/verl/bin/python` (the README's form) must be
    absolute; a venv's python is a symlink, which must not be resolved to the base interpreter."""
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    chosen = backend_python("verl", "venv/bin/python")
    assert chosen == str(venv_bin / "python")
    monkeypatch.chdir("/")
    assert Path(chosen).is_file()


def test_probe_and_gpu_check_name_the_fix() -> None:
    found = probe("openrlhf", sys.executable)
    assert found.info["rlvr"] and found.python == sys.executable
    if "backend_error" in found.info:
        assert "openrlhf does not import" in (found.problem() or "")
        with pytest.raises(BackendError, match="--dry-run"):
            require_launchable(found)
    no_gpu = Probe("verl", "/venv/bin/python", {"rlvr": "0.1", "backend": "0.9.1", "cuda_devices": 0})
    assert no_gpu.problem() is None
    with pytest.raises(BackendError, match=r"sees 0 \(needs 1\).*--dry-run"):
        require_launchable(no_gpu)
    one = Probe("verl", "/venv/bin/python", {"rlvr": "0.1", "backend": "0.9.1", "cuda_devices": 1})
    require_launchable(one)
    with pytest.raises(BackendError, match=r"sees 1 \(needs 2\)"):
        require_launchable(one, n_gpus=2)
    broken = probe("verl", "/bin/false")
    assert "error" in broken.info and "could not be probed" in (broken.problem() or "")


@pytest.mark.openrlhf
def test_probe_reports_the_installed_openrlhf_version() -> None:
    pytest.importorskip("openrlhf")
    from importlib import metadata

    found = probe("openrlhf", sys.executable)
    assert found.problem() is None
    assert found.info["backend"] == metadata.version("openrlhf")  # openrlhf has no __version__ attribute


def test_probe_of_a_python_without_rlvr_names_the_fix() -> None:
    found = probe("verl", "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable)
    if "rlvr_error" not in found.info:
        pytest.skip("the system python has rlvr")
    assert "pip install rlvr there" in (found.problem() or "")


def test_env_problem_reports_an_env_that_does_not_build_in_the_backend_python() -> None:
    from rlvr.runners.train.interpreter import env_problem

    assert env_problem(sys.executable, "math/reasoning-gym-v1", {"size": 4}) is None
    problem = env_problem(sys.executable, "math/reasoning-gym-v1", {"size": "abc"})
    assert problem is not None and "size must be a positive int" in problem
    problem = env_problem(sys.executable, "math/no-such-env", None)
    assert problem is not None and "unknown environment 'math/no-such-env'" in problem
