"""`rlvr synth`: verified SFT rows and pass-rate-banded RL tasks from an environment (`rlvr.runners.synth`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from rlvr.core.errors import RlvrError
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
    check_engine,
    console,
    err_console,
    fail,
    warn,
)

__all__: list[str] = []

_HELP = "\n\n".join([
    "Roll N samples per task through an environment (the episode path of `rlvr eval`, multi-turn envs "
    "included), verified by its verifier, and write to the folder OUTPUT: sft.jsonl (one row per kept "
    "sample: messages, task_id, sample, reward, verdict; only verified-correct samples unless --keep all), "
    "rl.jsonl (one row per task whose pass rate lies in --band; train on exactly those with "
    "`rlvr export --tasks` / `rlvr train --tasks`), report.json and report.html (pass@1..N, pass-rate "
    "histogram, counts per status, tokens, time), and trajectories.jsonl (every sample).",
    "Pass rate = correct / scored samples: `error` samples (episode or grader broke) are left out and "
    "counted apart; a task with only error samples is reported, never placed in the band.",
    "Rerunning the same command resumes (finished (task, sample) pairs are skipped); a larger -n adds only "
    "the new samples; --band, --keep and --dedup can change between runs (the files are derived again).",
])


def synth(
    env: Annotated[str, typer.Option("--env", "-e", help="Environment id.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Output folder (resumed if it holds a run).")],
    n: Annotated[int, typer.Option("-n", min=1, help="Samples per task (K).")],
    env_arg: EnvArgs = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    policy: PolicyOpt = None,
    band: Annotated[str, typer.Option(help="LO,HI: rl.jsonl keeps tasks with LO <= pass rate <= HI.")] = "0,1",
    keep: Annotated[str, typer.Option(help="sft.jsonl rows: correct (verified-correct only) or all (every "
                                      "scored sample).")] = "correct",
    dedup: Annotated[bool, typer.Option(help="Keep identical conversations of one task once.")] = False,
    limit: LimitOpt = None,
    concurrency: ConcurrencyOpt = 32,
    max_tokens: MaxTokensOpt = 512,
    temperature: TemperatureOpt = 1.0,
    top_p: TopPOpt = 1.0,
    seed: SeedOpt = 0,
    generator: GeneratorOpt = "transformers",
    tokenizer: Annotated[str | None, typer.Option(help="Tokenizer for token counts with --base-url.")] = None,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    workers: WorkersOpt = None,
    overwrite: Annotated[bool, typer.Option(help="Discard an earlier run in OUTPUT instead of resuming it.")] = False,
) -> None:
    """Synthetic SFT rows and pass-rate-banded RL tasks from an environment (help text: `_HELP`)."""
    from rlvr.runners.synth import SynthConfig, parse_band, run_synth

    if policy is not None and (model is not None or base_url is not None):
        warn(f"--policy {policy} is a scripted policy: --model and --base-url are ignored")
    try:
        check_engine(engine, ray_address)
        config = SynthConfig.build(
            env=env, env_args=parse_env_args(env_arg), output=output, n=n, model=model, base_url=base_url,
            policy=policy, band=parse_band(band), keep=keep, dedup=dedup, limit=limit, concurrency=concurrency,
            max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed, tokenizer=tokenizer,
            generator=generator, engine=engine,
            ray_address=ray_address, workers=workers, overwrite=overwrite,
        )
        with EpisodeProgress() as bar:
            result = run_synth(config, progress=bar)
    except (RlvrError, OSError) as exc:
        raise fail(exc) from exc
    except KeyboardInterrupt:
        err_console.print("interrupted; samples written so far are kept. Rerun the same command to resume.")
        raise typer.Exit(130) from None
    console.print(_table(result.report, output))
    if result.report["tasks_all_error"]:
        warn(f"{len(result.report['tasks_all_error'])} task(s) have only error samples (see report.json "
              "`tasks_all_error` and the trajectories' verdict detail); they are not in rl.jsonl")


def _table(report: dict[str, Any], output: Path) -> Table:
    table = Table(title=f"rlvr synth {report['env']} → {output}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k in sorted({1, report["n"]}):
        entry = report["pass_at"][str(k)]
        value = "n/a" if entry["value"] is None else f"{entry['value']:.3f}  ({entry['tasks']} tasks)"
        table.add_row(f"pass@{k}", value)
    table.add_row("tasks / samples", f"{report['tasks']} / {report['samples']}", end_section=True)
    for status, count in report["statuses"].items():
        table.add_row(status, str(count))
    lo, hi = report["band"]
    table.add_row(f"rl.jsonl tasks ({lo:g} <= p <= {hi:g})", str(report["rl_rows"]), end_section=False)
    counts = report["band_counts"]
    table.add_row("tasks below / above band / all error",
                  f"{counts['below']} / {counts['above']} / {counts['all_error']}")
    table.add_row(f"sft.jsonl rows (keep {report['keep']})", str(report["sft_rows"]), end_section=True)
    episodes = report["episodes"]
    table.add_row("tool-call rate / failed calls per sample",
                  f"{episodes['tool_call_rate']:.3f} / {episodes['tool_errors']:.3f}")
    table.add_row("model turns per sample", f"{episodes['turns']:.2f}", end_section=True)
    time_ = report["time"]
    table.add_row("resumed / written now", f"{time_['samples_resumed']} / {time_['samples_written']}")
    rate = time_["samples_per_s"]
    table.add_row("wall s / samples per s", f"{time_['wall_s']:.1f} / {'n/a' if rate is None else f'{rate:.1f}'}")
    return table


COMMAND = Command(synth, "synth", _HELP)
