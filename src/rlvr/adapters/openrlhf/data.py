"""OpenRLHF data: the prompt jsonl rows and labels, the generated reward and agent files, `export_openrlhf`.

Written against OpenRLHF 0.11.2 (read in its wheel):

- Data (`openrlhf/datasets/prompts_dataset.py`, `preprocess_data`): each jsonl row's `--data.input_key`
  column holds the chat messages; with `--data.apply_chat_template` the prompt is
  `tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)` (string
  contents containing `<image>` become VLM content lists, so rlvr refuses to export such prompts);
  `--data.label_key` is passed through untouched as the `label` string. rlvr writes `input` (the
  task's messages), `label` (`task_label`: the task id, prompt and reference as one JSON string),
  `task_id` and `datasource` (the env id, used by OpenRLHF's per-datasource eval metrics).
- Multi-turn (`openrlhf/trainer/ray/vllm_engine.py`, `_load_agent_executor`): `--train.agent_func_path`
  names a `.py` file exporting `AgentExecutor`, a subclass of `AgentExecutorBase` built with no
  arguments; see `rlvr.adapters.openrlhf.agent`.
- The reward file holds the env's verifier spec (`rlvr.adapters.export.export_spec`) and the export
  format, and builds that verifier when OpenRLHF imports it (`check_reward_setup`), without building the
  environment or loading its dataset; an env whose verifier has no spec rebuilds the env
  (`rlvr.make(env_id, **env_args)`); a reward file of another export format is refused (re-run
  `rlvr export`). The agent file rebuilds the env (its episodes step it). Relative data paths in the
  env args are made absolute at export, since Ray workers run in another folder. Both fail at startup
  on a broken setup rather than inside OpenRLHF's reward call, whose `except` only logs at INFO level
  and then trains on a sample without a reward.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.adapters.export import (
    EXPORT_FORMAT,
    MANIFEST_NAME,
    ExportManifest,
    absolute_paths,
    decode_reference,
    encode_reference,
    export_spec,
    is_multi_turn,
    prepare_folder,
    write_manifest,
)
from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.types import Message, Task

if TYPE_CHECKING:
    from rlvr.environments.base import Environment

__all__: list[str] = []

INPUT_KEY = "input"
"""jsonl column with the prompt messages (`--data.input_key`)."""
LABEL_KEY = "label"
"""jsonl column with the serialised task (`--data.label_key`)."""


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



def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    tmp.replace(path)


REWARD_FILE = "reward_func.py"
AGENT_FILE = "agent_func.py"
EXPORT_FILES: tuple[str, ...] = ("train.jsonl", "val.jsonl", REWARD_FILE, AGENT_FILE, MANIFEST_NAME)
"""Every file `export_openrlhf` may write; `overwrite` replaces exactly these (stale ones included)."""

_REWARD_SOURCE = '''"""OpenRLHF reward function for rlvr environment {env_id}.

Generated by `rlvr export --backend openrlhf`.

Pass this file as `--reward.remote_url`; OpenRLHF calls `reward_func(queries, prompts, labels)`.
"""

import json

from rlvr.adapters.openrlhf import reward as _rlvr_openrlhf

EXPORT_FORMAT = {export_format!r}  # the `rlvr export` format of this file (rlvr refuses another)
ENV_ID = {env_id!r}
ENV_ARGS = json.loads({env_args_json!r})
VERIFIER = json.loads({verifier_json!r})  # the verifier spec rewards are scored with; None: rebuild the env
TOKENIZER = {tokenizer!r}  # whose special tokens are stripped from responses; None: trailing end-of-turn markers

# Build the verifier (and load the tokenizer) now, when OpenRLHF loads this file, so a broken setup fails
# loudly at startup instead of being logged per sample by OpenRLHF's reward call.
_rlvr_openrlhf.check_reward_setup(ENV_ID, ENV_ARGS, TOKENIZER, verifier=VERIFIER, export_format=EXPORT_FORMAT)


def reward_func(queries, prompts, labels, **kwargs):
    """Rewards of rlvr's verifier for each query (see rlvr.adapters.openrlhf.reward.reward_func)."""
    return _rlvr_openrlhf.reward_func(queries, prompts, labels, env_id=ENV_ID, env_args=ENV_ARGS,
                                      tokenizer=TOKENIZER, verifier=VERIFIER)
'''

_AGENT_SOURCE = '''"""OpenRLHF agent for rlvr environment {env_id} (generated by rlvr export --backend openrlhf).

Pass this file as `--train.agent_func_path`; OpenRLHF builds `AgentExecutor()` (no arguments).
"""

import json

from rlvr.adapters.openrlhf.agent import agent_classes

AgentInstance, AgentExecutor = agent_classes({env_id!r}, json.loads({env_args_json!r}))
'''


def _args_json(env_args: Mapping[str, Any]) -> str:
    """`env_args` as JSON for the generated files (a Python repr of `inf`/`nan` would not import)."""
    return json.dumps(dict(env_args), sort_keys=True)


def write_reward_file(directory: Path, *, env_id: str, env_args: dict[str, Any], tokenizer: str | None = None,
                      verifier: Mapping[str, Any] | None = None) -> Path:
    """Write `directory/reward_func.py` (the `--reward.remote_url` file); return its path.

    Args:
        directory: the export folder.
        env_id: the env id (the agent and a reward without a verifier spec rebuild the env from it).
        env_args: its factory arguments.
        tokenizer: the policy tokenizer whose special tokens the reward strips (None: trailing markers).
        verifier: the env's verifier spec (`export_spec`); None makes the file rebuild the env.
    """
    path = Path(directory) / REWARD_FILE
    path.write_text(_REWARD_SOURCE.format(env_id=env_id, env_args_json=_args_json(env_args), tokenizer=tokenizer,
                                          verifier_json=json.dumps(verifier, sort_keys=True),
                                          export_format=EXPORT_FORMAT))
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
        env_id: registered id the agent (and a reward without a verifier spec) rebuilds the env from.
        env_args: JSON-serialisable factory keyword arguments for that rebuild; relative paths that
            exist are made absolute (`absolute_paths`), since the trainer's workers run elsewhere.
        limit: export at most this many tasks (val + train); None: all.
        val_size: tasks held out for `val.jsonl` (the last `val_size` exported tasks, as `export_verl` does).
        overwrite: allow a non-empty folder; the files a previous export wrote are replaced (stale ones
            removed), other files (OpenRLHF's `openrlhf/` output) stay.
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
    directory = prepare_folder(directory, overwrite, EXPORT_FILES)
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
    spec = export_spec(env.verifier)
    files["reward"] = write_reward_file(directory, env_id=env_id, env_args=env_args, tokenizer=tokenizer,
                                        verifier=spec).name
    multi = is_multi_turn(env)
    if multi:
        files["agent"] = write_agent_file(directory, env_id=env_id, env_args=env_args).name
    manifest = ExportManifest(backend="openrlhf", env_id=env_id, env_args=dict(env_args), multi_turn=multi,
                              n_train=len(train), n_val=len(val), files=files, verifier=spec,
                              reference_format="json")  # references travel inside the JSON label
    write_manifest(directory, manifest)
    return manifest
