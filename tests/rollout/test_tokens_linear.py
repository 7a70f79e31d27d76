"""Linear token bookkeeping with SmolLM2's real tokenizer: each environment turn tokenises only what it adds.

The tokenizer is wrapped to count what it is asked to render and encode; a long tool episode must
render a bounded window and encode a bounded text per environment turn, give exactly the ids of the
whole conversation's rendering, and still catch a template whose turns depend on the whole
conversation (found by the one whole-episode render at the end).
"""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.core.types import Message
from rlvr.rollout.tokens import EpisodeTokens, TokenAlignmentError, encode, render

pytestmark = pytest.mark.trl

IM_END = 2
# ChatML whose user turns carry their index in the conversation: rendering a window numbers them
# differently from rendering the whole conversation.
NUMBERED = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' }}"
            "{% if m['role'] == 'user' %}{{ '[' ~ loop.index ~ '] ' }}{% endif %}{{ m['content'] + '<|im_end|>\\n' }}"
            "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


class Counting:
    """A tokenizer that delegates to `inner` and counts messages rendered and characters encoded."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.all_special_ids = inner.all_special_ids
        self.rendered: list[int] = []
        self.encoded: list[int] = []

    def apply_chat_template(self, conversation: Any, *args: Any, **kwargs: Any) -> Any:
        self.rendered.append(len(conversation))
        return self.inner.apply_chat_template(conversation, *args, **kwargs)

    def encode(self, text: str, *args: Any, **kwargs: Any) -> list[int]:
        self.encoded.append(len(text))
        return list(self.inner.encode(text, *args, **kwargs))

    def decode(self, ids: Any, *args: Any, **kwargs: Any) -> str:
        return str(self.inner.decode(ids, *args, **kwargs))

    def reset(self) -> None:
        self.rendered, self.encoded = [], []


def _call(i: int) -> str:
    return f'<tool_call>\n{{"name": "calculator", "arguments": {{"expression": "{i} * 17 + 3"}}}}\n</tool_call>'


def _episode(tokens: EpisodeTokens, tok: Any, turns: int, history: list[Message] | None = None) -> list[Message]:
    """Play `turns` tool turns and a final answer; returns the conversation (the env's, when given)."""
    messages = history if history is not None else []
    for i in range(turns):
        text = _call(i)
        ids = [*encode(tok, text), IM_END]
        message = Message(role="assistant", content=text)
        tokens.add_model_turn(message, ids, [-0.5] * len(ids), prompt_ids=tokens.context_ids())
        observation = [Message(role="tool", content=str(i * 17 + 3), tool_call_id=f"c{i}")]
        if history is not None:  # what env.step does: the environment appends the turn to its history
            history.extend([message, *observation])
        tokens.add_env_turn(observation)
    final = "The answer is \\boxed{3}."
    ids = [*encode(tok, final), IM_END]
    tokens.add_model_turn(Message(role="assistant", content=final), ids, None, prompt_ids=tokens.context_ids())
    return messages


def test_each_environment_turn_renders_a_window_and_encodes_what_it_adds(tok: Any) -> None:
    counting = Counting(tok)
    prompt = [Message(role="user", content="Compute with the calculator.")]
    tokens = EpisodeTokens(counting, prompt)
    per_turn: list[tuple[list[int], int]] = []
    for i in range(30):
        counting.reset()
        text = _call(i)
        ids = [*encode(tok, text), IM_END]
        tokens.add_model_turn(Message(role="assistant", content=text), ids, None, prompt_ids=tokens.context_ids())
        tokens.add_env_turn([Message(role="tool", content=str(i * 17 + 3))])
        per_turn.append((counting.rendered, sum(counting.encoded)))
    assert all(rendered == [2, 3] for rendered, _ in per_turn)  # prompt + assistant (+ observation), every turn
    assert max(chars for _, chars in per_turn) < 100  # one turn's text, while the episode grows to ~4,000 chars
    counting.reset()
    assert tokens.check_episode() is None
    assert counting.rendered == [61] and counting.encoded == []  # one whole-episode render, no encode
    full = encode(tok, render(tok, tokens.messages, add_generation_prompt=True))
    assert tokens.context_ids() == full  # exactly the template's tokens of the whole conversation


def test_reading_the_environments_history_gives_the_same_tokens(tok: Any) -> None:
    prompt = [Message(role="user", content="Compute with the calculator.")]
    own = EpisodeTokens(tok, prompt)
    _episode(own, tok, 4)
    history = list(prompt)
    shared = EpisodeTokens(tok, prompt, history=history)
    _episode(shared, tok, 4, history)
    assert shared.messages is history and len(history) == 1 + 2 * 4  # read, never appended to by the tokens
    assert shared.trajectory_fields("episode") == own.trajectory_fields("episode")
    assert [m.content for m in own.messages[:-1]] == [m.content for m in history]


def test_template_that_depends_on_the_whole_conversation_is_caught_at_the_end(tok: Any) -> None:
    prompt = [Message(role="user", content="Guess my number.")]
    tokens = EpisodeTokens(tok, prompt, chat_template=NUMBERED)
    for guess in ("50", "25"):
        ids = [*encode(tok, guess), IM_END]
        tokens.add_model_turn(Message(role="assistant", content=guess), ids, None, prompt_ids=tokens.context_ids())
        tokens.add_env_turn([Message(role="user", content="No, lower.")])
    assert tokens.misaligned is None  # each window is a valid first turn
    fields = tokens.trajectory_fields("auto")
    assert fields["info"]["token_layout"] == "turn"
    assert "the whole episode renders differently from its turns rendered one at a time" in fields["info"][
        "token_misaligned"]
    with pytest.raises(TokenAlignmentError, match="layout='turn'"):
        tokens.episode_sample()
