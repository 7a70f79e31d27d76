"""OpenRLHF group rewards (LLM judges such as RULER): a `reward_func` that judges a prompt's samples together.

OpenRLHF 0.11.2 (`openrlhf/trainer/ray/vllm_engine.py` `RolloutRayActor.generate_responses`) runs the
`n_samples_per_prompt` samples of one prompt as concurrent `SingleTurnAgentExecutor.execute` calls,
and each calls the `--reward.remote_url` file's `reward_func(queries, prompts, labels)` for itself
(lists of length 1, `asyncio.to_thread`). `group_reward_func` makes the calls of one prompt (same
`label`, written by `rlvr export --backend openrlhf`: task id, chat prompt and reference) meet in a
`GroupBatcher` of `group_size` and judges them in one call; a call with several samples is grouped by
label directly. Limits: the members wait in threads of the event loop's default executor
(`min(32, CPUs + 4)` threads), so a group larger than the free threads, or a prompt whose samples
landed on different engines, is judged with the members that arrived within `wait_s` (the detail's
`group_size` says how many).

An error verdict is reward and score NaN, as in `rlvr.adapters.openrlhf.reward` (dynamic filtering drops the
group; never a 0). `write_group_reward_file(dir, judge=..., group_size=...)` writes the file OpenRLHF loads.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlvr.adapters.group_reward import GroupBatcher, group_verifier
from rlvr.adapters.openrlhf.reward import EXTRA_LOG_KEYS, extra_logs, read_sample, special_tokens
from rlvr.core.errors import AdapterError
from rlvr.core.types import Verdict
from rlvr.verifiers.judge.config import judge_reference

__all__ = ["group_reward_func", "write_group_reward_file"]

_BATCHERS: dict[str, GroupBatcher] = {}
_LOCK = threading.Lock()


def _batcher(judge: Mapping[str, Any] | str, group_size: int, wait_s: float) -> GroupBatcher:
    key = json.dumps([judge if isinstance(judge, str) else dict(judge), group_size, wait_s], sort_keys=True)
    with _LOCK:
        if key not in _BATCHERS:
            _BATCHERS[key] = GroupBatcher(group_verifier(judge), group_size, wait_s)
        return _BATCHERS[key]


def _member(query: str, prompt: str, label: Any, specials: Sequence[str] | None) -> tuple[str, Any] | Verdict:
    """(response text, judge reference) of one sample, or the error verdict when it cannot be read."""
    sample = read_sample(query, prompt, label, specials)
    if isinstance(sample, Verdict):
        return sample
    text, task = sample
    return text, judge_reference([m.to_openai() for m in task.prompt], task.reference)


def group_reward_func(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], *,
    judge: Mapping[str, Any] | str, group_size: int, wait_s: float = 30.0, tokenizer: str | None = None,
) -> dict[str, Any]:
    """OpenRLHF's `reward_func` for a group judge (the generated file calls this).

    Args:
        queries: N OpenRLHF queries (prompt + response text with special tokens).
        prompts: the N chat-template prompt strings.
        labels: the N `label` strings of `rlvr export --backend openrlhf`.
        judge: the group verifier's options, `{"verifier": "ruler", "base_url", "model", ...}`.
        group_size: samples per prompt (`--rollout.n_samples_per_prompt`).
        wait_s: most seconds a sample waits for the rest of its group.
        tokenizer: the policy tokenizer whose special tokens are stripped (see `response_text`).

    Returns:
        `{"rewards": Tensor[N], "scores": Tensor[N], "extra_logs": {key: Tensor[N]}}` (float32, NaN for errors).

    Raises:
        AdapterError: the three lists differ in length.
    """
    import torch

    if not len(queries) == len(prompts) == len(labels):
        raise AdapterError(f"reward_func got {len(queries)} queries, {len(prompts)} prompts, {len(labels)} labels")
    batcher = _batcher(judge, group_size, wait_s)
    specials = special_tokens(tokenizer) if tokenizer else None
    members = [_member(q, p, lab, specials) for q, p, lab in zip(queries, prompts, labels, strict=True)]
    verdicts: list[Verdict | None] = [m if isinstance(m, Verdict) else None for m in members]
    first = members[0] if members else None
    if len(queries) == 1 and isinstance(first, tuple):
        verdicts[0] = batcher.submit(str(labels[0]), first[0], first[1])
    else:
        groups: dict[str, list[int]] = {}
        for i, member in enumerate(members):
            if not isinstance(member, Verdict):
                groups.setdefault(str(labels[i]), []).append(i)
        pairs = [([members[i][0] for i in idx], members[idx[0]][1]) for idx in groups.values()]  # type: ignore[index]
        for idx, scored in zip(groups.values(), batcher.verifier.verify_groups(pairs), strict=True):  # type: ignore[attr-defined]
            for i, verdict in zip(idx, scored, strict=True):
                verdicts[i] = verdict
    final = [v if v is not None else Verdict.error("not scored") for v in verdicts]
    rewards = torch.tensor([math.nan if v.reward is None else float(v.reward) for v in final], dtype=torch.float32)
    logs = [extra_logs(v) for v in final]
    return {"rewards": rewards, "scores": rewards.clone(),
            "extra_logs": {k: torch.tensor([log[k] for log in logs], dtype=torch.float32) for k in EXTRA_LOG_KEYS}}


_FILE = '''"""OpenRLHF reward file written by rlvr: group-judged rewards (rlvr.adapters.openrlhf.group_reward)."""

from rlvr.adapters.openrlhf.group_reward import group_reward_func

JUDGE = {judge!r}
GROUP_SIZE = {group_size!r}
WAIT_S = {wait_s!r}
TOKENIZER = {tokenizer!r}


def reward_func(queries, prompts, labels, **kwargs):
    return group_reward_func(queries, prompts, labels, judge=JUDGE, group_size=GROUP_SIZE, wait_s=WAIT_S,
                             tokenizer=TOKENIZER)
'''


def write_group_reward_file(directory: str | Path, *, judge: Mapping[str, Any], group_size: int,
                            wait_s: float = 30.0, tokenizer: str | None = None) -> Path:
    """Write `group_reward.py` (pass it as `--reward.remote_url`); the judge is built at import to fail early.

    Raises:
        AdapterError / ConfigError: the judge options do not build a group verifier.
    """
    group_verifier(judge)
    path = Path(directory) / "group_reward.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_FILE.format(judge=dict(judge), group_size=group_size, wait_s=wait_s, tokenizer=tokenizer))
    return path
