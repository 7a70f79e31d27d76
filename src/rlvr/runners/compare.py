"""`rlvr compare`: one environment, several trainer backends, one report.

For each backend (`trl`, `verl`, `openrlhf`), in that backend's own interpreter (`--<backend>-python`,
else `$RLVR_<BACKEND>_PYTHON`, else this Python; their transformers pins conflict, so each usually
has its own virtual environment):

1. **probe** it: do rlvr and the backend import, how many CUDA devices does it see. A backend that
   cannot run there is reported as `unavailable: <why>` and skipped, not an error.
2. **parity**: replay parity records built for *this* environment (`rlvr.runners.parity.records.build_records`:
   rlvr's own verdicts and episode-layout token fields) through the backend's replay function
   (`python -m rlvr.runners.parity replay` in that interpreter) and compare rewards and loss masks.
3. **train**: TRL trains on CPU or GPU (`rlvr train --backend trl` in its interpreter); veRL and
   OpenRLHF train on the GPU where the interpreter sees one (`rlvr train --backend verl|openrlhf`,
   unchanged), else in rlvr's CPU mode (`--device cpu`, `rlvr.adapters.cpu`) with the options of
   `CPU_COMPARE_ARGS` that align them with TRL (`CPU_ALIGNMENT` says what differs and how it was
   aligned); a backend without a CPU mode (`CPU_TRAINABLE`) gets a dry run (export and command).
   Every run writes `reward_curve.csv` (`rlvr.runners.curves`), read here for the report.

Then `report.html` (self-contained, plots embedded; `rlvr.runners.report`) and `summary.json`.

Output folder:

```
parity/records.json      the records replayed (with rlvr's expected results)
parity/<backend>.json    each backend's replay results
<backend>/               its training run (TRL: reward_curve.csv, model/; veRL/OpenRLHF: export/, command.sh, train.log)
<backend>.log            the training subprocess's output
summary.json             everything in the report, machine-readable (schema: `BackendResult`)
report.html              the report
```
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from rlvr.core.errors import BackendError, ConfigError, MissingExtraError, RlvrError
from rlvr.core.files import atomic_write
from rlvr.runners.backends import (
    EXTERNAL_BACKENDS,
    TIMEOUT_EXIT_CODE,
    Probe,
    backend_python,
    interrupt_on_terminate,
    probe,
    run_backend,
    run_streaming,
)
from rlvr.runners.curves import read_openrlhf_curve, read_trl_curve, read_verl_curve

__all__ = ["COMPARE_BACKENDS", "BackendResult", "CompareSummary", "compare_command", "parse_backends",
           "read_trl_curve", "read_verl_curve"]

COMPARE_BACKENDS: tuple[str, ...] = ("trl", "verl", "openrlhf")

TRL_COMPARE_ARGS: dict[str, str] = {"max_completion_length": "64", "num_generations": "4",
                                    "per_device_train_batch_size": "8"}
"""TRL options `rlvr compare` uses unless `--trl-arg` overrides them (2 prompts x 4 samples per step)."""

CPU_TRAINABLE: tuple[str, ...] = ("verl", "openrlhf")
"""External backends `rlvr compare` trains in rlvr's CPU mode when no GPU is visible (else a dry run)."""

CPU_COMPARE_ARGS: dict[str, dict[str, str]] = {
    "verl": {"actor_rollout_ref.actor.optim.lr": "1e-5"},
    "openrlhf": {"actor.adam.lr": "1e-5", "actor.lr_scheduler": "constant", "actor.lr_warmup_ratio": "0",
                 "actor.adam.betas": "[0.9, 0.999]"},
}
"""Options that align a CPU-mode backend with `TRL_COMPARE_ARGS` and TRL's defaults in `rlvr train`
(`--verl-arg` / `--openrlhf-arg` win). Already equal by rlvr's CPU profiles: 2 prompts x 4 samples per
step, 64 response tokens, temperature 1, no KL term, gradient clipping at 1.0. Aligned here: veRL's
and OpenRLHF's learning rate (default 1e-6) to TRL's constant 1e-5; OpenRLHF's schedule (default
cosine with 3 % warm-up, which makes a 3-step run's first step lr 0) to constant without warm-up, and
its Adam betas (default 0.9, 0.95) to TRL's (0.9, 0.999). Left different: the loss aggregation and
OpenRLHF's bf16 (its vLLM engines are built in bf16, `create_vllm_engines`, and the weight sync needs
equal dtypes; TRL and veRL on CPU: fp32)."""

CPU_ALIGNMENT: dict[str, str] = {
    "trl": "2 prompts x 4 samples, 64 completion tokens, lr 1e-5, beta 0 (TRL_COMPARE_ARGS, DEFAULT_GRPO_ARGS)",
    "verl": "CPU profile: 2 prompts x 4 rollouts, data.max_response_length=64, no KL; lr 1e-6 -> 1e-5 "
            "(CPU_COMPARE_ARGS); fp32 actor and vLLM (TRL on CPU: fp32)",
    "openrlhf": "CPU profile: 2 prompts x 4 samples, rollout.max_new_tokens=64, no KL, group_norm; lr 1e-6 cosine "
                "-> 1e-5 constant, Adam betas (0.9, 0.95) -> (0.9, 0.999) (CPU_COMPARE_ARGS); bf16 actor "
                "(DeepSpeed ZeRO-2) and vLLM (OpenRLHF builds vLLM in bf16)",
}
"""What `rlvr compare` did per backend to run them alike on CPU (in the report's settings table)."""


@dataclass
class BackendResult:
    """One backend's part of the comparison (a `summary.json` entry).

    Attributes:
        backend: 'trl', 'verl' or 'openrlhf'.
        python: the interpreter used (None when it could not be chosen).
        status: 'trained', 'dry-run' (files and command only: no GPU), 'failed' (training exited
            non-zero), 'interrupted' (Ctrl-C/SIGTERM during its steps; partial curve kept), 'skipped'
            (not reached: the comparison was interrupted before it) or 'unavailable' (the interpreter
            lacks rlvr or the backend).
        reason: why it is not 'trained' ('' when it is).
        probe: the interpreter's report (versions, `cuda_devices`).
        parity: {"records", "agree", "wall_s", "mismatches": [{"id", "problems"}], "results": [...]}, or
            None when not run; `error` instead when the replay could not run at all.
        train: {"steps", "wall_s", "train_s", "step_s", "tokens_per_s", "peak_mb", "final_reward", "exit_code",
            "curve": [rows], "output"}
            for a training run, None otherwise. Curve rows have `step`, `reward` and where the backend
            logs them `correct`/`incorrect`/`no_answer`/`timeout`/`error` fractions.
        command: the training command (also for a dry run).
        export_dir: the export folder (veRL/OpenRLHF).
        settings: how the run was aligned with the others (`CPU_ALIGNMENT`; '' on a GPU: the backend's
            command as `rlvr train` builds it).
    """

    backend: str
    python: str | None = None
    status: str = "unavailable"
    reason: str = ""
    probe: dict[str, Any] = field(default_factory=dict)
    parity: dict[str, Any] | None = None
    train: dict[str, Any] | None = None
    command: list[str] | None = None
    export_dir: str | None = None
    settings: str = ""


@dataclass
class CompareSummary:
    """`summary.json`: the configuration, the parity records' expected results, and one entry per backend."""

    env_id: str
    env_args: dict[str, Any]
    model: str
    steps: int
    output: str
    records: list[dict[str, Any]] = field(default_factory=list)
    backends: list[BackendResult] = field(default_factory=list)
    created: str = ""
    report: str = ""

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON-serialisable dict."""
        return asdict(self)


def parse_backends(text: str) -> list[str]:
    """`"trl,verl"` -> ['trl', 'verl'] (order kept, duplicates dropped).

    Raises:
        ConfigError: empty, or a name not in `COMPARE_BACKENDS`.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in COMPARE_BACKENDS]
    if not names or unknown:
        raise ConfigError(f"--backends must list some of {', '.join(COMPARE_BACKENDS)} (comma-separated), got "
                          f"{text!r}" + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    return list(dict.fromkeys(names))


def require_matplotlib() -> None:
    """Raise `MissingExtraError` (naming `pip install 'rlvr[trl]'`) unless matplotlib imports."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("matplotlib", "trl") from exc


def _train_summary(rows: list[dict[str, Any]], wall_s: float, exit_code: int, output: Path) -> dict[str, Any]:
    last = rows[-1] if rows else {}
    tokens, elapsed = last.get("num_tokens"), last.get("elapsed_s")
    rate = tokens / elapsed if tokens and elapsed else None
    if rate is None and rows and rows[-1].get("tokens_per_s") is not None:
        rate = rows[-1]["tokens_per_s"]
    steps = int(last["step"]) if last.get("step") is not None else 0
    peaks = [r["peak_rss_mb"] for r in rows if r.get("peak_rss_mb") is not None]
    return {"steps": steps, "wall_s": round(wall_s, 2), "train_s": elapsed, "tokens_per_s": rate,
            "step_s": round(elapsed / steps, 2) if elapsed and steps else None,
            "peak_mb": max(peaks) if peaks else None, "final_reward": last.get("reward"), "exit_code": exit_code,
            "curve": rows, "output": str(output)}


# -- the steps per backend ----------------------------------------------------------------------------
def _env_flags(env_args: dict[str, Any]) -> list[str]:
    flags: list[str] = []
    for key, value in env_args.items():
        flags += ["--env-arg", f"{key}={json.dumps(value)}"]
    return flags


INTERRUPTED_EXIT_CODE = 130
"""Exit code recorded for a training run stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells do)."""


def _finish(result: BackendResult, code: int, timeout_s: float | None) -> None:
    if code == INTERRUPTED_EXIT_CODE:
        result.status, result.reason = "interrupted", "stopped by Ctrl-C/SIGTERM; the curve so far is kept"
    elif code == 0:
        result.status, result.reason = "trained", ""
    elif code == TIMEOUT_EXIT_CODE and timeout_s is not None:
        result.status, result.reason = "failed", f"stopped at the time limit ({timeout_s:g} s)"
    else:
        result.status, result.reason = "failed", f"rlvr train exited with {code}"


def _train_trl(result: BackendResult, python: str, env: str, env_args: dict[str, Any], model: str, steps: int,
               output: Path, trainer_args: dict[str, str], echo: IO[str], timeout_s: float | None) -> None:
    run_dir = output / "trl"
    args = {**TRL_COMPARE_ARGS, **trainer_args}
    command = [python, "-m", "rlvr.runners.cli", "train", "--backend", "trl", "--env", env, *_env_flags(env_args),
               "--model", model, "--steps", str(steps), "-o", str(run_dir)]
    for key, value in args.items():
        command += ["--trainer-arg", f"{key}={value}"]
    result.command = command
    result.settings = CPU_ALIGNMENT["trl"]
    start = time.monotonic()
    code = -1
    try:
        code = run_streaming(command, log_path=output / "trl.log", echo=echo, timeout_s=timeout_s)
    except KeyboardInterrupt:
        code = INTERRUPTED_EXIT_CODE
        raise
    finally:  # also on an interrupt: the child kept its partial curve
        rows = read_trl_curve(run_dir / "reward_curve.csv")
        result.train = _train_summary(rows, time.monotonic() - start, code, run_dir)
        _finish(result, code, timeout_s)


def _train_external(result: BackendResult, found: Probe, env: str, env_args: dict[str, Any], model: str,
                    steps: int, output: Path, trainer_args: dict[str, str], echo: IO[str],
                    timeout_s: float | None) -> None:
    backend, python = result.backend, found.python
    run_dir = output / backend
    on_cpu = found.cuda_devices < 1
    if on_cpu and backend not in CPU_TRAINABLE:
        run = run_backend(backend, env, env_args, model, steps, run_dir, trainer_args, backend_python_path=python,
                          dry_run=True)
        result.status = "dry-run"
        result.reason = f"no CUDA GPU visible to {python} and no CPU mode for {backend}: export and command only"
        result.command, result.export_dir = run.command, str(run.export_dir)
        return
    command = [python, "-m", "rlvr.runners.cli", "train", "--backend", backend, "--env", env, *_env_flags(env_args),
               "--model", model, "--steps", str(steps), "-o", str(run_dir), "--backend-python", python]
    if on_cpu:  # rlvr's CPU mode, with the settings that align it with TRL (CPU_COMPARE_ARGS)
        command += ["--device", "cpu"]
        result.settings = CPU_ALIGNMENT.get(backend, "")
        trainer_args = {**CPU_COMPARE_ARGS.get(backend, {}), **trainer_args}
    for key, value in trainer_args.items():
        command += ["--trainer-arg", f"{key}={value}"]
    start = time.monotonic()
    code = -1
    try:
        code = run_streaming(command, log_path=output / f"{backend}.log", echo=echo, timeout_s=timeout_s)
    except KeyboardInterrupt:
        code = INTERRUPTED_EXIT_CODE
        raise
    finally:  # also on an interrupt: report the steps logged so far
        wall = time.monotonic() - start
        run_info = run_dir / "run.json"
        if run_info.is_file():
            info = json.loads(run_info.read_text())
            result.command, result.export_dir = info.get("command"), info.get("export_dir")
        rows = read_trl_curve(run_dir / "reward_curve.csv")  # `rlvr train` writes it for every backend
        if not rows and backend == "verl":  # interrupted before rlvr train wrote it: the trainer's own log
            rows = read_verl_curve(run_dir / "train.log")
        elif not rows:
            rows = read_openrlhf_curve(python, run_dir / "export" / "openrlhf" / "tensorboard")
        result.train = _train_summary(rows, wall, code, run_dir)
        if run_info.is_file():
            result.train["peak_mb"] = json.loads(run_info.read_text()).get("peak_mb")
        _finish(result, code, timeout_s)


def _tail(text: str, lines: int = 4) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def _parity(result: BackendResult, python: str, records_path: Path, records: list[dict[str, Any]],
            tokenizer: str, output: Path) -> None:
    from rlvr.runners.parity.replay import compare_replay

    out_path = output / "parity" / f"{result.backend}.json"
    command = [python, "-m", "rlvr.runners.parity", "replay", "--backend", result.backend, "--records",
               str(records_path), "--tokenizer", tokenizer, "--output", str(out_path)]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = round(time.monotonic() - start, 2)
    if done.returncode != 0 or not out_path.is_file():
        result.parity = {"error": f"replay exited with {done.returncode}: {_tail(done.stderr or done.stdout)}",
                         "wall_s": wall, "records": len(records), "agree": 0}
        return
    results = json.loads(out_path.read_text())
    by_id = {r["id"]: r for r in results}
    mismatches = []
    for record in records:
        problems = compare_replay(record, by_id.get(record["id"], {"error": "no result"}))
        if problems:
            mismatches.append({"id": record["id"], "problems": problems})
    result.parity = {"records": len(records), "agree": len(records) - len(mismatches), "wall_s": wall,
                     "mismatches": mismatches,
                     "results": [{"id": r["id"], "reward": r.get("reward"), "status": r.get("status"),
                                  "error": r.get("error")} for r in results]}


def _build_records(env: str, env_args: dict[str, Any], tokenizer: str, n_tasks: int,
                   pythons: Sequence[str]) -> list[dict[str, Any]]:
    """Parity records for `env`, built here if transformers imports, else in the first interpreter that can."""
    from rlvr.runners.parity.records import build_records, load_tokenizer_for

    try:
        return build_records(env, env_args, load_tokenizer_for(tokenizer), n_tasks=n_tasks)
    except BackendError:  # transformers or the SmolLM2 package missing here: try the backends' interpreters
        pass
    errors = []
    for python in pythons:
        command = [python, "-m", "rlvr.runners.parity", "record", "--env", env, "--env-args", json.dumps(env_args),
                   "--tokenizer", tokenizer, "--n-tasks", str(n_tasks)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = [x for x in done.stdout.splitlines() if x.startswith('{"')]
        if done.returncode == 0 and lines:
            records: list[dict[str, Any]] = json.loads(lines[-1])["records"]
            return records
        errors.append(f"{python}: {_tail(done.stderr)}")
    raise MissingExtraError("transformers", "trl") if not errors else ConfigError(
        "could not build parity records (needs transformers and the tokenizer): " + "; ".join(errors))


def _tokenizer_name(model: str) -> str:
    from rlvr.runners.models import SMOLLM2_ALIASES

    return "smollm2" if model.lower() in SMOLLM2_ALIASES else model


def _probe_all(backends: Sequence[str], pythons: dict[str, str | None]) -> list[tuple[BackendResult, Probe | None]]:
    out: list[tuple[BackendResult, Probe | None]] = []
    for backend in backends:
        result = BackendResult(backend=backend)
        try:
            python = backend_python(backend, pythons.get(backend), flag=f"--{backend}-python")
        except ConfigError as exc:
            result.reason = f"unavailable: {exc}"
            out.append((result, None))
            continue
        found = probe(backend, python)
        result.python, result.probe = python, found.info
        problem = found.problem()
        if problem is not None:
            result.reason = f"unavailable: {problem}"
            out.append((result, None))
        else:
            out.append((result, found))
    return out


def compare_command(
    env: str,
    env_args: dict[str, Any] | None,
    backends: Sequence[str],
    output: Path,
    *,
    steps: int = 2,
    model: str = "smollm2",
    pythons: dict[str, str | None] | None = None,
    trainer_args: dict[str, dict[str, str]] | None = None,
    n_tasks: int = 2,
    train: bool = True,
    train_timeout_s: float | None = None,
    echo: IO[str] | None = None,
) -> CompareSummary:
    """Compare `backends` on environment `env`; write `summary.json` and `report.html` into `output`.

    Args:
        env: environment id.
        env_args: its factory arguments.
        backends: names from `COMPARE_BACKENDS`.
        output: the output folder: new, empty, or an earlier comparison's (whose results are removed
            first; other files are kept).
        steps: training steps per backend.
        model: model folder or Hub id, or 'smollm2' (the embedded SmolLM2-135M-Instruct); its tokenizer
            builds the parity records.
        pythons: backend -> interpreter (None: `$RLVR_<BACKEND>_PYTHON`, else this Python).
        trainer_args: backend -> options passed to its `rlvr train --trainer-arg` (TRL defaults:
            `TRL_COMPARE_ARGS`).
        n_tasks: tasks the parity records are built from.
        train: False skips training (parity and dry-run commands only).
        train_timeout_s: time limit of each backend's training run, seconds (None: none); a run
            stopped at it is reported as failed, with its curve so far.
        echo: where training output is copied live (default stderr).

    Returns:
        The summary (also written to `output/summary.json`).

    Raises:
        ConfigError: unknown backend or env, bad steps, an output folder that is a file or holds
            other files but no earlier comparison.
        KeyboardInterrupt: Ctrl-C or SIGTERM, after stopping the running trainer's process group and
            writing the partial summary and report.
        MissingExtraError: matplotlib is missing (the report's plots). Parity records that cannot be
            built (no interpreter with transformers) are reported per backend, not raised.
    """
    if steps < 1:
        raise ConfigError(f"steps must be >= 1, got {steps}")
    names = parse_backends(",".join(backends))
    require_matplotlib()
    from rlvr.environments.registry import make

    args = dict(env_args or {})
    make(env, **args).close()  # an unknown env or bad argument fails before anything is written
    output = Path(output).resolve()
    _prepare_output(output)
    stream = echo if echo is not None else sys.stderr
    summary = CompareSummary(env_id=env, env_args=args, model=model, steps=steps, output=str(output),
                             created=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    probed: list[tuple[BackendResult, Probe | None]] = []
    with interrupt_on_terminate():  # SIGTERM stops the running backend's process group, like Ctrl-C
        try:
            probed = _probe_all(names, pythons or {})
            tokenizer = _tokenizer_name(model)
            usable = [found.python for _, found in probed if found is not None]
            records: list[dict[str, Any]] = []
            records_error = None
            if usable:
                try:
                    records = _build_records(env, args, tokenizer, n_tasks, usable)
                except RlvrError as exc:  # reported per backend; training and dry runs still go ahead
                    records_error = f"parity records could not be built: {exc}"
            records_path = output / "parity" / "records.json"
            atomic_write(records_path, json.dumps({"tokenizer": tokenizer, "records": records}))
            summary.records = [{"id": r["id"], "kind": r["kind"], "multi_turn": r["multi_turn"],
                                "status": r["expected"]["status"], "reward": r["expected"]["reward"]}
                               for r in records]
            for result, found in probed:
                summary.backends.append(result)
                if found is None:
                    result.status = "unavailable"
                    continue
                # until _run_one finishes it, an interrupt leaves this backend 'interrupted'
                result.status, result.reason = "interrupted", "stopped by Ctrl-C/SIGTERM before it finished"
                try:
                    _run_one(result, found, env, args, model, steps, output, records_error, records_path, records,
                             tokenizer, (trainer_args or {}).get(result.backend, {}), train, train_timeout_s, stream)
                except RlvrError as exc:  # e.g. a --verl-arg veRL rejects: this backend fails, the others still run
                    result.status, result.reason = "failed", str(exc)
        except KeyboardInterrupt:  # keep what ran: a partial report, then stop as interrupted
            _mark_interrupted(summary, names, probed)
            _write_outputs(summary, output)
            print(f"rlvr compare: interrupted; partial report in {output / 'report.html'}", file=stream)
            raise
    _write_outputs(summary, output)
    return summary


def _prepare_output(output: Path) -> None:
    """Create `output`, or clear the previous comparison's results in it (never other files).

    A non-empty folder must be an earlier `rlvr compare` output (it has `parity/records.json` or
    `summary.json`); its summary, report, parity records and every backend's folder, log and parity
    results are removed, so the folder never mixes runs (a failed run cannot show an earlier curve).

    Raises:
        ConfigError: `output` is a file, or a non-empty folder that is not a compare output.
    """
    if output.exists() and not output.is_dir():
        raise ConfigError(f"--output {str(output)!r} is a file; give a folder for report.html and summary.json")
    if output.is_dir() and any(output.iterdir()):
        if not ((output / "summary.json").is_file() or (output / "parity" / "records.json").is_file()):
            raise ConfigError(f"--output {str(output)!r} is not empty and holds no earlier `rlvr compare` results; "
                              "choose a new or empty folder (rlvr compare replaces only its own files)")
        stale = [output / "summary.json", output / "report.html", output / "parity" / "records.json"]
        for name in COMPARE_BACKENDS:
            stale += [output / f"{name}.log", output / "parity" / f"{name}.json"]
            if (output / name).is_dir():
                shutil.rmtree(output / name)
        for path in stale:
            path.unlink(missing_ok=True)
    (output / "parity").mkdir(parents=True, exist_ok=True)


def _mark_interrupted(summary: CompareSummary, names: Sequence[str],
                      probed: Sequence[tuple[BackendResult, Probe | None]] = ()) -> None:
    """After an interrupt: add the backends not reached, 'skipped' (or 'unavailable' when probed so).

    The backend in progress is already 'interrupted' (set before its steps start).
    """
    reached = {b.backend for b in summary.backends}
    known = {result.backend: (result, found) for result, found in probed}
    for name in names:
        if name in reached:
            continue
        result, found = known.get(name, (BackendResult(backend=name), None))
        if found is None and name in known:
            result.status = "unavailable"
        else:
            result.status, result.reason = "skipped", "not run: the comparison was interrupted before it"
        summary.backends.append(result)


def _write_outputs(summary: CompareSummary, output: Path) -> None:
    from rlvr.runners.report import write_report

    summary.report = str(write_report(summary.to_json(), output / "report.html"))
    atomic_write(output / "summary.json", json.dumps(summary.to_json(), indent=2) + "\n")


def _run_one(result: BackendResult, found: Probe, env: str, args: dict[str, Any], model: str, steps: int,
             output: Path, records_error: str | None, records_path: Path, records: list[dict[str, Any]],
             tokenizer: str, own_args: dict[str, str], train: bool, train_timeout_s: float | None,
             stream: IO[str]) -> None:
    """One backend's parity replay and training (or dry run)."""
    if records_error is not None:
        result.parity = {"error": records_error, "records": 0, "agree": 0, "wall_s": 0.0}
    else:
        print(f"rlvr compare: {result.backend}: parity replay of {len(records)} records", file=stream)
        _parity(result, found.python, records_path, records, tokenizer, output)
    if not train:
        result.status, result.reason = "dry-run", "training skipped (--no-train)"
        if result.backend in EXTERNAL_BACKENDS:
            run = run_backend(result.backend, env, args, model, steps, output / result.backend, own_args,
                              backend_python_path=found.python, dry_run=True)
            result.command, result.export_dir = run.command, str(run.export_dir)
    elif result.backend == "trl":
        print(f"rlvr compare: trl: training {steps} steps", file=stream)
        _train_trl(result, found.python, env, args, model, steps, output, own_args, stream, train_timeout_s)
    else:
        _train_external(result, found, env, args, model, steps, output, own_args, stream, train_timeout_s)
