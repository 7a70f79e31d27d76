"""RULER holds a GRPO-sized group (issue 31 item 4): the reply budget grows with the group, so a judge writing a
one-sentence explanation per member (~51 tokens an entry: ~812 for 16) is not cut, and the group not masked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judge_http import JudgeServer, Reply, ids_in
from rlvr.verifiers.judge import JudgeVerifier, RulerVerifier

REF = {"prompt": "What is 2 + 3?", "reference": "5"}
SENTENCE = ("The trajectory states the final answer clearly and it matches the reference answer given here; "
            "it is concise, shows its work and needs no further correction.")


def honest_judge(body: dict[str, Any]) -> Reply:
    """Writes one entry per member (~51 tokens at 4 characters a token) and stops at the request's max_tokens."""
    entries = [{"trajectory_id": tid, "explanation": SENTENCE, "score": 1.0} for tid in ids_in(body)]
    text = json.dumps({"scores": entries}, indent=1)
    budget_chars = 4 * int(body["max_tokens"])
    if len(text) > budget_chars:
        return Reply(text[:budget_chars], finish_reason="length")
    return Reply(text)


def _ruler(server: JudgeServer, **kw: Any) -> RulerVerifier:
    return RulerVerifier(base_url=server.url, model="m", backoff_s=0.01, cache=False, **kw)


def test_the_simulated_entry_is_about_51_tokens() -> None:
    entry = json.dumps({"trajectory_id": "16", "explanation": SENTENCE, "score": 1.0}, indent=1)
    assert 45 <= len(entry) / 4 <= 60


@pytest.mark.parametrize("members", [1, 4, 8, 16, 24, 32])
def test_a_group_up_to_max_group_size_is_not_cut(judge_server: JudgeServer, members: int) -> None:
    judge_server.reply = honest_judge
    verdicts = _ruler(judge_server).verify_group([f"answer {i}: 5" for i in range(members)], REF)
    assert [v.status for v in verdicts] == ["correct"] * members, verdicts[0].detail
    (request,) = judge_server.requests
    assert request["max_tokens"] >= 512 and request["max_tokens"] >= 64 + 96 * members


def test_the_issue_case_was_cut_at_a_fixed_512(judge_server: JudgeServer) -> None:
    """The same judge with the budget pinned below one sentence per member cuts the reply: the group is masked."""
    judge_server.reply = honest_judge
    verdicts = _ruler(judge_server, max_tokens=512, max_tokens_per_trajectory=16).verify_group(
        [f"answer {i}: 5" for i in range(16)], REF)
    assert {v.status for v in verdicts} == {"error"}
    assert "cut by max_tokens" in json.loads(verdicts[0].detail)["why"]


def test_max_tokens_stays_the_floor_and_the_pointwise_budget(judge_server: JudgeServer) -> None:
    judge_server.reply = honest_judge
    _ruler(judge_server, max_tokens=2048).verify_group(["5", "4"], REF)
    assert judge_server.requests[-1]["max_tokens"] == 2048
    judge_server.reply = lambda body: Reply('{"reasoning": "ok", "score": 1.0}')
    JudgeVerifier(base_url=judge_server.url, model="m", cache=False).verify("5", REF)
    assert judge_server.requests[-1]["max_tokens"] == 512
