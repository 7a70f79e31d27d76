"""Environments: single-turn, multi-turn and tool envs, tools, action parsing, dataset loaders, registry.

The gymnasium bridges (`GymnasiumEnv`, `from_gymnasium`) live in `rlvr.environments.gym`, and skyrl-gym's
(`from_skyrl_gym`) in `rlvr.environments.skyrl`, imported on use.
"""

from rlvr.environments.actions import ParsedCall, TextTag, parse_actions
from rlvr.environments.base import Environment
from rlvr.environments.multi_turn import MultiTurnEnv, ToolEnv
from rlvr.environments.registry import make, registry
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.environments.tools import Tool, ToolError, tool

__all__ = [
    "Environment",
    "MultiTurnEnv",
    "ParsedCall",
    "SingleTurnEnv",
    "TextTag",
    "Tool",
    "ToolEnv",
    "ToolError",
    "make",
    "parse_actions",
    "registry",
    "tool",
]
