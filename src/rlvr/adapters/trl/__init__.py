"""TRL adapter (TRL 1.16): an rlvr environment as a `datasets.Dataset`, `reward_funcs` and an `environment_factory`.

```
data    the dataset rows (prompt, task_id, rlvr_reference) and back to a Task
reward  VerifierReward / reward_funcs / mask_errors for GRPOTrainer (single-turn)
agent   environment_factory (multi-turn tool envs), EpisodeReward / RolloutReward, tool_calling_tokenizer
```

TRL trains in rlvr's own process (`rlvr train --backend trl`), so there is no export and no launch
module; the rollout_func of the episode driver lives in `rlvr.runners.trl_rollout`. The names below are
re-exported here (`from rlvr.adapters.trl import reward_funcs, to_dataset` keeps working).
"""

from rlvr.adapters.trl.data import REFERENCE_COLUMN, TASK_ID_COLUMN, require_trl, task_row, to_dataset
from rlvr.adapters.trl.reward import METRIC_PREFIX, STATUSES, VerifierReward, completion_text, mask_errors, reward_funcs

__all__ = [
    "METRIC_PREFIX",
    "REFERENCE_COLUMN",
    "STATUSES",
    "TASK_ID_COLUMN",
    "VerifierReward",
    "completion_text",
    "mask_errors",
    "require_trl",
    "reward_funcs",
    "task_row",
    "to_dataset",
]
