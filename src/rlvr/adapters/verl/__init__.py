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
`verl_replay` and `RlvrAgentLoop` import verl, so they load on first access.
"""

from typing import Any

from rlvr.adapters.export import is_multi_turn
from rlvr.adapters.verl.data import AGENT_LOOP_TARGET, AGENT_NAME, export_verl, task_row
from rlvr.adapters.verl.launch import VERL_CPU_OVERRIDES, require_verl, verl_command, verl_config, verl_overrides
from rlvr.adapters.verl.reward import ON_ERROR, ON_ERROR_KEY, ErrorVerdict, compute_score, reward_extra_info

__all__ = [
    "AGENT_LOOP_TARGET",
    "AGENT_NAME",
    "ON_ERROR",
    "ON_ERROR_KEY",
    "VERL_CPU_OVERRIDES",
    "ErrorVerdict",
    "compute_score",
    "export_verl",
    "is_multi_turn",
    "require_verl",
    "reward_extra_info",
    "task_row",
    "verl_command",
    "verl_config",
    "verl_overrides",
    "verl_replay",
]


def __getattr__(name: str) -> Any:
    """`verl_replay` and `RlvrAgentLoop` from `rlvr.adapters.verl.agent`, imported when first asked for.

    Raises:
        MissingExtraError: verl is not installed.
    """
    if name in ("verl_replay", "RlvrAgentLoop"):
        require_verl()
        from rlvr.adapters.verl import agent

        return getattr(agent, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
