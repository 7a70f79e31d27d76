r"""Recorded rollouts that every backend must score alike: build them, derive rlvr's answer, replay through TRL.

A *parity record* is one recorded rollout of an rlvr environment with fixed token ids: the model
turns are the token ids of given texts followed by the end-of-turn token (`<|im_end|>` for
ChatML), exactly as if a policy had sampled them, and environment turns come from `env.step`. The
same records are replayed through each trainer adapter (TRL here, `rlvr.adapters.verl.verl_replay`,
`rlvr.adapters.openrlhf.openrlhf_replay`); parity means identical rewards and identical loss masks.

Record schema (JSON; `tests/data/parity/rollouts.json` holds `{"tokenizer": "smollm2", "records": [...]}`):

```
id           str   unique record id, e.g. "st-rg-basic_arithmetic-0-0-reference"
env_id       str   registered environment id;  env_args: dict, its factory arguments
task_id      str   the task's id;  prompt: list of OpenAI messages (the task prompt)
reference    str   the task reference as `rlvr.adapters.export.encode_reference` writes it (JSON);
                   may be deliberately broken (the `error` case)
tools        list  OpenAI tool schemas given to the chat template (env.spec.tools), [] when none
multi_turn   bool  True when replayed through the backend's agent path
kind         str   what the record covers: reference, off_by_one, empty, no_answer, error_reference,
                   oracle, wrong_final, direct_answer, tool_error, two_calls
turns        list  {"role": "assistant", "text": str, "ids": [int]}  (ids end with the end-of-turn id)
                   | {"role": "env", "messages": [OpenAI messages]}     (the observation env.step gave)
expected     dict  rlvr's own result: status, reward (None for error), prompt_ids, response_ids,
                   loss_mask (episode layout of `rlvr.rollout.tokens.EpisodeTokens`: 1 on model
                   tokens, 0 on environment tokens)
chat_template str  (optional) the chat template every path renders the record with, instead of the
                   tokenizer's own (`record_tokenizer`)
```

*Cross-trainer episodes* (`tests/data/parity/episodes.json`, `build_episode_records`) are multi-turn
records of the kinds in `EPISODE_KINDS`, played the way trainers that need one token sequence play
them (`EpisodeRun(..., stop_on_misalignment=True)`, as the veRL and OpenRLHF agents do); their
`expected` also holds `messages` (the episode's conversation, OpenAI dicts) and `misaligned` (why
the chat template rewrote history, None when it did not: the same text on every path).

A replay function has the signature `replay(record, tokenizer) -> {"reward": float | None,
"prompt_ids": [int], "response_ids": [int], "response_mask": [int]}` (plus optional extra keys).

`python -m rlvr.runners.parity replay --backend B --records FILE --tokenizer DIR [--output OUT]` replays a
records file in the current interpreter and writes one JSON object per record (used by `rlvr compare` to run
each backend in its own virtual environment: their transformers pins conflict).

Modules: `records` (building records and rlvr's own answer, the replay policy, the cross-trainer
episodes), `replay` (TRL's replay, replaying a records file through any backend, `compare_replay`,
the `python -m rlvr.runners.parity` command line).
"""

__all__: list[str] = []
