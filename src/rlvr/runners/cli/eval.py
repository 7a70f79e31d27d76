"""`rlvr eval`: roll a policy through an environment, report pass@k; the work is `rlvr.runners.eval`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from rlvr.core.errors import RlvrError
from rlvr.core.types import STATUSES
from rlvr.runners.args import parse_env_args
from rlvr.runners.cli.app import (
    BaseUrlOpt,
    Command,
    ConcurrencyOpt,
    EngineOpt,
    EnvArgs,
    EpisodeProgress,
    GeneratorOpt,
    LimitOpt,
    MaxTokensOpt,
    ModelOpt,
    PolicyOpt,
    RayAddressOpt,
    SeedOpt,
    TemperatureOpt,
    TopPOpt,
    WorkersOpt,
    console,
    err_console,
    fail,
    warn,
)

if TYPE_CHECKING:
    from rlvr.rollout.tokens import Layout
    from rlvr.runners.eval import EvalConfig, EvalStats

__all__: list[str] = []

_HELP = "\n\n".join([
    "Roll a policy through an environment; write trajectories to OUTPUT (JSONL, incremental, resumable); "
    "print pass@1 / pass@k (unbiased estimator), mean reward and counts per verdict status.",
    "The policy: --policy oracle|noop|script:PATH (scripted, no model: oracle must score correct, noop must "
    "not), else --model with --base-url (an OpenAI-compatible server, e.g. vLLM), else --model as a local "
    "model folder or `smollm2` (run with --generator transformers or vllm). script:PATH replays a JSONL of "
    "{\"task_id\": ..., \"actions\": [...]} lines (each action a string or an assistant message dict).",
    "Verification runs with --engine local (worker processes, --workers N) or --engine ray (Ray actors on "
    "the cluster at --ray-address), as for `rlvr verify`.",
    "Rerunning the same command resumes (skips the (task, sample) pairs already written); a larger -n adds "
    "samples. The configuration is recorded in OUTPUT.meta.json; another configuration needs --overwrite.",
])


def eval_(
    env: Annotated[str, typer.Option("--env", "-e", help="Environment id.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Output JSONL of trajectories (resumed if present).")],
    env_arg: EnvArgs = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    policy: PolicyOpt = None,
    n: Annotated[int, typer.Option("-n", min=1, help="Samples per task.")] = 1,
    k: Annotated[int, typer.Option("-k", min=1, help="k of pass@k (<= n).")] = 1,
    limit: LimitOpt = None,
    concurrency: ConcurrencyOpt = 32,
    max_tokens: MaxTokensOpt = 512,
    temperature: TemperatureOpt = 1.0,
    top_p: TopPOpt = 1.0,
    seed: SeedOpt = 0,
    layout: Annotated[str, typer.Option(help="Token layout: auto, episode, turn or none.")] = "auto",
    generator: GeneratorOpt = "transformers",
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    workers: WorkersOpt = None,
    tokenizer: Annotated[str | None, typer.Option(help="Tokenizer for token fields with --base-url.")] = None,
    token_in: Annotated[bool, typer.Option(help="With --base-url: send prompts as token ids (/v1/completions).")] = (
        False
    ),
    overwrite: Annotated[bool, typer.Option(help="Discard an existing output instead of resuming it.")] = False,
) -> None:
    """Roll a policy through an environment and report pass@k (help text: `_HELP`)."""
    from rlvr.runners.eval import EvalConfig

    if policy is not None and (model is not None or base_url is not None):
        warn(f"--policy {policy} is a scripted policy: --model and --base-url are ignored")
    try:
        config = EvalConfig.build(
            env=env, env_args=parse_env_args(env_arg), output=output, model=model, base_url=base_url, policy=policy,
            n=n, k=k, limit=limit, concurrency=concurrency, max_tokens=max_tokens, temperature=temperature,
            top_p=top_p, seed=seed, layout=layout, tokenizer=tokenizer,
            generator=generator,
            token_in=token_in, overwrite=overwrite, engine=engine, ray_address=ray_address, workers=workers,
        )
        _run(config)
    except RlvrError as exc:
        raise fail(exc) from exc
    except KeyboardInterrupt:
        err_console.print("interrupted; trajectories written so far are kept. Rerun the same command to resume.")
        raise typer.Exit(130) from None


def _run(config: EvalConfig) -> EvalStats:
    """The `rlvr eval` command: build env and policy, run `evaluate` with a progress bar, print the report.

    Verification runs where `config.engine` says, exactly as for `rlvr verify`: `local` (this
    machine's verifier worker processes) or `ray` (Ray actors on the cluster at `ray_address`; see
    `rlvr.runners.engine`). Generation runs where the policy is: a server (`base_url`) or a local
    model (`generator` transformers or vllm).

    Raises:
        ConfigError: bad options (no policy or model, unknown engine, a resume with another configuration, ...).
        MissingExtraError: `engine="ray"` without Ray installed.
        BackendError: the Ray cluster cannot be reached.
    """
    from rlvr.runners.eval import evaluate, verified_env

    with verified_env(config.env, config.env_args, config.engine, config.workers, config.ray_address) as environment:
        chosen = config.build_policy(token_in=config.token_in)
        layout = None if config.layout == "none" else cast("Layout", config.layout)  # one of LAYOUTS
        with EpisodeProgress() as bar:
            stats = evaluate(environment, chosen, config.output, config=config.record(), n=config.n,
                             limit=config.limit, concurrency=config.concurrency, layout=layout,
                             seed=config.seed, overwrite=config.overwrite, on_start=bar.start,
                             on_progress=bar.advance)
    console.print(_report_table(stats, k=config.k, title=f"rlvr eval {config.env} → {config.output}"))
    if stats.first_error is not None:  # the table counts broken episodes; this says why
        err_console.print(f"{stats.errors} episode{'s' * (stats.errors != 1)} broke (field `error` of their rows "
                          f"in {config.output}; a rerun runs them again); the first: {stats.first_error}",
                          markup=False, highlight=False, soft_wrap=True)
    return stats


def _report_table(stats: EvalStats, *, k: int, title: str) -> Any:
    """A rich table: pass@1, pass@k, mean reward, tool use, counts per verdict status, errors, resumed/written."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for kk in sorted({1, k}):
        value, tasks = stats.pass_at(kk)
        table.add_row(f"pass@{kk}", "n/a" if value is None else f"{value:.3f}  ({tasks} tasks)")
    mean = stats.mean_reward
    table.add_row("mean reward", "n/a" if mean is None else f"{mean:.3f}", end_section=True)
    episodes = stats.episodes.metrics()
    table.add_row("tool-call rate (episodes with a call)", f"{episodes['tool_call_rate']:.3f}")
    table.add_row("failed tool calls / episode", f"{episodes['tool_errors']:.3f}")
    table.add_row("model turns / episode", f"{episodes['turns']:.2f}", end_section=True)
    for status in STATUSES:
        table.add_row(status, str(stats.statuses.get(status, 0)))
    table.add_row("total", str(stats.total), end_section=True)
    table.add_row("of which episode errors", str(stats.errors))
    table.add_row("resumed / written now", f"{stats.resumed} / {stats.written}")
    return table


COMMAND = Command(eval_, "eval", _HELP)
