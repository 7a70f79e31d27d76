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
sft.jsonl     one row per kept sample: {"messages", "task_id", "sample", "reward", "verdict"}
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
import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import Task, Trajectory
from rlvr.runners.eval import pass_at_k

__all__ = [
    "KEEP_MODES",
    "Summary",
    "SynthResult",
    "TaskCounts",
    "parse_band",
    "run_synth",
    "summarize",
]

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
class TaskCounts:
    """Sample counts of one task.

    Attributes:
        task_id: the task.
        n: scored samples (status other than `error`).
        n_correct: samples scored `correct`.
        n_error: samples whose episode or grader broke (left out of `n`).
    """

    task_id: str
    n: int = 0
    n_correct: int = 0
    n_error: int = 0

    @property
    def pass_rate(self) -> float | None:
        """n_correct / n, or None when no sample was scored."""
        return self.n_correct / self.n if self.n else None


@dataclass
class Summary:
    """What `summarize` derives from the trajectories.

    Attributes:
        sft_rows: kept samples (task order, then sample order).
        rl_rows: tasks in the band (task order).
        counts: per task with at least one sample, task order.
        statuses: verdict status -> samples (`error` for a missing verdict).
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
    statuses: Counter[str] = field(default_factory=Counter)
    episode_errors: int = 0
    dedup_dropped: int = 0
    sampled_tokens: int = 0
    prompt_tokens: int = 0
    token_samples: int = 0
    verify_s: float = 0.0

    @property
    def samples(self) -> int:
        """Samples counted (every status)."""
        return sum(self.statuses.values())

    def pass_at(self, k: int) -> tuple[float | None, int]:
        """(mean unbiased pass@k over tasks with >= k scored samples, number of such tasks)."""
        values = [pass_at_k(c.n, c.n_correct, k) for c in self.counts if c.n >= k]
        return (sum(values) / len(values) if values else None), len(values)


def _status(traj: Trajectory) -> str:
    return traj.verdict.status if traj.verdict is not None else "error"


def _count_tokens(summary: Summary, traj: Trajectory) -> None:
    if traj.loss_mask is not None and traj.prompt_ids is not None:
        summary.sampled_tokens += sum(traj.loss_mask)
        summary.prompt_tokens += len(traj.prompt_ids)
    elif traj.samples:
        summary.sampled_tokens += sum(sum(s.loss_mask) for s in traj.samples)
        summary.prompt_tokens += len(traj.samples[0].prompt_ids)
    else:
        return
    summary.token_samples += 1


def sft_row(traj: Trajectory) -> dict[str, Any]:
    """One `sft.jsonl` row: the whole conversation (OpenAI wire format), task id, sample, reward, verdict."""
    verdict = traj.verdict.model_dump(mode="json") if traj.verdict is not None else None
    return {"messages": [m.to_openai() for m in traj.messages], "task_id": traj.task_id,
            "sample": int(traj.info.get("sample", 0)), "reward": traj.reward, "verdict": verdict}


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
        summary.statuses[_status(traj)] += 1
        summary.episode_errors += traj.error is not None
        summary.verify_s += traj.verdict.elapsed_s if traj.verdict is not None else 0.0
        _count_tokens(summary, traj)
    lo, hi = band
    for task in tasks:
        samples = sorted(by_task.get(task.id, ()), key=lambda t: int(t.info.get("sample", 0)))
        if not samples:
            continue
        counts = TaskCounts(task.id)
        summary.counts.append(counts)
        kept: set[str] = set()
        for traj in samples:
            status = _status(traj)
            counts.n_error += status == "error"
            counts.n += status != "error"
            counts.n_correct += status == "correct"
            if status == "correct" or (keep == "all" and status != "error"):
                conversation = json.dumps([m.to_openai() for m in traj.messages], sort_keys=True)
                if dedup and conversation in kept:
                    summary.dedup_dropped += 1
                    continue
                kept.add(conversation)
                summary.sft_rows.append(sft_row(traj))
        rate = counts.pass_rate
        if rate is not None and lo <= rate <= hi:
            summary.rl_rows.append({
                "task_id": task.id, "pass_rate": rate, "n": counts.n, "n_correct": counts.n_correct,
                "n_error": counts.n_error, "env": env_id, "env_args": env_args or {},
                "prompt": [m.to_openai() for m in task.prompt], "reference": task.model_dump(mode="json")["reference"],
            })
    return summary


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write `rows` as JSONL, whole or not at all (temp file, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass(frozen=True)
class SynthResult:
    """What `run_synth` wrote: the folder, its summary and report, and this run's resumed/written samples."""

    directory: Path
    summary: Summary
    report: dict[str, Any]
    resumed: int
    written: int


def run_synth(
    *,
    env: str,
    env_args: dict[str, Any],
    output: Path,
    n: int,
    model: str | None = None,
    base_url: str | None = None,
    policy: str | None = None,
    band: tuple[float, float] = (0.0, 1.0),
    keep: str = "correct",
    dedup: bool = False,
    limit: int | None = None,
    concurrency: int = 32,
    sampling: dict[str, Any] | None = None,
    model_engine: str = "transformers",
    tokenizer: str | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    workers: int | None = None,
    overwrite: bool = False,
    progress: Any = None,
) -> SynthResult:
    """The `rlvr synth` command: roll `n` samples per task into `output/`, then write the derived files.

    Args:
        env: environment id.
        env_args: its factory arguments.
        output: the folder (created; resumed when it holds an earlier run's trajectories).
        n: samples per task (K).
        model: a served model name (with `base_url`) or a local model folder / 'smollm2'.
        base_url: an OpenAI-compatible server.
        policy: a scripted policy (oracle, noop, script:PATH); wins over `model`.
        band: inclusive pass-rate bounds of `rl.jsonl`.
        keep: 'correct' (verified-correct samples only) or 'all' (every scored sample).
        dedup: keep identical conversations of one task once.
        limit: use only the first `limit` tasks.
        concurrency: episodes in flight.
        sampling: `Sampling` fields (max_tokens, temperature, top_p, seed); `seed` (default 0) also
            seeds the environment resets (sample k resets with seed + k).
        model_engine: local model engine without `base_url`: 'transformers' or 'vllm'.
        tokenizer: tokenizer of a served model, for token counts.
        engine: where verification runs: 'local' (worker processes) or 'ray'.
        ray_address: the Ray cluster with `engine="ray"`.
        workers: verifier worker processes (local) or Ray actors (ray).
        overwrite: discard an earlier run in `output` instead of resuming it.
        progress: an object with `start(total)` / `advance(k)` (e.g. a progress bar), or None.

    Raises:
        ConfigError: bad options; a resume with another configuration (the message names what changed).
        MissingExtraError: `engine="ray"` without Ray, a model engine without its extra.
    """
    from rlvr.environments.registry import make
    from rlvr.runners.engine import make_engine
    from rlvr.runners.eval import build_policy, evaluate, read_trajectories
    from rlvr.runners.policies import Sampling
    from rlvr.runners.synth_report import build_report, write_report

    if keep not in KEEP_MODES:
        raise ConfigError(f"--keep must be one of {', '.join(KEEP_MODES)}, got {keep!r}")
    chosen_sampling = Sampling(**{"seed": 0, **(sampling or {})})
    served = policy is None and base_url is None
    config = {"command": "synth", "env": env, "env_args": env_args, "policy": policy, "model": model,
              "base_url": base_url, "model_engine": model_engine if served else None,
              "sampling": None if policy is not None else vars(chosen_sampling), "seed": chosen_sampling.seed}
    directory = Path(output)
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"--output {str(directory)!r} exists and is not a folder; synth writes a folder")
    environment = make(env, **env_args)
    scorer = None
    try:
        if engine != "local" or workers is not None or ray_address is not None:
            scorer = make_engine(engine, environment.verifier, workers, ray_address)
            environment.verifier = scorer.as_verifier()
        chosen = build_policy(policy=policy, model=model, base_url=base_url, engine=model_engine,
                              tokenizer=tokenizer, sampling=chosen_sampling)
        directory.mkdir(parents=True, exist_ok=True)
        if overwrite:  # the run history in report.json starts over with the trajectories
            (directory / REPORT_JSON).unlink(missing_ok=True)
        start = time.monotonic()
        stats = evaluate(environment, chosen, directory / TRAJECTORIES, config=config, n=n, limit=limit,
                         concurrency=concurrency, seed=chosen_sampling.seed, overwrite=overwrite,
                         on_start=getattr(progress, "start", None), on_progress=getattr(progress, "advance", None))
        wall_s = time.monotonic() - start
        tasks = list(environment.tasks[:limit] if limit is not None else environment.tasks)
    finally:
        environment.close()
        if scorer is not None:
            scorer.close()
    summary = summarize(tasks, read_trajectories(directory / TRAJECTORIES), n=n, band=band, keep=keep, dedup=dedup,
                        env_id=env, env_args=env_args)
    write_jsonl(directory / SFT, summary.sft_rows)
    write_jsonl(directory / RL, summary.rl_rows)
    run = {"wall_s": round(wall_s, 3), "samples_written": stats.written, "samples_resumed": stats.resumed,
           "samples_per_s": round(stats.written / wall_s, 3) if wall_s > 0 and stats.written else None}
    report = build_report(summary, directory=directory, n=n, tasks=len(tasks), band=band, keep=keep, dedup=dedup,
                          config=config, run=run)
    write_report(directory, report)
    return SynthResult(directory=directory, summary=summary, report=report, resumed=stats.resumed,
                       written=stats.written)
