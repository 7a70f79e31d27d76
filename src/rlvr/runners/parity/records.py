"""Parity records: build them from an environment, and rlvr's own answer for each (`expected`).

See `rlvr.runners.parity` for the record schema.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr.adapters.export import cached_env, decode_reference, encode_reference, is_multi_turn
from rlvr.core.errors import ConfigError, DataError, MissingExtraError
from rlvr.core.types import Message, Task, Verdict
from rlvr.environments.base import Environment
from rlvr.rollout.driver import EpisodeRun
from rlvr.rollout.policy import Episode, Generation
from rlvr.rollout.tokens import ChatTokenizer, render_prompt_ids
from rlvr.runners.verify import sample_rows

__all__ = ["build_episode_records", "build_records", "load_tokenizer_for"]


# -- building records ---------------------------------------------------------------------------
def load_tokenizer_for(name_or_path: str) -> Any:
    """A transformers tokenizer: `smollm2` (the embedded SmolLM2 tokenizer) or a local folder.

    Raises:
        MissingExtraError: transformers is not installed.
    """
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:
        raise MissingExtraError("transformers", "trl") from exc
    from rlvr.runners.models import SMOLLM2_ALIASES, smollm2_tokenizer

    path = smollm2_tokenizer() if name_or_path in SMOLLM2_ALIASES else Path(name_or_path)
    return AutoTokenizer.from_pretrained(str(path))


def end_of_turn_id(tokenizer: Any) -> int:
    """The id a chat model samples to end its turn: `<|im_end|>` for ChatML templates, else EOS."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    if isinstance(end, int) and end != getattr(tokenizer, "unk_token_id", None):
        return end
    eos = tokenizer.eos_token_id
    if not isinstance(eos, int):
        raise ConfigError("the tokenizer has neither <|im_end|> nor an eos_token_id to end a model turn")
    return eos


def model_turn_ids(tokenizer: Any, text: str) -> list[int]:
    """Ids of a model turn that says `text` and stops: `encode(text)` + the end-of-turn id.

    Raises:
        ConfigError: decoding the ids (special tokens skipped) does not give `text` back, so the
            backends would score another string than rlvr.
    """
    ids = [*tokenizer.encode(text, add_special_tokens=False), end_of_turn_id(tokenizer)]
    back = tokenizer.decode(ids, skip_special_tokens=True)
    if back != text:
        raise ConfigError(f"model turn {text[:60]!r} does not survive encode/decode (got {back[:60]!r})")
    return ids


def action_message(env: Environment, text: str) -> Message:
    """The assistant message an environment receives for a model turn `text` (as TRL's rollout path builds it)."""
    from rlvr.adapters.trl.rollout import tool_message

    return tool_message(text, env)


def _hermes_text(message: Message) -> str:
    """An assistant message with native tool calls written as Hermes `<tool_call>` text (what the model samples)."""
    parts = [message.content] if message.content else []
    for call in message.tool_calls or ():
        body = json.dumps({"name": call.name, "arguments": json.loads(call.arguments or "{}")})
        parts.append(f"<tool_call>\n{body}\n</tool_call>")
    return "\n".join(parts)


def _wrong_answer(env: Environment, task: Task) -> str:
    """A final answer that is wrong: the reference answer + 1 when numeric, else a fixed non-answer."""
    for row in sample_rows(_OneTask(env, task), 1):
        if row["kind"] == "off_by_one":
            return str(row["response"])
    return "The final answer is \\boxed{not the answer}."


class _OneTask:
    """An env view with one task (for `sample_rows`)."""

    def __init__(self, env: Environment, task: Task) -> None:
        self.tasks = [task]
        self.verifier = env.verifier


def _base(env_id: str, env_args: dict[str, Any], env: Environment, task: Task, kind: str,
          multi_turn: bool) -> dict[str, Any]:
    return {"id": f"{'mt' if multi_turn else 'st'}-{task.id}-{kind}", "env_id": env_id, "env_args": env_args,
            "task_id": task.id, "prompt": [m.to_openai() for m in task.prompt], "reference": encode_reference(task),
            "tools": list(env.spec.tools) if multi_turn else [], "multi_turn": multi_turn, "kind": kind}


def _single_turn_records(env_id: str, env_args: dict[str, Any], env: Environment, tokenizer: Any,
                         n_tasks: int) -> list[dict[str, Any]]:
    records = []
    for row in sample_rows(env, n_tasks):
        task = next(t for t in (env.tasks[i] for i in range(min(n_tasks, len(env.tasks)))) if t.id == row["task_id"])
        text = str(row["response"])
        records.append({**_base(env_id, env_args, env, task, row["kind"], False),
                        "turns": [{"role": "assistant", "text": text, "ids": model_turn_ids(tokenizer, text)}]})
    task = env.tasks[0]
    text = env.verifier.reference_response(task.reference)
    broken = {**_base(env_id, env_args, env, task, "error_reference", False), "reference": json.dumps(""),
              "turns": [{"role": "assistant", "text": text, "ids": model_turn_ids(tokenizer, text)}]}
    records.append(broken)
    return records


def _scripts(env: Environment, task: Task) -> dict[str, list[str]]:
    """Model turn texts of the multi-turn record kinds for one task (empty when the env has no oracle)."""
    actions = env.reference_actions(task)
    if not actions:
        return {}
    oracle = [_hermes_text(m) if m.tool_calls else m.content for m in actions]
    scripts = {"oracle": oracle, "wrong_final": [*oracle[:-1], _wrong_answer(env, task)]}
    if env.spec.tools:
        first_tool = env.spec.tools[0]["function"]["name"]
        bad = json.dumps({"name": first_tool, "arguments": {"expression": "1 +"}})
        scripts["tool_error"] = [f"<tool_call>\n{bad}\n</tool_call>", *oracle]
        scripts["two_calls"] = [oracle[0], *oracle]
        scripts["direct_answer"] = [oracle[-1]]
    return scripts


def build_records(env_id: str, env_args: dict[str, Any], tokenizer: Any, *, n_tasks: int = 2) -> list[dict[str, Any]]:
    """Parity records for an environment, with `expected` filled by `expected_for`.

    Single-turn envs: per task the `rlvr sample` rows (reference, off-by-one, empty, no answer), plus
    one record whose reference is broken (an empty reference: the verifier's `error` verdict). Multi-turn
    envs with an oracle (`env.reference_actions`): the oracle episode, the oracle with a wrong final
    answer, and for tool envs a direct answer, a malformed tool call first, and two calls; tool calls are
    written as Hermes `<tool_call>` text (what SmolLM2/Qwen-style models sample).

    Args:
        env_id: registered id.
        env_args: its factory arguments (JSON-serialisable).
        tokenizer: a transformers tokenizer with a chat template.
        n_tasks: tasks used (records per task: 4-5 single-turn, 2-5 multi-turn).

    Raises:
        ConfigError: unknown env or arguments; a multi-turn env without reference actions.
    """
    env = cached_env(env_id, env_args)
    multi = is_multi_turn(env)
    if not multi:
        records = _single_turn_records(env_id, env_args, env, tokenizer, n_tasks)
    else:
        records = []
        for i in range(min(n_tasks, len(env.tasks))):
            task = env.tasks[i]
            for kind, texts in _scripts(env, task).items():
                turns = [{"role": "assistant", "text": t, "ids": model_turn_ids(tokenizer, t)} for t in texts]
                records.append({**_base(env_id, env_args, env, task, kind, True), "turns": turns})
        if not records:
            raise ConfigError(f"environment {env_id!r} has no reference actions, so no multi-turn parity records")
    out = []
    for record in records:
        expected, observed = _expected(record, tokenizer)
        turns = _with_env_turns(record["turns"], observed)
        out.append({**record, "turns": turns, "expected": expected})
    return out


def _with_env_turns(turns: list[dict[str, Any]], observed: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    model = [t for t in turns if t["role"] == "assistant"]
    out: list[dict[str, Any]] = []
    for i, turn in enumerate(model):
        out.append(turn)
        if i < len(observed):
            out.append({"role": "env", "messages": observed[i]})
    return out


# -- rlvr's own answer ----------------------------------------------------------------------------
def record_task(record: dict[str, Any]) -> Task:
    """The `Task` a record replays: its id, prompt and (decoded) reference.

    Raises:
        DataError: a field is missing or the prompt is not a list of messages.
    """
    try:
        prompt = tuple(Message.model_validate(m) for m in record["prompt"])
        return Task(id=record["task_id"], prompt=prompt, reference=decode_reference(record["reference"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"parity record {record.get('id')!r}: needs task_id, prompt and reference ({exc})") from exc


def model_turns(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's model turns (`{"role": "assistant", "text", "ids"}`), in order."""
    return [t for t in record["turns"] if t["role"] == "assistant"]


def _expected(record: dict[str, Any], tokenizer: ChatTokenizer) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    env = cached_env(record["env_id"], record["env_args"])
    task = record_task(record)
    turns = model_turns(record)
    if not record["multi_turn"]:
        verdict = env.verifier.verify(turns[0]["text"], task.reference)
        ids = list(turns[0]["ids"])
        prompt_ids = render_prompt_ids(tokenizer, task.prompt)
        return _fields(verdict, prompt_ids, ids, [1] * len(ids)), []
    return asyncio.run(_expected_episode(record, env.episode_copy(), task, turns, tokenizer))


async def _expected_episode(record: dict[str, Any], env: Environment, task: Task, turns: list[dict[str, Any]],
                            tokenizer: ChatTokenizer) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """Play the record's model turns in the episode driver; episode-layout tokens from `EpisodeTokens`.

    The replay policy does not report prompt ids, so each later turn is checked against the whole
    history rendered and encoded afresh (what a chat server conditions on): the records' ids must be
    the canonical ones.
    """
    run = EpisodeRun(env, task, tokenizer=tokenizer, layout="episode")
    traj = await run.play(ReplayPolicy(tokenizer, turns, token_in=False))
    if traj.error is not None:
        raise ConfigError(f"record {record['id']!r}: {traj.error}")
    if len(run.finish_reasons) != len(turns):
        raise ConfigError(f"record {record['id']!r}: the episode ended at model turn {len(run.finish_reasons)} of "
                          f"{len(turns)}")
    verdict = traj.verdict or Verdict.error("the episode ended without a verdict")
    assert traj.tokens is not None
    tokens = traj.tokens
    return _fields(verdict, tokens.prompt_ids, tokens.completion_ids, tokens.loss_mask), _observations(traj.messages)


def _observations(messages: Sequence[Message], turns: int | None = None) -> list[list[dict[str, Any]]]:
    """The environment's answer to each model turn but the last (of `turns` when given, else of those played)."""
    out: list[list[dict[str, Any]]] = []
    for message in messages:
        if message.role == "assistant":
            out.append([])
        elif out:
            out[-1].append(message.to_openai())
    return out[: (turns if turns is not None else len(out)) - 1]


def _fields(verdict: Verdict, prompt_ids: Sequence[int], response_ids: Sequence[int],
            mask: Sequence[int]) -> dict[str, Any]:
    return {"status": verdict.status, "reward": verdict.reward, "prompt_ids": list(prompt_ids),
            "response_ids": list(response_ids), "loss_mask": list(mask)}


def expected_for(record: dict[str, Any], tokenizer: ChatTokenizer) -> dict[str, Any]:
    """The result rlvr itself gives for a record: the verdict (status, reward) and episode-layout token fields.

    Single-turn: `env.verifier.verify(text, reference)`, the rendered prompt ids, the turn's ids, mask
    all 1. Multi-turn: the env driven directly (`reset`, `step`) with `EpisodeTokens` (layout
    "episode": environment turns rendered as chat-template suffixes, masked 0).
    """
    return _expected(record, tokenizer)[0]


# -- cross-trainer episodes -----------------------------------------------------------------------
EPISODE_KINDS: tuple[str, ...] = ("oracle", "tool_error", "wrong_final", "max_turns", "error_reference",
                                  "rewrite_template")
"""The multi-turn episodes every trainer path must play alike: a calculator call then the right answer,
a malformed call first, a wrong final answer, calls until the env's turn limit truncates the episode,
a grader that breaks on the final answer (an error verdict: reward None, masked, never 0), and a chat
template that rewrites history (`THINK_STRIPPING_TEMPLATE`)."""

THINK_STRIPPING_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- set content = message['content'] or '' -%}"
    "{%- if message['role'] == 'assistant' and not loop.last and '</think>' in content -%}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') -%}"
    "{%- endif -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + content + '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
"""A ChatML template that drops the `<think>` block of every assistant turn but the last, as Qwen3's
drops those before the latest user query: rendering an environment turn rewrites the model's earlier
turn, so no single token sequence holds the episode (`rlvr.rollout.tokens`, rule 3)."""

_THINK = "<think>\nThe calculator is exact, so I use it.\n</think>\n"


def record_tokenizer(record: dict[str, Any], tokenizer: Any) -> Any:
    """`tokenizer`, or a copy of it with the record's `chat_template` when the record names one."""
    template = record.get("chat_template")
    if template is None:
        return tokenizer
    import copy

    copied = copy.deepcopy(tokenizer)
    copied.chat_template = template
    return copied


def _episode_scripts(env: Environment, task: Task) -> dict[str, tuple[list[str], dict[str, Any]]]:
    """Per `EPISODE_KINDS` kind: the model turn texts and the record fields it overrides."""
    scripts = _scripts(env, task)
    if "tool_error" not in scripts:
        raise ConfigError(f"environment {env.spec.id!r} needs tools and reference actions for cross-trainer episodes")
    oracle = scripts["oracle"]
    out: dict[str, tuple[list[str], dict[str, Any]]] = {
        kind: (scripts[kind], {}) for kind in ("oracle", "tool_error", "wrong_final")}
    out["max_turns"] = ([oracle[0]] * env.spec.max_turns, {})
    out["error_reference"] = (oracle, {"reference": json.dumps("")})
    out["rewrite_template"] = ([_THINK + oracle[0], *oracle[1:]], {"chat_template": THINK_STRIPPING_TEMPLATE})
    return out


def build_episode_records(env_id: str, env_args: dict[str, Any], tokenizer: Any, *,
                          task_index: int = 0) -> list[dict[str, Any]]:
    """The cross-trainer episodes (`EPISODE_KINDS`) of one task of a tool env, `expected` by `episode_expected`.

    Raises:
        ConfigError: the env has no tools or no reference actions; a script does not play as meant.
    """
    env = cached_env(env_id, env_args)
    task = env.tasks[task_index]
    out = []
    for kind, (texts, fields) in _episode_scripts(env, task).items():
        record = {**_base(env_id, env_args, env, task, kind, True), **fields, "id": f"ep-{task.id}-{kind}"}
        tok = record_tokenizer(record, tokenizer)
        record["turns"] = [{"role": "assistant", "text": t, "ids": model_turn_ids(tok, t)} for t in texts]
        expected, observed = asyncio.run(_stopping_episode(record, tok))
        out.append({**record, "turns": _with_env_turns(record["turns"], observed), "expected": expected})
    return out


async def _stopping_episode(record: dict[str, Any],
                            tokenizer: ChatTokenizer) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """Play a record as trainers that need one token sequence do (stop with an error verdict once misaligned).

    The result is the episode's training sample (`EpisodeRun.training_sample`), the one the veRL
    and OpenRLHF agents return.
    """
    env = cached_env(record["env_id"], record["env_args"]).episode_copy()
    turns = model_turns(record)
    run = EpisodeRun(env, record_task(record), tokenizer=tokenizer, layout="auto", stop_on_misalignment=True)
    traj = await run.play(ReplayPolicy(tokenizer, turns, token_in=False))
    if traj.error is not None or run.tokens is None:
        raise ConfigError(f"record {record['id']!r}: {traj.error or 'no tokens'}")
    misaligned = run.tokens.check_episode()
    if misaligned is None and len(run.finish_reasons) != len(turns):
        raise ConfigError(f"record {record['id']!r}: the episode ended at model turn {len(run.finish_reasons)} of "
                          f"{len(turns)}")
    sample = run.training_sample()
    assert sample.tokens is not None
    tokens = sample.tokens
    expected = {**_fields(sample.verdict, tokens.prompt_ids, tokens.completion_ids, tokens.loss_mask),
                "messages": [m.to_openai() for m in traj.messages], "misaligned": misaligned}
    return expected, _observations(traj.messages, len(turns))


def episode_expected(record: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """The result rlvr gives for a cross-trainer episode record (with its `chat_template`): its `expected`.

    Token fields are those of the episode as played (`EpisodeTokens.prompt_ids`, `completion_ids`,
    `loss_mask`): the episode layout when the tokens line up, else the tokens up to where the
    template rewrote history (what the veRL and OpenRLHF agents hold when they stop).
    """
    return asyncio.run(_stopping_episode(record, record_tokenizer(record, tokenizer)))[0]


# -- the replay policy ----------------------------------------------------------------------------
class ReplayPolicy:
    """A `Policy` that returns a record's model turns (text + ids) in order, like a sampler would.

    Args:
        tokenizer: the tokenizer (so the episode driver builds token fields).
        turns: the record's model turns (`{"text", "ids"}`).
        token_in: report the prompt ids it was given as conditioned on (a token-in sampler); False:
            report none, like a chat server that renders the conversation itself.
    """

    name = "replay"

    def __init__(self, tokenizer: ChatTokenizer, turns: Sequence[dict[str, Any]], *, token_in: bool = True) -> None:
        self.tokenizer: ChatTokenizer | None = tokenizer
        self.turns = list(turns)
        self.accepts_prompt_ids = token_in

    def _tok(self) -> ChatTokenizer:
        if self.tokenizer is None:
            raise ConfigError("the replay policy needs a tokenizer")
        return self.tokenizer

    async def generate(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       prompt_ids: Sequence[int] | None = None, episode: Episode | None = None) -> Generation:
        """The next recorded turn; `prompt_ids` are reported back as conditioned on (token-in; else none)."""
        turn_index = episode.turn if episode is not None else 0
        if turn_index >= len(self.turns):
            raise ConfigError(f"replay policy has {len(self.turns)} turns; the env asked for turn {turn_index + 1}")
        turn = self.turns[turn_index]
        ids: list[int] | None = None
        if self.accepts_prompt_ids:
            ids = list(prompt_ids) if prompt_ids is not None else render_prompt_ids(self._tok(), messages, tools=tools)
        env = episode.env if episode is not None else None
        message = action_message(env, turn["text"]) if env is not None else Message(role="assistant",
                                                                                    content=turn["text"])
        return Generation(message=message, prompt_ids=ids, completion_ids=list(turn["ids"]),
                          logprobs=[0.0] * len(turn["ids"]), finish_reason="stop")
