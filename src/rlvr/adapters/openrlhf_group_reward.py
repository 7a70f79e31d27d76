"""Alias of `rlvr.adapters.openrlhf.group_reward` (an old path): it only re-exports that module's names.

Kept because OpenRLHF group reward files (`from rlvr.adapters.openrlhf_group_reward import group_reward_func`)
written by earlier rlvr versions name this path.
New code and new exports use `rlvr.adapters.openrlhf.group_reward`.
"""

from rlvr.adapters.openrlhf.group_reward import *  # noqa: F403
from rlvr.adapters.openrlhf.group_reward import __all__ as __all__
