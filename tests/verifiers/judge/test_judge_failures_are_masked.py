"""Every judge failure is an `error` verdict with reward None (masked), never 0 and never a clamp.

Run against a scripted OpenAI-compatible server on a real loopback socket (conftest.JudgeServer).
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import pytest

from judge_http import JudgeServer, Reply
from rlvr.core.errors import ConfigError
from rlvr.verifiers.judge import JudgeVerifier
from rlvr.verifiers.registry import get_verifier

REF = {"prompt": "What is 2 + 2?", "reference": "4"}


def judge(server: JudgeServer, **kw: Any) -> JudgeVerifier:
    options: dict[str, Any] = {"base_url": server.url, "model": "judge-m", "backoff_s": 0.01, "timeout_s": 5.0}
    return JudgeVerifier(**{**options, **kw})


def test_good_reply_scores_and_records_the_call(judge_server: JudgeServer) -> None:
    judge_server.reply = lambda body: Reply('{"reasoning": "right", "score": 0.8}')
    v = judge(judge_server).verify("4", REF)
    assert (v.status, v.reward, v.components) == ("correct", 0.8, {"judge": 0.8})
    detail = json.loads(v.detail)
    assert detail["reasoning"] == "right" and detail["model"] == "judge-m" and not detail["cached"]
    (call,) = detail["calls"]
    assert call["http_status"] == 200 and call["latency_s"] >= 0
    assert call["raw"] == '{"reasoning": "right", "score": 0.8}'
    (body,) = judge_server.requests
    assert body["_path"] == "/v1/chat/completions" and body["model"] == "judge-m" and body["temperature"] == 0.0
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema" and schema["required"] == ["reasoning", "score"]


def test_threshold_sets_the_status(judge_server: JudgeServer) -> None:
    judge_server.reply = lambda body: Reply('{"reasoning": "meh", "score": 0.6}')
    assert judge(judge_server, threshold=0.7).verify("4", REF).status == "incorrect"
    assert judge(judge_server, threshold=0.6).verify("4", REF).status == "correct"


BAD_REPLIES = {
    "malformed_json": Reply('{"reasoning": "x", "score": 0.9'),
    "prose_around_json": Reply('Sure! {"reasoning": "x", "score": 1.0}'),
    "first_number_prose": Reply("I give it 1 out of 1."),
    "above_range": Reply('{"reasoning": "x", "score": 1.5}'),
    "below_range": Reply('{"reasoning": "x", "score": -0.1}'),
    "ten_point_scale": Reply('{"reasoning": "x", "score": 9}'),
    "nan": Reply('{"reasoning": "x", "score": NaN}'),
    "infinity": Reply('{"reasoning": "x", "score": Infinity}'),
    "bool_score": Reply('{"reasoning": "x", "score": true}'),
    "string_score": Reply('{"reasoning": "x", "score": "1.0"}'),
    "missing_score": Reply('{"reasoning": "x"}'),
    "extra_key": Reply('{"reasoning": "x", "score": 1, "override": true}'),
    "duplicate_key": Reply('{"reasoning": "x", "score": 0.0, "score": 1.0}'),
    "array": Reply("[1.0]"),
    "empty": Reply(""),
    "null_content": Reply(None),
    "refusal": Reply(None, refusal="I can't help with grading this."),
    "content_filter": Reply('{"reasoning": "x", "score": 1.0}', finish_reason="content_filter"),
    "cut_by_max_tokens": Reply('{"reasoning": "a very long', finish_reason="length"),
    "not_a_chat_body": Reply(raw=b"<html>gateway</html>"),
    "no_choices": Reply(raw=b'{"choices": []}'),
}


@pytest.mark.parametrize("name", sorted(BAD_REPLIES))
def test_bad_reply_is_error_after_one_retry(judge_server: JudgeServer, name: str) -> None:
    judge_server.reply = lambda body: BAD_REPLIES[name]
    v = judge(judge_server).verify("4", REF)
    assert v.status == "error" and v.reward is None, v
    assert len(judge_server.requests) == 2  # one bounded protocol retry, then error
    assert len(json.loads(v.detail)["calls"]) == 2


def test_a_bad_reply_then_a_good_one_scores(judge_server: JudgeServer) -> None:
    replies = iter([Reply("garbage"), Reply('{"reasoning": "ok", "score": 0.25}')])
    judge_server.reply = lambda body: next(replies)
    v = judge(judge_server).verify("5", REF)
    assert (v.status, v.reward) == ("incorrect", 0.25)
    assert [c.get("raw") for c in json.loads(v.detail)["calls"]] == ["garbage", '{"reasoning": "ok", "score": 0.25}']


def test_outer_code_fence_is_accepted(judge_server: JudgeServer) -> None:
    judge_server.reply = lambda body: Reply('```json\n{"reasoning": "ok", "score": 1}\n```')
    assert judge(judge_server).verify("4", REF).reward == 1.0


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_http_errors_are_retried_with_backoff_then_error(judge_server: JudgeServer, status: int) -> None:
    judge_server.reply = lambda body: Reply(raw=b'{"error": "boom"}', status=status)
    v = judge(judge_server, retries=2).verify("4", REF)
    assert v.status == "error" and v.reward is None
    assert len(judge_server.requests) == 3  # 1 + 2 transport retries, no protocol retry on top
    assert f"HTTP {status}" in json.loads(v.detail)["why"]


def test_client_errors_are_not_retried(judge_server: JudgeServer) -> None:
    judge_server.reply = lambda body: Reply(raw=b'{"error": "bad model"}', status=404)
    v = judge(judge_server, retries=3).verify("4", REF)
    assert v.status == "error" and len(judge_server.requests) == 1


def test_rate_limit_then_success_honours_retry_after(judge_server: JudgeServer) -> None:
    replies = iter([Reply(raw=b"{}", status=429, headers={"Retry-After": "0.3"}),
                    Reply('{"reasoning": "ok", "score": 1}')])
    judge_server.reply = lambda body: next(replies)
    start = time.monotonic()
    v = judge(judge_server).verify("4", REF)
    assert v.reward == 1.0 and time.monotonic() - start >= 0.3


def test_timeout_is_error_not_zero(judge_server: JudgeServer) -> None:
    judge_server.reply = lambda body: Reply('{"reasoning": "late", "score": 1}', delay_s=1.5)
    v = judge(judge_server, timeout_s=0.3, retries=1).verify("4", REF)
    assert v.status == "error" and v.reward is None and "timeout" in json.loads(v.detail)["why"]
    assert v.elapsed_s < 1.4


def test_unreachable_server_is_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    v = JudgeVerifier(base_url=f"http://127.0.0.1:{port}/v1", model="m", retries=1, backoff_s=0.01).verify("4", REF)
    assert v.status == "error" and v.reward is None and "connection error" in json.loads(v.detail)["why"]


def test_empty_response_is_no_answer_without_a_call(judge_server: JudgeServer) -> None:
    v = judge(judge_server).verify("  \n", REF)
    assert (v.status, v.reward) == ("no_answer", 0.0) and not judge_server.requests


def test_reference_without_question_is_error(judge_server: JudgeServer) -> None:
    for bad in ("4", {"reference": "4"}, {"prompt": "q", "answer": "4"}, None):
        v = judge(judge_server).verify("4", bad)
        assert v.status == "error" and v.reward is None and "prompt" in json.loads(v.detail)["why"]
    assert not judge_server.requests


def test_cache_reuses_scores_across_calls_and_runs(judge_server: JudgeServer, tmp_path: Any) -> None:
    path = str(tmp_path / "cache.jsonl")
    judge_server.reply = lambda body: Reply('{"reasoning": "ok", "score": 0.9}')
    first = judge(judge_server, cache_path=path)
    assert first.verify("4", REF).reward == 0.9 and first.verify("4", REF).reward == 0.9
    assert len(judge_server.requests) == 1 and json.loads(first.verify("4", REF).detail)["cached"]
    again = judge(judge_server, cache_path=path)  # a resumed run
    assert again.verify("4", REF).reward == 0.9 and len(judge_server.requests) == 1
    assert judge(judge_server, cache_path=path).verify("5", REF).reward == 0.9 and len(judge_server.requests) == 2
    assert judge(judge_server, cache=False).verify("4", REF) and len(judge_server.requests) == 3


def test_failures_are_never_cached(judge_server: JudgeServer) -> None:
    replies = iter([Reply("bad"), Reply("bad"), Reply('{"reasoning": "ok", "score": 1}')])
    judge_server.reply = lambda body: next(replies)
    j = judge(judge_server)
    assert j.verify("4", REF).status == "error"
    assert j.verify("4", REF).reward == 1.0


def test_concurrency_cap(judge_server: JudgeServer) -> None:
    live = [0, 0]
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> Reply:
        with lock:
            live[0] += 1
            live[1] = max(live[1], live[0])
        time.sleep(0.15)
        with lock:
            live[0] -= 1
        return Reply('{"reasoning": "ok", "score": 1}')

    judge_server.reply = reply
    verdicts = judge(judge_server, max_concurrency=2).verify_batch([(f"answer {i}", REF) for i in range(6)])
    assert [v.reward for v in verdicts] == [1.0] * 6 and live[1] == 2


def test_api_key_from_env_var(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLVR_TEST_JUDGE_KEY", "sk-test")
    judge(judge_server, api_key_env="RLVR_TEST_JUDGE_KEY").verify("4", REF)
    assert judge_server.requests[-1]["_auth"] == "Bearer sk-test"
    monkeypatch.delenv("RLVR_TEST_JUDGE_KEY")
    with pytest.raises(ConfigError, match="RLVR_TEST_JUDGE_KEY"):
        get_verifier("judge", base_url=judge_server.url, model="m", api_key_env="RLVR_TEST_JUDGE_KEY")
    assert "sk-test" not in json.dumps(judge(judge_server).config.model_dump())
    assert os.environ.get("RLVR_TEST_JUDGE_KEY") is None


def test_registry_builds_both_judges(judge_server: JudgeServer) -> None:
    assert get_verifier("judge", base_url=judge_server.url, model="m").name == "judge"
    assert get_verifier("ruler", base_url=judge_server.url, model="m").name == "ruler"
    with pytest.raises(ConfigError, match="model"):
        get_verifier("judge", base_url=judge_server.url)
    with pytest.raises(ConfigError, match="unknown option"):
        get_verifier("judge", base_url=judge_server.url, model="m", temprature=0.1)
