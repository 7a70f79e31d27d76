"""Alias of `rlvr.adapters.trl.agent` (an old path): it only re-exports that module's names.

Kept because user code (`from rlvr.adapters.trl_multiturn import environment_factory`) written by earlier rlvr
versions name this path.
New code and new exports use `rlvr.adapters.trl.agent`.
"""

from rlvr.adapters.trl.agent import *  # noqa: F403
from rlvr.adapters.trl.agent import __all__ as __all__
