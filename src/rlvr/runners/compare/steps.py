"""One backend's steps in `rlvr compare`: probe its interpreter, replay the parity records, train (or a dry run).

Each step runs in the backend's own interpreter (`python -m rlvr.runners.parity ...`,
`python -m rlvr.runners.cli train ...`), so the backends' conflicting pins never meet in one
process; the results go into the backend's `BackendResult`.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rlvr.core.errors import BackendError, ConfigError, MissingExtraError
from rlvr.runners.compare.summary import BackendResult, train_summary
from rlvr.runners.train.config import EXTERNAL_BACKENDS, TrainConfig
from rlvr.runners.train.curve import read_curve_csv
from rlvr.runners.train.external import run_backend
from rlvr.runners.train.interpreter import Probe, backend_python, probe
from rlvr.runners.train.logs import read_openrlhf_curve, read_verl_curve
from rlvr.runners.train.process import TIMEOUT_EXIT_CODE, run_streaming

__all__: list[str] = []

TRL_COMPARE_ARGS: dict[str, str] = {"max_completion_length": "64", "num_generations": "4",
                                    "per_device_train_batch_size": "8"}
"""TRL options `rlvr compare` uses unless `--trl-arg` overrides them (2 prompts x 4 samples per step)."""

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

INTERRUPTED_EXIT_CODE = 130
"""Exit code recorded for a training run stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells do)."""


@dataclass(frozen=True)
class ParityRecords:
    """The parity records every backend replays.

    Attributes:
        path: `parity/records.json`, where they are written for the backends' interpreters.
        records: the records (each with rlvr's expected result).
        tokenizer: the tokenizer that built them (`smollm2` or the model's).
        error: why no record could be built (then every backend's parity reports it), else None.
    """

    path: Path
    records: list[dict[str, Any]]
    tokenizer: str
    error: str | None = None


def probe_all(backends: Sequence[str], pythons: dict[str, str | None]) -> list[tuple[BackendResult, Probe | None]]:
    """Each backend's result so far and its probe; None (with the reason in the result) when it cannot run."""
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


def tokenizer_name(model: str) -> str:
    """The tokenizer the parity records are built with: `smollm2` for the embedded model, else `model`."""
    from rlvr.runners.models import SMOLLM2_ALIASES

    return "smollm2" if model.lower() in SMOLLM2_ALIASES else model


def build_records(env: str, env_args: dict[str, Any], tokenizer: str, n_tasks: int,
                  pythons: Sequence[str]) -> list[dict[str, Any]]:
    """Parity records for `env`, built here if transformers imports, else in the first interpreter that can.

    Raises:
        MissingExtraError: transformers is missing here and there is no other interpreter to try.
        ConfigError: no interpreter could build them (the message holds each one's error).
    """
    from rlvr.runners.parity.records import build_records as build_here
    from rlvr.runners.parity.records import load_tokenizer_for

    try:
        return build_here(env, env_args, load_tokenizer_for(tokenizer), n_tasks=n_tasks)
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


def run_one(result: BackendResult, found: Probe, config: TrainConfig, parity: ParityRecords, *, train: bool,
            timeout_s: float | None, stream: IO[str]) -> None:
    """One backend's parity replay and training (or dry run), recorded in `result`.

    Args:
        result: the backend's entry, filled in place.
        found: the probe of its interpreter.
        config: what to train: its backend, env, model, steps, the run folder (`OUTPUT/<backend>`) and
            the user's own trainer arguments (rlvr compare's alignment options are added here).
        parity: the records to replay.
        train: False: a dry run (export and command) instead of training.
        timeout_s: time limit of the training run, seconds (None: none).
        stream: where the training output is copied live.
    """
    output = config.output.parent
    if parity.error is not None:
        result.parity = {"error": parity.error, "records": 0, "agree": 0, "wall_s": 0.0}
    else:
        print(f"rlvr compare: {result.backend}: parity replay of {len(parity.records)} records", file=stream)
        _parity(result, found.python, parity, output)
    if not train:
        result.status, result.reason = "dry-run", "training skipped (--no-train)"
        if result.backend in EXTERNAL_BACKENDS:
            run = run_backend(config.model_copy(update={"backend_python": Path(found.python), "dry_run": True}))
            result.command, result.export_dir = run.command, str(run.export_dir)
        return
    if result.backend == "trl":
        print(f"rlvr compare: trl: training {config.steps} steps", file=stream)
        config = config.model_copy(update={"trainer_args": {**TRL_COMPARE_ARGS, **config.trainer_args}})
        result.settings = CPU_ALIGNMENT["trl"]
    else:
        update: dict[str, Any] = {"backend_python": Path(found.python)}
        if found.cuda_devices < 1:  # rlvr's CPU mode, with the settings that align it with TRL (CPU_COMPARE_ARGS)
            aligned = {**CPU_COMPARE_ARGS.get(result.backend, {}), **config.trainer_args}
            update.update(device="cpu", trainer_args=aligned)
            result.settings = CPU_ALIGNMENT.get(result.backend, "")
        config = config.model_copy(update=update)
    _train(result, found.python, config, timeout_s, stream)


def _train(result: BackendResult, python: str, config: TrainConfig, timeout_s: float | None, echo: IO[str]) -> None:
    """Run `rlvr train` for `config` in `python`; record its command, curve and status (also when interrupted)."""
    command = [python, "-m", "rlvr.runners.cli", *config.command_args()]
    run_dir = config.output
    if config.backend == "trl":
        result.command = command
    start = time.monotonic()
    code = -1
    try:
        code = run_streaming(command, log_path=run_dir.parent / f"{config.backend}.log", echo=echo,
                             timeout_s=timeout_s)
    except KeyboardInterrupt:
        code = INTERRUPTED_EXIT_CODE
        raise
    finally:  # also on an interrupt: the child kept its partial curve; report the steps logged so far
        rows = read_curve_csv(run_dir / "reward_curve.csv")  # `rlvr train` writes it for every backend
        run_info = run_dir / "run.json"
        info = json.loads(run_info.read_text()) if run_info.is_file() else None
        if config.backend != "trl":
            rows = rows or _trainer_curve(config.backend, python, run_dir)
            if info is not None:
                result.command, result.export_dir = info.get("command"), info.get("export_dir")
        result.train = train_summary(rows, time.monotonic() - start, code, run_dir)
        if info is not None and config.backend != "trl":
            result.train["peak_mb"] = info.get("peak_mb")
        _finish(result, code, timeout_s)


def _trainer_curve(backend: str, python: str, run_dir: Path) -> list[dict[str, Any]]:
    """The curve from the trainer's own logs, for a run interrupted before `rlvr train` wrote reward_curve.csv."""
    if backend == "verl":
        return read_verl_curve(run_dir / "train.log")
    return read_openrlhf_curve(python, run_dir / "export" / "openrlhf" / "tensorboard")


def _finish(result: BackendResult, code: int, timeout_s: float | None) -> None:
    if code == INTERRUPTED_EXIT_CODE:
        result.status, result.reason = "interrupted", "stopped by Ctrl-C/SIGTERM; the curve so far is kept"
    elif code == 0:
        result.status, result.reason = "trained", ""
    elif code == TIMEOUT_EXIT_CODE and timeout_s is not None:
        result.status, result.reason = "failed", f"stopped at the time limit ({timeout_s:g} s)"
    else:
        result.status, result.reason = "failed", f"rlvr train exited with {code}"


def _tail(text: str, lines: int = 4) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def _parity(result: BackendResult, python: str, parity: ParityRecords, output: Path) -> None:
    """Replay the records through the backend's adapter in `python`; record agreement with rlvr's results."""
    from rlvr.runners.parity.replay import compare_replay

    records = parity.records
    out_path = output / "parity" / f"{result.backend}.json"
    command = [python, "-m", "rlvr.runners.parity", "replay", "--backend", result.backend, "--records",
               str(parity.path), "--tokenizer", parity.tokenizer, "--output", str(out_path)]
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
