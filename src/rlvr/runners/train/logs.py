"""veRL's and OpenRLHF's logs read back into rlvr's outputs: `reward_curve.csv` / `.png` and `model/`.

TRL writes them in-process (`rlvr.runners.train.curve.reward_curve_callback`); for veRL and OpenRLHF
`write_run_outputs` reads what the trainer logged after its run:

- veRL: the console logger's `step:N - key:value - ...` lines in `train.log` (`verl/utils/tracking.py`,
  `trainer.logger=[console]`): `critic/score/mean` (the verifier's score, = reward), `response_length/mean`,
  `perf/total_num_tokens` (summed into a running count), `timing_s/step` (summed into elapsed seconds).
  veRL's v1 trainer logs no per-status metric for training steps; where it dumped the step's responses
  (`trainer.rollout_data_dir`, set by rlvr's CPU profile: `<step>.jsonl` with each response, its ground
  truth and veRL's score) the status fractions are those of rlvr's verifier on the dumped responses
  (`_verl_statuses`; the verifier is deterministic, so these are the verdicts veRL's scores came from).
- OpenRLHF: its TensorBoard scalars (`read_openrlhf_curve`), whose status fractions are rlvr's verdicts
  (the `rlvr/status/<status>` extra logs of rlvr's reward function).

`model/` is the trainer's last saved Hugging Face folder (veRL: `checkpoints/global_step_N/actor/huggingface`,
OpenRLHF: its `--save_path`), moved into the run folder.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from rlvr.core.metrics import EPISODE_METRICS
from rlvr.core.types import STATUSES
from rlvr.runners.train.curve import EXTRA_COLUMNS, plot_reward_curve, to_float, write_curve_csv

__all__ = ["OPENRLHF_CURVE_SOURCE", "openrlhf_rows", "read_openrlhf_curve", "read_verl_curve"]

_VERL_STEP = re.compile(r"(?:^|\s)step:(\d+) - (.*)$")


def _verl_metrics(line: str) -> tuple[int, dict[str, float]] | None:
    match = _VERL_STEP.search(line)
    if match is None:
        return None
    metrics: dict[str, float] = {}
    for part in match.group(2).split(" - "):
        key, _, value = part.rpartition(":")
        number = to_float(value)
        if key and number is not None:
            metrics[key.strip()] = number
    return int(match.group(1)), metrics


def read_verl_curve(log: Path) -> list[dict[str, Any]]:
    """Per-step rows from veRL's console logger lines in `log` (module docstring); [] without a log.

    Returns:
        Rows with `step`, `reward` (`critic/score/mean`), `reward_min`/`reward_max`, `completion_length`,
        `elapsed_s` (running sum of `timing_s/step`), `step_s`, `num_tokens` (running sum of
        `perf/total_num_tokens`), `tokens_per_s` (`perf/throughput`), the rollout/actor probability
        agreement veRL measures (`training/rollout_actor_probs_pearson_corr`, as `rollout_actor_corr`), and
        `grad_norm` (`actor/grad_norm`).
    """
    if not log.is_file():
        return []
    rows: list[dict[str, Any]] = []
    elapsed = tokens = 0.0
    for line in log.read_text(errors="replace").splitlines():
        found = _verl_metrics(line)
        if found is None or "critic/score/mean" not in found[1]:
            continue
        step, metrics = found
        elapsed += metrics.get("timing_s/step", 0.0)
        tokens += metrics.get("perf/total_num_tokens", 0.0)
        corr = metrics.get("training/rollout_actor_probs_pearson_corr")  # verl/utils/debug/metrics.py
        rows.append({"step": float(step), "reward": metrics["critic/score/mean"],
                     "reward_min": metrics.get("critic/score/min"), "reward_max": metrics.get("critic/score/max"),
                     "completion_length": metrics.get("response_length/mean"), "elapsed_s": round(elapsed, 2),
                     "step_s": metrics.get("timing_s/step"), "num_tokens": tokens or None,
                     "tokens_per_s": metrics.get("perf/throughput"), "rollout_actor_corr": corr,
                     "grad_norm": metrics.get("actor/grad_norm")})
    return rows


OPENRLHF_CURVE_SOURCE = """
import json, sys, pathlib
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
rows = {}
for path in sorted(pathlib.Path(sys.argv[1]).rglob("events.out.tfevents.*")):
    acc = EventAccumulator(str(path)); acc.Reload()
    for tag in acc.Tags().get("scalars", []):
        for event in acc.Scalars(tag):
            rows.setdefault(event.step, {})[tag] = event.value
print("RLVR_CURVE " + json.dumps([{"step": step, **values} for step, values in sorted(rows.items())]))
"""
"""Run in OpenRLHF's interpreter (which has tensorboard): its TensorBoard scalars per step as JSON."""


def read_openrlhf_curve(python: str, tensorboard_dir: Path) -> list[dict[str, Any]]:
    """Per-step rows from OpenRLHF's TensorBoard log (`logger.tensorboard_dir`, `train/<status key>` scalars).

    OpenRLHF's `PPOTrainer.fit` logs each step's status (`openrlhf/trainer/ppo_trainer.py`,
    `TensorboardLogger.log_train`): sample means of the experience info (`reward`, rlvr's
    `rlvr/status/<status>` indicators, `response_length`, `total_length` = prompt + response tokens),
    `actor_grad_norm`, the rollout statistics (`rollout/reward_std`, `rollout/num_samples`) and the
    phase timings (`timing/step_total` = generation + make_experience + ppo_train + broadcast).

    Returns:
        Rows with `step`, `reward`, `reward_std`, the verdict-status fractions, the episode metrics
        (`train/rlvr/<key>` of rlvr's multi-turn agent, `rlvr.adapters.openrlhf.agent.AGENT_LOG_KEYS`),
        `completion_length`,
        `elapsed_s` (running sum of step times), `step_s`, `num_tokens` (running sum of total_length x
        num_samples), `tokens_per_s` (the step's tokens / its time) and `grad_norm`; [] when there is no log.
    """
    if not tensorboard_dir.is_dir():
        return []
    done = subprocess.run([python, "-c", OPENRLHF_CURVE_SOURCE, str(tensorboard_dir)], capture_output=True,
                          text=True, check=False)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RLVR_CURVE ")), None)
    if line is None:
        return []
    return openrlhf_rows(json.loads(line[len("RLVR_CURVE "):]))


def openrlhf_rows(scalars: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Curve rows from OpenRLHF's per-step scalars (`{"step", "train/<key>": value}`; `read_openrlhf_curve`)."""
    rows, elapsed, tokens = [], 0.0, 0.0
    for raw in scalars:
        if "train/reward" not in raw:
            continue
        step_s = to_float(raw.get("train/timing/step_total"))
        elapsed += step_s or 0.0
        samples, length = to_float(raw.get("train/rollout/num_samples")), to_float(raw.get("train/total_length"))
        step_tokens = samples * length if samples is not None and length is not None else None
        tokens += step_tokens or 0.0
        row: dict[str, Any] = {
            "step": float(raw["step"]), "reward": to_float(raw["train/reward"]),
            "reward_std": to_float(raw.get("train/rollout/reward_std")), "elapsed_s": round(elapsed, 2),
            "step_s": step_s, "completion_length": to_float(raw.get("train/response_length")),
            "num_tokens": tokens or None, "grad_norm": to_float(raw.get("train/actor_grad_norm")),
            "tokens_per_s": round(step_tokens / step_s, 2) if step_tokens and step_s else None}
        for status in STATUSES:
            row[status] = to_float(raw.get(f"train/rlvr/status/{status}"))
        for key in EPISODE_METRICS:  # the agent's extra logs (multi-turn runs only)
            row[key] = to_float(raw.get(f"train/rlvr/{key}"))
        rows.append(row)
    return rows


def _override(command: list[str], key: str) -> str | None:
    """The value of the last hydra override `key=...` in `command`, or None."""
    values = [c.split("=", 1)[1] for c in command if c.lstrip("+").startswith(f"{key}=")]
    return values[-1] if values else None


def _verl_statuses(rollout_dir: Path, export_dir: Path) -> dict[int, dict[str, float]]:
    """Per step, the fraction of each verdict status among the responses veRL dumped to `rollout_dir`.

    Each response of `<step>.jsonl` is scored with the verifier of the exported environment
    (`export_dir/rlvr_export.json`: its verifier spec, else the environment rebuilt) against its dumped
    ground truth (in the export's reference format). {} when nothing was dumped or the
    environment cannot be built in this interpreter.
    """
    from rlvr.adapters.export import decode_reference, read_manifest, verify_text
    from rlvr.core.errors import RlvrError
    from rlvr.environments.registry import make

    files = sorted(rollout_dir.glob("*.jsonl"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1)
    if not files:
        return {}
    env = None
    try:
        manifest = read_manifest(export_dir)
        spec = manifest.verifier_spec
        if spec is not None:  # the export's verifier spec: no environment (nor its dataset) needed
            verifier = spec.cached()
        else:
            env = make(manifest.env_id, **manifest.env_args)
            verifier = env.verifier
    except (RlvrError, OSError, ImportError):
        return {}
    out: dict[int, dict[str, float]] = {}
    try:
        for path in files:
            if not path.stem.isdigit():
                continue
            counts = dict.fromkeys(STATUSES, 0)
            lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
            for sample in lines:
                try:
                    reference = decode_reference(sample.get("gts"), manifest.reference_format)
                    verdict = verify_text(verifier, str(sample.get("output", "")), reference)
                    counts[verdict.status] += 1
                except RlvrError:
                    counts["error"] += 1
            out[int(path.stem)] = {k: v / len(lines) for k, v in counts.items()} if lines else {}
    finally:
        if env is not None:
            env.close()
    return out


def _verl_model(export_dir: Path) -> Path | None:
    """The newest `checkpoints/global_step_N/actor/huggingface` folder of a veRL run, or None."""
    steps = sorted(export_dir.glob("checkpoints/global_step_*/actor/huggingface"),
                   key=lambda p: int(p.parts[-3].rsplit("_", 1)[1]))
    return steps[-1] if steps else None


def write_run_outputs(run: Any) -> list[dict[str, Any]]:
    """Write `reward_curve.csv`, `reward_curve.png` and `model/` into a veRL/OpenRLHF run folder.

    Args:
        run: a `rlvr.runners.train.external.BackendRun` that ran (its `output`, `backend`, `python`, `log_path`,
            `export_dir`, `peak_mb`).

    Returns:
        The curve rows (also in the CSV; nothing is written when the trainer logged no step).
    """
    output = Path(run.output)
    if run.backend == "verl":
        rows = read_verl_curve(Path(run.log_path)) if run.log_path else []
        model = _verl_model(Path(run.export_dir))
        dumped = _override(list(run.command), "trainer.rollout_data_dir")
        statuses = _verl_statuses(Path(dumped), Path(run.export_dir)) if dumped and rows else {}
        for row in rows:
            row.update(statuses.get(int(row["step"]), {}))
    else:
        rows = read_openrlhf_curve(run.python, Path(run.export_dir) / "openrlhf" / "tensorboard")
        saved = Path(run.export_dir) / "openrlhf" / "model"
        model = saved if (saved / "config.json").is_file() else None
    for row in rows:
        row["peak_rss_mb"] = run.peak_mb
    if rows:
        write_curve_csv(rows, output / "reward_curve.csv", extra=EXTRA_COLUMNS)
        with contextlib.suppress(ImportError):  # matplotlib missing in this interpreter: the CSV is the curve
            plot_reward_curve(rows, output / "reward_curve.png", f"GRPO with {run.backend} ({Path(run.model).name})")
    if model is not None and run.exit_code == 0:
        target = output / "model"
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(model), str(target))
    return rows
