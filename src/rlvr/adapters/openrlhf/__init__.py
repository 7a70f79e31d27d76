"""OpenRLHF adapter (0.11.x): an rlvr environment as a `train_ppo_ray` prompt dataset, reward file and agent file.

```
data          jsonl rows and labels, the generated reward_func.py / agent_func.py, export_openrlhf
reward        reward_func (single-turn: the verifier from the export's spec, no environment), response text,
              extra_logs, error verdicts (NaN + dynamic filtering)
agent         AgentExecutor classes (multi-turn: steps the environment), the parity replay
group_reward  group judges (RULER) for OpenRLHF's per-sample reward calls
launch        openrlhf_args / openrlhf_command, CPU-mode arguments
```

The names below are re-exported here (reward files written by earlier versions import this package and
call `check_reward_setup` and `reward_func`); `openrlhf_replay` loads `agent` on first use.
"""

from collections.abc import Mapping
from typing import Any

from rlvr.adapters.export import is_multi_turn
from rlvr.adapters.openrlhf.data import (
    INPUT_KEY,
    LABEL_KEY,
    decode_label,
    export_openrlhf,
    task_label,
    task_row,
    write_agent_file,
    write_reward_file,
)
from rlvr.adapters.openrlhf.launch import OPENRLHF_CPU_ARGS, openrlhf_args, openrlhf_command
from rlvr.adapters.openrlhf.reward import (
    EXTRA_LOG_KEYS,
    check_reward_setup,
    extra_logs,
    read_sample,
    response_text,
    reward_func,
    score_query,
    special_tokens,
)

__all__ = [
    "EXTRA_LOG_KEYS",
    "INPUT_KEY",
    "LABEL_KEY",
    "OPENRLHF_CPU_ARGS",
    "check_reward_setup",
    "decode_label",
    "export_openrlhf",
    "extra_logs",
    "is_multi_turn",
    "openrlhf_args",
    "openrlhf_command",
    "openrlhf_replay",
    "read_sample",
    "response_text",
    "reward_func",
    "score_query",
    "special_tokens",
    "task_label",
    "task_row",
    "write_agent_file",
    "write_reward_file",
]


def openrlhf_replay(record: Mapping[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Replay one recorded rollout (`tests/data/parity/rollouts.json`) through OpenRLHF's own executors.

    See `rlvr.adapters.openrlhf.agent.replay` (imported here on first use: it imports openrlhf).
    """
    from rlvr.adapters.openrlhf.agent import replay

    return replay(record, tokenizer)
