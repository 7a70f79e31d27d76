"""OpenRLHF adapter: an rlvr environment as a `train_ppo_ray` prompt dataset, reward file and agent file.

Written against OpenRLHF 0.11.2 (read in its wheel):

- Data (`openrlhf/datasets/prompts_dataset.py`, `preprocess_data`): each jsonl row's `--data.input_key`
  column holds the chat messages; with `--data.apply_chat_template` the prompt is
  `tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)` (string
  contents containing `<image>` become VLM content lists, so rlvr refuses to export such prompts);
  `--data.label_key` is passed through untouched as the `label` string. rlvr writes `input` (the
  task's messages), `label` (`task_label`: the task id, prompt and reference as one JSON string),
  `task_id` and `datasource` (the env id, used by OpenRLHF's per-datasource eval metrics).
- Single-turn reward (`openrlhf/utils/agent.py`, `SingleTurnAgentExecutor`): when
  `--reward.remote_url` ends in `.py` the file is imported and its `reward_func(queries, prompts,
  labels)` is called once per sample (lists of length 1) in a thread, where `query` is
  `hf_tokenizer.decode(prompt_ids + sampled_ids, skip_special_tokens=False)` -- the chat-template
  prompt (possibly cut from the left to fit `--data.max_len`) followed by the sampled text *with* its
  special tokens (vLLM returns the stop token, e.g. `<|im_end|>`, in `token_ids`). The function must
  return `{"rewards", "scores", "extra_logs"}`; `scores` feed dynamic filtering.
  `reward_func` here strips the prompt (`response_text`) and the tokenizer's special tokens, decodes
  the label and scores the text with the env's verifier (`rlvr.adapters.export.score_text`), exactly
  as every other backend does.
- Multi-turn (`openrlhf/trainer/ray/vllm_engine.py`, `_load_agent_executor`): `--train.agent_func_path`
  names a `.py` file exporting `AgentExecutor`, a subclass of `AgentExecutorBase` built with no
  arguments; see `rlvr.adapters.openrlhf_agent`.
- Both generated files rebuild the env (`rlvr.make(env_id, **env_args)`, relative data paths made
  absolute at export since Ray workers run in another folder) when OpenRLHF imports them, so a broken
  setup fails at startup (`check_reward_setup`) rather than inside OpenRLHF's reward call, whose
  `except` only logs at INFO level and then trains on a sample without a reward.
- Arguments (`openrlhf/cli/train_ppo_ray.py`): dotted flag names (`--actor.model_name_or_path`,
  `--data.prompt_dataset`, `--reward.remote_url`, `--train.agent_func_path`, ...), turned into a nested
  namespace by `openrlhf.utils.config.hierarchize`.

Error verdicts (reward None). OpenRLHF 0.11.2 has no masking of individual samples: a `None` reward
makes `SamplesGenerator._process_response_into_experience` build an Experience without rewards, and
`RemoteExperienceMaker.make_experience` then asks for a reward *model* (ValueError, or a crash when
concatenating a micro-batch), while a NaN reward spreads through the group baseline into every
advantage of the batch. The one mechanism that drops samples is dynamic filtering
(`--algo.dynamic_filtering_enable`, `openrlhf/trainer/ppo_utils/samples_generator.py`
`_generate_vllm`): a prompt group is kept only if `min < mean(scores) < max`, and every comparison
with NaN is false. So an `error` verdict is reported as reward NaN and score NaN, and
`openrlhf_args` always enables dynamic filtering with a range just wider than the env's reward
range: only groups containing an error verdict are dropped (and replaced by fresh prompts), never
trained on as 0. Cost: the other samples of that prompt group are dropped too. Evaluation
(`--eval.dataset`) has no filter, so an error shows as NaN in the eval reward metric. The verdict
status is logged through `extra_logs` as `rlvr/status/<status>` indicators (fixed keys, floats:
OpenRLHF turns every value into a tensor and batches info keys by the first sample's key set).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.adapters.export import (
    ExportManifest,
    absolute_paths,
    cached_env,
    decode_reference,
    encode_reference,
    score_text,
    write_manifest,
)
from rlvr.core.errors import AdapterError, ConfigError, MissingExtraError, RlvrError
from rlvr.core.types import Message, Task, Verdict

if TYPE_CHECKING:
    from rlvr.environments.base import Environment

__all__ = [
    "EXTRA_LOG_KEYS",
    "INPUT_KEY",
    "LABEL_KEY",
    "decode_label",
    "export_openrlhf",
    "extra_logs",
    "is_multi_turn",
    "openrlhf_args",
    "openrlhf_command",
    "openrlhf_replay",
    "read_sample",
    "response_text",
    "reward_func",
    "task_label",
    "task_row",
]

INPUT_KEY = "input"
"""jsonl column with the prompt messages (`--data.input_key`)."""
LABEL_KEY = "label"
"""jsonl column with the serialised task (`--data.label_key`)."""

STATUSES: tuple[str, ...] = ("correct", "incorrect", "no_answer", "timeout", "error")
EXTRA_LOG_KEYS: tuple[str, ...] = (*(f"rlvr/status/{s}" for s in STATUSES), "rlvr/verify_s")
"""Keys of the `extra_logs` every rlvr reward returns (always all of them, floats)."""

_TRAILING_SPECIAL = re.compile(r"(?:<\|[A-Za-z0-9_]+\|>|<\uff5c[^\uff5c<>]+\uff5c>|</s>|<eos>|<end_of_turn>)+\s*$")
"""Fallback when no tokenizer is known: end-of-turn/EOS markers of ChatML/Qwen, Llama 3, Phi-3,
DeepSeek (`<\uff5cend\u2581of\u2581sentence\uff5c>`, full-width bars), Mistral/Llama 2 and Gemma templates at
the very end of the response (where vLLM puts the stop token)."""
_REPLACEMENT = "\ufffd"


# -- data -------------------------------------------------------------------------------------------
def is_multi_turn(env: Environment) -> bool:
    """True when `env` needs OpenRLHF's agent path: it has tools or allows more than one turn."""
    spec = env.spec
    return bool(spec.tools) or int(spec.max_turns or 1) > 1


def task_label(task: Task) -> str:
    """The `label` string of one row: `{"id", "prompt", "reference"}` as JSON (sorted keys).

    The reference inside is `json.loads(encode_reference(task))`, the encoding of TRL's
    `rlvr_reference` column, so one recorded row scores identically through every adapter; the id
    and prompt let the multi-turn agent rebuild the `Task` (OpenRLHF passes only prompt text and label).

    Raises:
        AdapterError: the reference is not JSON-serialisable.
    """
    reference = json.loads(encode_reference(task))
    prompt = [m.to_openai() for m in task.prompt]
    return json.dumps({"id": task.id, "prompt": prompt, "reference": reference}, sort_keys=True)


def decode_label(label: Any) -> Task:
    """Inverse of `task_label` (metadata is not carried, as in TRL's rows).

    Raises:
        AdapterError: `label` is not a string written by `task_label` (the message says which part).
    """
    data = decode_reference(label)
    if not isinstance(data, Mapping) or not {"id", "prompt", "reference"} <= set(data):
        raise AdapterError(f"label {str(label)[:60]!r} is not a task label written by rlvr export --backend openrlhf "
                           "(expected JSON with id, prompt, reference); re-export the data")
    try:
        prompt = tuple(Message.model_validate(m) for m in data["prompt"])
        return Task(id=str(data["id"]), prompt=prompt, reference=data["reference"])
    except (TypeError, ValueError) as exc:
        raise AdapterError(f"label of task {data.get('id')!r} has an invalid prompt: {exc}") from exc


def task_row(task: Task, env_id: str) -> dict[str, Any]:
    """One jsonl row: `input` (messages), `label` (`task_label`), `task_id`, `datasource` (= env id).

    Raises:
        AdapterError: a prompt message carries tool calls, is not text, or contains `<image>` (which
            OpenRLHF's `preprocess_data` turns into a VLM image slot).
    """
    messages = []
    for message in task.prompt:
        if message.tool_calls or message.tool_call_id is not None:
            raise AdapterError(f"task {task.id!r}: OpenRLHF prompts hold role/content messages only, "
                               "not tool-call messages")
        if "<image>" in message.content:
            raise AdapterError(f"task {task.id!r}: the prompt contains '<image>', which OpenRLHF's preprocess_data "
                               "turns into an image slot; remove it from the prompt")
        messages.append({"role": message.role, "content": message.content})
    return {INPUT_KEY: messages, LABEL_KEY: task_label(task), "task_id": task.id, "datasource": env_id}


def _prepare_folder(directory: Path, overwrite: bool) -> Path:
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"export folder {directory} is a file; pass a folder path")
    if directory.is_dir() and any(directory.iterdir()) and not overwrite:
        raise ConfigError(f"export folder {directory} is not empty; pass overwrite=True (--overwrite) "
                          "or another folder")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    tmp.replace(path)


REWARD_FILE = "reward_func.py"
AGENT_FILE = "agent_func.py"

_REWARD_SOURCE = '''"""OpenRLHF reward function for rlvr environment {env_id}.

Generated by `rlvr export --backend openrlhf`.

Pass this file as `--reward.remote_url`; OpenRLHF calls `reward_func(queries, prompts, labels)`.
"""

import json

from rlvr.adapters import openrlhf as _rlvr_openrlhf

ENV_ID = {env_id!r}
ENV_ARGS = json.loads({env_args_json!r})
TOKENIZER = {tokenizer!r}  # whose special tokens are stripped from responses; None: trailing end-of-turn markers

# Build the env (and load the tokenizer) now, when OpenRLHF loads this file, so a broken setup fails
# loudly at startup instead of being logged per sample by OpenRLHF's reward call.
_rlvr_openrlhf.check_reward_setup(ENV_ID, ENV_ARGS, TOKENIZER)


def reward_func(queries, prompts, labels, **kwargs):
    """Rewards of rlvr's verifier for each query (see rlvr.adapters.openrlhf.reward_func)."""
    return _rlvr_openrlhf.reward_func(queries, prompts, labels, env_id=ENV_ID, env_args=ENV_ARGS,
                                      tokenizer=TOKENIZER)
'''

_AGENT_SOURCE = '''"""OpenRLHF agent for rlvr environment {env_id} (generated by rlvr export --backend openrlhf).

Pass this file as `--train.agent_func_path`; OpenRLHF builds `AgentExecutor()` (no arguments).
"""

import json

from rlvr.adapters.openrlhf_agent import agent_classes

AgentInstance, AgentExecutor = agent_classes({env_id!r}, json.loads({env_args_json!r}))
'''


def _args_json(env_args: Mapping[str, Any]) -> str:
    """`env_args` as JSON for the generated files (a Python repr of `inf`/`nan` would not import)."""
    return json.dumps(dict(env_args), sort_keys=True)


def check_reward_setup(env_id: str, env_args: Mapping[str, Any] | None, tokenizer: str | None) -> None:
    """Build the env (`cached_env`) and load the tokenizer's special tokens once; what the reward file runs at import.

    OpenRLHF's `SingleTurnAgentExecutor` calls `reward_func` inside a `try` that only logs failures
    (`logger.info`) and then trains on a sample without a reward, so setup errors are raised here,
    when `RolloutRayActor` loads the file.

    Raises:
        ConfigError: the env cannot be built (the message names the env id, its args and the cause).
    """
    try:
        cached_env(env_id, dict(env_args or {}))
    except RlvrError as exc:
        raise ConfigError(f"rlvr reward for OpenRLHF cannot build env {env_id!r} with args {dict(env_args or {})}: "
                          f"{exc}; check that the export's env args are valid in the trainer's environment "
                          "(rlvr version, data paths) and re-run `rlvr export --backend openrlhf`") from exc
    if tokenizer:
        special_tokens(tokenizer)


def write_reward_file(directory: Path, *, env_id: str, env_args: dict[str, Any], tokenizer: str | None = None) -> Path:
    """Write `directory/reward_func.py` (the `--reward.remote_url` file); return its path."""
    path = Path(directory) / REWARD_FILE
    path.write_text(_REWARD_SOURCE.format(env_id=env_id, env_args_json=_args_json(env_args), tokenizer=tokenizer))
    return path


def write_agent_file(directory: Path, *, env_id: str, env_args: dict[str, Any]) -> Path:
    """Write `directory/agent_func.py` (the `--train.agent_func_path` file); return its path."""
    path = Path(directory) / AGENT_FILE
    path.write_text(_AGENT_SOURCE.format(env_id=env_id, env_args_json=_args_json(env_args)))
    return path


def export_openrlhf(
    env: Environment,
    directory: Path,
    *,
    env_id: str,
    env_args: dict[str, Any],
    limit: int | None = None,
    val_size: int = 0,
    overwrite: bool = False,
    tokenizer: str | None = None,
) -> ExportManifest:
    """Write the files `train_ppo_ray` needs for `env` into `directory`.

    Files (manifest roles): `train.jsonl` (train), `val.jsonl` (val, the last `val_size` tasks, when
    `val_size > 0`), `reward_func.py` (reward), `agent_func.py` (agent, multi-turn envs only), and
    `rlvr_export.json`.

    Args:
        env: the environment (its `tasks` are exported).
        directory: the export folder.
        env_id: registered id the trainer process rebuilds the env from (`rlvr.make`).
        env_args: JSON-serialisable factory keyword arguments for that rebuild; relative paths that
            exist are made absolute (`absolute_paths`), since the trainer's workers run elsewhere.
        limit: export at most this many tasks (val + train); None: all.
        val_size: tasks held out for `val.jsonl` (the last `val_size` exported tasks, as `export_verl` does).
        overwrite: allow a non-empty folder (files of the same name are replaced).
        tokenizer: the policy's tokenizer (model folder or Hub id) whose special tokens the reward
            strips from responses; None strips trailing end-of-turn markers (`_TRAILING_SPECIAL`).

    Returns:
        The manifest written to `directory/rlvr_export.json`.

    Raises:
        ConfigError: a non-empty folder without `overwrite`, a negative size, or no train rows left.
        AdapterError: a task cannot be a row (see `task_row`).
    """
    if val_size < 0 or (limit is not None and limit < 0):
        raise ConfigError(f"limit and val_size must be >= 0, got limit={limit}, val_size={val_size}")
    try:
        json.dumps(env_args)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"env_args must be JSON-serialisable (the trainer rebuilds the env from them): "
                          f"{exc}") from exc
    env_args = absolute_paths(env_args)
    directory = _prepare_folder(directory, overwrite)
    rows: list[dict[str, Any]] = []
    for task in env.tasks:
        if limit is not None and len(rows) >= limit:
            break
        rows.append(task_row(task, env_id))
    train, val = rows[:len(rows) - val_size], rows[len(rows) - val_size:]
    if not train:
        raise ConfigError(f"no train rows: {len(rows)} task(s) exported and val_size={val_size}; lower val_size")
    files = {"train": "train.jsonl"}
    _write_jsonl(directory / "train.jsonl", train)
    if val:
        files["val"] = "val.jsonl"
        _write_jsonl(directory / "val.jsonl", val)
    files["reward"] = write_reward_file(directory, env_id=env_id, env_args=env_args, tokenizer=tokenizer).name
    multi = is_multi_turn(env)
    if multi:
        files["agent"] = write_agent_file(directory, env_id=env_id, env_args=env_args).name
    manifest = ExportManifest(backend="openrlhf", env_id=env_id, env_args=dict(env_args), multi_turn=multi,
                              n_train=len(train), n_val=len(val), files=files)
    write_manifest(directory, manifest)
    return manifest


# -- command line ------------------------------------------------------------------------------------
def _flag_args(values: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for name, value in values.items():
        if value is None or value is False:
            continue
        out.append(f"--{name}")
        if value is True:
            continue
        if isinstance(value, list | tuple):
            out += [str(v) for v in value]
        else:
            out.append(str(value))
    return out


OPENRLHF_CPU_ARGS: dict[str, Any] = {
    "rollout.batch_size": 2,  # x 4 samples = 8 responses per step, as `rlvr train --backend trl`
    "rollout.max_new_tokens": 64,  # TRL's max_completion_length in `rlvr train`
    "data.max_len": 512,
    "rollout.micro_batch_size": 4,
    "train.micro_batch_size": 4,
    "vllm.enable_sleep": False,  # "Sleep mode is not supported on current platform" (vLLM-CPU)
    "vllm.sync_backend": "gloo",  # nccl with colocated models picks CUDA IPC
    "vllm.enforce_eager": True,
    "actor.gradient_checkpointing_enable": False,
}
"""`openrlhf_args` values of rlvr's CPU mode (`device="cpu"`), before `trainer_args` (which win); the
launcher adds the shims and variables (`rlvr.adapters.cpu.openrlhf_shims`, `...launch.cpu_environment`)."""


def openrlhf_args(
    directory: Path,
    *,
    model: str,
    steps: int,
    trainer_args: Mapping[str, Any] | None = None,
    n_gpus: int = 1,
    device: str = "cuda",
) -> list[str]:
    """`openrlhf.cli.train_ppo_ray` arguments for the export in `directory` (dotted 0.11 flag names).

    Defaults: GRPO-style (`group_norm` advantages, 4 samples per prompt, no KL and so no reference
    model), actor and one vLLM engine colocated on `n_gpus` GPUs, 8 prompts per rollout and one
    optimiser step per rollout, `--data.max_samples = steps * rollout batch size` so the run has
    exactly `steps` steps (`prepare_datasets`: steps = prompts * n_samples // train batch). Dynamic
    filtering is always on, with a range just wider than the env's reward range, so only prompt
    groups holding an `error` verdict (NaN score) are dropped (module docstring). With a `val.jsonl`,
    `--eval.dataset` is set and `--eval.steps = steps` (evaluated after the last step). Checkpoints and
    TensorBoard logs go to `directory/openrlhf/`.

    Args:
        directory: a folder written by `export_openrlhf`.
        model: the actor model folder or Hub id (`--actor.model_name_or_path`).
        steps: number of PPO steps (rollout + update), >= 1.
        trainer_args: dotted flag name (with or without `--`) -> value, overriding the defaults;
            True is a bare flag, False/None drops a flag, a list gives several values.
        n_gpus: GPUs on the node (actor and vLLM engines share them).
        device: 'cuda', or 'cpu' for rlvr's CPU mode (`OPENRLHF_CPU_ARGS`: gloo weight sync, no sleep
            mode, 2 prompts x 4 samples, 64 new tokens).

    Raises:
        ConfigError: `steps`/`n_gpus` < 1, the folder is not an OpenRLHF export, or trainer args
            disable dynamic filtering or set one sample per prompt (error verdicts would be trained on).
    """
    from rlvr.adapters.export import read_manifest

    if steps < 1 or n_gpus < 1:
        raise ConfigError(f"steps and n_gpus must be >= 1, got steps={steps}, n_gpus={n_gpus}")
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest.backend != "openrlhf":
        raise ConfigError(f"{directory} holds a {manifest.backend!r} export; write it with --backend openrlhf")
    if device not in ("cuda", "cpu"):
        raise ConfigError(f"device must be cuda or cpu, got {device!r}")
    overrides = {k.removeprefix("--"): _cli_value(v) for k, v in (trainer_args or {}).items()}
    if device == "cpu":
        overrides = {**OPENRLHF_CPU_ARGS, **overrides}
    env = cached_env(manifest.env_id, manifest.env_args)
    low, high = env.spec.reward_range
    rollout_batch = int(overrides.get("rollout.batch_size", 8))
    n_samples = int(overrides.get("rollout.n_samples_per_prompt", 4))
    if n_samples < 2 or overrides.get("algo.dynamic_filtering_enable", True) is False:
        raise ConfigError("rlvr needs dynamic filtering with n_samples_per_prompt >= 2 on OpenRLHF: it is how an "
                          "error verdict (NaN score) is dropped instead of trained on; keep "
                          "rollout.n_samples_per_prompt >= 2 and algo.dynamic_filtering_enable")
    out_dir = directory / "openrlhf"
    values: dict[str, Any] = {
        "actor.model_name_or_path": model,
        "data.prompt_dataset": str(manifest.path(directory, "train")),
        "data.input_key": INPUT_KEY,
        "data.label_key": LABEL_KEY,
        "data.apply_chat_template": True,
        "data.max_samples": steps * rollout_batch,
        "data.max_len": 2048,
        "rollout.max_new_tokens": 1024,
        "rollout.batch_size": rollout_batch,
        "rollout.n_samples_per_prompt": n_samples,
        "rollout.micro_batch_size": 4,
        "train.batch_size": rollout_batch * n_samples,
        "train.micro_batch_size": 4,
        "train.num_episodes": 1,
        "algo.advantage.estimator": "group_norm",
        "algo.kl.init_coef": 0,
        "algo.dynamic_filtering_enable": True,
        "algo.dynamic_filtering_range": [_below(low), _above(high)],
        "actor.num_nodes": 1,
        "actor.num_gpus_per_node": n_gpus,
        "vllm.num_engines": n_gpus,
        "vllm.tensor_parallel_size": 1,
        "vllm.gpu_memory_utilization": 0.5,
        "vllm.enable_sleep": True,
        "train.colocate_all": True,
        "ds.zero_stage": 2,
        "ds.attn_implementation": "sdpa",
        "actor.adam.lr": 1e-6,
        "actor.gradient_checkpointing_enable": True,
        "ckpt.output_dir": str(out_dir / "model"),
        "ckpt.path": str(out_dir / "checkpoints"),
        "logger.tensorboard_dir": str(out_dir / "tensorboard"),
    }
    if "val" in manifest.files:  # OpenRLHF's default eval.steps (-1) never evaluates: evaluate after the last step
        values["eval.dataset"] = str(manifest.path(directory, "val"))
        values["eval.steps"] = steps
    if manifest.multi_turn:
        values["train.agent_func_path"] = str(manifest.path(directory, "agent"))
    else:
        values["reward.remote_url"] = str(manifest.path(directory, "reward"))
    values.update(overrides)
    return _flag_args(values)


def _cli_value(value: Any) -> Any:
    """A trainer arg value as `_flag_args` needs it: "true"/"false" strings (`--trainer-arg KEY=true`) as bools."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def _below(value: float) -> float:
    return -1e9 if not math.isfinite(value) else float(value) - 1.0


def _above(value: float) -> float:
    return 1e9 if not math.isfinite(value) else float(value) + 1.0


def openrlhf_command(
    directory: Path,
    *,
    python: str,
    model: str,
    steps: int,
    trainer_args: Mapping[str, Any] | None = None,
    n_gpus: int = 1,
    device: str = "cuda",
) -> list[str]:
    """`[python, "-m", "openrlhf.cli.train_ppo_ray", *openrlhf_args(...)]` (see `openrlhf_args`).

    With `device="cpu"` the module runs under rlvr's driver (`rlvr.adapters.cpu.driver`: watchdog, the
    private Ray node with the OpenRLHF shims).
    """
    args = openrlhf_args(directory, model=model, steps=steps, trainer_args=trainer_args, n_gpus=n_gpus, device=device)
    head = [python, "-m", "rlvr.adapters.cpu.driver"] if device == "cpu" else [python, "-m"]
    return [*head, "openrlhf.cli.train_ppo_ray", *args]


# -- reward ----------------------------------------------------------------------------------------------
def _strip_prompt(query: str, prompt: str) -> str | None:
    """`query` minus `prompt`, or None when no part of the prompt starts the query.

    OpenRLHF cuts over-long prompts from the left (`SingleTurnAgentExecutor.execute` keeps the last
    `max_length - max_tokens` prompt ids), so the longest suffix of `prompt` that starts `query` is
    taken. A cut inside a multi-byte character (byte-level BPE splits CJK characters and emoji into
    several ids) decodes its leftover bytes as U+FFFD replacement characters, which are skipped first.
    """
    if query.startswith(prompt):
        return query[len(prompt):]
    body = query.lstrip(_REPLACEMENT)
    if not body:
        return None
    start = prompt.find(body[0], 1)
    while start != -1:  # candidate cut points: where the prompt has the body's first character
        if body.startswith(prompt[start:]):
            return body[len(prompt) - start:]
        start = prompt.find(body[0], start + 1)
    return None


def response_text(query: str, prompt: str, special_tokens: Sequence[str] | None = None) -> str | None:
    """The response text inside one OpenRLHF query, as a decode with `skip_special_tokens=True` gives it.

    Args:
        query: `decode(prompt_ids + sampled_ids, skip_special_tokens=False)` (OpenRLHF's query).
        prompt: the chat-template prompt string the query starts with.
        special_tokens: the tokenizer's special token strings, all removed from the response; None
            removes only trailing end-of-turn/EOS markers (`_TRAILING_SPECIAL`).

    Returns:
        The response text, or None when the query does not start with (a suffix of) the prompt.
    """
    body = _strip_prompt(query, prompt)
    if body is None:
        return None
    if special_tokens is None:
        return _TRAILING_SPECIAL.sub("", body)
    for token in sorted({t for t in special_tokens if t}, key=len, reverse=True):
        body = body.replace(token, "")
    return body


_SPECIALS: dict[str, list[str]] = {}
_SPECIALS_LOCK = threading.Lock()


def special_tokens(tokenizer: str) -> list[str]:
    """Special token strings of a tokenizer (`all_special_tokens` + added tokens marked special), cached.

    Raises:
        MissingExtraError: transformers is not installed.
        ConfigError: the tokenizer cannot be loaded.
    """
    with _SPECIALS_LOCK:
        if tokenizer not in _SPECIALS:
            try:
                from transformers import AutoTokenizer
            except ImportError as exc:
                raise MissingExtraError("transformers", "trl") from exc
            try:
                tok = AutoTokenizer.from_pretrained(tokenizer)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"cannot load tokenizer {tokenizer!r} for the OpenRLHF reward: {exc}") from exc
            decoder = getattr(tok, "added_tokens_decoder", {})
            added = [t.content for t in decoder.values() if getattr(t, "special", False)]
            _SPECIALS[tokenizer] = sorted(set(tok.all_special_tokens) | set(added))
        return _SPECIALS[tokenizer]


def extra_logs(verdict: Verdict) -> dict[str, float]:
    """The `extra_logs` entry of one verdict: `rlvr/status/<s>` indicators and `rlvr/verify_s` (`EXTRA_LOG_KEYS`)."""
    logs = {f"rlvr/status/{s}": 1.0 if verdict.status == s else 0.0 for s in STATUSES}
    logs["rlvr/verify_s"] = float(verdict.elapsed_s or 0.0)
    return logs


def read_sample(query: str, prompt: str, label: Any,
                specials: Sequence[str] | None = None) -> tuple[str, Any] | Verdict:
    """(response text, decoded task) of one OpenRLHF (query, prompt, label), or the `error` verdict when unreadable."""
    try:
        task = decode_label(label)
    except AdapterError as exc:
        return Verdict.error(str(exc))
    text = response_text(query, prompt, specials)
    if text is None:
        return Verdict.error("the query does not start with the prompt (OpenRLHF decoded the prompt ids to other "
                             "text); cannot separate the response")
    return text, task


def score_query(env: Environment, query: str, prompt: str, label: Any,
                specials: Sequence[str] | None = None) -> Verdict:
    """The verdict of one OpenRLHF (query, prompt, label); an undecodable label or query is an `error` verdict."""
    sample = read_sample(query, prompt, label, specials)
    if isinstance(sample, Verdict):
        return sample
    text, task = sample
    return score_text(env, text, task.reference)


def reward_func(
    queries: Sequence[str],
    prompts: Sequence[str],
    labels: Sequence[Any],
    *,
    env_id: str,
    env_args: dict[str, Any] | None = None,
    tokenizer: str | None = None,
) -> dict[str, Any]:
    """OpenRLHF's `reward_func(queries, prompts, labels)` for an rlvr env (the generated file calls this).

    Args:
        queries: N OpenRLHF queries (prompt + response text with special tokens).
        prompts: the N chat-template prompt strings.
        labels: the N `label` strings written by `export_openrlhf`.
        env_id: the env to rebuild (once per process, `cached_env`).
        env_args: its factory arguments.
        tokenizer: the policy tokenizer whose special tokens are stripped (see `response_text`).

    Returns:
        `{"rewards": Tensor[N], "scores": Tensor[N], "extra_logs": {key: Tensor[N]}}` (float32); an
        `error` verdict gives NaN reward and score (dropped by dynamic filtering, module docstring).

    Raises:
        AdapterError: the three lists differ in length.
    """
    import torch

    if not len(queries) == len(prompts) == len(labels):
        raise AdapterError(f"reward_func got {len(queries)} queries, {len(prompts)} prompts, {len(labels)} labels")
    env = cached_env(env_id, env_args)
    specials = special_tokens(tokenizer) if tokenizer else None
    verdicts = [score_query(env, q, p, lab, specials) for q, p, lab in zip(queries, prompts, labels, strict=True)]
    values = [math.nan if v.reward is None else float(v.reward) for v in verdicts]
    logs = [extra_logs(v) for v in verdicts]
    rewards = torch.tensor(values, dtype=torch.float32)
    return {"rewards": rewards, "scores": rewards.clone(),
            "extra_logs": {k: torch.tensor([log[k] for log in logs], dtype=torch.float32) for k in EXTRA_LOG_KEYS}}


def openrlhf_replay(record: Mapping[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Replay one recorded rollout (`tests/data/parity/rollouts.json`) through OpenRLHF's own executors.

    See `rlvr.adapters.openrlhf_agent.replay` (this re-exports it lazily, since it imports openrlhf).
    """
    from rlvr.adapters.openrlhf_agent import replay

    return replay(record, tokenizer)
