"""veRL adapter (verl 0.9.x): an rlvr environment as veRL parquet data, a `compute_score` reward and an agent loop.

```
data          rows, the generated reward.py / agent_loop.yaml, export_verl
reward        compute_score (single-turn: the verifier from the row's spec, no environment), reward_extra_info,
              error verdicts (on_error)
agent         RlvrAgentLoop (multi-turn: steps the environment), the parity replay; imports verl
group_reward  group judges (RULER): compute_score_batch and RlvrGroupRewardManager
launch        verl_overrides / verl_command / verl_config, CPU-mode overrides
```

The names below are re-exported here (`from rlvr.adapters.verl import compute_score` keeps working);
`verl_replay` imports `agent` (and so verl) when called.
"""

from collections.abc import Mapping
from typing import Any

from rlvr.adapters.verl.data import AGENT_LOOP_TARGET, AGENT_NAME, export_verl
from rlvr.adapters.verl.launch import VERL_CPU_OVERRIDES, require_verl, verl_command, verl_config, verl_overrides
from rlvr.adapters.verl.reward import (
    ON_ERROR_KEY,
    UnscorableSampleError,
    compute_score,
    reward_extra_info,
)

__all__ = [
    "AGENT_LOOP_TARGET",
    "AGENT_NAME",
    "ON_ERROR_KEY",
    "VERL_CPU_OVERRIDES",
    "UnscorableSampleError",
    "compute_score",
    "export_verl",
    "reward_extra_info",
    "verl_command",
    "verl_config",
    "verl_overrides",
    "verl_replay",
]


def verl_replay(record: Mapping[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Replay one recorded rollout through veRL's machinery (`rlvr.adapters.verl.agent.verl_replay`).

    Returns:
        {"reward": float | None, "status", "prompt_ids", "response_ids", "response_mask"}.

    Raises:
        MissingExtraError: verl is not installed.
    """
    require_verl()
    from rlvr.adapters.verl.agent import verl_replay as replay

    return replay(record, tokenizer)
