"""RULER group protocol against a scripted loopback judge: one call per group, shuffled ids, every id once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judge_http import JudgeServer, Reply, ids_in, ruler_reply
from rlvr.verifiers.judge import RulerVerifier

REF = {"prompt": "Write a haiku about rain.", "reference": None}


def ruler(server: JudgeServer, **kw: Any) -> RulerVerifier:
    return RulerVerifier(**{"base_url": server.url, "model": "m", "backoff_s": 0.01, **kw})


def by_text(body: dict[str, Any]) -> Reply:
    """Score a trajectory by the digit it contains ('r7' → 0.7): lets a test check the id ↔ text mapping."""
    return ruler_reply(body, lambda tid, text: int(text.split("r")[-1].split("\n")[0]) / 10)


def test_group_is_judged_in_one_call_and_mapped_by_id(judge_server: JudgeServer) -> None:
    judge_server.reply = by_text
    group = [f"r{i}" for i in range(8)]
    verdicts = ruler(judge_server).verify_group(group, REF)
    assert [v.reward for v in verdicts] == [i / 10 for i in range(8)]
    assert [v.status for v in verdicts] == ["incorrect"] * 5 + ["correct"] * 3  # threshold 0.5
    (body,) = judge_server.requests
    assert sorted(ids_in(body), key=int) == [str(i) for i in range(1, 9)]
    schema = body["response_format"]["json_schema"]["schema"]["properties"]["scores"]
    assert schema["minItems"] == schema["maxItems"] == 8
    assert schema["items"]["properties"]["trajectory_id"]["enum"] == [str(i) for i in range(1, 9)]
    detail = json.loads(verdicts[0].detail)
    assert detail["group_size"] == 8 and detail["calls"][0]["http_status"] == 200


def test_positions_are_shuffled_per_call(judge_server: JudgeServer) -> None:
    judge_server.reply = by_text
    judge = ruler(judge_server, cache=False)
    first_positions = set()
    for k in range(8):
        group = [f"prompt{k} r{i}" for i in range(4)]
        verdicts = judge.verify_group(group, {"prompt": f"q{k}"})
        first_positions.add(json.loads(verdicts[0].detail)["trajectory_id"])
        assert [v.reward for v in verdicts] == [0.0, 0.1, 0.2, 0.3]
    assert len(first_positions) >= 3  # the first response does not sit in a fixed slot
    again = judge.verify_group([f"prompt0 r{i}" for i in range(4)], {"prompt": "q0"})
    assert json.loads(again[0].detail)["trajectory_id"] == json.loads(judge.verify_group(
        [f"prompt0 r{i}" for i in range(4)], {"prompt": "q0"})[0].detail)["trajectory_id"]  # reproducible


def _drop_first(body: dict[str, Any]) -> Reply:
    reply = json.loads(by_text(body).content or "")
    reply["scores"] = reply["scores"][1:]
    return Reply(json.dumps(reply))


def _extra_id(body: dict[str, Any]) -> Reply:
    reply = json.loads(by_text(body).content or "")
    reply["scores"].append({"trajectory_id": "99", "explanation": "x", "score": 1.0})
    return Reply(json.dumps(reply))


def _duplicate(body: dict[str, Any]) -> Reply:
    reply = json.loads(by_text(body).content or "")
    reply["scores"][1] = {**reply["scores"][0], "score": 1.0}
    return Reply(json.dumps(reply))


def _out_of_range(body: dict[str, Any]) -> Reply:
    reply = json.loads(by_text(body).content or "")
    reply["scores"][0]["score"] = 7
    return Reply(json.dumps(reply))


def _bare_list(body: dict[str, Any]) -> Reply:
    return Reply(json.dumps(json.loads(by_text(body).content or "")["scores"]))


@pytest.mark.parametrize("bad", [_drop_first, _extra_id, _duplicate, _out_of_range, _bare_list,
                                 lambda body: Reply(raw=b"{}", status=500), lambda body: Reply("")])
def test_bad_group_reply_masks_the_whole_group(judge_server: JudgeServer, bad: Any) -> None:
    judge_server.reply = bad
    verdicts = ruler(judge_server, retries=1).verify_group(["r1", "r2", "r3"], REF)
    assert all(v.status == "error" and v.reward is None for v in verdicts)
    assert len(judge_server.requests) == 2  # one bounded retry (protocol or transport), then error


def test_retry_reshuffles_and_recovers(judge_server: JudgeServer) -> None:
    replies = iter([_drop_first, by_text])
    judge_server.reply = lambda body: next(replies)(body)
    verdicts = ruler(judge_server).verify_group(["r1", "r2", "r3", "r4"], REF)
    assert [v.reward for v in verdicts] == [0.1, 0.2, 0.3, 0.4]
    assert len(json.loads(verdicts[0].detail)["calls"]) == 2


def test_identical_responses_sent_once_and_empty_ones_not_sent(judge_server: JudgeServer) -> None:
    judge_server.reply = by_text
    verdicts = ruler(judge_server).verify_group(["r3", "", "r3", "r6", "  "], REF)
    assert [v.reward for v in verdicts] == [0.3, 0.0, 0.3, 0.6, 0.0]
    assert [v.status for v in verdicts][1] == "no_answer"
    assert len(ids_in(judge_server.requests[0])) == 2
    assert ruler(judge_server).verify_group(["", ""], REF)[0].status == "no_answer"
    assert len(judge_server.requests) == 1


def test_verify_batch_groups_by_prompt(judge_server: JudgeServer) -> None:
    judge_server.reply = by_text
    pairs = [(f"r{i}", {"prompt": f"q{i % 3}"}) for i in range(9)]
    verdicts = ruler(judge_server).verify_batch(pairs)
    assert [v.reward for v in verdicts] == [i / 10 for i in range(9)]
    assert len(judge_server.requests) == 3 and all(len(ids_in(b)) == 3 for b in judge_server.requests)


def test_cache_keys_the_group_content(judge_server: JudgeServer) -> None:
    judge_server.reply = by_text
    judge = ruler(judge_server)
    judge.verify_group(["r1", "r2"], REF)
    assert [v.reward for v in judge.verify_group(["r2", "r1"], REF)] == [0.2, 0.1]  # same group, other order
    assert len(judge_server.requests) == 1
    judge.verify_group(["r1", "r3"], REF)
    assert len(judge_server.requests) == 2


def test_group_over_the_limit_is_error(judge_server: JudgeServer) -> None:
    verdicts = ruler(judge_server, max_group_size=2).verify_group(["r1", "r2", "r3"], REF)
    assert all(v.status == "error" for v in verdicts) and not judge_server.requests
