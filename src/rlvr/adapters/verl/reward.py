"""veRL rewards (verl 0.9.x): `compute_score`, the verdict fields of `reward_extra_info`, error verdicts.

Single-turn: veRL's default `single_turn_agent` loop generates, then its reward loop
(`RewardLoopWorker` -> `NaiveRewardManager.run_single`) decodes the response with
`skip_special_tokens=True` and calls `compute_score`, which builds the verifier from the row's spec
once per process (`VerifierSpec.cached`; rows of an env whose verifier has no spec rebuild the env,
`cached_env`; rows of another export format are refused: re-run `rlvr export`) and returns
`{"score": reward, "rlvr_status": status, "rlvr_<status>": 0/1, ...}`.
Every key of the dict lands in `reward_extra_info` (veRL copies the whole dict) and the key set is the
same for every sample, as veRL's batching requires (`np.array([info[key] ...])` over the keys of the
first sample). There is no `reward` key (veRL's validation adds its own `reward` list) and no `acc` key
(veRL's validation counts failed sessions as `acc=0`). Multi-turn: `RlvrAgentLoop`
(`rlvr.adapters.verl.agent`) runs the rlvr episode and sets the reward itself; veRL then skips its
reward loop for that sample (`AgentLoopWorker._compute_score` only runs when `reward_score is None`).

Error verdicts (the grader broke: `status="error"`, `reward=None`) are never scored 0 (a 0 would be
learned as a wrong answer). veRL 0.9.1 has no per-sample reward mask, but its default trainer, the v1
trainer that `main_ppo` runs (`trainer.use_v1=True`, which `verl_overrides` pins), drops failed
rollouts: each rollout (agent loop + streaming reward, `AgentLoopWorkerTQ._run_prompt` in
`trainer/ppo/v1/agent_loop_tq.py`) runs as its own task; an exception is logged with its traceback,
the trajectory is never written to the TransferQueue, and the prompt's group is tagged `failure`.
The sync `ReplayBuffer` (`trainer/ppo/v1/replay_buffer.py`) still samples the group's other
trajectories (GRPO normalises over the ones that exist), a group with none adds nothing to the step,
and only a batch in which *no* group has a trajectory stops veRL (RuntimeError: every rollout of the
batch failed, i.e. the grader is broken for everything). `trainer.v1.sampler.sync_refill_failed_groups=True`
(opt-in) evicts trajectory-less groups and refills them with fresh prompts instead (metric
`training/rollout_failure/evicted_samples`). So by default (`on_error="raise"`) an error verdict
raises `UnscorableSampleError` naming the task and the verifier's detail. Validation metrics count no
error verdict as 0 (rlvr emits no `acc` key, the only one veRL pads for failed sessions).

`on_error="nan"` returns a NaN score instead: veRL's GRPO then gives the whole group NaN advantages,
the mini-batch loss and grad norm are NaN and the FSDP engine skips that optimizer step
(`workers/engine/fsdp/transformer_impl.py`: "if grad_norm is not finite, skip the update"): loud in
the logs, never a fake 0, but it costs the update. The legacy trainer (`trainer.use_v1=False`,
`main_ppo_v0.py` + `ray_trainer.py`) gathers rollouts without tolerating exceptions (one error verdict
would stop the run) and has no group filter, so `verl_overrides` adds
`+reward.custom_reward_function.reward_kwargs.on_error=nan` when `trainer_args` select it.
Set the mode in the generated `reward.py` / `agent_loop.yaml` (`export_verl(..., on_error=...)`) or
per run with `+reward.custom_reward_function.reward_kwargs.on_error=nan|raise` (veRL merges
`reward_kwargs` into every `compute_score` call; `RlvrAgentLoop` reads the same key, and it wins over
the YAML). Either way the status is in `reward_extra_info["rlvr_status"]` for scored samples.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rlvr.adapters.export import cached_env, check_export_format, decode_reference, verify_text
from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.metrics import episode_metrics, status_fractions
from rlvr.core.types import Trajectory, Verdict
from rlvr.verifiers.registry import VerifierSpec

if TYPE_CHECKING:
    from rlvr.verifiers.base import Verifier

__all__ = ["ON_ERROR", "compute_score"]

ON_ERROR_KEY = "reward.custom_reward_function.reward_kwargs.on_error"
"""Config key that sets `on_error` per run, for `compute_score` (veRL passes `reward_kwargs`) and `RlvrAgentLoop`."""

ON_ERROR: tuple[str, ...] = ("raise", "nan")
"""What an error verdict becomes in veRL (module docstring): a failed rollout, or a NaN score."""


class UnscorableSampleError(AdapterError):
    """The verifier could not score a sample (its verdict is `error`): raised so that veRL drops the rollout.

    Attributes:
        verdict: the error verdict.
    """

    def __init__(self, message: str, verdict: Verdict) -> None:
        super().__init__(message)
        self.verdict = verdict


def check_on_error(on_error: Any) -> str:
    """`on_error` checked: 'raise' or 'nan' (hydra's float NaN for `...on_error=nan` counts as 'nan').

    Raises:
        ConfigError: any other value.
    """
    if isinstance(on_error, float) and math.isnan(on_error):
        return "nan"  # hydra parses the override `...reward_kwargs.on_error=nan` as a float NaN
    if on_error not in ON_ERROR:
        raise ConfigError(f"on_error must be one of {list(ON_ERROR)}, got {on_error!r} "
                          "(see rlvr.adapters.verl.reward)")
    return str(on_error)


def reward_extra_info(verdict: Verdict) -> dict[str, Any]:
    """The verdict fields veRL puts in `reward_extra_info` (same keys for every verdict).

    Keys: `rlvr_status` (str; veRL's validation metrics skip strings), `rlvr_<status>` (1.0 for the
    verdict's status, else 0.0, for each of correct/incorrect/no_answer/timeout/error) and
    `rlvr_elapsed_s` (verification seconds). Components are left out: their names differ between
    verdicts, and veRL batches extra info by the first sample's keys.
    """
    out: dict[str, Any] = {"rlvr_status": verdict.status}
    out.update({f"rlvr_{status}": value for status, value in status_fractions([verdict.status]).items()})
    out["rlvr_elapsed_s"] = float(verdict.elapsed_s or 0.0)
    return out


def episode_extra_info(trajectory: Trajectory) -> dict[str, float]:
    """The episode's tool-use metrics as `reward_extra_info` keys `rlvr_<key>` (`rlvr.core.metrics.EPISODE_METRICS`).

    rlvr's agent loop (`rlvr.adapters.verl.agent`) adds them to every episode's `reward_extra_info`,
    so veRL batches them like the verdict fields. Where veRL 0.9 shows them: its validation metrics
    (`val-aux/<data source>/rlvr_tool_call_rate/mean@N`, ...: `process_validation_metrics` over every
    numeric extra-info key) and the generation dumps of the legacy trainer (`trainer.rollout_data_dir`);
    its training-step metrics are computed from the batch tensors and `num_turns` only
    (`training/num_turns/mean`), never from `reward_extra_info`.
    """
    return {f"rlvr_{key}": value for key, value in episode_metrics([trajectory]).items()}


def score_result(verdict: Verdict, *, on_error: str = "raise", where: str = "") -> tuple[float, dict[str, Any]]:
    """(score, reward_extra_info) for a verdict; an error verdict raises or scores NaN (`on_error`).

    Raises:
        UnscorableSampleError: `verdict.reward` is None and `on_error` is 'raise'.
    """
    on_error = check_on_error(on_error)
    if verdict.reward is None:
        if on_error == "raise":
            raise UnscorableSampleError(f"{where or 'sample'}: the verifier could not score it ({verdict.detail}); "
                                        "rlvr raises so veRL drops this rollout instead of learning a fake 0 "
                                        "(on_error='nan' scores NaN instead)", verdict)
        score = math.nan
    else:
        score = float(verdict.reward)
    return score, reward_extra_info(verdict)


def env_of(data_source: Any, extra_info: Any) -> tuple[str, dict[str, Any], str]:
    """(env id, env args, task id) of a row from its `extra_info` (env id falls back to `data_source`)."""
    info = dict(extra_info) if isinstance(extra_info, Mapping) else {}
    env_id = info.get("env_id") or data_source
    if not isinstance(env_id, str) or not env_id:
        raise AdapterError(f"cannot tell the environment of a sample: extra_info has no 'env_id' and data_source is "
                           f"{data_source!r}; write the data with `rlvr export --backend verl`")
    raw = info.get("env_args") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"extra_info['env_args'] {str(raw)[:60]!r} is not the JSON rlvr export writes: "
                           f"{exc}") from exc
    return env_id, args, str(info.get("task_id", "?"))


def _row_names(data_source: Any, extra_info: Any) -> tuple[str, str]:
    """(env id or data source, task id) of a row, for messages."""
    info = extra_info if isinstance(extra_info, Mapping) else {}
    return str(info.get("env_id") or data_source), str(info.get("task_id", "?"))


def _row_info(data_source: Any, extra_info: Any) -> Mapping[str, Any]:
    """A row's `extra_info`, checked to be of this rlvr's export format.

    Raises:
        ConfigError: the row was written in another export format (re-run `rlvr export`).
    """
    info = extra_info if isinstance(extra_info, Mapping) else {}
    check_export_format(info.get("export_format"), f"the veRL row of task {info.get('task_id', '?')!r} "
                        f"({info.get('env_id') or data_source})")
    return info


def row_verifier(data_source: Any, extra_info: Any) -> Verifier:
    """The verifier that scores a row: built from `extra_info["verifier"]` (its spec), cached per process.

    A row of an env whose verifier has no spec gets its environment's verifier
    (`cached_env(env_id, env_args)`, which loads the env's dataset).

    Raises:
        AdapterError: the row names neither a spec nor an environment.
        ConfigError: the row is of another export format, or the spec or the environment cannot be built.
    """
    spec = _row_info(data_source, extra_info).get("verifier")
    if spec:
        return VerifierSpec.parse(spec).cached()
    env_id, env_args, _ = env_of(data_source, extra_info)
    return cached_env(env_id, env_args).verifier


def row_reference(ground_truth: Any, extra_info: Any) -> Any:
    """The decoded reference of a row: plain text or JSON as `extra_info["reference_format"]` says.

    Raises:
        ConfigError: the row is of another export format.
        AdapterError: the stored reference is not the JSON `rlvr export` writes.
    """
    info = _row_info(None, extra_info)
    return decode_reference(ground_truth, str(info.get("reference_format")))


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The veRL reward function: score one decoded response with the env's verifier.

    The verifier comes from the row's spec (`row_verifier`: built once per process, no environment);
    a row of an env whose verifier has no spec rebuilds the environment.

    veRL calls it as `compute_score(data_source=..., solution_str=..., ground_truth=...,
    extra_info=...)` (`NaiveRewardManager.run_single`; `solution_str` is the response decoded with
    `skip_special_tokens=True`) plus `custom_reward_function.reward_kwargs`.

    Args:
        data_source: the row's `data_source` (env id).
        solution_str: the model's response text.
        ground_truth: `reward_model.ground_truth`, the reference `rlvr export` wrote (a plain string or
            JSON, as `extra_info["reference_format"]` says).
        extra_info: the row's `extra_info` (verifier spec, env id, env args JSON, task id); veRL adds
            `num_turns` and `rollout_reward_scores`, which are ignored.
        **kwargs: `on_error` ('raise' default, or 'nan'); other keys veRL passes are ignored.

    Returns:
        `{"score": float, **reward_extra_info(verdict)}`; the score is `verdict.reward` exactly as
        `env.verifier.verify(solution_str, reference)` gives it.

    Raises:
        UnscorableSampleError: an error verdict with `on_error='raise'` (a reference that is not valid JSON is
            an error verdict too); veRL then drops the rollout (module docstring).
        AdapterError: the sample does not say which environment scores it.
        ConfigError: the row is of another export format (re-run `rlvr export`), or its verifier spec or
            environment cannot be built.
    """
    env_id, task_id = _row_names(data_source, extra_info)
    verifier = row_verifier(data_source, extra_info)
    try:
        reference = row_reference(ground_truth, extra_info)
    except AdapterError as exc:
        verdict = Verdict.error(str(exc))
    else:
        verdict = verify_text(verifier, solution_str, reference)
    score, info = score_result(verdict, on_error=kwargs.get("on_error", "raise"), where=f"task {task_id!r} ({env_id})")
    return {"score": score, **info}
