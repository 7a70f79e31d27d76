"""Alias of `rlvr.adapters.verl.agent` (an old path): it only re-exports that module's names.

Kept because veRL agent-loop YAML files (`_target_: rlvr.adapters.verl_agent.RlvrAgentLoop`) written by
earlier rlvr versions name this path.
New code and new exports use `rlvr.adapters.verl.agent`.
"""

from rlvr.adapters.verl.agent import *  # noqa: F403
from rlvr.adapters.verl.agent import __all__ as __all__
