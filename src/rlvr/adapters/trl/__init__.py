"""TRL adapter (TRL 1.16): an rlvr environment as a `datasets.Dataset`, `reward_funcs` and an `environment_factory`.

```
data     the dataset rows (prompt, task_id, rlvr_reference) and back to a Task
reward   VerifierReward / reward_funcs / mask_errors for GRPOTrainer (single-turn)
agent    environment_factory (multi-turn tool envs), EpisodeReward, tool_calling_tokenizer
tools    an rlvr env's tools as methods of the environment_factory class
rollout  rollout_func (any multi-turn env, through the episode driver), RolloutReward, multi_turn_hooks
```

TRL trains in rlvr's own process (`rlvr train --backend trl`), so there is no export and no launch
module. The names below are re-exported here (`from rlvr.adapters.trl import reward_funcs, to_dataset`).
"""

from rlvr.adapters.trl.data import REFERENCE_COLUMN, TASK_ID_COLUMN, require_trl, task_row, to_dataset
from rlvr.adapters.trl.reward import METRIC_PREFIX, VerifierReward, completion_text, mask_errors, reward_funcs

__all__ = [
    "METRIC_PREFIX",
    "REFERENCE_COLUMN",
    "TASK_ID_COLUMN",
    "VerifierReward",
    "completion_text",
    "mask_errors",
    "require_trl",
    "reward_funcs",
    "task_row",
    "to_dataset",
]
