"""Moved to `rlvr.rollout.tokens` (the episode layer); this module re-exports it for existing imports."""

from rlvr.rollout.tokens import (
    LAYOUTS,
    ChatTokenizer,
    EpisodeTokens,
    Layout,
    TokenAlignmentError,
    describe_drift,
    encode,
    render,
    render_prompt_ids,
)

__all__ = [
    "LAYOUTS",
    "ChatTokenizer",
    "EpisodeTokens",
    "Layout",
    "TokenAlignmentError",
    "describe_drift",
    "encode",
    "render",
    "render_prompt_ids",
]
