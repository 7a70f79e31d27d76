"""Policies the rollout driver talks to: inference clients that return sampled token ids, and scripted ones.

The protocol (`Policy`, `Generation`, `Episode`) is `rlvr.rollout.policy`. Model policies return
the exact token ids they sampled and their logprobs, so `rlvr.rollout.tokens` never re-encodes the
model's text:

- `OpenAIPolicy` (`server`) — any OpenAI-compatible chat-completions server. From vLLM it requests
  the extensions `return_token_ids` (ids of the prompt and the completion) and `logprobs`, with
  `return_tokens_as_token_ids` as a second source of ids (vLLM `entrypoints/openai/protocol.py`).
  With `token_in=True` it sends the prompt as token ids to `/v1/completions` instead.
- `VLLMPolicy` (`local`) — vLLM in-process (`vllm.LLM`); ids and logprobs from `RequestOutput`.
- `TransformersPolicy` (`local`) — a local transformers model; `generate(output_scores=True)` gives
  the sampled ids and the logprob of each under the sampling distribution.
- `Sampling`, `load_tokenizer` (`sampling`) — the settings and tokenizer loader they share.

Scripted policies (`scripted`) validate environments without a model (`rlvr eval --policy ...`):
`OraclePolicy` replays `env.reference_actions(task)` (must score correct), `NoopPolicy` answers
"I don't know." (must not), `ScriptPolicy` replays actions from a JSONL file.
"""

from rlvr.rollout.policies.local import TransformersPolicy, VLLMPolicy
from rlvr.rollout.policies.sampling import Sampling, load_tokenizer
from rlvr.rollout.policies.scripted import NoopPolicy, OraclePolicy, ScriptPolicy, scripted_policy
from rlvr.rollout.policies.server import OpenAIPolicy

__all__ = [
    "NoopPolicy",
    "OpenAIPolicy",
    "OraclePolicy",
    "Sampling",
    "ScriptPolicy",
    "TransformersPolicy",
    "VLLMPolicy",
    "load_tokenizer",
    "scripted_policy",
]
