"""`rlvr synth`: K samples per task, verified, kept by correctness (SFT rows) and by difficulty (RL tasks).

Rejection-sampled SFT data (STaR, Zelikman et al. 2022; RFT, Yuan et al. 2023) keeps the
verified-correct completions; difficulty-filtered RL prompts keep the tasks whose pass rate lies in
a band, since a GRPO group where every sample is right, or every sample wrong, has zero advantage
and gives no gradient (DAPO's dynamic sampling, Yu et al. 2025, drops such groups).

The samples are rolled out by `rlvr eval`'s own path (`rlvr.runners.eval.evaluate`: the rollout
driver, multi-turn environments included, verified by the environment's verifier) into
`DIR/trajectories.jsonl`, which is what makes the run resumable: each finished episode is
flushed at once, a rerun skips the (task, sample) pairs it holds, a torn last line left by
`kill -9` is cut off, and a larger `-n` adds only the missing samples. Everything else in DIR is
derived from that file, rewritten whole (temp file + rename) at the end of each run, so it is the
same for the same trajectories, whatever the order they finished in:

```
trajectories.jsonl (+ .meta.json)  every sample, as `rlvr eval` writes it; the run configuration
sft.jsonl     one row per kept sample: {"messages", "task_id", "sample", "reward", "verdict"} (+ "tools")
rl.jsonl      one row per task with LO <= pass rate <= HI: {"task_id", "pass_rate", "n", "n_correct",
              "n_error", "env", "env_args", "prompt", "reference"}; `--tasks DIR/rl.jsonl` of
              `rlvr export` / `rlvr train` trains on exactly these tasks
report.json   pass@1..K, counts per status, band counts, pass-rate histogram, tokens, time
report.html   the same, with pass_rate.png embedded
```

Only samples with `sample < n` of the tasks in use (`limit`) count. A sample is kept for SFT only
when the verifier scored it `correct` (`keep="all"`: every scored sample, never an `error` one).
Pass rate p = n_correct / n where n counts the scored samples: `error` samples (the episode or the
grader broke) are left out of n and counted in `n_error`; a task with no scored sample has no pass
rate, is never placed in the band and is listed in the report's `tasks_all_error`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from rlvr.core.errors import ConfigError
from rlvr.core.files import atomic_open
from rlvr.core.metrics import TaskCounts, VerdictStats, mean_pass_at
from rlvr.core.types import Task, Trajectory
from rlvr.runners.eval import RolloutConfig

__all__ = ["SynthConfig", "run_synth"]

KEEP_MODES = ("correct", "all")
"""`--keep` values: only verified-correct samples, or every scored sample."""

TRAJECTORIES, SFT, RL, REPORT_JSON = "trajectories.jsonl", "sft.jsonl", "rl.jsonl", "report.json"


def parse_band(text: str) -> tuple[float, float]:
    """`"LO,HI"` -> (LO, HI), with 0 <= LO <= HI <= 1 (bounds inclusive).

    Raises:
        ConfigError: not two numbers, or out of order / out of [0, 1].

    Example:
        >>> parse_band("0.1,0.9")
        (0.1, 0.9)
    """
    parts = text.split(",")
    try:
        lo, hi = (float(p) for p in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        lo = hi = None
    if lo is None or hi is None or not 0.0 <= lo <= hi <= 1.0:
        raise ConfigError(f"--band must be LO,HI with 0 <= LO <= HI <= 1 (pass rates, inclusive), got {text!r}; "
                          "e.g. --band 0.1,0.9 keeps tasks the policy solves sometimes but not always")
    return lo, hi


@dataclass
class Summary(VerdictStats):
    """What `summarize` derives from the trajectories: `VerdictStats` (statuses, per-task counts) plus the rows.

    Attributes:
        sft_rows: kept samples (task order, then sample order).
        rl_rows: tasks in the band (task order).
        counts: per task with at least one sample, task order (the `TaskCounts` of `tasks`).
        episode_errors: samples whose episode broke (trajectory `error` set).
        dedup_dropped: kept samples dropped as repeats of an earlier sample of the same task.
        sampled_tokens: tokens the policy sampled (loss mask 1), over samples with token fields.
        prompt_tokens: prompt tokens of those samples (the first prompt of each).
        token_samples: samples with token fields.
        verify_s: sum of the verdicts' `elapsed_s` (seconds).
    """

    sft_rows: list[dict[str, Any]] = field(default_factory=list)
    rl_rows: list[dict[str, Any]] = field(default_factory=list)
    counts: list[TaskCounts] = field(default_factory=list)
    episode_errors: int = 0
    dedup_dropped: int = 0
    sampled_tokens: int = 0
    prompt_tokens: int = 0
    token_samples: int = 0
    verify_s: float = 0.0

    @property
    def samples(self) -> int:
        """Samples counted (every status)."""
        return self.total

    def pass_at(self, k: int) -> tuple[float | None, int]:
        """(mean unbiased pass@k over tasks with >= k scored samples, in task order; number of such tasks)."""
        return mean_pass_at(self.counts, k)


def _status(traj: Trajectory) -> str:
    return traj.verdict.status if traj.verdict is not None else "error"


def _count_tokens(summary: Summary, traj: Trajectory) -> None:
    if traj.tokens is not None:
        summary.sampled_tokens += sum(traj.tokens.loss_mask)
        summary.prompt_tokens += len(traj.tokens.prompt_ids)
    elif traj.samples:
        summary.sampled_tokens += sum(sum(s.loss_mask) for s in traj.samples)
        summary.prompt_tokens += len(traj.samples[0].prompt_ids)
    else:
        return
    summary.token_samples += 1


def sft_row(traj: Trajectory, tools: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """One `sft.jsonl` row: the conversation, the tools it was offered, task id, sample, reward, verdict.

    Messages are in the chat-template format (`rlvr.runners.sft.template_message`: the OpenAI wire
    format with each tool call's `arguments` a JSON object, as TRL's SFTTrainer and Hugging Face
    chat templates read them); `tools` (the environment's OpenAI tool schemas) only for tool envs.
    """
    from rlvr.runners.sft import template_message

    verdict = traj.verdict.model_dump(mode="json") if traj.verdict is not None else None
    row = {"messages": [template_message(m) for m in traj.messages], "task_id": traj.task_id,
           "sample": int(traj.info.get("sample", 0)), "reward": traj.reward, "verdict": verdict}
    return {**row, "tools": list(tools)} if tools else row


def summarize(
    tasks: Sequence[Task],
    trajectories: Iterable[Trajectory],
    *,
    n: int,
    band: tuple[float, float] = (0.0, 1.0),
    keep: str = "correct",
    dedup: bool = False,
    env_id: str = "",
    env_args: dict[str, Any] | None = None,
    tools: Sequence[dict[str, Any]] = (),
) -> Summary:
    """SFT rows, RL rows and counts from the trajectories of `tasks` (samples `0..n-1`; others are ignored).

    Args:
        tasks: the tasks in use, in environment order (rows follow it).
        trajectories: the samples, any order; a repeated (task, sample) counts once (the first).
        n: samples per task asked for.
        band: inclusive pass-rate bounds of `rl_rows`.
        keep: 'correct' (only samples scored correct) or 'all' (every scored sample).
        dedup: keep identical conversations of one task once (the lowest sample).
        env_id: recorded in each RL row (checked by `--tasks`).
        env_args: recorded in each RL row.
        tools: the environment's tool schemas, recorded in each SFT row (tool envs).

    Raises:
        ConfigError: unknown `keep`.
    """
    if keep not in KEEP_MODES:
        raise ConfigError(f"--keep must be one of {', '.join(KEEP_MODES)}, got {keep!r}")
    order = {task.id: i for i, task in enumerate(tasks)}
    by_task: dict[str, list[Trajectory]] = {}
    seen: set[tuple[str, int]] = set()
    summary = Summary()
    for traj in trajectories:
        key = (traj.task_id, int(traj.info.get("sample", 0)))
        if traj.task_id not in order or not 0 <= key[1] < n or key in seen:
            continue
        seen.add(key)
        by_task.setdefault(traj.task_id, []).append(traj)
        summary.count(_status(traj), traj.verdict.reward if traj.verdict is not None else None, traj.task_id)
        summary.episode_errors += traj.error is not None
        summary.verify_s += traj.verdict.elapsed_s if traj.verdict is not None else 0.0
        _count_tokens(summary, traj)
    lo, hi = band
    for task in tasks:
        samples = sorted(by_task.get(task.id, ()), key=lambda t: int(t.info.get("sample", 0)))
        if not samples:
            continue
        counts = summary.tasks[task.id]
        summary.counts.append(counts)
        kept: set[str] = set()
        for traj in samples:
            status = _status(traj)
            if status == "correct" or (keep == "all" and status != "error"):
                conversation = json.dumps([m.to_openai() for m in traj.messages], sort_keys=True)
                if dedup and conversation in kept:
                    summary.dedup_dropped += 1
                    continue
                kept.add(conversation)
                summary.sft_rows.append(sft_row(traj, tools))
        rate = counts.pass_rate
        if rate is not None and lo <= rate <= hi:
            summary.rl_rows.append({
                "task_id": task.id, "pass_rate": rate, "n": counts.n, "n_correct": counts.n_correct,
                "n_error": counts.n_error, "env": env_id, "env_args": env_args or {},
                "prompt": [m.to_openai() for m in task.prompt], "reference": task.model_dump(mode="json")["reference"],
            })
    return summary


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write `rows` as JSONL, whole or not at all (`rlvr.core.files.atomic_open`)."""
    with atomic_open(path) as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


@dataclass(frozen=True)
class SynthResult:
    """What `run_synth` wrote: the folder, its summary and report, and this run's resumed/written samples."""

    directory: Path
    summary: Summary
    report: dict[str, Any]
    resumed: int
    written: int


class SynthConfig(RolloutConfig):
    """One `rlvr synth` run (the CLI builds it; `run_synth` runs it): `RolloutConfig` plus the derived files' options.

    `output` is the folder and `n` the samples per task (K). `band`, `keep` and `dedup` may change
    between runs of one folder: the derived files are written again.
    """

    band: tuple[float, float] = Field(default=(0.0, 1.0), description="Inclusive pass-rate bounds of rl.jsonl.")
    keep: str = Field(default="correct", description="sft.jsonl rows: 'correct' (verified-correct samples) or "
                      "'all' (every scored sample).")
    dedup: bool = Field(default=False, description="Keep identical conversations of one task once.")

    @model_validator(mode="after")
    def _consistent(self) -> SynthConfig:
        if self.keep not in KEEP_MODES:
            raise ValueError(f"--keep must be one of {', '.join(KEEP_MODES)}, got {self.keep!r}")
        lo, hi = self.band
        if not 0.0 <= lo <= hi <= 1.0:
            raise ValueError(f"--band must be LO,HI with 0 <= LO <= HI <= 1 (pass rates, inclusive), got {lo},{hi}")
        return self

    def record(self) -> dict[str, Any]:
        """What the trajectories depend on, recorded in `trajectories.jsonl.meta.json` (never band, keep, dedup)."""
        return {"command": "synth", **self.policy_record()}


def run_synth(config: SynthConfig, *, progress: Any = None) -> SynthResult:
    """The `rlvr synth` command: roll `config.n` samples per task into `config.output/`, then write the derived files.

    Args:
        config: the run's options (`SynthConfig`); the seed also seeds the environment resets
            (sample k resets with seed + k).
        progress: an object with `start(total)` / `advance(k)` (e.g. a progress bar), or None.

    Raises:
        ConfigError: bad options; a resume with another configuration (the message names what changed).
        MissingExtraError: `engine="ray"` without Ray, a generator (transformers, vllm) without its extra.
    """
    from rlvr.runners.eval import evaluate, read_trajectories, verified_env
    from rlvr.runners.synth_report import build_report, write_report

    record = config.record()
    directory = Path(config.output)
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"--output {str(directory)!r} exists and is not a folder; synth writes a folder")
    with verified_env(config.env, config.env_args, config.engine, config.workers, config.ray_address) as environment:
        chosen = config.build_policy()
        directory.mkdir(parents=True, exist_ok=True)
        if config.overwrite:  # the run history in report.json starts over with the trajectories
            (directory / REPORT_JSON).unlink(missing_ok=True)
        start = time.monotonic()
        stats = evaluate(environment, chosen, directory / TRAJECTORIES, config=record, n=config.n,
                         limit=config.limit, concurrency=config.concurrency, seed=config.seed,
                         overwrite=config.overwrite, on_start=getattr(progress, "start", None),
                         on_progress=getattr(progress, "advance", None))
        wall_s = time.monotonic() - start
        tasks = list(environment.tasks[:config.limit] if config.limit is not None else environment.tasks)
        tools = list(environment.spec.tools)
    summary = summarize(tasks, read_trajectories(directory / TRAJECTORIES), n=config.n, band=config.band,
                        keep=config.keep, dedup=config.dedup, env_id=config.env, env_args=config.env_args,
                        tools=tools)
    write_jsonl(directory / SFT, summary.sft_rows)
    write_jsonl(directory / RL, summary.rl_rows)
    run = {"wall_s": round(wall_s, 3), "samples_written": stats.written, "samples_resumed": stats.resumed,
           "samples_per_s": round(stats.written / wall_s, 3) if wall_s > 0 and stats.written else None}
    report = build_report(summary, directory=directory, n=config.n, tasks=len(tasks), band=config.band,
                          keep=config.keep, dedup=config.dedup, config=record, run=run,
                          episodes=stats.episodes.metrics())
    write_report(directory, report)
    return SynthResult(directory=directory, summary=summary, report=report, resumed=stats.resumed,
                       written=stats.written)
