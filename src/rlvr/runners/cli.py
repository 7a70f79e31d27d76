"""The `rlvr` command line: verify, check, envs, sample, train, eval, export, compare, serve.

Every command imports its heavy parts inside the function, so `import rlvr.runners.cli` (and
`rlvr --help`) loads no trainer, torch or transformers.

Exit codes: 0 success; 1 a check failed (`check`) or bad rows with `--strict` (`verify`);
2 the command itself could not run (bad option, missing file, unreadable data).

Example:
    $ rlvr sample --env math/reasoning-gym-v1 -n 20 -o sample.jsonl   # 20 tasks, 3-4 rows each
    $ rlvr verify --verifier math sample.jsonl -o verdicts.jsonl
    $ rlvr --version
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rlvr.core.errors import ConfigError, RlvrError
from rlvr.core.types import STATUSES
from rlvr.runners.args import parse_env_args

__all__ = ["app", "main"]

app = typer.Typer(
    name="rlvr",
    help="Verifiers and environments for RL with verifiable rewards.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

EnvArgs = Annotated[
    list[str] | None,
    typer.Option("--env-arg", "-a", help="Environment factory argument KEY=VALUE (JSON-decoded); repeatable."),
]
# options that rlvr eval and rlvr synth (and verify, for the engine) spell the same way
ModelOpt = Annotated[str | None, typer.Option(help="Served model name (with --base-url) or local model / smollm2.")]
BaseUrlOpt = Annotated[str | None, typer.Option(help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")]
PolicyOpt = Annotated[str | None, typer.Option(help="Scripted policy: oracle, noop or script:PATH.")]
LimitOpt = Annotated[int | None, typer.Option(min=1, help="Use only the first LIMIT tasks.")]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="Episodes in flight at once.")]
MaxTokensOpt = Annotated[int, typer.Option(min=1, help="Most tokens per model turn.")]
TemperatureOpt = Annotated[float, typer.Option(min=0.0, help="Sampling temperature (0 = greedy).")]
TopPOpt = Annotated[float, typer.Option(help="Nucleus sampling mass.")]
SeedOpt = Annotated[int, typer.Option(help="Base seed (environment resets, sampling).")]
GeneratorOpt = Annotated[str, typer.Option(help="What generates with a local model (no --base-url): transformers "
                                           "(model.generate) or vllm (vllm.LLM).")]
EngineOpt = Annotated[str, typer.Option(help="Where verification runs: local (worker processes) or ray.")]
RayAddressOpt = Annotated[str | None, typer.Option(help="With --engine ray: auto, HOST:PORT, or unset.")]
WorkersOpt = Annotated[int | None, typer.Option(min=1, help="Verifier workers (local) or Ray actors (ray).")]

TasksFile = Annotated[
    Path | None,
    typer.Option("--tasks", help="Only the tasks this JSONL lists (one {\"task_id\": ...} a line), e.g. the "
                 "rl.jsonl of `rlvr synth` (same --env and --env-arg values)."),
]


def _fail(exc: Exception) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
    return typer.Exit(2)


def _warn(message: str) -> None:
    err_console.print(f"[yellow]warning:[/yellow] {escape(message)}", highlight=False, soft_wrap=True)


def _show_version(value: bool) -> None:
    if value:
        from rlvr import __version__

        console.print(f"rlvr {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="Show the rlvr version and exit.")
    ] = False,
) -> None:
    """Verifiers and environments for RL with verifiable rewards."""


def _RowsPerSecond() -> Any:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class RowsPerSecond(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(f"{task.speed:,.0f} rows/s" if task.speed else "- rows/s")

    return RowsPerSecond()


class _LazyProgress:
    """A progress bar that appears on the first advance, so an early error prints alone."""

    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = (TextColumn("verifying"), BarColumn(), MofNCompleteColumn(), _RowsPerSecond(), TimeRemainingColumn())
        self.progress = Progress(*columns, console=err_console)
        self.bar = self.progress.add_task("verify", total=total)
        self.started = False

    def advance(self, k: int) -> None:
        if not self.started:
            self.progress.start()
            self.started = True
        self.progress.advance(self.bar, k)

    def stop(self) -> None:
        if self.started:
            self.progress.stop()


_VERIFY_HELP = "\n\n".join([
    "Score every row of INPUT and write it with a `verdict` to OUTPUT (incremental, resumable).",
    "Output columns: each row is the input object plus `_line` (its 1-based input line number) and "
    "`verdict` (status, reward, detail). A row that cannot be verified (not JSON, missing or null key) "
    "also gets `_bad_row: true`, and a line that is not a JSON object is kept as text under `_raw`. "
    "Input rows that already have `verdict`, `_line` or `_bad_row` get them replaced (with a warning).",
    "The run configuration (input, verifier and its options, keys) is recorded in OUTPUT.meta.json. "
    "Rerunning the same command resumes; a rerun with another configuration is refused unless "
    "--overwrite is given.",
    "INPUT may also be a Parquet file, a `datasets` save_to_disk directory (DIR[:SPLIT]) or a Hugging Face "
    "dataset id (ID[:CONFIG]:SPLIT); OUTPUT ending in .parquet is written as Parquet. With --engine ray "
    "(or those formats) finished rows go to order-independent shards in OUTPUT.shards/, merged into OUTPUT "
    "in input order at the end; rerunning after a kill resumes from them.",
])


@app.command(help=_VERIFY_HELP)
def verify(
    input: Annotated[Path, typer.Argument(help="Input JSONL: one object per line with a response and a reference "
                                          "(or Parquet, a dataset folder or id: see above).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Output JSONL, or .parquet (resumed if it exists).")],
    verifier: Annotated[str, typer.Option(help="Verifier name (math, sql, code, ...) or module:Class.")] = "math",
    verifier_arg: Annotated[
        list[str] | None, typer.Option("--verifier-arg", help="Verifier option KEY=VALUE, e.g. timeout_s=5.")
    ] = None,
    response_key: Annotated[str, typer.Option(help="Key of the response in each row.")] = "response",
    reference_key: Annotated[str, typer.Option(help="Key of the reference answer in each row.")] = "reference",
    prompt_key: Annotated[str | None, typer.Option(help="Key of the question or chat prompt (judge verifiers: "
                                                   "judge, ruler); the reference then is optional.")] = None,
    group_key: Annotated[str | None, typer.Option(help="Rows sharing this key's value are judged together in "
                                                  "one call (group verifiers: ruler).")] = None,
    expected_key: Annotated[str, typer.Option(help="Key of an optional expected status, to report agreement.")] = (
        "expected"
    ),
    workers: Annotated[
        int | None, typer.Option(min=1, help="Verifier worker processes (local, default 1) or Ray actors "
                                 "(ray, default: every CPU of the cluster).")
    ] = None,
    engine: Annotated[str, typer.Option(help="Where to verify: local (this machine) or ray (a Ray cluster).")] = (
        "local"
    ),
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster for --engine ray: auto, HOST:PORT (default: RAY_ADDRESS, else a "
                                 "new local cluster).")
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option(min=1, help="Rows per written batch (default: local 4x workers, ray 64).")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Discard an existing output instead of resuming it.")] = False,
    strict: Annotated[bool, typer.Option(help="Exit 1 if any row was bad (not JSON, missing key).")] = False,
) -> None:
    """Score every row of INPUT and write it with a `verdict` to OUTPUT (help text: `_VERIFY_HELP`)."""
    from rlvr.runners.rowio import open_source
    from rlvr.runners.sharded import uses_shards
    from rlvr.runners.verify import count_rows, verify_file
    from rlvr.verifiers.registry import get_verifier

    try:
        _check_engine(engine, ray_address)
        sharded = uses_shards(engine, input, output)
        if not sharded and not input.is_file():
            raise ConfigError(f"input file {str(input)!r} does not exist")
        scorer = get_verifier(verifier, **parse_env_args(verifier_arg))
        source = open_source(str(input)) if sharded else None
        total = source.total() if source is not None else count_rows(input)
    except (RlvrError, OSError) as exc:
        raise _fail(exc) from exc
    if not total:
        _warn(f"input has no rows: {input} is empty or holds only blank lines")
    shown = [0]

    def on_bad(message: str) -> None:
        shown[0] += 1
        if shown[0] <= 20:
            err_console.print(f"[yellow]bad row[/yellow] {escape(message)}", highlight=False, soft_wrap=True)

    bar = _LazyProgress(total)
    try:
        with scorer:
            if source is not None:
                stats = _verify_sharded(source, output, scorer, engine, workers, ray_address, dict(
                    response_key=response_key, reference_key=reference_key, expected_key=expected_key,
                    batch_size=batch_size, overwrite=overwrite, on_progress=bar.advance, on_bad=on_bad,
                    on_warning=_warn, prompt_key=prompt_key, group_key=group_key))
            else:
                stats = verify_file(
                    input, output, scorer, response_key=response_key, reference_key=reference_key,
                    expected_key=expected_key, workers=workers or 1, batch_size=batch_size, overwrite=overwrite,
                    on_progress=bar.advance, on_bad=on_bad, on_warning=_warn, prompt_key=prompt_key,
                    group_key=group_key,
                )
    except RlvrError as exc:
        bar.stop()
        raise _fail(exc) from exc
    except KeyboardInterrupt:
        bar.stop()
        err_console.print("interrupted; rows written so far are kept. Rerun the same command to resume.")
        raise typer.Exit(130) from None
    bar.stop()
    _print_stats(stats, output)
    hint = stats.key_hint(response_key, reference_key)
    if hint:
        err_console.print(f"[yellow]hint:[/yellow] {escape(hint)}", highlight=False, soft_wrap=True)
    total_rows, errors = stats.total, stats.statuses.get("error", 0)  # bad rows count as error
    if not hint and total_rows > stats.bad_rows and errors == total_rows:
        _warn(f"every verified row is `error` (the grader failed, not the responses): read `verdict.detail` in "
              f"{output}; is --verifier {verifier!r} the right one for these references, with its extra installed?")
    if strict and stats.bad_rows:
        raise typer.Exit(1)


def _check_engine(engine: str, ray_address: str | None) -> None:
    from rlvr.runners.engine import ENGINES

    if engine not in ENGINES:
        raise ConfigError(f"unknown --engine {engine!r}; choose one of: {', '.join(ENGINES)}")
    if ray_address is not None and engine != "ray":
        raise ConfigError("--ray-address needs --engine ray")


def _verify_sharded(source: Any, output: Path, scorer: Any, engine: str, workers: int | None,
                    ray_address: str | None, options: dict[str, Any]) -> Any:
    """`rlvr verify` through an engine (`--engine ray`, Parquet or dataset input, Parquet output)."""
    from rlvr.runners.engine import make_engine
    from rlvr.runners.sharded import verify_sharded

    if any(options.pop(key) for key in ("prompt_key", "group_key")):
        raise ConfigError("--prompt-key and --group-key need JSONL input and output with --engine local")
    with make_engine(engine, scorer, workers, ray_address) as runner:
        return verify_sharded(source, output, scorer, runner, **options)


def _print_stats(stats: Any, output: Path) -> None:
    table = Table(title=f"rlvr verify → {output}")
    table.add_column("status")
    table.add_column("rows", justify="right")
    for status in STATUSES:
        table.add_row(status, str(stats.statuses.get(status, 0)))
    table.add_row("total", str(stats.total), end_section=True)
    table.add_row("of which bad rows", str(stats.bad_rows))
    accuracy = "n/a" if stats.accuracy is None else f"{stats.accuracy:.1%}"
    table.add_row("accuracy (correct / scored)", accuracy)
    if stats.expected_total:
        table.add_row("matches expected", f"{stats.expected_match}/{stats.expected_total}")
    table.add_row("resumed / written now", f"{stats.resumed} / {stats.written}")
    if stats.blank_lines:
        table.add_row("blank input lines skipped", str(stats.blank_lines))
    console.print(table)


@app.command()
def check(
    env_id: Annotated[str, typer.Argument(help="Registered environment id, e.g. math/gsm8k-v1.")],
    env_arg: EnvArgs = None,
    n: Annotated[int, typer.Option("-n", min=1, help="Number of tasks to check.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed for the reset checks.")] = 0,
    time_budget: Annotated[float, typer.Option(help="Per-verification time budget, seconds.")] = 5.0,
    adversarial: Annotated[bool, typer.Option("--adversarial", help="Instead: the hack-resistance audit (wrong "
                                              "responses by families of mutation for the verifier's domain; exit 1 "
                                              "on any that scores correct).")] = False,
    report_file: Annotated[Path | None, typer.Option("--report", help="With --adversarial: write the audit as "
                                                     "JSON here.")] = None,
) -> None:
    """Run the conformance checks on an environment; exit 1 if any fails (--adversarial: the audit)."""
    from rlvr.rollout.check import check as run_check

    if adversarial:
        _audit(env_id, env_arg, n, report_file)
        return
    if report_file is not None:
        raise _fail(ConfigError("--report is written by the audit: add --adversarial"))
    try:
        report = run_check(env_id, n=n, seed=seed, time_budget_s=time_budget, env_kwargs=parse_env_args(env_arg))
    except RlvrError as exc:
        raise _fail(exc) from exc
    table = Table(title=f"rlvr check {report.env_id} (n={report.n}, {report.elapsed_s:.1f} s)")
    for col in ("check", "result", "items", "detail"):
        table.add_column(col)
    for r in report.results:
        mark = "[green]pass[/green]" if r.passed else "[red]FAIL[/red]"
        table.add_row(r.name, mark, str(r.items), escape(_check_detail(r)))
    console.print(table)
    if not report.passed:
        raise typer.Exit(1)


def _audit(env_id: str, env_arg: list[str] | None, n: int, report_path: Path | None) -> None:
    """`rlvr check --adversarial`: the audit, a row per family, the JSON report; exit 1 on a false pass."""
    import json

    from rlvr.environments.audit import audit

    try:
        with console.status(f"auditing {env_id}") as status:
            report = audit(env_id, n=n, env_kwargs=parse_env_args(env_arg), on_task=lambda task, k, fp: status.update(
                f"auditing {env_id}: {task.id} ({k} probes), {fp} false passes so far"))
    except RlvrError as exc:
        raise _fail(exc) from exc
    table = Table(title=f"rlvr check --adversarial {report.env_id} ({report.domain}, n={report.n}, "
                  f"{report.elapsed_s:.1f} s)")
    for col in ("family", "tried", "false passes", "errors", "first false pass"):
        table.add_column(col)
    rows = [(name, f, f.false_passes) for name, f in report.families.items()] + [
        ("controls (must pass)", report.controls, report.controls.failed)]
    for name, fam, bad in rows:
        first = fam.examples[0] if fam.examples else None
        shown = f"{first['task_id']} {first['probe']}: {first['status']} ← {first['response'][:80]!r}" if first else ""
        table.add_row(name, str(fam.tried), f"[red]{bad}[/red]" if bad else "0", str(fam.errors), escape(shown))
    console.print(table)
    for line in report.skipped:
        _warn(f"skipped {line}")
    console.print(f"{report.tried} wrong responses tried, {report.false_passes} scored correct; "
                  f"{report.controls.tried} controls, {report.controls_failed} failed")
    if report_path is not None:
        report_path.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if report.false_passes:
        raise typer.Exit(1)


def _check_detail(result: Any) -> str:
    """A check's detail: its summary, or the failure count and the first failing items, one a line."""
    if result.passed or not result.failed_items:
        return str(result.detail)
    lines = [f"{result.failed} of {result.items} failed:", *(f"- {item}" for item in result.failed_items)]
    if result.failed > len(result.failed_items):
        lines.append(f"(+{result.failed - len(result.failed_items)} more)")
    return "\n".join(lines)


@app.command()
def envs() -> None:
    """List the registered environment ids."""
    from rlvr.environments.registry import registry

    table = Table(title="registered environments")
    table.add_column("id")
    table.add_column("description")
    for env_id in registry.ids():
        table.add_row(env_id, registry.spec(env_id).description)
    console.print(table)


@app.command()
def sample(
    env: Annotated[str, typer.Option("--env", "-e", help="Environment id.")] = "math/reasoning-gym-v1",
    env_arg: EnvArgs = None,
    n: Annotated[
        int,
        typer.Option("-n", min=1, help="Number of TASKS to sample; each gives 3-4 rows (reference, off-by-one "
                     "when the answer is a number, empty, no answer), so -n 20 writes 60-80 rows."),
    ] = 20,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output JSONL for `rlvr verify`.")] = Path(
        "sample.jsonl"
    ),
) -> None:
    """Write a verify input from N tasks of an environment (3-4 rows per task).

    Per task: the reference answer plus known-wrong responses, each with the status it should get.
    """
    import json

    from rlvr.environments.registry import make
    from rlvr.runners.verify import sample_rows

    try:
        environment = make(env, **parse_env_args(env_arg))
    except RlvrError as exc:
        raise _fail(exc) from exc
    per_task: dict[str, int] = {}
    try:
        with output.open("w", encoding="utf-8") as f:
            for row in sample_rows(environment, n):
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                per_task[row["task_id"]] = per_task.get(row["task_id"], 0) + 1
    except OSError as exc:
        raise _fail(exc) from exc
    finally:
        environment.close()
    console.print(f"wrote {_sample_summary(per_task)} from {env} to {output}", highlight=False)
    if len(per_task) < n:
        _warn(f"the environment has only {len(per_task)} tasks (asked for {n}); raise its size with -a size=N")


def _sample_summary(per_task: dict[str, int]) -> str:
    """'20 tasks × 4 responses = 80 rows' (or '× 3-4 responses' when tasks differ)."""
    counts = sorted(set(per_task.values())) or [0]
    each = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    tasks = len(per_task)
    return f"{tasks} task{'s' * (tasks != 1)} × {each} responses = {sum(per_task.values())} rows"


@app.command()
def train(
    backend: Annotated[str, typer.Option(help="Trainer backend: trl (in this process), verl or openrlhf (in "
                                         "their own Python: see --backend-python).")] = "trl",
    env: Annotated[str, typer.Option("--env", "-e", help="Environment id.")] = "math/reasoning-gym-v1",
    env_arg: EnvArgs = None,
    model: Annotated[str | None, typer.Option(help="Local model folder or Hugging Face id; default (or `smollm2`): "
                                               "the embedded SmolLM2-135M-Instruct.")] = None,
    steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 50,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output directory (curve, plot, model).")] = Path(
        "rlvr-train"
    ),
    trainer_arg: Annotated[
        list[str] | None, typer.Option("--trainer-arg", help="Backend option KEY=VALUE, passed through; repeatable.")
    ] = None,
    multi_turn: Annotated[str, typer.Option(
        help="Multi-turn envs with TRL: auto (environment_factory for tool envs, else rollout_func), "
             "environment_factory or rollout_func.")] = "auto",
    backend_python: Annotated[Path | None, typer.Option(
        help="verl/openrlhf: the Python of the backend's environment (default $RLVR_VERL_PYTHON / "
             "$RLVR_OPENRLHF_PYTHON, else this Python).")] = None,
    dry_run: Annotated[bool, typer.Option(
        help="verl/openrlhf: write the export and the command (OUTPUT/command.sh) without running it.")] = False,
    n_gpus: Annotated[int, typer.Option(min=1, help="verl/openrlhf: GPUs to train on.")] = 1,
    device: Annotated[str, typer.Option(help="verl/openrlhf: auto (CUDA when a GPU is visible, else the CPU), "
                                        "cuda, or cpu (rlvr's CPU mode: vLLM-CPU rollouts, gloo).")] = "auto",
    timeout: Annotated[float | None, typer.Option(min=1, help="verl/openrlhf: stop the run after this many "
                                                  "seconds (exit code 124).")] = None,
    tasks: TasksFile = None,
) -> None:
    """Train a model on an environment with a trainer backend (needs that backend's extra)."""
    from rlvr.runners.cli_backends import EXTERNAL, train_external

    if backend not in ("trl", *EXTERNAL):
        raise _fail(ConfigError(f"--backend must be one of trl, {', '.join(EXTERNAL)}; got {backend!r}"))
    if backend in EXTERNAL:
        train_external(backend, env, env_arg, model, steps, output, trainer_arg, backend_python, dry_run, n_gpus,
                       tasks, device=device, timeout_s=timeout)
        return
    if dry_run or backend_python is not None:
        raise _fail(ConfigError("--dry-run and --backend-python are for --backend verl|openrlhf; "
                                "trl trains in this process"))
    if n_gpus != 1:
        raise _fail(ConfigError("--n-gpus is for --backend verl|openrlhf; trl uses the devices this process sees "
                                "(CUDA_VISIBLE_DEVICES; for several GPUs launch it with accelerate)"))
    from rlvr.runners.train import train_command  # type: ignore[import-not-found,unused-ignore]  # lazy

    try:
        train_command(
            backend=backend, env=env, env_args=parse_env_args(env_arg), model=model, steps=steps, output=output,
            trainer_args=parse_env_args(trainer_arg), multi_turn=multi_turn, tasks=tasks,
        )
    except RlvrError as exc:
        raise _fail(exc) from exc
    except OSError as exc:  # model/tokenizer loading (transformers raises OSError), or the output folder
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        err_console.print(
            f"[red]error:[/red] {escape(first)}; hint: offline, a Hugging Face id must already be in the local "
            "Hugging Face cache (set HF_HOME to it), or pass a local model folder with --model",
            highlight=False, soft_wrap=True,
        )
        raise typer.Exit(2) from exc
    except KeyboardInterrupt as exc:  # train_command already kept and plotted the partial curve
        raise typer.Exit(130) from exc
    console.print(f"training finished; results in {output}")


_EVAL_HELP = "\n\n".join([
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


@app.command(name="eval", help=_EVAL_HELP)
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
    """Roll a policy through an environment and report pass@k (help text: `_EVAL_HELP`)."""
    from rlvr.runners.eval import EvalConfig, run_eval

    if policy is not None and (model is not None or base_url is not None):
        _warn(f"--policy {policy} is a scripted policy: --model and --base-url are ignored")
    try:
        config = EvalConfig.build(
            env=env, env_args=parse_env_args(env_arg), output=output, model=model, base_url=base_url, policy=policy,
            n=n, k=k, limit=limit, concurrency=concurrency, max_tokens=max_tokens, temperature=temperature,
            top_p=top_p, seed=seed, layout=layout, tokenizer=tokenizer,
            generator=generator,
            token_in=token_in, overwrite=overwrite, engine=engine, ray_address=ray_address, workers=workers,
        )
        run_eval(config, console=console, err_console=err_console)
    except RlvrError as exc:
        raise _fail(exc) from exc
    except KeyboardInterrupt:
        err_console.print("interrupted; trajectories written so far are kept. Rerun the same command to resume.")
        raise typer.Exit(130) from None


from rlvr.runners import cli_backends as _cli_backends  # noqa: E402,F401 - registers `export` and `compare` on `app`
from rlvr.runners import cli_serve as _cli_serve  # noqa: E402,F401 - registers `serve` on `app`
from rlvr.runners import cli_synth as _cli_synth  # noqa: E402,F401 - registers `synth` on `app`


def main() -> None:
    """Console-script entry point (`rlvr`)."""
    app()


if __name__ == "__main__":  # `python -m rlvr.runners.cli`: run the imported module's app, where
    from rlvr.runners.cli import main as _imported_main  # cli_backends, cli_synth, cli_serve registered

    _imported_main()
