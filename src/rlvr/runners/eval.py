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
- Scores cover the whole output file (resumed rows included); they are counted by
  `rlvr.core.metrics` (pass@k: the unbiased estimator of Chen et al. 2021; samples whose grader
  broke, status 'error', are not scored and left out of n; a task with fewer than k scored samples
  is left out of pass@k). Resuming is `rlvr.runners.resumable`, as for `rlvr verify`.

The options of a run are one frozen `EvalConfig` (the CLI builds it, `rlvr.runners.cli.eval`, and runs it with
`verified_env`, `EvalConfig.build_policy` and `evaluate`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.metrics import EpisodeStats, VerdictStats
from rlvr.core.types import Trajectory
from rlvr.environments.base import Environment
from rlvr.rollout.batch import clone_factory, rollout
from rlvr.rollout.policies import OpenAIPolicy, Sampling, TransformersPolicy, VLLMPolicy, scripted_policy
from rlvr.rollout.policy import Policy
from rlvr.rollout.tokens import Layout
from rlvr.runners.config import CommandConfig
from rlvr.runners.models import resolve_model
from rlvr.runners.resumable import ResumableOutput, complete_lines

__all__ = ["EvalConfig", "evaluate", "read_trajectories", "verified_env"]


@dataclass
class EvalStats(VerdictStats):
    """Scores over an output file: `VerdictStats` per trajectory (by task), plus what only eval knows.

    Attributes:
        errors: trajectories whose episode broke (policy/environment/tokens; `error` set).
        resumed: trajectories found in the output at start.
        written: trajectories written by this run.
        first_error: the `error` of the first broken episode counted (None: none broke).
        episodes: the tool-use counts (tool-call rate, failed calls, turns; `EpisodeStats`).
    """

    errors: int = 0
    resumed: int = 0
    written: int = 0
    first_error: str | None = None
    episodes: EpisodeStats = field(default_factory=EpisodeStats)

    def add(self, traj: Trajectory) -> None:
        """Count one trajectory (a missing verdict counts as `error`)."""
        verdict = traj.verdict
        self.count(verdict.status if verdict is not None else "error", verdict.reward if verdict is not None else None,
                   traj.task_id)
        self.errors += traj.error is not None
        self.episodes.add(traj)
        if self.first_error is None:
            self.first_error = traj.error


def read_trajectories(path: Path, *, repair: bool = False) -> Iterator[Trajectory]:
    """Trajectories of an eval output; with `repair`, a torn last line is cut off the file (after reading).

    Raises:
        DataError: a complete line is not a trajectory (names the line).
    """
    for lineno, raw in complete_lines(path, repair=repair):
        if raw.strip():
            yield _parse(path, lineno, raw)


def _parse(path: Path, lineno: int, raw: bytes) -> Trajectory:
    try:
        return Trajectory.model_validate_json(raw)
    except ValueError as exc:
        raise DataError(f"{path}:{lineno}: not a trajectory row ({str(exc).splitlines()[0]}); "
                        "pass --overwrite to start over") from exc


def score_file(path: Path) -> EvalStats:
    """Scores of an existing eval output file."""
    stats = EvalStats()
    for traj in read_trajectories(path):
        stats.add(traj)
    return stats


def _row(traj: Trajectory) -> str:
    """One JSONL row. Unset fields are left out, but not a required None (an error verdict's reward)."""
    return traj.model_dump_json(exclude_defaults=True) + "\n"


def _prepare(output: Path, config: dict[str, Any], overwrite: bool
             ) -> tuple[set[tuple[str, int]], EvalStats, ResumableOutput[tuple[str, int]]]:
    """Resume `output`: the (task id, sample) pairs done and their stats; broken episodes are dropped to run again."""
    resumable = ResumableOutput[tuple[str, int]](output, config)
    resumable.prepare(overwrite)
    stats = EvalStats()
    seen: set[tuple[str, int]] = set()

    def read(lineno: int, raw: bytes) -> tuple[str, int] | None:
        traj = _parse(output, lineno, raw)
        key = (traj.task_id, int(traj.info.get("sample", 0)))
        if traj.error is not None or key in seen:  # a broken episode (server down, ...) is run again
            return None
        seen.add(key)
        stats.add(traj)
        return key

    done = resumable.resume(read)
    resumable.check_and_record()
    stats.resumed = len(done)
    return done, stats, resumable


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
    done, stats, resumable = _prepare(output, config, overwrite)
    if on_start is not None:
        on_start(sum(1 for t in tasks for k in range(n) if (t.id, k) not in done))
    with resumable.append() as out:

        def write(traj: Trajectory) -> None:
            out.write(_row(traj))
            stats.add(traj)
            stats.written += 1
            if on_progress is not None:
                on_progress(1)

        asyncio.run(rollout(clone_factory(env), policy, tasks, n=n, concurrency=concurrency, layout=layout,
                            seed=seed, skip=done, on_trajectory=write))
    return stats



def build_policy(
    *,
    policy: str | None,
    model: str | None,
    base_url: str | None,
    generator: str = "transformers",
    tokenizer: str | None = None,
    token_in: bool = False,
    sampling: Sampling | None = None,
    api_key: str = "EMPTY",
) -> Policy:
    """The policy `rlvr eval` options describe.

    `policy` (oracle | noop | script:PATH) wins; else with `base_url` an `OpenAIPolicy` serving
    `model` (its tokenizer: `tokenizer`, or `model` itself when it is a local folder); else a local
    model (`generator` transformers or vllm) at `model`, resolved by `resolve_model` (`smollm2` alias).

    Raises:
        ConfigError: neither a policy nor a model, or an unknown generator.
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
    if generator == "transformers":
        return TransformersPolicy(path, sampling=sampling)
    if generator == "vllm":
        return VLLMPolicy(path, sampling=sampling)
    raise ConfigError(f"--generator must be 'transformers' or 'vllm', got {generator!r}")


LAYOUTS = ("auto", "episode", "turn", "none")
"""`--layout` values: a token layout of `rlvr.rollout.tokens`, or `none` (no token fields)."""


class RolloutConfig(CommandConfig):
    """The options `rlvr eval` and `rlvr synth` share: environment, output, policy, sampling, verification engine.

    Frozen, and unknown fields are refused, so a typo fails loudly. Build one with `build` to get a
    `ConfigError` that names the bad field.
    """

    # -- environment and output
    env: str = Field(description="Environment id, e.g. math/gsm8k-v1.")
    env_args: dict[str, Any] = Field(default_factory=dict, description="Environment factory keyword arguments.")
    output: Path = Field(description="Where the trajectories go (eval: the JSONL; synth: the folder); resumed.")
    limit: int | None = Field(default=None, ge=1, description="Use only the first LIMIT tasks (None: all).")
    overwrite: bool = Field(default=False, description="Discard an existing output instead of resuming it.")
    # -- policy
    policy: str | None = Field(default=None, description="Scripted policy (oracle, noop, script:PATH); wins.")
    model: str | None = Field(default=None, description="Served model name (with base_url) or local model.")
    base_url: str | None = Field(default=None, description="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1.")
    generator: str = Field(default="transformers", description="What generates with a local model: transformers "
                           "(`model.generate`) or vllm (`vllm.LLM`).")
    tokenizer: str | None = Field(default=None, description="Tokenizer of a served model (token fields, counts).")
    # -- sampling
    n: int = Field(default=1, ge=1, description="Samples per task.")
    concurrency: int = Field(default=32, ge=1, description="Episodes in flight at once.")
    max_tokens: int = Field(default=512, description="Most tokens per model turn.")
    temperature: float = Field(default=1.0, description="Sampling temperature (0 = greedy).")
    top_p: float = Field(default=1.0, description="Nucleus sampling mass, in (0, 1].")
    seed: int = Field(default=0, description="Base seed: sample j resets the environment with seed + j.")
    # -- verification
    engine: str = Field(default="local", description="Where verification runs: local or ray (`rlvr.runners.engine`).")
    ray_address: str | None = Field(default=None, description="With engine ray: auto, HOST:PORT, or None.")
    workers: int | None = Field(default=None, ge=1, description="Verifier workers (local) or Ray actors (ray).")

    @model_validator(mode="after")
    def _sampling_is_valid(self) -> RolloutConfig:
        self.sampling()  # raises for a bad max_tokens, temperature or top_p
        return self

    def sampling(self) -> Sampling:
        """The policies' `Sampling` (its checks: max_tokens >= 1, temperature >= 0, 0 < top_p <= 1)."""
        return Sampling(max_tokens=self.max_tokens, temperature=self.temperature, top_p=self.top_p, seed=self.seed)

    def policy_record(self) -> dict[str, Any]:
        """The part of the run record the policy and sampling make up (scripted policies do not sample)."""
        local_model = self.policy is None and self.base_url is None
        return {"env": self.env, "env_args": self.env_args, "policy": self.policy, "model": self.model,
                "base_url": self.base_url, "generator": self.generator if local_model else None,
                "sampling": None if self.policy is not None else vars(self.sampling()), "seed": self.seed}

    def build_policy(self, *, token_in: bool = False) -> Policy:
        """The policy these options describe (`build_policy`)."""
        return build_policy(policy=self.policy, model=self.model, base_url=self.base_url, generator=self.generator,
                            tokenizer=self.tokenizer, token_in=token_in, sampling=self.sampling())


class EvalConfig(RolloutConfig):
    """One `rlvr eval` run (built and run by `rlvr.runners.cli.eval`): `RolloutConfig` plus these."""

    k: int = Field(default=1, ge=1, description="k of pass@k (<= n).")
    layout: str = Field(default="auto", description="Token layout of the trajectories: auto, episode, turn or none.")
    token_in: bool = Field(default=False, description="With base_url: send prompts as token ids.")

    @model_validator(mode="after")
    def _consistent(self) -> EvalConfig:
        if self.k > self.n:
            raise ValueError(f"-k {self.k} is larger than -n {self.n}; pass@k needs at least k samples per task "
                             "(raise -n)")
        if self.layout not in LAYOUTS:
            raise ValueError(f"--layout must be {', '.join(LAYOUTS[:-1])} or {LAYOUTS[-1]}, got {self.layout!r}")
        return self

    def record(self) -> dict[str, Any]:
        """What the trajectories depend on, recorded in `OUTPUT.meta.json` and compared on resume."""
        return {**self.policy_record(), "token_in": self.token_in, "layout": self.layout}


@contextlib.contextmanager
def verified_env(env: str, env_args: dict[str, Any], engine: str = "local", workers: int | None = None,
                 address: str | None = None) -> Iterator[Environment]:
    """`rlvr.make(env, **env_args)` whose verifier scores on `engine` (`make_engine(...).as_verifier()`).

    The local engine's verifier is the environment's own; Ray's scores on the cluster's actors.
    Episode clones share the environment's verifier. The environment and the engine are closed on exit.

    Raises:
        ConfigError: unknown environment, engine, or an address without `engine="ray"`.
        MissingExtraError: `engine="ray"` without Ray installed.
        BackendError: the Ray cluster cannot be reached.
    """
    from rlvr.environments.registry import make
    from rlvr.runners.engine import make_engine

    environment = make(env, **env_args)
    try:
        with make_engine(engine, environment.verifier, workers, address) as scorer:
            environment.verifier = scorer.as_verifier()
            yield environment
    finally:
        environment.close()
