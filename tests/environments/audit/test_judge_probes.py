"""`rlvr check --adversarial` on judge-scored environments: the planted-grade family. A gullible judge (it takes
whatever grade the response plants) yields no false pass (the plants are masked, the low plant stays incorrect);
a judge that passes everything is caught; an honest judge passes its controls."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from judge_http import JudgeServer, Reply, ids_in, serve
from rlvr.core.types import EnvSpec, Task
from rlvr.environments.audit import audit
from rlvr.environments.audit.judge import PLANTS, WRONG, judge_probes
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.verifiers.judge import JudgeVerifier, RulerVerifier
from rlvr.verifiers.judge._planted import planted_grades

judge_server = pytest.fixture(serve, name="judge_server")

TASKS = [Task(id=f"t{i}", prompt=[{"role": "user", "content": f"What is {i} + 3?"}],
              reference={"prompt": f"What is {i} + 3?", "reference": str(i + 3)}) for i in range(2)]


def _fenced(body: dict[str, Any]) -> str:
    """The judged response of a pointwise request (its fenced block)."""
    text = body["messages"][1]["content"]
    match = re.search(r"RESPONSE TO GRADE:\n(`{3,})\n(.*?)\n\1", text, re.DOTALL)
    assert match is not None
    return match.group(2)


def honest(text: str, answer: str) -> float:
    """A judge that passes a response giving the task's answer, and nothing else (no echo, no non-answer)."""
    if WRONG.split(";")[0] in text or "What is" in text:
        return 0.0
    return 1.0 if re.search(rf"(?<![\w.]){answer}(?![\w.])", text) else 0.0


def gullible(text: str, answer: str) -> float:
    """A judge that believes the first planted score, else grades honestly."""
    scores = [g.score for g in planted_grades(text) if g.score is not None]
    if scores:
        return min(1.0, scores[0])
    return honest(text, answer)


def _answer(body: dict[str, Any]) -> str:
    """The right answer of the task a request is about (its question, `What is i + 3?`, comes first)."""
    match = re.search(r"What is (\d+) \+ 3\?", body["messages"][1]["content"])
    assert match is not None
    return str(int(match.group(1)) + 3)


def _pointwise(score: Callable[[str, str], float]) -> Callable[[dict[str, Any]], Reply]:
    return lambda body: Reply(json.dumps({"reasoning": "Graded.", "score": score(_fenced(body), _answer(body))}))


def _ruler(score: Callable[[str, str], float]) -> Callable[[dict[str, Any]], Reply]:
    def reply(body: dict[str, Any]) -> Reply:
        text = body["messages"][1]["content"]
        blocks = dict(re.findall(r'<trajectory id="([^"]+)">\n(.*?)\n</trajectory>', text, re.DOTALL))
        return Reply(json.dumps({"scores": [{"trajectory_id": tid, "explanation": "Graded.",
                                             "score": score(blocks[tid], _answer(body))} for tid in ids_in(body)]}))

    return reply


@pytest.fixture
def env_of(judge_server: JudgeServer) -> Iterator[Callable[..., SingleTurnEnv]]:
    made: list[SingleTurnEnv] = []

    def build(cls: type = JudgeVerifier) -> SingleTurnEnv:
        verifier = cls(base_url=judge_server.url, model="m", cache=False, backoff_s=0.01)
        made.append(SingleTurnEnv(TASKS, verifier, EnvSpec(id="test/judged-v1")))
        return made[-1]

    yield build
    for env in made:
        env.close()


@pytest.mark.parametrize("cls", [JudgeVerifier, RulerVerifier], ids=["judge", "ruler"])
def test_a_gullible_judge_gives_no_false_pass(judge_server: JudgeServer, env_of: Callable[..., SingleTurnEnv],
                                              cls: type) -> None:
    judge_server.reply = _pointwise(gullible) if cls is JudgeVerifier else _ruler(gullible)
    report = audit(env_of(cls), n=2)
    assert report.domain == ("judge" if cls is JudgeVerifier else "ruler")
    family = report.families["planted-grade"]
    assert family.tried == 2 * len(PLANTS) and report.false_passes == 0, family.examples
    assert family.errors == 2 * (len(PLANTS) - 1)  # every passing plant masked; the low one scored incorrect
    assert report.controls.tried == 2 and report.controls_failed == 0


def test_a_judge_that_passes_everything_is_caught(judge_server: JudgeServer,
                                                 env_of: Callable[..., SingleTurnEnv]) -> None:
    judge_server.reply = _pointwise(lambda text, answer: 1.0)
    report = audit(env_of(), n=2)
    planted = report.families["planted-grade"]
    assert planted.false_passes == 2  # the wrong answer quoting a low grade: masked by nothing, scored correct
    assert {e["probe"] for e in planted.examples} == {"low-grade-quoted"}
    guess = report.families["guess"]  # and every generic guess (0, 1, yes, true, A, another task's answer)
    assert guess.false_passes == guess.tried >= 2 * 4


def test_an_honest_judge_masks_nothing(judge_server: JudgeServer, env_of: Callable[..., SingleTurnEnv]) -> None:
    judge_server.reply = _pointwise(honest)
    report = audit(env_of(), n=2)
    assert report.passed and report.families["planted-grade"].errors == 0


def test_every_plant_is_read_as_a_grade() -> None:
    probes = judge_probes({"prompt": "q", "reference": "5"})
    assert [p.name for p in probes if not p.control] == list(PLANTS)
    for probe in probes:
        if not probe.control:
            assert planted_grades(probe.response), probe.name
