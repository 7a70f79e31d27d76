"""TRL agent (multi-turn): an rlvr `ToolEnv` as a TRL 1.16 `environment_factory` class, and its rewards.

`GRPOTrainer(environment_factory=cls, ...)` (TRL 1.16, `trl/trainer/grpo_trainer.py`) probes `cls()`
once at start-up: every public function of the class except `reset` and `get_reward` becomes a
tool (transformers' `get_json_schema` builds its schema from the signature and google docstring),
`reset` is required. Per generation batch it draws one instance per rollout from a pool, calls
`instance.reset(**row)` with the whole dataset row (a returned string is appended to the last
user message), generates, parses tool calls with the tokenizer's response template, runs each call
as `instance.<tool>(**arguments)` (an exception becomes `{"error": ...}` for the model), and loops
until the model answers without a tool call or `max_tool_calling_iterations` is reached.

`environment_factory(env)` generates that class from an rlvr environment: `reset(**row)` rebuilds
the `Task` from the `task_id`/`rlvr_reference` columns written by `rlvr.adapters.trl.data.to_dataset` and
resets a private rlvr env; one method per rlvr tool, with the tool's own signature and description
(`rlvr.adapters.trl.tools`), steps the rlvr env with a native tool call and returns the tool's
answer. The rlvr env therefore sees every call (turn limit, per-call timeouts, `tool_calls`/`tool_errors`
step components).

TRL drives this loop (it generates, parses the calls and calls the tool methods), so the episode
driver's loop (`EpisodeRun.play`) does not run here; its steps do: each tool call and the final
answer are `EpisodeRun.act` turns, an episode the env did not end on the final answer is
`EpisodeRun.cut`, and the final verdict is `EpisodeRun.training_sample`'s, so the step, end,
scoring and masking rules are those of every other trainer path. TRL owns the tokens on this path
(it tokenises and masks the tool answers itself). The `rollout_func` path is `rlvr.adapters.trl.rollout`.

Why there is no `get_reward`: TRL calls `get_reward()` without arguments, but an rlvr tool env is
scored on the *final assistant message* (the one without a tool call), which TRL only hands to
reward functions. So the reward comes from `EpisodeReward`, a reward function that receives TRL's
`completions` and `environments` kwargs, gives each rollout's final answer to its instance (which
ends the rlvr episode and returns the final `Verdict`), and returns `verdict.reward` -- None for an
`error` verdict, which TRL turns into NaN and masks. A class-level `get_reward` would be a second
reward column summed with weight 1 (double counting), so the class has none.

Caveat (TRL's loop): TRL runs a batch's tool calls before checking the completion budget; when a
tool answer would push a rollout past `max_completion_length`, TRL drops that answer from the
completion and ends the rollout, but the rlvr env has already recorded the call. The rollout then
ends on the tool-call message, whose final answer is '' (scored as the env scores an empty answer).

Chat template: TRL needs a template that renders tool calls (`supports_tool_calling`) and a response
parser for it (`add_response_schema` knows Qwen2.5/3, Llama 3.1/3.2, GLM-4 MoE, GPT-OSS, ...).
SmolLM2's ChatML template renders neither tools nor tool calls; `tool_calling_tokenizer` gives a
ChatML tokenizer (SmolLM2 shares `<|im_start|>`/`<|im_end|>` with Qwen) TRL's own
`chat_templates/qwen2_5.jinja`, which TRL recognises and parses (`<tool_call>{json}</tool_call>`).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlvr.adapters.trl.data import REFERENCE_COLUMN, TASK_ID_COLUMN, require_trl, task_from_row
from rlvr.adapters.trl.reward import _log, completion_text
from rlvr.adapters.trl.tools import check_trl_schema, tool_methods
from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.metrics import episode_metrics
from rlvr.core.types import Message, StepResult, Task, ToolCall, Verdict
from rlvr.rollout.driver import EpisodeRun

if TYPE_CHECKING:
    from rlvr.environments.base import Environment
    from rlvr.environments.tools import Tool

__all__ = ["EpisodeReward", "environment_factory", "environment_tools", "tool_calling_tokenizer"]

TOOL_CHAT_TEMPLATE = "qwen2_5"
"""TRL-shipped chat template (`trl/chat_templates/<name>.jinja`) given to ChatML tokenizers whose
own template cannot render tool calls (e.g. SmolLM2); TRL's `add_response_schema` parses it."""


def is_tool_env(env: Any) -> bool:
    """True when `env` offers tools (a `ToolEnv`, or any env with `spec.tools`)."""
    return bool(getattr(getattr(env, "spec", None), "tools", ()))


# -- the generated class ------------------------------------------------------------------------
class _RlvrEnvironment:
    """Base of the classes `environment_factory` generates (see the module docstring).

    Attributes:
        env: this instance's rlvr environment (one episode at a time).
        episode: the current episode in the episode driver (`EpisodeRun`), None before `reset` (not
            `run`: an attribute shadows a tool method of that name, e.g. the terminal envs' `run`).
        verdict: the final `Verdict` of the current episode, once it ended (else None).
    """

    _rlvr_prototype: Environment

    def __init__(self) -> None:
        self.env: Environment = type(self)._rlvr_prototype.episode_copy()
        self.verdict: Verdict | None = None
        self.task: Task | None = None
        self.episode: EpisodeRun | None = None
        self._calls = 0

    @staticmethod
    def _run(coro: Any) -> Any:
        """Run a coroutine of the rlvr env to completion (TRL calls `reset` and tools synchronously)."""
        return asyncio.run(coro)

    def reset(self, **row: Any) -> str | None:
        """Start the episode of one dataset row (TRL passes every column as a keyword).

        Returns:
            None: the prompt TRL already shows (the row's `prompt`) is the rlvr env's prompt.
            A string: text the rlvr env appended to the last user message on reset, which TRL
            appends the same way.

        A row whose `rlvr_reference` is not valid JSON gets an `error` verdict (masked) instead of an
        episode: its tool calls are answered with an error and `EpisodeReward` returns None for it.

        Raises:
            AdapterError: the row lacks the `to_dataset` columns, or the rlvr env's reset changed
                the prompt in a way TRL cannot show (other than appending to the last user message).
        """
        self.verdict = None
        self.episode = None
        self._calls = 0
        self.task = None
        try:
            self.task = task_from_row(row)
        except AdapterError as exc:
            if REFERENCE_COLUMN not in str(exc) or TASK_ID_COLUMN not in row:
                raise
            self.verdict = Verdict.error(str(exc))  # like VerifierReward: an undecodable reference is masked
            return None
        self.episode = EpisodeRun(self.env, self.task, layout=None)
        messages = self._run(self.episode.reset())
        return _observation_suffix(self.task, list(messages))

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """Step the rlvr env with one native tool call (a turn of the episode driver); return its answer."""
        if self.episode is None:
            if self.verdict is not None:
                return f"Error: this task cannot be run: {self.verdict.detail}"
            raise AdapterError("a tool was called before reset(); TRL resets every environment before generating")
        if self.episode.done:
            return "Error: the episode is over (turn limit reached); give your final answer"
        self._calls += 1
        call = ToolCall(id=f"call_{self._calls}", name=name, arguments=json.dumps(arguments, default=str))
        result: StepResult = self._run(self.episode.act(Message(role="assistant", content="", tool_calls=(call,))))
        if result.verdict is not None:  # the rlvr turn limit ended the episode during the tool phase
            self.verdict = result.verdict
        return "\n".join(m.content for m in result.messages)

    def _finish(self, final_answer: str) -> Verdict:
        """End the episode with the model's final answer and return the final Verdict.

        If the rlvr env already ended the episode (its turn limit fell on a tool call), that
        episode's verdict is returned and `final_answer` is not scored (the env's truncation rule).
        If the rlvr env does not end it on `final_answer` (e.g. the text holds a text-tag action
        TRL did not parse), the episode is cut there and scored by the env's rule for a cut
        episode (`EpisodeRun.cut`: its final response, here `final_answer`).
        """
        run = self.episode
        if run is None:
            if self.verdict is not None:
                return self.verdict
            raise AdapterError("the episode was never reset; TRL resets every environment before generating")
        if not run.done:
            self._run(run.act(Message(role="assistant", content=final_answer)))
        if not run.done:
            self._run(run.cut())
        self.verdict = run.training_sample().verdict
        return self.verdict



_INSTANCE_ATTRIBUTES = ("env", "verdict", "task", "episode")
"""Attributes every `_RlvrEnvironment` instance sets: a tool of one of these names would be shadowed by them."""


def _observation_suffix(task: Task, messages: list[Message]) -> str | None:
    """What TRL must append to the row prompt's last user message to show the rlvr env's reset prompt."""
    prompt = list(task.prompt)
    if messages == prompt:
        return None
    same_head = len(messages) == len(prompt) and messages[:-1] == prompt[:-1]
    last, mine = (messages[-1], prompt[-1]) if messages else (None, None)
    if same_head and last is not None and mine is not None and last.role == mine.role == "user" \
            and last.content.startswith(mine.content):
        return last.content[len(mine.content):]
    raise AdapterError(f"task {task.id!r}: the environment's reset() changed the prompt beyond appending text to the "
                       "last user message, which TRL's environment_factory cannot show; write the full prompt into "
                       "the tasks (Task.prompt) or use the rollout_func path (rlvr.adapters.trl.rollout)")


def _class_name(env_id: str) -> str:
    words = re.split(r"[^0-9a-zA-Z]+", env_id)
    return "".join(w[:1].upper() + w[1:] for w in words if w) + "Environment"


def _resolve(env: Any, env_args: dict[str, Any]) -> Environment:
    """The prototype env: made from an id, built by a callable (e.g. an env class), or the instance itself."""
    from rlvr.environments.base import Environment

    proto: Any
    if isinstance(env, str):
        from rlvr.environments.registry import make

        proto = make(env, **env_args)
    elif isinstance(env, Environment):
        if env_args:
            raise ConfigError("environment_factory got an environment instance and keyword arguments; pass the "
                              "arguments when building the environment")
        proto = env
    elif callable(env):
        proto = env(**env_args)
    else:
        raise ConfigError(f"environment_factory needs an environment id, instance or factory, got {type(env).__name__}")
    if not isinstance(proto, Environment):
        raise ConfigError(f"the environment factory returned {type(proto).__name__}, not an rlvr Environment")
    if not is_tool_env(proto):
        raise ConfigError(f"environment {proto.spec.id!r} has no tools; TRL's environment_factory is for tool "
                          "environments (use rlvr.adapters.trl.reward_funcs for single-turn ones)")
    return proto



def environment_factory(env: Any, **env_args: Any) -> type[_RlvrEnvironment]:
    """A class for `GRPOTrainer(environment_factory=...)` backed by an rlvr tool environment.

    Args:
        env: a registered environment id (e.g. `"math/gsm8k-tool-v1"`), a callable returning an
            environment, or an environment instance.
        **env_args: keyword arguments of the environment factory.

    Returns:
        A class whose instances are TRL environments: `reset(**row) -> str | None`, one method per
        rlvr tool (same name, parameters, type hints and description; returns the tool's answer
        text). Instances are shallow copies of one prototype env and share its tasks, verifier (one
        worker pool however many instances TRL makes) and tools; tools that are bound methods of
        the env are re-bound to each copy. An env that lists tool schemas without rlvr `Tool`s
        (`openenv/remote-v1`: the tools run on the server) gets one method per schema (JSON types
        as type hints) whose call is one episode step with that tool call. The class attribute
        `_rlvr_prototype` holds the prototype env: close it after training.

    Raises:
        ConfigError: the environment has no tools, a tool name clashes with `reset`/`get_reward`, or
            transformers' `get_json_schema` cannot read a tool's signature (e.g. a pydantic model
            parameter).
        AdapterError: a tool's type hints cannot be resolved.
    """
    proto = _resolve(env, env_args)
    namespace: dict[str, Any] = {"_rlvr_prototype": proto,
                                 "__doc__": f"TRL environment for rlvr's {proto.spec.id} (generated by "
                                            "rlvr.adapters.trl.agent.environment_factory)."}
    for name, method, _source in tool_methods(proto):
        if name in ("reset", "get_reward", *_INSTANCE_ATTRIBUTES) or name.startswith("_") or hasattr(
                _RlvrEnvironment, name):
            raise ConfigError(f"tool name {name!r} of {proto.spec.id!r} is reserved in TRL environment classes; "
                              "rename the tool (Tool(fn, name=...))")
        namespace[name] = method
        check_trl_schema(proto.spec.id, name, method)
    cls = type(_class_name(proto.spec.id), (_RlvrEnvironment,), namespace)
    cls.__module__ = __name__
    return cls


def environment_tools(cls: type[_RlvrEnvironment]) -> list[Tool | dict[str, Any]]:
    """What is behind each tool method of a class made by `environment_factory`, in method order.

    The rlvr `Tool` (a `ToolEnv`), or the OpenAI tool schema of a tool that runs elsewhere (a
    remote server's).
    """
    return [source for _name, _method, source in tool_methods(cls._rlvr_prototype)]


# -- reward ---------------------------------------------------------------------------------------
class EpisodeReward:
    """The TRL reward function of an `environment_factory` run: the final Verdict of each episode.

    TRL 1.16 calls it as `reward(prompts=..., completions=..., environments=[instance per rollout],
    **columns, log_metric=..., log_extra=...)`. For each rollout it passes the text of the last
    assistant message of `completions[i]` to `environments[i]`, which ends the rlvr episode; it
    returns `verdict.reward`, None for `error` verdicts (TRL masks them). Metrics are logged like
    `VerifierReward`'s: `rlvr/<name>/<status>` and `rlvr/<name>/verify_s`, and the episodes' tool-use
    metrics `rlvr/<name>/<key>` (`rlvr.core.metrics.episode_metrics`; on this path each tool call TRL
    runs is one turn of the rlvr episode, so `turns` counts calls + the final answer, and a call TRL
    could not parse never reaches the env: TRL answers it and the episode does not count it).

    Attributes:
        __name__: the name TRL logs the reward under (`rewards/<name>/mean`).
        last_verdicts: the verdicts of the latest call.
    """

    def __init__(self, name: str) -> None:
        self.__name__ = name
        self.last_verdicts: list[Verdict] = []
        self.calls = 0

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        """Score each rollout's final answer in its environment instance (see the class docstring)."""
        environments = kwargs.get("environments")
        if environments is None:
            raise AdapterError(f"reward function {self.__name__!r} needs TRL's `environments` argument: "
                               "pass environment_factory=rlvr.adapters.trl.agent.environment_factory(env) "
                               "to GRPOTrainer")
        if len(environments) != len(completions):
            raise AdapterError(f"got {len(completions)} completions but {len(environments)} environments")
        start = time.monotonic()
        verdicts = [self._finish(env, c) for env, c in zip(environments, completions, strict=True)]
        self.last_verdicts = verdicts
        self.calls += 1
        episodes = episode_metrics(env.episode.trajectory() for env in environments
                                   if isinstance(env, _RlvrEnvironment) and env.episode is not None)
        _log(self.__name__, verdicts, time.monotonic() - start, kwargs.get("log_metric"), kwargs.get("log_extra"),
             episodes)
        return [v.reward for v in verdicts]

    @staticmethod
    def _finish(env: Any, completion: Any) -> Verdict:
        if not isinstance(env, _RlvrEnvironment):
            return Verdict.error(f"environment {type(env).__name__} was not made by rlvr's environment_factory")
        try:
            return env._finish(_final_answer(completion))
        except AdapterError as exc:
            return Verdict.error(str(exc))

    def __repr__(self) -> str:
        return f"<EpisodeReward {self.__name__}>"


def _final_answer(completion: Any) -> str:
    """The last assistant message's text; '' when the model's last message was a tool call."""
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        last = completion[-1]
        if last.get("role", "assistant") != "assistant" or last.get("tool_calls"):
            return ""
    return completion_text(completion)


# -- tokenizer ------------------------------------------------------------------------------------
def tool_chat_template(name: str = TOOL_CHAT_TEMPLATE) -> str:
    """The text of TRL's shipped chat template `trl/chat_templates/<name>.jinja`.

    Raises:
        MissingExtraError: trl is not installed.
        ConfigError: no such template in the installed trl.
    """
    require_trl()
    import trl

    path = Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja"
    if not path.is_file():
        raise ConfigError(f"trl {trl.__version__} ships no chat template {name!r} ({path})")
    return path.read_text()


def tool_calling_tokenizer(tokenizer: Any) -> tuple[Any, bool]:
    """`tokenizer` with a chat template TRL can run tool calls through; (tokenizer, replaced?).

    Kept as is when `trl.chat_template_utils.supports_tool_calling` accepts its template. A ChatML
    tokenizer (`<|im_start|>`/`<|im_end|>` special tokens, e.g. SmolLM2) whose template cannot render
    tool calls gets TRL's `qwen2_5.jinja` (`TOOL_CHAT_TEMPLATE`), which TRL's `add_response_schema`
    parses; its default system prompt names Qwen, harmless for training a small policy on tools.

    Raises:
        ConfigError: the template cannot render tool calls and the tokenizer is not ChatML (pass
            a model whose chat template supports tools).
    """
    from trl.chat_template_utils import supports_tool_calling

    if supports_tool_calling(tokenizer):
        return tokenizer, False
    vocab = tokenizer.get_vocab()
    if "<|im_start|>" not in vocab or "<|im_end|>" not in vocab:
        raise ConfigError("the model's chat template cannot render tool calls (trl supports_tool_calling is False) "
                          "and it is not a ChatML tokenizer rlvr can give a tool template; use a model whose chat "
                          "template supports tools (e.g. Qwen2.5/Qwen3, Llama 3.1)")
    tokenizer.chat_template = tool_chat_template()
    if not supports_tool_calling(tokenizer):  # pragma: no cover - TRL's own template
        raise ConfigError(f"trl's {TOOL_CHAT_TEMPLATE} template does not support tool calling with this tokenizer")
    return tokenizer, True
