"""OpenRLHF adapter (0.11.x): an rlvr environment as a `train_ppo_ray` prompt dataset, reward file and agent file.

```
data          jsonl rows and labels, the generated reward_func.py / agent_func.py, export_openrlhf
reward        reward_func (single-turn: the verifier from the export's spec, no environment), response text,
              extra_logs, error verdicts (NaN + dynamic filtering)
agent         AgentExecutor classes (multi-turn: steps the environment), the parity replay
group_reward  group judges (RULER) for OpenRLHF's per-sample reward calls
launch        openrlhf_args / openrlhf_command, CPU-mode arguments
```

The names below are what a user of this adapter imports. The generated reward file imports
`rlvr.adapters.openrlhf.reward`; `check_reward_setup` and `reward_func` are listed here as well because a
reward file of an older export format imports this package, and must meet the "re-run `rlvr export`"
refusal, not an AttributeError. `openrlhf_replay` loads `agent` on first use.
"""

from collections.abc import Mapping
from typing import Any

from rlvr.adapters.openrlhf.data import (
    decode_label,
    export_openrlhf,
    task_label,
    write_agent_file,
    write_reward_file,
)
from rlvr.adapters.openrlhf.launch import openrlhf_args, openrlhf_command
from rlvr.adapters.openrlhf.reward import (
    EXTRA_LOG_KEYS,
    check_reward_setup,
    extra_logs,
    response_text,
    reward_func,
    score_query,
)

__all__ = [
    "EXTRA_LOG_KEYS",
    "check_reward_setup",
    "decode_label",
    "export_openrlhf",
    "extra_logs",
    "openrlhf_args",
    "openrlhf_command",
    "openrlhf_replay",
    "response_text",
    "reward_func",
    "score_query",
    "task_label",
    "write_agent_file",
    "write_reward_file",
]


def openrlhf_replay(record: Mapping[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Replay one recorded rollout (`tests/data/parity/rollouts.json`) through OpenRLHF's own executors.

    See `rlvr.adapters.openrlhf.agent.replay` (imported here on first use: it imports openrlhf).
    """
    from rlvr.adapters.openrlhf.agent import replay

    return replay(record, tokenizer)
