"""The episode layer: the one episode driver, batch rollouts, policies and token bookkeeping.

Every consumer runs its episodes here: `rlvr eval`, TRL's `rollout_func` and `environment_factory`
paths, the veRL agent loop, the OpenRLHF agent executor, the OpenEnv server's sessions, the parity
replay and the conformance check (`rlvr check`). An adapter supplies a `Policy` fed by its
trainer's generation server and reads the `Trajectory`, or the `TrainingSample` that
`EpisodeRun.training_sample` makes of it (the one rule that masks failed or misaligned episodes).

- `rlvr.rollout.driver` — `EpisodeRun` (reset, act, cut, end, play, training_sample), `run_episode`,
  `TokenBudget`, `TrainingSample`;
- `rlvr.rollout.batch` — `rollout` / `rollout_sync` (many episodes, concurrently), `rollout_samples`;
- `rlvr.rollout.policy` — the `Policy` protocol, `Generation`, `Episode`;
- `rlvr.rollout.policies` — `OpenAIPolicy`, `VLLMPolicy`, `TransformersPolicy`, scripted policies;
- `rlvr.rollout.tokens` — `EpisodeTokens`: sampled ids kept, environment turns as chat-template
  suffixes, loss masks, in linear time;
- `rlvr.rollout.check` — the conformance check of an environment (`rlvr.check`).

Layering: this package imports `rlvr.core`, `rlvr.environments`, `rlvr.verifiers` and
`rlvr.sandbox` only, never `rlvr.adapters` or `rlvr.runners`, and no trainer.
"""

from rlvr.rollout.driver import EpisodeRun, TokenBudget, TrainingSample, run_episode
from rlvr.rollout.policy import Episode, Generation, Policy, aclose_policy
from rlvr.rollout.tokens import EpisodeTokens, Layout, TokenAlignmentError

__all__ = [
    "Episode",
    "EpisodeRun",
    "EpisodeTokens",
    "Generation",
    "Layout",
    "Policy",
    "TokenAlignmentError",
    "TokenBudget",
    "TrainingSample",
    "aclose_policy",
    "run_episode",
]
