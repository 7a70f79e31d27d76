"""`rlvr export` (`rlvr.runners.export`): the files a veRL or OpenRLHF run needs, listed; bad input refused.

Core venv: the exporters need neither veRL nor OpenRLHF.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from rlvr.adapters.export import read_manifest
from rlvr.runners.cli import app

runner = CliRunner()
SMALL = ["-a", "size=12", "-a", "seed=1"]


def test_export_verl_single_turn_lists_the_files(tmp_path: Path) -> None:
    out = tmp_path / "verl"
    result = runner.invoke(app, ["export", "--backend", "verl", "--env", "math/reasoning-gym-v1", *SMALL, "-o",
                                 str(out), "--val-size", "2"])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert (manifest.backend, manifest.env_id, manifest.env_args) == ("verl", "math/reasoning-gym-v1",
                                                                      {"size": 12, "seed": 1})
    assert (manifest.n_train, manifest.n_val, manifest.multi_turn) == (10, 2, False)
    for role in ("train", "val", "reward", "manifest"):
        assert role in result.output
    for name in manifest.files.values():
        assert (out / name).is_file() and name in result.output
    import pyarrow.parquet as pq

    assert pq.read_table(out / manifest.files["train"]).num_rows == 10


def test_export_openrlhf_multi_turn_writes_the_agent(tmp_path: Path) -> None:
    out = tmp_path / "o"
    result = runner.invoke(app, ["export", "--backend", "openrlhf", "--env", "math/reasoning-gym-tool-v1", *SMALL,
                                 "-o", str(out), "--limit", "5"])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert manifest.multi_turn and manifest.n_train == 5 and "agent" in manifest.files
    assert len((out / manifest.files["train"]).read_text().splitlines()) == 5


def test_export_refuses_bad_input_with_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "x"
    args = ["export", "--env", "math/reasoning-gym-v1", *SMALL, "-o", str(out)]
    first = runner.invoke(app, ["export", "--backend", "verl", *args[1:]])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["export", "--backend", "verl", *args[1:]])
    assert again.exit_code == 2 and "--overwrite" in again.output
    assert runner.invoke(app, ["export", "--backend", "verl", *args[1:], "--overwrite"]).exit_code == 0
    trl = runner.invoke(app, ["export", "--backend", "trl", *args[1:]])
    assert trl.exit_code == 2 and "unknown export backend 'trl'" in trl.output and "verl, openrlhf" in trl.output
    val = runner.invoke(app, ["export", "--backend", "openrlhf", *args[1:-1], str(tmp_path / "y"), "--val-size", "12"])
    assert val.exit_code == 2 and "val_size (12) must be smaller than the tasks exported (12)" in val.output
    env = runner.invoke(app, ["export", "--backend", "verl", "--env", "math/nope-v1", "-o", str(tmp_path / "z")])
    assert env.exit_code == 2 and "unknown environment" in env.output
















