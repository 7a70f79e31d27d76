"""`rlvr sft` (`rlvr.runners.sft`): rows from `rlvr synth`, the label mask, bad rows, TRL's real SFTTrainer, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import Message
from rlvr.environments.registry import make
from rlvr.rollout.tokens import EpisodeTokens, encode

pytestmark = pytest.mark.trl

ENV_ARGS = {"split": "train", "size": 16, "seed": 0, "scoring": "inline"}


@pytest.fixture(scope="module")
def tool_tokenizer(tiny_dir: Path) -> Any:
    pytest.importorskip("trl")
    from transformers import AutoTokenizer

    from rlvr.adapters.trl.agent import tool_calling_tokenizer

    tokenizer, replaced = tool_calling_tokenizer(AutoTokenizer.from_pretrained(str(tiny_dir)))
    assert replaced  # SmolLM2's own template cannot render tool calls
    return tokenizer


@pytest.fixture(scope="module")
def sft_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """16 oracle demonstrations of math/calculator-arithmetic-v1, written by `rlvr synth`."""
    from rlvr.runners.synth import SynthConfig, run_synth

    out = tmp_path_factory.mktemp("synth")
    run_synth(SynthConfig(env="math/calculator-arithmetic-v1", env_args=ENV_ARGS, output=out, policy="oracle", n=1))
    return out / "sft.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _as_sampled(message: dict[str, Any]) -> Message:
    """The assistant turn as the model writes it in text: its content, then each call in Hermes form."""
    text = message["content"]
    for call in message.get("tool_calls") or ():
        body = json.dumps({"name": call["function"]["name"], "arguments": call["function"]["arguments"]})
        text += f"\n<tool_call>\n{body}\n</tool_call>"
    return Message(role="assistant", content=text)


def test_synth_rows_carry_tools_and_object_arguments(sft_jsonl: Path) -> None:
    rows = _rows(sft_jsonl)
    env = make("math/calculator-arithmetic-v1", **ENV_ARGS)
    assert len(rows) == 16 and all(row["tools"] == list(env.spec.tools) for row in rows)
    calls = [c for row in rows for m in row["messages"] for c in m.get("tool_calls") or ()]
    assert len(calls) == 16 and all(isinstance(c["function"]["arguments"], dict) for c in calls)
    assert [m["role"] for m in rows[0]["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    env.close()


def test_label_mask_is_exactly_the_sampled_assistant_tokens(sft_jsonl: Path, tool_tokenizer: Any) -> None:
    from rlvr.runners.sft import read_examples

    examples, bad = read_examples(sft_jsonl, tool_tokenizer, max_length=1024)
    assert len(examples) == 16 and bad == []
    end = tool_tokenizer.convert_tokens_to_ids("<|im_end|>")
    for example, row in zip(examples, _rows(sft_jsonl), strict=True):
        messages = row["messages"]
        first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
        # The rollout engine's own account of this conversation: sampled ids (loss 1), env turns as template suffixes.
        tokens = EpisodeTokens(tool_tokenizer, [Message.model_validate(m) for m in messages[:first]],
                               tools=row["tools"])
        expected_text: list[str] = []
        for i in range(first, len(messages)):
            if messages[i]["role"] != "assistant":
                continue
            sampled = _as_sampled(messages[i])
            expected_text.append(sampled.content + "<|im_end|>")
            tokens.add_model_turn(sampled, [*encode(tool_tokenizer, sampled.content), end])
            observation = [Message.model_validate(m) for m in messages[i + 1:] if m["role"] != "assistant"][:1]
            if observation:
                tokens.add_env_turn(observation)
        sample = tokens.episode_sample()
        ids = sample.prompt_ids + sample.completion_ids
        mask = [0] * len(sample.prompt_ids) + sample.loss_mask
        # token by token: same ids, labels = id where the engine trains, -100 elsewhere; only "\n" is left after
        assert example.input_ids[: len(ids)] == ids
        assert tool_tokenizer.decode(example.input_ids[len(ids):]) == "\n"
        assert example.labels == [t if m else -100 for t, m in zip(ids, mask, strict=True)] + [-100]
        # and the trained tokens spell the assistant turns, nothing else
        runs, current = [], []
        for token, label in zip(example.input_ids, example.labels, strict=True):
            if label == -100:
                if current:
                    runs.append(tool_tokenizer.decode(current))
                current = []
            else:
                assert label == token
                current.append(token)
        assert runs == expected_text
        assert '<tool_call>\n{"name": "calculator", "arguments": {"expression": ' in runs[0]


def test_bad_rows_are_skipped_with_line_numbers(sft_jsonl: Path, tool_tokenizer: Any, tmp_path: Path) -> None:
    from rlvr.runners.sft import read_examples

    good = _rows(sft_jsonl)
    string_args = json.loads(json.dumps(good[1]))
    string_args["messages"][2]["tool_calls"][0]["function"]["arguments"] = "347 * 829"
    no_tools = {k: v for k, v in good[2].items() if k != "tools"}
    long_row = json.loads(json.dumps(good[3]))
    long_row["messages"][1]["content"] = "What is 2 + 2? " * 400
    lines = [json.dumps(good[0]), "{not json", json.dumps({"messages": good[0]["messages"][:2]}),
             json.dumps(string_args), json.dumps(no_tools), json.dumps(long_row), json.dumps({"rows": []}),
             json.dumps(good[4])]
    data = tmp_path / "sft.jsonl"
    data.write_text("\n".join(lines) + "\n")
    examples, bad = read_examples(data, tool_tokenizer, max_length=1024)
    assert [e.line for e in examples] == [1, 8]
    assert [b.line for b in bad] == [2, 3, 4, 5, 6, 7]
    reasons = [b.reason for b in bad]
    assert reasons[0].startswith("not JSON")
    assert reasons[1] == "no assistant turn: nothing to train on"
    assert "arguments are not a JSON object" in reasons[2]
    assert "no `tools`" in reasons[3]
    assert "more than max_length=1024" in reasons[4] and "never truncated" in reasons[4]
    assert reasons[5].startswith("not a conversation")
    examples, bad = read_examples(data, tool_tokenizer, max_length=1024, limit=1)
    assert [e.line for e in examples] == [1] and bad == []


def test_a_template_that_drops_tool_calls_is_refused(sft_jsonl: Path, tiny_dir: Path) -> None:
    from transformers import AutoTokenizer

    from rlvr.runners.sft import tokenize_conversation

    chatml = AutoTokenizer.from_pretrained(str(tiny_dir))  # SmolLM2's template: tool calls vanish
    row = _rows(sft_jsonl)[0]
    with pytest.raises(DataError, match="the chat template drops tool calls"):
        tokenize_conversation(chatml, [Message.model_validate(m) for m in row["messages"]], row["tools"],
                              max_length=1024)


def _config(sft_jsonl: Path, tiny_dir: Path, out: Path, **options: Any) -> Any:
    from rlvr.runners.sft import SftConfig

    return SftConfig(data=sft_jsonl, model=str(tiny_dir), output=out, batch_size=4, learning_rate=1e-3,
                     save_steps=2, **options)


def test_sft_trains_and_writes_a_model_folder_eval_takes(sft_jsonl: Path, tiny_dir: Path, tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rlvr.rollout.batch import clone_factory, rollout_sync
    from rlvr.rollout.policies import Sampling, TransformersPolicy
    from rlvr.runners.sft import run_sft

    out = tmp_path / "sft"
    result = run_sft(_config(sft_jsonl, tiny_dir, out, max_steps=3))
    assert result.steps == 3 and result.examples == 16 and result.bad_rows == [] and result.resumed_from is None
    losses = [r["loss"] for r in result.log_history if "loss" in r]
    assert len(losses) == 3 and all(loss > 0 for loss in losses)
    before = AutoModelForCausalLM.from_pretrained(str(tiny_dir)).state_dict()
    after = AutoModelForCausalLM.from_pretrained(str(out)).state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)  # the weights were trained
    saved = AutoTokenizer.from_pretrained(str(out))
    assert "<tool_call>" in saved.chat_template  # the template SFT rendered with travels with the model
    record = json.loads((out / "sft_run.json").read_text())
    assert record["steps"] == 3 and record["config"]["max_steps"] == 3
    assert json.loads((out / "sft_data.json").read_text())["examples"] == 16
    env = make("math/calculator-arithmetic-v1", **{**ENV_ARGS, "size": 2})
    policy = TransformersPolicy(str(out), sampling=Sampling(max_tokens=8, temperature=0))
    trajectories = rollout_sync(clone_factory(env), policy, env.tasks)
    assert len(trajectories) == 2 and all(t.error is None and t.verdict is not None for t in trajectories)
    env.close()
    with pytest.raises(ConfigError, match="another configuration \\(changed: max_steps\\)"):
        run_sft(_config(sft_jsonl, tiny_dir, out, max_steps=5))


def test_sft_resumes_after_kill_9(sft_jsonl: Path, tiny_dir: Path, tmp_path: Path) -> None:
    from rlvr.runners.sft import run_sft

    out = tmp_path / "sft"
    config = _config(sft_jsonl, tiny_dir, out, max_steps=10)  # checkpoints every 2 steps: killed at the first
    script = ("import sys; from rlvr.runners.sft import SftConfig, run_sft; "
              "run_sft(SftConfig.model_validate_json(sys.argv[1]))")
    child = subprocess.Popen([sys.executable, "-c", script, config.model_dump_json()], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, env=os.environ.copy())
    deadline = time.monotonic() + 300
    first = out / "checkpoints" / "checkpoint-2" / "trainer_state.json"
    while time.monotonic() < deadline and child.poll() is None and not first.is_file():
        time.sleep(0.05)
    if child.poll() is not None:
        pytest.fail(f"sft ended (exit {child.returncode}) before it could be killed; raise max_steps")
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    result = run_sft(config)
    assert result.resumed_from is not None and result.resumed_from.name.startswith("checkpoint-")
    assert int(result.resumed_from.name.split("-")[1]) >= 2
    assert result.steps == 10
    logged = [r["step"] for r in result.log_history if "loss" in r]
    assert logged == list(range(1, 11))  # the resumed trainer state carries the steps before the kill
