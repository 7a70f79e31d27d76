"""The episode layer: the one episode driver, the policy protocol and token bookkeeping.

Every consumer runs its episodes here: `rlvr eval`, TRL's `rollout_func` and `environment_factory`
paths, the veRL agent loop, the OpenRLHF agent executor and the parity replay. An adapter supplies
a `Policy` fed by its trainer's generation server and reads the `Trajectory`.

- `rlvr.rollout.driver` — `EpisodeRun` (reset, act, cut, play) and `run_episode`, `TokenBudget`;
- `rlvr.rollout.policy` — the `Policy` protocol, `Generation`, `Episode`;
- `rlvr.rollout.tokens` — `EpisodeTokens`: sampled ids kept, environment turns as chat-template
  suffixes, loss masks, in linear time.
"""

from rlvr.rollout.driver import EpisodeRun, TokenBudget, run_episode
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
    "aclose_policy",
    "run_episode",
]
