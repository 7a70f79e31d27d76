"""Environments: single-turn (and later multi-turn/tool) envs, dataset loaders, registry."""

from rlvr.environments.base import Environment
from rlvr.environments.registry import make, registry
from rlvr.environments.single_turn import SingleTurnEnv

__all__ = ["Environment", "SingleTurnEnv", "make", "registry"]
