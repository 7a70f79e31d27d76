r"""Reasoning blocks: the part of a response after the model's reasoning is where its answer is read."""

from __future__ import annotations

import re

__all__: list[str] = []

# Reasoning blocks: `<think>` (R1, Qwen3), `<thinking>`, `<reasoning>`, `<scratchpad>`, `<reflection>`, `<thought>`,
# `<analysis>`, `<seed:think>` (ByteDance Seed), `<|begin_of_thought|>`...`<|end_of_thought|>` (Bespoke/OpenThoughts),
# `<|think|>`...`<|/think|>`, `[THINK]`...`[/THINK]` (Mistral Magistral), `◁think▷`...`◁/think▷` (Kimi), and
# gpt-oss harmony channels: `<|channel|>analysis<|message|>` (also `commentary`) opens reasoning,
# `<|channel|>final<|message|>` starts the answer (openai/harmony, "Channels").
_THINK_TAGS = r"think|thinking|reasoning|scratchpad|reflection|thought|analysis|seed:think"
_THINK_CLOSE_RE = re.compile(
    rf"</\s*(?:{_THINK_TAGS})\s*>|<\|end_of_thought\|>|<\|/think\|>|\[/THINK\]|◁/think▷"
    r"|<\|channel\|>\s*final\s*(?:<\|constrain\|>[^<]*)?<\|message\|>",
    re.IGNORECASE,
)
_THINK_OPEN_RE = re.compile(
    rf"<(?:{_THINK_TAGS})\s*>|<\|begin_of_thought\|>|<\|think\|>|\[THINK\]|◁think▷"
    r"|<\|channel\|>\s*(?:analysis|commentary)\b",
    re.IGNORECASE,
)
_FENCE_RE = re.compile(r"^[ \t]*```[^\n]*\n.*?^[ \t]*```", re.DOTALL | re.MULTILINE)


def final_part(text: str) -> str:
    r"""The part of a response an answer is read from: after the last closing reasoning marker.

    An unclosed `<think>` is all reasoning (no answer after it). A trial `\boxed{5}` inside the
    reasoning block is never the answer: with a closing tag the answer comes from what follows the
    last one; text before an unclosed `<think>` (also one opened after the last closing tag) is
    kept. A closing marker inside a fenced code block is quoted, not a close. The whole text is
    searched (linear time), so a length limit applied afterwards can never cut a response's
    opening `<think>` away and turn its reasoning into its answer.
    """
    if "<" not in text and "[" not in text and "◁" not in text:
        return text
    fences = [(m.start(), m.end()) for m in _FENCE_RE.finditer(text)] if "```" in text else []
    closes = [m for m in _THINK_CLOSE_RE.finditer(text) if not any(a <= m.start() < b for a, b in fences)]
    if closes:
        text = text[closes[-1].end() :]  # a block opened again after it and never closed is reasoning too
    opened = _THINK_OPEN_RE.search(text)
    return text[: opened.start()] if opened else text
