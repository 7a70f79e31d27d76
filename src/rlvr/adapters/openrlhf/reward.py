"""OpenRLHF rewards: `reward_func(queries, prompts, labels)` and what it needs (response text, verdict logs).

Written against OpenRLHF 0.11.2 (read in its wheel):

- Single-turn reward (`openrlhf/utils/agent.py`, `SingleTurnAgentExecutor`): when
  `--reward.remote_url` ends in `.py` the file is imported and its `reward_func(queries, prompts,
  labels)` is called once per sample (lists of length 1) in a thread, where `query` is
  `hf_tokenizer.decode(prompt_ids + sampled_ids, skip_special_tokens=False)` -- the chat-template
  prompt (possibly cut from the left to fit `--data.max_len`) followed by the sampled text *with* its
  special tokens (vLLM returns the stop token, e.g. `<|im_end|>`, in `token_ids`). The function must
  return `{"rewards", "scores", "extra_logs"}`; `scores` feed dynamic filtering.
  `reward_func` here strips the prompt (`response_text`) and the tokenizer's special tokens, decodes
  the label and scores the text with the env's verifier (`rlvr.adapters.export.verify_text`), exactly
  as every other backend does. The verifier is built from the spec the reward file holds, once per
  process (`VerifierSpec.cached`); a reward file without one rebuilds the env (`cached_env`); a reward
  file of another export format is refused at import (`check_reward_setup`: re-run `rlvr export`).

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

import math
import re
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rlvr.adapters.export import cached_env, check_export_format, verify_text
from rlvr.adapters.openrlhf.data import decode_label
from rlvr.core.errors import AdapterError, ConfigError, MissingExtraError, RlvrError
from rlvr.core.metrics import status_fractions
from rlvr.core.types import STATUSES, Verdict
from rlvr.verifiers.base import Verifier
from rlvr.verifiers.registry import VerifierSpec

if TYPE_CHECKING:
    from rlvr.environments.base import Environment

__all__ = ["check_reward_setup", "reward_func"]

EXTRA_LOG_KEYS: tuple[str, ...] = (*(f"rlvr/status/{s}" for s in STATUSES), "rlvr/verify_s")
"""Keys of the `extra_logs` every rlvr reward returns (always all of them, floats)."""

_TRAILING_SPECIAL = re.compile(r"(?:<\|[A-Za-z0-9_]+\|>|<\uff5c[^\uff5c<>]+\uff5c>|</s>|<eos>|<end_of_turn>)+\s*$")
"""Fallback when no tokenizer is known: end-of-turn/EOS markers of ChatML/Qwen, Llama 3, Phi-3,
DeepSeek (`<\uff5cend\u2581of\u2581sentence\uff5c>`, full-width bars), Mistral/Llama 2 and Gemma templates at
the very end of the response (where vLLM puts the stop token)."""
_REPLACEMENT = "\ufffd"


def check_reward_setup(env_id: str, env_args: Mapping[str, Any] | None, tokenizer: str | None,
                       verifier: Mapping[str, Any] | None = None, export_format: int | None = None) -> None:
    """Build the verifier and load the tokenizer's special tokens once; what the reward file runs at import.

    The verifier comes from its spec (`VerifierSpec.cached`); without a spec the env is built (`cached_env`).

    OpenRLHF's `SingleTurnAgentExecutor` calls `reward_func` inside a `try` that only logs failures
    (`logger.info`) and then trains on a sample without a reward, so setup errors are raised here,
    when `RolloutRayActor` loads the file.

    Raises:
        ConfigError: the file is of another export format (`export_format`; re-run `rlvr export`), or the
            verifier or env cannot be built (`build_scorer`).
    """
    check_export_format(export_format, f"the OpenRLHF reward file of env {env_id!r}")
    build_scorer(env_id, env_args, verifier)
    if tokenizer:
        special_tokens(tokenizer)


def build_scorer(env_id: str, env_args: Mapping[str, Any] | None, verifier: Mapping[str, Any] | None = None) -> None:
    """Build, once per process, what scores the export's samples: the verifier of its spec, else the env.

    Raises:
        ConfigError: it cannot be built (the message names the env id, its args and the cause).
    """
    try:
        if verifier:
            VerifierSpec.parse(verifier).cached()
        else:
            cached_env(env_id, dict(env_args or {}))
    except RlvrError as exc:
        raise ConfigError(f"rlvr reward for OpenRLHF cannot build env {env_id!r} with args {dict(env_args or {})}: "
                          f"{exc}; check that the export's env args are valid in the trainer's environment "
                          "(rlvr version, data paths) and re-run `rlvr export --backend openrlhf`") from exc


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
    logs = {f"rlvr/status/{s}": value for s, value in status_fractions([verdict.status]).items()}
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


def score_query(scorer: Environment | Verifier, query: str, prompt: str, label: Any,
                specials: Sequence[str] | None = None) -> Verdict:
    """The verdict of one OpenRLHF (query, prompt, label) by a verifier (or an env's verifier).

    An undecodable label or query is an `error` verdict.
    """
    sample = read_sample(query, prompt, label, specials)
    if isinstance(sample, Verdict):
        return sample
    text, task = sample
    return verify_text(scorer if isinstance(scorer, Verifier) else scorer.verifier, text, task.reference)


def reward_func(
    queries: Sequence[str],
    prompts: Sequence[str],
    labels: Sequence[Any],
    *,
    env_id: str,
    env_args: dict[str, Any] | None = None,
    tokenizer: str | None = None,
    verifier: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """OpenRLHF's `reward_func(queries, prompts, labels)` for an rlvr env (the generated file calls this).

    Args:
        queries: N OpenRLHF queries (prompt + response text with special tokens).
        prompts: the N chat-template prompt strings.
        labels: the N `label` strings written by `export_openrlhf`.
        env_id: the env whose verifier scores, rebuilt (once per process, `cached_env`) only without `verifier`.
        env_args: its factory arguments.
        tokenizer: the policy tokenizer whose special tokens are stripped (see `response_text`).
        verifier: the verifier spec (`rlvr.adapters.export.export_spec`), built once per process; None:
            the env's verifier.

    Returns:
        `{"rewards": Tensor[N], "scores": Tensor[N], "extra_logs": {key: Tensor[N]}}` (float32); an
        `error` verdict gives NaN reward and score (dropped by dynamic filtering, module docstring).

    Raises:
        AdapterError: the three lists differ in length.
    """
    import torch

    if not len(queries) == len(prompts) == len(labels):
        raise AdapterError(f"reward_func got {len(queries)} queries, {len(prompts)} prompts, {len(labels)} labels")
    scorer = VerifierSpec.parse(verifier).cached() if verifier else cached_env(env_id, env_args).verifier
    specials = special_tokens(tokenizer) if tokenizer else None
    verdicts = [score_query(scorer, q, p, lab, specials) for q, p, lab in zip(queries, prompts, labels, strict=True)]
    values = [math.nan if v.reward is None else float(v.reward) for v in verdicts]
    logs = [extra_logs(v) for v in verdicts]
    rewards = torch.tensor(values, dtype=torch.float32)
    return {"rewards": rewards, "scores": rewards.clone(),
            "extra_logs": {k: torch.tensor([log[k] for log in logs], dtype=torch.float32) for k in EXTRA_LOG_KEYS}}
