"""Alias of `rlvr.adapters.openrlhf.agent` (an old path): it only re-exports that module's names.

Kept because OpenRLHF agent files (`from rlvr.adapters.openrlhf_agent import agent_classes`) written by
earlier rlvr versions name this path.
New code and new exports use `rlvr.adapters.openrlhf.agent`.
"""

from rlvr.adapters.openrlhf.agent import *  # noqa: F403
from rlvr.adapters.openrlhf.agent import __all__ as __all__
