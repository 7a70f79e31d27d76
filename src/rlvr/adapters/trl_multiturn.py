"""Alias of `rlvr.adapters.trl.agent` (an old path): it only re-exports that module's names.

Kept because user code (`from rlvr.adapters.trl_multiturn import environment_factory`) written by earlier rlvr
versions name this path.
New code and new exports use `rlvr.adapters.trl.agent`.
"""

from rlvr.adapters.trl.agent import (
    TOOL_CHAT_TEMPLATE,
    VERDICT_FIELD,
    EpisodeReward,
    RolloutReward,
    environment_factory,
    environment_tools,
    is_tool_env,
    task_from_row,
    tool_calling_tokenizer,
)

__all__ = [
    "TOOL_CHAT_TEMPLATE",
    "VERDICT_FIELD",
    "EpisodeReward",
    "RolloutReward",
    "environment_factory",
    "environment_tools",
    "is_tool_env",
    "task_from_row",
    "tool_calling_tokenizer",
]
