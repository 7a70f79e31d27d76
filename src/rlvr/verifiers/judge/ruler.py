"""`RulerVerifier`: RULER-style group-relative judging — one call scores every response to one prompt.

Protocol (OpenPipe ART `art/rewards/ruler.py`, so its prompts carry over): the group's responses go to
the judge in one call, each in a `<trajectory id="ID">…</trajectory>` block, and the reply is
`{"scores": [{"trajectory_id": ID, "explanation": str, "score": number}]}`. Unlike ART:

- the order is shuffled per call (seeded by the group's content, `seed` and the attempt, so a
  verdict is reproducible but no trajectory keeps a fixed position: no position bias);
- every id must come back exactly once (ART zips scores by position and never reads the ids);
- a score outside [0, 1] is rejected, never used;
- a failure after one bounded retry is an `error` verdict (reward None) for every member of the
  group — nothing is printed and dropped (ART's `swallow_exceptions`, OpenPipe/ART #394);
- the reply budget grows with the group (`reply_tokens`: `max_tokens_per_trajectory` per member, at
  least `max_tokens`), so a GRPO-sized group is not cut and masked;
- identical responses are sent once and share their score; empty ones are `no_answer` (reward 0)
  and not sent;
- a member whose response plants a passing grade (`_planted`) and gets a passing score is `error`
  (masked), the others keep theirs; a low score stands whatever the response planted.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rlvr.core.errors import ConfigError
from rlvr.core.types import Verdict
from rlvr.verifiers.judge._base import JudgeBase, Request, judge_detail
from rlvr.verifiers.judge._cache import cache_key
from rlvr.verifiers.judge._planted import planted_problem
from rlvr.verifiers.judge._prompt import ruler_messages, ruler_schema
from rlvr.verifiers.judge._reply import Score, parse_ruler
from rlvr.verifiers.judge.config import JudgeReference, RulerConfig, as_judge_reference
from rlvr.verifiers.threads import Grouping, ThreadPool

__all__: list[str] = []

REPLY_OVERHEAD_TOKENS = 64
"""Tokens of a RULER reply besides its entries (`{"scores": [...]}`, whitespace)."""


def group_key(reference: Any) -> str:
    """The group of a pair: equal references (same prompt) judge together; a reference that is not one is alone."""
    try:
        return as_judge_reference(reference).model_dump_json()
    except ConfigError:
        return f"bad:{id(reference)}"  # judged alone, becomes an error verdict


class RulerVerifier(JudgeBase):
    """Judge the responses to one prompt together, relative to each other (see the module docstring).

    `verify_group(responses, reference)` scores one group in the calling thread; `verify_groups(groups)`
    scores several at once in the verifier's pool; `verify_batch(pairs)` groups pairs whose references
    are equal (`grouping`: the trainer adapters' batches hold `num_generations` copies of each prompt);
    `verify(response, reference)` judges a group of one (absolute scoring). `reference` is
    as for `JudgeVerifier`. Status from `threshold`, reward = the score; `detail` as for
    `JudgeVerifier` plus `trajectory_id` (as shown in the call), `group_size` and `unique_sent`.
    """

    name: ClassVar[str] = "ruler"
    config: RulerConfig
    config_type = RulerConfig

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """Judge one response as a group of one."""
        return self._score_alone

    def _score_alone(self, response: str, reference: Any) -> Verdict:
        return self.verify_group([response], reference)[0]

    def grouping(self) -> Grouping:
        """Pairs with equal references (`group_key`) are judged together by `verify_group`."""
        return group_key, self.verify_group

    def verify_groups(self, groups: Sequence[tuple[Sequence[str], Any]]) -> list[list[Verdict]]:
        """Judge several groups `(responses, reference)` at once (at most `max_concurrency` calls); input order.

        Each group call is under the pool's watchdog (`call_timeout_s`); one it gives up on is `timeout`
        for every member.
        """
        if self.config.scoring == "inline":
            return [self.verify_group(*g) for g in groups]
        pool = self._get_pool(self.concurrency())
        assert isinstance(pool, ThreadPool)
        outcomes = pool.map_groups(groups, self.concurrency())
        return [[self._from_outcome(o) for o in group] for group in outcomes]

    def verify_group(self, responses: Sequence[str], reference: Any) -> list[Verdict]:
        """Judge one group in one call; one verdict per response, in order. Never raises."""
        start = time.monotonic()
        try:
            return self._judge_group(list(responses), as_judge_reference(reference), start)
        except Exception as exc:  # a crash of the judge code is an error verdict for the group, never a 0
            detail = judge_detail(f"ruler judge failed: {type(exc).__name__}: {exc}")
            return [Verdict.error(detail, elapsed_s=time.monotonic() - start) for _ in responses]

    def _judge_group(self, responses: list[str], ref: JudgeReference, start: float) -> list[Verdict]:
        unique = list(dict.fromkeys(r for r in responses if r.strip()))
        size = {"group_size": len(responses), "unique_sent": len(unique)}
        if len(unique) > self.config.max_group_size:
            limit = self.config.max_group_size
            too_big = f"group of {len(unique)} distinct responses is over max_group_size={limit}; raise it or split"
            return [self.error(too_big, [], start, **size) for _ in responses]
        scores: dict[str, tuple[str, Score]] = {}
        calls: list[dict[str, Any]] = []
        problem: str | None = None
        cached = False
        if unique:
            scores, calls, problem, cached = self._scores(unique, ref)
        out: list[Verdict] = []
        for response in responses:
            if not response.strip():
                out.append(Verdict(status="no_answer", reward=0.0, elapsed_s=time.monotonic() - start,
                                   detail=judge_detail("empty response: not sent to the judge", **size)))
            elif problem is not None:
                out.append(self.error(problem, calls, start, **size))
            else:
                tid, score = scores[response]
                planted = planted_problem(score.value, score.reasoning, response, self.config.threshold)
                out.append(self.error(planted, calls, start, trajectory_id=tid, **size) if planted is not None
                           else self.scored(score.value, score.reasoning, calls, start, trajectory_id=tid,
                                            cached=cached, **size))
        return out

    def reply_tokens(self, members: int) -> int:
        """The reply budget of a group call: `max_tokens`, or more for a large group.

        `REPLY_OVERHEAD_TOKENS + members * max_tokens_per_trajectory` when that is larger: each member's
        entry (id, a one-sentence explanation, score) takes ~50 tokens, so a fixed 512 cuts the reply of a
        GRPO-sized group (16 members: ~812 tokens) and masks the whole group. The budget scales instead of
        refusing large groups at build time: the group size is only known per call (distinct responses).
        """
        return max(self.config.max_tokens, REPLY_OVERHEAD_TOKENS + members * self.config.max_tokens_per_trajectory)

    def _order(self, unique: list[str], question: str, attempt: int) -> list[int]:
        seed = cache_key("ruler-order", self.config.seed, question, unique, attempt)
        order = list(range(len(unique)))
        random.Random(int(seed[:16], 16)).shuffle(order)
        return order

    def _scores(self, unique: list[str], ref: JudgeReference
                ) -> tuple[dict[str, tuple[str, Score]], list[dict[str, Any]], str | None, bool]:
        """Map each response → (id shown, Score) for the distinct responses; plus calls, problem, cached."""
        question = ref.question_text()
        rubric = ref.rubric or self.config.rubric
        key = cache_key("ruler", self.config.model, rubric, question, ref.reference, sorted(unique),
                        self.config.max_response_chars, self.config.temperature)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            cached = {r: (str(v["id"]), Score(float(v["score"]), str(v["explanation"]))) for r, v in json.loads(hit)}
            if set(cached) == set(unique):
                return cached, [], None, True
        shown: dict[int, list[str]] = {}  # attempt → unique response index per id position

        def build(attempt: int) -> Request:
            order = self._order(unique, question, attempt)
            shown[attempt] = [str(p + 1) for p in range(len(order))]
            trajectories = [(str(p + 1), unique[i]) for p, i in enumerate(order)]
            messages, _cut = ruler_messages(question, trajectories, rubric, ref.reference,
                                            self.config.max_response_chars)
            shown_order[attempt] = order
            return messages, ruler_schema(shown[attempt]), "ruler_scores", self.reply_tokens(len(unique))

        shown_order: dict[int, list[int]] = {}

        def parse(content: str | None, attempt: int) -> dict[str, tuple[str, Score]]:
            by_id = parse_ruler(content, shown[attempt])
            order = shown_order[attempt]
            return {unique[i]: (str(p + 1), by_id[str(p + 1)]) for p, i in enumerate(order)}

        asked = self.ask(build, parse)
        if asked.problem is not None:
            return {}, asked.calls, asked.problem, False
        value: dict[str, tuple[str, Score]] = asked.value
        if self.cache is not None:
            self.cache.put(key, json.dumps([[r, {"id": tid, "score": s.value, "explanation": s.reasoning}]
                                            for r, (tid, s) in value.items()], ensure_ascii=False))
        return value, asked.calls, None, False
