r"""Token ownership for multi-turn rollouts: sampled ids kept as-is, environment turns as template suffixes.

A multi-turn episode becomes training data in one of two layouts:

- **episode** — one sample per episode: `prompt_ids` (the first prompt) and `completion_ids`, in
  which the model's sampled tokens and the environment's tokens are interleaved; `loss_mask` is 1
  only on sampled tokens and `logprobs` is 0.0 on environment tokens.
- **turn** — one sample per model turn: the prompt ids the policy conditioned on for that turn and
  the ids it sampled (all masked 1). Always valid, whatever the chat template does.

Rules (what peers get wrong, see issue 3):

1. The model's own tokens are never re-encoded from text: decode-then-encode is not the identity
   (a model may sample "Hel" + "lo" where the tokenizer encodes "Hello" as one token), so
   re-tokenised text gives other ids and other logprobs than the ones sampled.
2. An environment turn is rendered with the tokenizer's chat template as a suffix: the string
   `template(history + observation, add_generation_prompt=True)` minus `template(history)`, plus
   whatever end-of-turn text the template puts after the assistant content that the model did not
   sample itself (for ChatML: the newline after a sampled `<|im_end|>`, or `<|im_end|>\n` when the
   turn was cut by the length limit).
3. This only describes what the model saw if the template is prefix-preserving: rendering more
   turns must not rewrite earlier ones. Templates that drop past `<think>` blocks (Qwen3), trim
   or re-format assistant turns (native tool calls) are detected; the episode layout then raises
   `TokenAlignmentError` naming the fixes, and the `auto` layout falls back to per-turn samples.
4. Linear cost: an environment turn renders a window of bounded size and tokenises only what it
   adds; the whole episode is rendered once at the end to catch templates the window cannot see
   (`EpisodeTokens.check_episode`). `benchmarks/long_episode.py` measures it per turn.

Example:
    >>> tokens = EpisodeTokens(tokenizer, prompt_messages)              # doctest: +SKIP
    >>> tokens.add_model_turn(message, sampled_ids, logprobs)          # doctest: +SKIP
    >>> tokens.add_env_turn(observation_messages)                      # doctest: +SKIP
    >>> sample = tokens.episode_sample()                               # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

from rlvr.core.errors import AdapterError, ConfigError
from rlvr.core.types import Message, TokenSample

__all__ = ["ChatTokenizer", "EpisodeTokens", "Layout", "TokenAlignmentError", "render_prompt_ids"]

Layout = Literal["episode", "turn", "auto"]
"""`episode`: one interleaved sample per episode; `turn`: one sample per model turn; `auto`:
`episode` when the tokens line up, else `turn`."""

LAYOUTS: tuple[str, ...] = ("episode", "turn", "auto")

_FIX = (
    "fixes: use the one-sample-per-turn layout (layout='turn', or 'auto' to fall back per episode), "
    "use a policy that takes prompt token ids (token-in: vLLM in-process, transformers, or the OpenAI "
    "policy with token_in=True) together with a prefix-preserving chat template, or pass a chat template "
    "that renders earlier turns verbatim (e.g. for Qwen3, one that keeps past <think> blocks)"
)


class ChatTokenizer(Protocol):
    """What rlvr needs from a tokenizer (a Hugging Face `PreTrainedTokenizerBase` fits)."""

    def apply_chat_template(self, conversation: Any, *args: Any, **kwargs: Any) -> Any:
        """Render messages with the chat template (called with `tokenize=False`: returns a str)."""

    def encode(self, text: str, *args: Any, **kwargs: Any) -> list[int]:
        """Token ids of `text` (called with `add_special_tokens=False`)."""

    def decode(self, token_ids: Any, *args: Any, **kwargs: Any) -> str:
        """Text of `token_ids`."""


class TokenAlignmentError(AdapterError):
    """The interleaved episode tokens are not what the policy conditioned on (see module docstring)."""


def render(
    tokenizer: ChatTokenizer,
    messages: Sequence[Message],
    *,
    tools: Sequence[dict[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    chat_template: str | None = None,
) -> str:
    """Render messages to text with the tokenizer's chat template (or `chat_template`).

    Raises:
        ConfigError: the tokenizer has no chat template.
    """
    kwargs: dict[str, Any] = {"tokenize": False, "add_generation_prompt": add_generation_prompt}
    if tools:
        kwargs["tools"] = list(tools)
    if chat_template is not None:
        kwargs["chat_template"] = chat_template
    try:
        text = tokenizer.apply_chat_template([m.to_openai() for m in messages], **kwargs)
    except ValueError as exc:  # transformers: "Cannot use chat template functions because ... not set"
        raise ConfigError(f"cannot render the conversation with the chat template: {exc}; "
                          "pass chat_template=... or use a tokenizer that has one") from exc
    if not isinstance(text, str):
        raise ConfigError(f"apply_chat_template(tokenize=False) returned {type(text).__name__}, expected str")
    return text


def encode(tokenizer: ChatTokenizer, text: str) -> list[int]:
    """Token ids of rendered text; special tokens come from the template, so none are added."""
    return list(tokenizer.encode(text, add_special_tokens=False))


def render_prompt_ids(
    tokenizer: ChatTokenizer,
    messages: Sequence[Message],
    *,
    tools: Sequence[dict[str, Any]] | None = None,
    chat_template: str | None = None,
) -> list[int]:
    """Prompt ids for the next model turn: the template with `add_generation_prompt=True`, tokenised."""
    text = render(tokenizer, messages, tools=tools, add_generation_prompt=True, chat_template=chat_template)
    return encode(tokenizer, text)


def _decode(tokenizer: ChatTokenizer, ids: Sequence[int]) -> str:
    return tokenizer.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)


def describe_drift(tokenizer: ChatTokenizer, expected: Sequence[int], actual: Sequence[int], *, window: int = 6) -> str:
    """Where two id sequences first differ, with the decoded tokens around it (for error messages).

    Returns:
        '' when equal; else e.g. "ids differ at position 41: expected [..] 'Hel|lo' vs actual [..] 'Hello'".
    """
    if list(expected) == list(actual):
        return ""
    i = next((k for k, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b), None)
    if i is None:
        i = min(len(expected), len(actual))
    lo = max(0, i - 1)

    def show(ids: Sequence[int]) -> str:
        part = list(ids[lo : i + window])
        return f"{part} {'|'.join(_decode(tokenizer, [t]) for t in part)!r}"

    return (f"ids differ at position {i} (lengths {len(expected)} vs {len(actual)}): "
            f"expected {show(expected)} vs actual {show(actual)}")


def _first_difference(a: str, b: str) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"at character {i}: {a[max(0, i - 20) : i + 40]!r} became {b[max(0, i - 20) : i + 40]!r}"


class EpisodeTokens:
    """Collects one episode's tokens in both layouts while the episode runs, in linear time.

    Call `add_model_turn` after each policy turn (with the ids it sampled) and `add_env_turn` after
    each environment observation, then `trajectory_fields(layout)`.

    Cost: each environment turn renders a window of bounded size (the episode's prompt, the last
    assistant message and the observation: the shape of a first turn) and tokenises only what the
    turn adds (from the last special token before it), so an episode of K turns costs O(K) instead
    of the O(K^2) of re-rendering and re-encoding the whole history every turn. Because a window
    cannot see a template that rewrites a turn outside it (a rule that depends on the whole
    conversation), the whole episode is rendered once at the end (`check_episode`, called by
    `episode_sample` and `trajectory_fields`) and compared with the turns rendered one at a time.

    Args:
        tokenizer: the policy's tokenizer (with its chat template).
        prompt: the episode's first messages (from `env.reset`).
        tools: OpenAI tool schemas passed to the template (`env.spec.tools`).
        chat_template: a template overriding the tokenizer's own.
        prompt_ids: the first prompt's ids if the caller already has them (else rendered here).
        history: the conversation as the environment keeps it (`Environment.messages`: the prompt,
            then each assistant message and observation, appended by `env.step`); read, never
            appended to. None: EpisodeTokens keeps its own copy (standalone use, without an env).

    Attributes:
        prompt_ids: ids of the first prompt (length P); replaced by the ids the policy reports for
            its first turn, since those are what it conditioned on.
        completion_ids, loss_mask, logprobs: the interleaved episode completion (length T each).
        spans: `(start, end)` in `completion_ids` of each model turn's sampled ids, in order.
        samples: one `TokenSample` per model turn (built when read).
        misaligned: why the episode layout is invalid for this episode, or None while it is valid.
    """

    def __init__(
        self,
        tokenizer: ChatTokenizer,
        prompt: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        chat_template: str | None = None,
        prompt_ids: Sequence[int] | None = None,
        history: list[Message] | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.tools = list(tools) if tools else None
        self.chat_template = chat_template
        self.prompt: list[Message] = list(prompt)
        self._history = history if history is not None else list(prompt)
        self._owns_history = history is None
        self._prompt_text: str | None = None
        self.prompt_ids: list[int] = list(prompt_ids) if prompt_ids is not None else self._fresh_prompt_ids()
        self.completion_ids: list[int] = []
        self.loss_mask: list[int] = []
        self.logprobs: list[float] = []
        self.misaligned: str | None = None
        self.spans: list[tuple[int, int]] = []
        self._context: list[int] = list(self.prompt_ids)
        special = getattr(tokenizer, "all_special_ids", None)
        self._special: frozenset[int] = frozenset(special or ())
        self._boundary = self._last_special(self._context, 0, 0)
        # per model turn: (the ids it conditioned on, or the length of the episode context it conditioned on), ids, lps
        self._turns: list[tuple[list[int] | int, list[int], list[float] | None]] = []
        self._samples: list[TokenSample] = []
        self._texts: list[str] = []  # the template text each environment turn added after the prompt's
        self._covered = 0  # messages of the history rendered by the last environment turn
        self._checked = 0  # environment turns covered by the last whole-episode check
        self._last_sampled: list[int] | None = None
        self._last_message: Message | None = None
        self._has_logprobs = True

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (the environment's history, or the own copy in standalone use)."""
        return self._history

    @property
    def model_turns(self) -> int:
        """Model turns recorded so far."""
        return len(self._turns)

    @property
    def samples(self) -> list[TokenSample]:
        """The one-sample-per-turn layout: one `TokenSample` per model turn, in order."""
        full = self._context
        for seen, ids, lps in self._turns[len(self._samples) :]:
            prompt = full[:seen] if isinstance(seen, int) else seen
            self._samples.append(TokenSample(prompt_ids=prompt, completion_ids=ids, loss_mask=[1] * len(ids),
                                             logprobs=lps))
        return list(self._samples)

    # -- rendering ---------------------------------------------------------------------
    def _render(self, messages: Sequence[Message], add_generation_prompt: bool) -> str:
        return render(self.tokenizer, messages, tools=self.tools, add_generation_prompt=add_generation_prompt,
                      chat_template=self.chat_template)

    def _first_prompt_text(self) -> str:
        if self._prompt_text is None:
            self._prompt_text = self._render(self.prompt, True)
        return self._prompt_text

    def _fresh_prompt_ids(self) -> list[int]:
        """What a policy that renders the conversation itself conditions on: the whole history, encoded."""
        if len(self._history) == len(self.prompt):
            return encode(self.tokenizer, self._first_prompt_text())
        return encode(self.tokenizer, self._render(self._history, True))

    def context_ids(self) -> list[int] | None:
        """Ids the policy should condition on next (prompt + interleaved completion), or None if misaligned."""
        if self.misaligned is not None:
            return None
        return list(self._context)

    def _last_special(self, ids: Sequence[int], start: int, default: int) -> int:
        """Index of the last special-token id in `ids[start:]`, else `default`."""
        for k in range(len(ids) - 1, start - 1, -1):
            if ids[k] in self._special:
                return k
        return default

    def _extend(self, ids: list[int], mask: int, logprobs: Sequence[float]) -> None:
        start = len(self._context)
        self.completion_ids += ids
        self.loss_mask += [mask] * len(ids)
        self.logprobs += logprobs
        self._context += ids
        self._boundary = self._last_special(self._context, start, self._boundary)

    # -- turns -------------------------------------------------------------------------
    def add_model_turn(
        self,
        message: Message,
        completion_ids: Sequence[int],
        logprobs: Sequence[float] | None = None,
        *,
        prompt_ids: Sequence[int] | None = None,
    ) -> None:
        """Record a policy turn: the assistant message and the exact ids (and logprobs) it sampled.

        Args:
            message: the assistant message (as parsed from the sampled text).
            completion_ids: the sampled ids, length T, as the model server or generator returned them
                (ending with the sampled end-of-turn/EOS token when the model stopped on it).
            logprobs: sampling logprob of each id, length T, or None when the policy has none.
            prompt_ids: the ids the policy conditioned on, if it reports them (else rendered here:
                the whole history, as a policy that renders the conversation itself sees it).

        Raises:
            ConfigError: `logprobs` has another length than `completion_ids`, or a model turn
                follows a model turn without an environment turn between them.
        """
        if self._last_sampled is not None:
            raise ConfigError("add_model_turn called twice in a row; call add_env_turn with the observation first")
        ids = list(completion_ids)
        lps = list(logprobs) if logprobs is not None else None
        if lps is not None and len(lps) != len(ids):
            raise ConfigError(f"logprobs has length {len(lps)} but completion_ids has {len(ids)}; give one per token")
        first = not self._turns
        if prompt_ids is not None:
            seen: list[int] | None = list(prompt_ids)
        elif first:
            seen = None
        else:
            seen = self._fresh_prompt_ids()
        if first and seen is not None:
            self.prompt_ids = list(seen)
            self._context = list(seen)
            self._boundary = self._last_special(self._context, 0, 0)
        record: list[int] | int = len(self._context)
        if seen is not None and seen != self._context:
            record = seen
            if self.misaligned is None:
                drift = describe_drift(self.tokenizer, self._context, seen)
                self.misaligned = (f"turn {len(self._turns) + 1}: the policy conditioned on other ids than the "
                                   f"interleaved episode ({drift}); the server re-rendered and re-tokenised earlier "
                                   "turns")
        self._turns.append((record, ids, lps))
        self.spans.append((len(self.completion_ids), len(self.completion_ids) + len(ids)))
        self._extend(ids, 1, lps if lps is not None else [0.0] * len(ids))
        self._has_logprobs = self._has_logprobs and lps is not None
        if self._owns_history:
            self._history.append(message)
        self._last_sampled, self._last_message = ids, message

    def add_env_turn(self, observation: Sequence[Message]) -> list[int]:
        """Append the environment's observation as template-rendered suffix ids (masked 0, logprob 0.0).

        With `history`, the environment has already appended the assistant message and
        `observation` to it (`env.step` does); EpisodeTokens only reads it.

        Returns:
            The appended ids (end-of-turn text the model did not sample + the rendered observation
            + the next generation prompt); [] once the episode is misaligned.
        """
        if self._last_sampled is None or self._last_message is None:
            raise ConfigError("add_env_turn needs a preceding add_model_turn (the assistant message it answers)")
        sampled, message = self._last_sampled, self._last_message
        self._last_sampled = self._last_message = None
        if self._owns_history:
            self._history.extend(observation)
        if self.misaligned is not None:
            return []
        texts = self._suffix_text(message, list(observation), sampled)
        if texts is None:
            return []
        suffix, added = texts
        ids = self._encode_suffix(suffix)
        self._extend(ids, 0, [0.0] * len(ids))
        self._texts.append(added)
        self._covered = len(self._history)
        return ids

    def _encode_suffix(self, suffix: str) -> list[int]:
        """Ids of `suffix` tokenised in the context of the episode so far, reading only the last turn.

        Tokenising the suffix alone is not what the template gives: tokenizers whose pre-tokenizer
        prepends a word marker to the start of the input (SentencePiece-style `Metaspace` with
        `prepend_scheme="first"`, e.g. Mistral and Llama 2 fast tokenizers) would add a spurious
        '▁' before the environment turn. So the ids are those of `head + suffix` after the ids of
        `head`, when those are a prefix of them; otherwise (a token merges across the boundary,
        which no special-token-delimited template does) the suffix is tokenised alone. `head` is the
        episode's text from its last special token on (a special token splits the input before
        pre-tokenisation, so the text before it cannot change the suffix's ids): one turn, not the
        whole history. A tokenizer without special tokens reads the whole episode.
        """
        head = _decode(self.tokenizer, self._context[self._boundary :])
        head_ids = encode(self.tokenizer, head)
        whole = encode(self.tokenizer, head + suffix)
        if whole[: len(head_ids)] == head_ids:
            return whole[len(head_ids) :]
        return encode(self.tokenizer, suffix)

    def _suffix_text(self, message: Message, observation: list[Message],
                     sampled: list[int]) -> tuple[str, str] | None:
        """(end-of-turn remainder + observation + generation prompt, the template text the turn adds), or None.

        Rendered over the window `prompt + [message] + observation` (a first turn's shape, so any
        template renders it); for the first environment turn that is the whole history.
        """
        generation_prompt = self._first_prompt_text()
        before = self._render([*self.prompt, message], False)
        after = self._render([*self.prompt, message, *observation], True)
        if not after.startswith(before):
            self.misaligned = ("the chat template is not prefix-preserving: adding the environment turn rewrote "
                               f"an earlier turn ({_first_difference(before, after)}); {_FIX}")
            return None
        if not before.startswith(generation_prompt):
            self.misaligned = ("the chat template renders the assistant turn's header differently from the "
                               f"generation prompt ({_first_difference(generation_prompt, before)}); {_FIX}")
            return None
        turn = before[len(generation_prompt) :]
        tail = self._end_of_turn(turn, sampled)
        if tail is None:
            return None
        return tail + after[len(before) :], after[len(generation_prompt) :]

    def check_episode(self) -> str | None:
        """Render the whole episode once and compare it with its turns rendered one at a time.

        A template whose rendering of a turn depends on turns outside the per-turn window (e.g. one
        that moves a system prompt to the latest user message, or numbers turns) is found here;
        the episode is then misaligned. Runs once per new environment turn (O(episode) each time).

        Returns:
            `misaligned` (None while the episode layout is valid).
        """
        if self.misaligned is not None or len(self._texts) < 2 or self._checked == len(self._texts):
            return self.misaligned
        self._checked = len(self._texts)
        whole = self._render(self._history[: self._covered], True)
        pieces = "".join([self._first_prompt_text(), *self._texts])
        if whole != pieces:
            self.misaligned = ("the chat template is not prefix-preserving: the whole episode renders differently "
                               f"from its turns rendered one at a time ({_first_difference(pieces, whole)}); {_FIX}")
        return self.misaligned

    def _end_of_turn(self, turn: str, sampled: list[int]) -> str | None:
        """The part of the template's assistant turn after the sampled text (e.g. a newline after '<|im_end|>')."""
        text = _decode(self.tokenizer, sampled)
        if turn.startswith(text):
            return turn[len(text) :]
        # The model stopped on an EOS token the template does not write (e.g. <|endoftext|> where the
        # template closes turns with <|im_end|>): keep the sampled EOS, add the template's end of turn.
        # Only a special token qualifies: a trailing text token the template drops (trimmed whitespace
        # of a turn cut by the length limit) means the template rewrites the turn.
        special = getattr(self.tokenizer, "all_special_ids", None)
        if sampled and (special is None or sampled[-1] in special):
            without_last = _decode(self.tokenizer, sampled[:-1])
            last = _decode(self.tokenizer, sampled[-1:])
            if last not in turn and turn.startswith(without_last) and without_last:
                return turn[len(without_last) :]
        self.misaligned = ("the chat template renders the assistant turn differently from the sampled tokens "
                           f"(it trims, strips <think> or re-formats tool calls: {_first_difference(text, turn)}); "
                           f"{_FIX}")
        return None

    # -- output ------------------------------------------------------------------------
    def played_sample(self) -> TokenSample:
        """The episode's tokens as played, in one sequence, whether or not they line up.

        For an episode whose tokens line up, the episode layout (`episode_sample` without the
        check). For a misaligned one (the chat template rewrote history), the tokens up to where it
        stopped lining up: what a trainer that stops the episode there holds (veRL, OpenRLHF).
        `logprobs` is None unless every model turn reported them.
        """
        has = self._has_logprobs and bool(self._turns)
        return TokenSample(prompt_ids=list(self.prompt_ids), completion_ids=list(self.completion_ids),
                           loss_mask=list(self.loss_mask), logprobs=list(self.logprobs) if has else None)

    def episode_sample(self) -> TokenSample:
        """The one-sample-per-episode layout.

        Raises:
            TokenAlignmentError: the episode is misaligned (message says why and names the fixes).
        """
        why = self.check_episode()
        if why is not None:
            raise TokenAlignmentError(why + ("" if "fixes:" in why else f"; {_FIX}"))
        return self.played_sample()

    def trajectory_fields(self, layout: Layout) -> dict[str, Any]:
        """Token fields for `Trajectory(**fields)` in the given layout.

        `episode` fills `tokens` (one `TokenSample`); `turn` fills `samples` (one per model turn);
        `auto` is `episode` unless misaligned, else `turn`. Both carry `info["token_layout"]`.

        Raises:
            TokenAlignmentError: layout 'episode' on a misaligned episode.
            ConfigError: an unknown layout.
        """
        if layout not in LAYOUTS:
            raise ConfigError(f"token layout must be one of {list(LAYOUTS)}, got {layout!r}")
        self.check_episode()
        if layout == "turn" or (layout == "auto" and self.misaligned is not None):
            info = {"token_layout": "turn"}
            if self.misaligned is not None:
                info["token_misaligned"] = self.misaligned
            return {"samples": list(self.samples), "info": info}
        return {"tokens": self.episode_sample(), "info": {"token_layout": "episode"}}
