"""Alias of `rlvr.adapters.verl.group_reward` (an old path): it only re-exports that module's names.

Kept because veRL configs (`reward.reward_manager.module.path` naming this file, `RlvrGroupRewardManager`)
written by earlier rlvr versions name this path.
New code and new exports use `rlvr.adapters.verl.group_reward`.
"""

from rlvr.adapters.verl.group_reward import *  # noqa: F403
from rlvr.adapters.verl.group_reward import __all__ as __all__
from rlvr.adapters.verl.group_reward import __getattr__ as __getattr__  # RlvrGroupRewardManager, built on access
