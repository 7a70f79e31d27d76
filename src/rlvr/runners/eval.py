"""`rlvr eval`: roll a policy through an environment, write trajectories (JSONL), report pass@k.

Guarantees:

- Incremental: each trajectory is written and flushed as soon as its episode ends (completion
  order; each row carries `task_id` and `info.sample`).
- Resumable: rerunning skips the (task id, sample) pairs already in the output; a torn last line
  (left by `kill -9` mid-write) is cut off first, and rows of episodes that broke (`error` set:
  server down, policy or environment exception) are removed and run again. Raising `-n` adds the
  missing samples. The run configuration (environment and its arguments, policy, sampling, token
  layout) is recorded in `OUTPUT.meta.json`; a rerun with another configuration is refused unless
  `overwrite`.
- Scores cover the whole output file (resumed rows included).

pass@k is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on
Code", eq. 1): per task with n scored samples of which c are correct,
`1 - C(n-c, k) / C(n, k)`, computed as the product `1 - prod_{i=n-c+1..n} (1 - k/i)` (their
numerically stable form), averaged over tasks. Samples whose grader broke (status 'error') are
not scored and left out of n; a task with fewer than k scored samples is left out of pass@k.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.adapters.tokens import Layout
from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import Trajectory
from rlvr.environments.base import Environment
from rlvr.runners.models import resolve_model
from rlvr.runners.policies import (
    OpenAIPolicy,
    Policy,
    Sampling,
    TransformersPolicy,
    VLLMPolicy,
    scripted_policy,
)
from rlvr.runners.rollout import clone_factory, rollout
from rlvr.runners.verify import meta_path

__all__ = ["EvalStats", "build_policy", "evaluate", "pass_at_k", "read_trajectories", "score_file"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task: n samples, c correct (Chen et al. 2021, eq. 1, product form).

    Raises:
        ConfigError: unless 0 <= c <= n and 1 <= k <= n.

    Example:
        >>> pass_at_k(10, 3, 1)
        0.3
        >>> round(pass_at_k(10, 3, 5), 4)
        0.9167
    """
    if not (0 <= c <= n and 1 <= k <= n):
        raise ConfigError(f"pass_at_k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@dataclass
class EvalStats:
    """Scores over an output file.

    Attributes:
        statuses: verdict status -> trajectories.
        errors: trajectories whose episode broke (policy/environment/tokens; `error` set).
        rewards: the rewards of scored trajectories (verdict reward not None).
        per_task: task id -> (scored samples, correct samples).
        resumed: trajectories found in the output at start.
        written: trajectories written by this run.
    """

    statuses: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    rewards: list[float] = field(default_factory=list)
    per_task: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    resumed: int = 0
    written: int = 0

    def add(self, traj: Trajectory) -> None:
        """Count one trajectory."""
        status = traj.verdict.status if traj.verdict is not None else "error"
        self.statuses[status] += 1
        self.errors += traj.error is not None
        reward = traj.verdict.reward if traj.verdict is not None else None
        if reward is not None:
            self.rewards.append(reward)
            counts = self.per_task[traj.task_id]
            counts[0] += 1
            counts[1] += status == "correct"

    @property
    def mean_reward(self) -> float | None:
        """Mean reward over scored trajectories, or None."""
        return sum(self.rewards) / len(self.rewards) if self.rewards else None

    def pass_at(self, k: int) -> tuple[float | None, int]:
        """(mean pass@k over tasks with >= k scored samples, number of such tasks)."""
        values = [pass_at_k(n, c, k) for n, c in self.per_task.values() if n >= k]
        return (sum(values) / len(values) if values else None), len(values)


def read_trajectories(path: Path, *, repair: bool = False) -> Iterator[Trajectory]:
    """Trajectories of an eval output; with `repair`, a torn last line is cut off the file first.

    Raises:
        DataError: a complete line is not a trajectory (names the line).
    """
    if repair:
        _cut_torn_tail(path)
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield Trajectory.model_validate_json(line)
            except ValueError as exc:
                raise DataError(f"{path}:{lineno}: not a trajectory row ({str(exc).splitlines()[0]}); "
                                "pass --overwrite to start over") from exc


def _cut_torn_tail(path: Path) -> None:
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


def score_file(path: Path) -> EvalStats:
    """Scores of an existing eval output file."""
    stats = EvalStats()
    for traj in read_trajectories(path):
        stats.add(traj)
    return stats


def _row(traj: Trajectory) -> str:
    """One JSONL row. Unset fields are left out, but not a required None (an error verdict's reward)."""
    return traj.model_dump_json(exclude_defaults=True) + "\n"


def _prepare(output: Path, config: dict[str, Any], overwrite: bool) -> tuple[set[tuple[str, int]], EvalStats]:
    meta = meta_path(output)
    if overwrite:
        output.unlink(missing_ok=True)
        meta.unlink(missing_ok=True)
    stats = EvalStats()
    done: set[tuple[str, int]] = set()
    if output.exists() and output.stat().st_size:
        if meta.is_file():
            old = json.loads(meta.read_text(encoding="utf-8"))
            changed = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
            if changed:
                raise ConfigError(f"{output} was written with another configuration (changed: {', '.join(changed)}); "
                                  "rerun with the same options to resume, or pass --overwrite to start over")
        kept: list[Trajectory] = []
        dropped = 0
        for traj in read_trajectories(output, repair=True):
            key = (traj.task_id, int(traj.info.get("sample", 0)))
            if traj.error is not None or key in done:  # a broken episode (server down, ...) is run again
                dropped += 1
                continue
            done.add(key)
            kept.append(traj)
            stats.add(traj)
        if dropped:
            tmp_out = output.with_name(output.name + ".tmp")
            tmp_out.write_text("".join(_row(t) for t in kept), encoding="utf-8")
            os.replace(tmp_out, output)
        stats.resumed = len(done)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = meta.with_name(meta.name + ".tmp")
    tmp.write_text(json.dumps(config, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, meta)
    return done, stats


def evaluate(
    env: Environment,
    policy: Policy,
    output: Path,
    *,
    config: dict[str, Any],
    n: int = 1,
    limit: int | None = None,
    concurrency: int = 32,
    layout: Layout | None = "auto",
    seed: int | None = 0,
    overwrite: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> EvalStats:
    """Roll `policy` through `n` samples of each task of `env` and append the trajectories to `output`.

    Args:
        env: the environment (cloned per concurrent episode, see `clone_factory`).
        policy: the policy.
        output: the JSONL file (resumed if it exists).
        config: the run configuration recorded in `OUTPUT.meta.json` (compared on resume).
        n: samples per task.
        limit: use only the first `limit` tasks (default all).
        concurrency: episodes in flight at once.
        layout: token layout of the trajectories (None: none).
        seed: base seed of `env.reset` (sample k resets with `seed + k`).
        overwrite: discard an existing output instead of resuming it.
        on_start: called once with the number of episodes left to run (after resume).
        on_progress: called with 1 after each written trajectory.

    Returns:
        Scores over the whole output file.

    Raises:
        ConfigError: a resume with another configuration, or bad `n`/`limit`.
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be >= 1, got {limit}")
    tasks = list(env.tasks[:limit] if limit is not None else env.tasks)
    done, stats = _prepare(output, config, overwrite)
    if on_start is not None:
        on_start(sum(1 for t in tasks for k in range(n) if (t.id, k) not in done))
    with output.open("a", encoding="utf-8") as f:

        def write(traj: Trajectory) -> None:
            f.write(_row(traj))
            f.flush()
            stats.add(traj)
            stats.written += 1
            if on_progress is not None:
                on_progress(1)

        asyncio.run(rollout(clone_factory(env), policy, tasks, n=n, concurrency=concurrency, layout=layout,
                            seed=seed, skip=done, on_trajectory=write))
        os.fsync(f.fileno())
    return stats



def build_policy(
    *,
    policy: str | None,
    model: str | None,
    base_url: str | None,
    engine: str = "transformers",
    tokenizer: str | None = None,
    token_in: bool = False,
    sampling: Sampling | None = None,
    api_key: str = "EMPTY",
) -> Policy:
    """The policy `rlvr eval` options describe.

    `policy` (oracle | noop | script:PATH) wins; else with `base_url` an `OpenAIPolicy` serving
    `model` (its tokenizer: `tokenizer`, or `model` itself when it is a local folder); else a local
    model (`engine` transformers or vllm) at `model`, resolved by `resolve_model` (`smollm2` alias).

    Raises:
        ConfigError: neither a policy nor a model, or an unknown engine.
    """
    sampling = sampling or Sampling()
    if policy is not None:
        return scripted_policy(policy)
    if model is None:
        raise ConfigError("give --model (a served model name with --base-url, or a local model) or --policy")
    if base_url is not None:
        tok: str | None = tokenizer
        if tok is None and Path(model).expanduser().is_dir():
            tok = str(Path(model).expanduser())
        elif tok is not None:
            tok = resolve_model(tok)
        return OpenAIPolicy(base_url=base_url, model=model, sampling=sampling, tokenizer=tok, token_in=token_in,
                            api_key=api_key)
    path = resolve_model(model)
    if engine == "transformers":
        return TransformersPolicy(path, sampling=sampling)
    if engine == "vllm":
        return VLLMPolicy(path, sampling=sampling)
    raise ConfigError(f"--model-engine must be 'transformers' or 'vllm', got {engine!r}")


def run_eval(
    *,
    env: str,
    env_args: dict[str, Any],
    output: Path,
    model: str | None,
    base_url: str | None,
    policy: str | None,
    n: int,
    k: int,
    limit: int | None,
    concurrency: int,
    max_tokens: int,
    temperature: float,
    top_p: float,
    seed: int,
    layout: str,
    model_engine: str,
    tokenizer: str | None,
    token_in: bool,
    overwrite: bool,
    console: Any,
    err_console: Any,
    engine: str = "local",
    ray_address: str | None = None,
    workers: int | None = None,
) -> EvalStats:
    """The `rlvr eval` command: build env and policy, run `evaluate` with a progress bar, print the report.

    Verification runs where `engine` says, exactly as for `rlvr verify`: `local` (this machine's
    verifier worker processes, `workers` of them) or `ray` (Ray actors on the cluster at
    `ray_address`; see `rlvr.runners.engine`). Generation runs where the policy is: a server
    (`base_url`) or a local model (`model_engine` transformers or vllm).

    Raises:
        ConfigError: bad options (k > n, unknown layout, no policy or model, unknown engine, ...).
        MissingExtraError: `engine="ray"` without Ray installed.
        BackendError: the Ray cluster cannot be reached.
    """
    from rlvr.environments.registry import make
    from rlvr.runners.engine import make_engine

    if k > n:
        raise ConfigError(f"-k {k} is larger than -n {n}; pass@k needs at least k samples per task (raise -n)")
    if layout not in ("auto", "episode", "turn", "none"):
        raise ConfigError(f"--layout must be auto, episode, turn or none, got {layout!r}")
    sampling = Sampling(max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed)
    config = {"env": env, "env_args": env_args, "policy": policy, "model": model, "base_url": base_url,
              "model_engine": model_engine if policy is None and base_url is None else None, "token_in": token_in,
              "sampling": None if policy is not None else vars(sampling), "layout": layout, "seed": seed}
    environment = make(env, **env_args)
    scorer = None
    try:
        if engine != "local" or workers is not None or ray_address is not None:
            scorer = make_engine(engine, environment.verifier, workers, ray_address)
            environment.verifier = scorer.as_verifier()  # episode clones share the env's verifier
        chosen = build_policy(policy=policy, model=model, base_url=base_url, engine=model_engine,
                              tokenizer=tokenizer, token_in=token_in, sampling=sampling)
        with _Progress(err_console) as bar:
            stats = evaluate(environment, chosen, output, config=config, n=n, limit=limit, concurrency=concurrency,
                             layout=None if layout == "none" else layout,  # type: ignore[arg-type]
                             seed=seed, overwrite=overwrite, on_start=bar.start, on_progress=bar.advance)
    finally:
        environment.close()
        if scorer is not None:
            scorer.close()
    console.print(report_table(stats, k=k, title=f"rlvr eval {env} → {output}"))
    return stats


class _Progress:
    """A rich progress bar over the episodes left to run."""

    def __init__(self, console: Any) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 console=console)
        self.bar = self.progress.add_task("eval", total=None)

    def __enter__(self) -> _Progress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, total: int) -> None:
        self.progress.update(self.bar, total=total)

    def advance(self, k: int) -> None:
        self.progress.advance(self.bar, k)


def report_table(stats: EvalStats, *, k: int, title: str) -> Any:
    """A rich table: pass@1, pass@k, mean reward, counts per verdict status, errors, resumed/written."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for kk in sorted({1, k}):
        value, tasks = stats.pass_at(kk)
        table.add_row(f"pass@{kk}", "n/a" if value is None else f"{value:.3f}  ({tasks} tasks)")
    mean = stats.mean_reward
    table.add_row("mean reward", "n/a" if mean is None else f"{mean:.3f}", end_section=True)
    for status in ("correct", "incorrect", "no_answer", "timeout", "error"):
        table.add_row(status, str(stats.statuses.get(status, 0)))
    table.add_row("total", str(sum(stats.statuses.values())), end_section=True)
    table.add_row("of which episode errors", str(stats.errors))
    table.add_row("resumed / written now", f"{stats.resumed} / {stats.written}")
    return table
