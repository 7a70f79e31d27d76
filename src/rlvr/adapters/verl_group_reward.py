"""Alias of `rlvr.adapters.verl.group_reward` (an old path): it only re-exports that module's names.

Kept because veRL configs (`reward.reward_manager.module.path` naming this file, `RlvrGroupRewardManager`)
written by earlier rlvr versions name this path.
New code and new exports use `rlvr.adapters.verl.group_reward`.
"""

from rlvr.adapters.verl.group_reward import __getattr__ as __getattr__  # RlvrGroupRewardManager, built on access
from rlvr.adapters.verl.group_reward import (
    compute_score_batch,
    group_key,
    question_of,
)

__all__ = [
    "compute_score_batch",
    "group_key",
    "question_of",
]
