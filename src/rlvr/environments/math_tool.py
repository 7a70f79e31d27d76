r"""Math with a calculator tool: multi-turn variants of the math environments.

- `math/gsm8k-tool-v1` (`make_gsm8k_tool`): GSM8K (HF `openai/gsm8k` or a local `path=`), the
  same tasks and verifier as `math/gsm8k-v1`, plus the `calculator` tool.
- `math/reasoning-gym-tool-v1` (`make_reasoning_gym_tool`): the same over procedural
  reasoning-gym arithmetic (`basic_arithmetic` with `EASY_ARITHMETIC` by default), which needs
  no download: tests, demos and the TRL smoke run offline on it.
- `math/calculator-arithmetic-v1` (`make_calculator_arithmetic`): problems that need the tool
  (3-digit products and mixed expressions, `rlvr.environments.arithmetic`), seeded, offline, with
  `train` / `validation` / `test` splits disjoint by construction; the task family of the
  "an agent learns to use a tool" pipeline (synth -> SFT -> GRPO).

The policy calls `calculator(expression)` as a native tool call or, by default, as a Hermes /
Qwen2.5 `<tool_call>{"name": "calculator", "arguments": {...}}</tool_call>` text action; a message
without a call is the final answer, scored by the math verifier (`\boxed{}` first).

`reference_actions(task)` (the oracle policy) calls the calculator on an expression taken from
the task -- GSM8K's last `<<expression=result>>` annotation, reasoning-gym's `expression`, or the
generated problem's `metadata["expression"]` -- when it evaluates to the answer, else on the
answer itself, then gives the final answer (`answer_template` over the verifier's reference
response: the bare answer, or `BOXED_ANSWER`'s sentence for `math/calculator-arithmetic-v1`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.actions import TextTag
from rlvr.environments.arithmetic import FORMS, generate
from rlvr.environments.calculator import calculator_tool, evaluate
from rlvr.environments.math import EASY_ARITHMETIC, _build_verifier, _prompt, make_gsm8k, make_reasoning_gym
from rlvr.environments.multi_turn import ToolEnv, tool_call_message
from rlvr.environments.tools import ToolError
from rlvr.verifiers.base import Verifier
from rlvr.verifiers.registry import get_verifier
from rlvr.verifiers.wrappers import IntegerAnswer

__all__ = ["make_calculator_arithmetic", "make_gsm8k_tool", "make_reasoning_gym_tool"]

CALCULATOR_SYSTEM_PROMPT = (
    "Solve the problem step by step. You can call the calculator tool to evaluate arithmetic "
    "expressions (Python syntax, e.g. 16 - 3 - 4 or (48 / 2) * 1.5). When you are done, reply "
    "without a tool call and write your final answer inside \\boxed{}, for example: The final answer is \\boxed{42}."
)
"""Default system prompt of the calculator environments."""

ARITHMETIC_SYSTEM_PROMPT = (
    "Use the calculator tool to evaluate the expression. Then reply without a tool call and write the final "
    "answer inside \\boxed{}, for example: The final answer is \\boxed{42}."
)
"""Default system prompt of `math/calculator-arithmetic-v1` (short: every rendered token costs on a CPU)."""

ARITHMETIC_TOOL_DESCRIPTION = "Evaluate an arithmetic expression exactly (Python syntax: + - * / ** and parentheses)."
"""The calculator's description in `math/calculator-arithmetic-v1`'s tool schema (shorter than the docstring's)."""

BOXED_ANSWER = r"The final answer is \boxed{{answer}}."
"""`answer_template` of `math/calculator-arithmetic-v1`'s oracle: the answer as the system prompt asks for it."""

_ANNOTATION = re.compile(r"<<([^<>=]+)=([^<>]*)>>")
"""GSM8K calculator annotations `<<48/2=24>>` (the format of the openai/grade-school-math data)."""


class CalculatorEnv(ToolEnv):
    """A `ToolEnv` over math tasks with one tool, `calculator`.

    Args:
        tasks: math tasks (reference: the answer string, or a reasoning-gym dict with 'answer').
        verifier: the math verifier.
        spec: the manifest (tools filled in).
        max_turns: turn limit (assistant messages), at least 2 (a call and an answer).
        calculator_timeout_s: per-call limit of the calculator, seconds.
        hermes: also read `<tool_call>` text actions (for models served without tool parsing).
        reward_weights: weights of the step components `tool_calls` / `tool_errors`.
        answer_template: the oracle's final message, `{answer}` standing for the verifier's
            reference response (default: that response alone).
        tool_description: the calculator's description in its schema (None: the full docstring).
    """

    def __init__(
        self,
        tasks: Sequence[Task],
        verifier: Verifier,
        spec: EnvSpec,
        *,
        max_turns: int = 4,
        calculator_timeout_s: float = 5.0,
        hermes: bool = True,
        reward_weights: dict[str, float] | None = None,
        answer_template: str = "{answer}",
        tool_description: str | None = None,
    ) -> None:
        if not isinstance(answer_template, str) or "{answer}" not in answer_template:
            raise ConfigError(f"answer_template must be a string containing {{answer}}, got {answer_template!r}")
        self.answer_template = answer_template
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 2:
            raise ConfigError(f"max_turns must be an int >= 2 (a tool call, then the answer), got {max_turns!r}; "
                              "e.g. max_turns=4 (CLI: --env-arg max_turns=4)")
        if isinstance(calculator_timeout_s, bool) or not isinstance(calculator_timeout_s, (int, float)) \
                or calculator_timeout_s <= 0:
            raise ConfigError(f"calculator_timeout_s must be a number of seconds > 0, got {calculator_timeout_s!r}")
        super().__init__(tasks, verifier, spec, [calculator_tool(float(calculator_timeout_s), tool_description)],
                         text_tags=[TextTag.hermes()] if hermes else None, max_turns=max_turns,
                         reward_weights=reward_weights)

    def reference_actions(self, task: Task) -> list[Message] | None:
        """A calculator call that computes the answer, then the verifier's reference response."""
        try:
            final = self.verifier.reference_response(task.reference)
        except (ValueError, TypeError, KeyError):
            return None
        answer = task.reference.get("answer") if isinstance(task.reference, dict) else task.reference
        expression = _reference_expression(task, str(answer))
        return [tool_call_message("calculator", {"expression": expression}, call_id="call_0",
                                  content="Let me compute this with the calculator."),
                Message(role="assistant", content=self.answer_template.replace("{answer}", final))]


def _same_value(expression: str, answer: str) -> bool:
    try:
        return evaluate(expression) == evaluate(answer)
    except ToolError:
        return False


def _reference_expression(task: Task, answer: str) -> str:
    """An expression from the task's worked solution that evaluates to `answer`, else `answer`."""
    candidates: list[str] = []
    solution = task.metadata.get("solution")
    if isinstance(solution, str):
        candidates += [m.group(1).strip() for m in _ANNOTATION.finditer(solution)][::-1]
    entry = task.metadata.get("entry")
    if isinstance(entry, dict) and isinstance(entry.get("expression"), str):
        candidates.append(entry["expression"])
    if isinstance(task.metadata.get("expression"), str):
        candidates.append(task.metadata["expression"])
    for expression in candidates:
        if _same_value(expression, answer):
            return expression
    return answer


def _tool_env(single: Any, env_id: str, description: str, max_turns: int, calculator_timeout_s: float,
              hermes: bool, reward_weights: dict[str, float] | None, **options: Any) -> CalculatorEnv:
    if not isinstance(hermes, bool):
        raise ConfigError(f"hermes must be true or false, got {hermes!r}")
    spec = single.spec.model_copy(update={"id": env_id, "description": description})  # max_turns set by the env
    return CalculatorEnv(single.tasks, single.verifier, spec, max_turns=max_turns,
                         calculator_timeout_s=calculator_timeout_s, hermes=hermes, reward_weights=reward_weights,
                         **options)


def make_gsm8k_tool(
    path: str | Path | None = None,
    split: str = "test",
    limit: int | None = None,
    system_prompt: str | None = CALCULATOR_SYSTEM_PROMPT,
    max_turns: int = 4,
    calculator_timeout_s: float = 5.0,
    hermes: bool = True,
    reward_weights: dict[str, float] | None = None,
    format_weight: float = 0.0,
    verifier: Verifier | str | None = None,
    hf_id: str = "openai/gsm8k",
    hf_config: str | None = "main",
    **verifier_overrides: Any,
) -> CalculatorEnv:
    r"""GSM8K with a calculator tool (`math/gsm8k-tool-v1`).

    Args:
        path: local `.jsonl`/`.json`/`.parquet` with `question`/`answer` rows; None reads `hf_id`.
        split: dataset split; also part of the task ids.
        limit: keep only the first `limit` rows.
        system_prompt: system message (None or '' for none).
        max_turns: turn limit, >= 2 (calls + final answer).
        calculator_timeout_s: per-call limit of the calculator, seconds.
        hermes: also read `<tool_call>` text actions.
        reward_weights: weights of the step components (`tool_calls`, `tool_errors`).
        format_weight: bonus for a well-formed `\boxed{}` answer.
        verifier: a `Verifier`, a verifier name, or None for `math`.
        hf_id: Hugging Face dataset id used when `path` is None.
        hf_config: its config name.
        **verifier_overrides: options of the verifier (e.g. `timeout_s=5`).

    Raises:
        DataError: unreadable data or a malformed row. ConfigError: bad options.
    """
    single = make_gsm8k(path=path, split=split, limit=limit, system_prompt=system_prompt,
                        format_weight=format_weight, verifier=verifier, hf_id=hf_id, hf_config=hf_config,
                        **verifier_overrides)
    return _tool_env(single, "math/gsm8k-tool-v1", "GSM8K word problems with a calculator tool.", max_turns,
                     calculator_timeout_s, hermes, reward_weights)


def make_reasoning_gym_tool(
    task: str = "basic_arithmetic",
    size: int = 1000,
    seed: int = 0,
    config: dict[str, Any] | str | None = None,
    system_prompt: str | None = CALCULATOR_SYSTEM_PROMPT,
    max_turns: int = 4,
    calculator_timeout_s: float = 5.0,
    hermes: bool = True,
    reward_weights: dict[str, float] | None = None,
    format_weight: float = 0.0,
    verifier: Verifier | str | None = None,
    **verifier_overrides: Any,
) -> CalculatorEnv:
    """Procedural reasoning-gym arithmetic with a calculator tool (`math/reasoning-gym-tool-v1`), offline.

    Args:
        task: reasoning-gym generator (numeric ones suit a calculator: basic_arithmetic, chain_sum, ...).
        size: number of tasks.
        seed: generation seed.
        config: generator options; None uses `EASY_ARITHMETIC` for `basic_arithmetic`, {} otherwise.
        system_prompt: system message; None picks the reasoning-gym default for the verifier, '' for none.
        max_turns: turn limit, >= 2.
        calculator_timeout_s: per-call limit of the calculator, seconds.
        hermes: also read `<tool_call>` text actions.
        reward_weights: weights of the step components.
        format_weight: bonus for a well-formed final answer.
        verifier: a `Verifier`, a verifier name, or None (the math verifier for numeric generators).
        **verifier_overrides: options of the verifier.

    Raises:
        ConfigError: unknown generator, rejected config, or bad options.
    """
    if config is None and task == "basic_arithmetic":
        config = dict(EASY_ARITHMETIC)
    single = make_reasoning_gym(task=task, size=size, seed=seed, config=config,
                                system_prompt=system_prompt,
                                format_weight=format_weight, verifier=verifier, **verifier_overrides)
    return _tool_env(single, "math/reasoning-gym-tool-v1", f"reasoning-gym {task!r} with a calculator tool.",
                     max_turns, calculator_timeout_s, hermes, reward_weights)


def make_calculator_arithmetic(
    split: str = "train",
    size: int = 1000,
    seed: int = 0,
    forms: Sequence[str] | None = None,
    digits: int = 3,
    system_prompt: str | None = ARITHMETIC_SYSTEM_PROMPT,
    max_turns: int = 4,
    calculator_timeout_s: float = 5.0,
    hermes: bool = True,
    reward_weights: dict[str, float] | None = None,
    format_weight: float = 0.0,
    verifier: Verifier | str | None = None,
    **verifier_overrides: Any,
) -> CalculatorEnv:
    """Arithmetic that needs the calculator (`math/calculator-arithmetic-v1`), offline and seeded.

    Problems come from `rlvr.environments.arithmetic.generate`: 3-digit products and mixed
    expressions (`FORMS`), each in one of a few phrasings; `split` picks a part of the problem
    space disjoint from the others by construction (`split_of`), so `split="test"` is held out of
    any `train` run, whatever the seeds. Task ids are `calc-<split>-<seed>-<index>`; the reference
    is the exact integer answer; `metadata["expression"]` is what the oracle gives the calculator.
    The verifier is wrapped in `IntegerAnswer`: the answer must be the value written as an integer
    (the math verifier alone would score the restated expression `347 * 829` correct).

    Args:
        split: 'train', 'validation' or 'test'.
        size: number of tasks.
        seed: generation seed.
        forms: `FORMS` names to draw from (None: all); e.g. `["product"]` for a narrower slice.
        digits: digits of each operand (2-6).
        system_prompt: system message (None or '' for none).
        max_turns: turn limit, >= 2.
        calculator_timeout_s: per-call limit of the calculator, seconds.
        hermes: also read `<tool_call>` text actions.
        reward_weights: weights of the step components (`tool_calls`, `tool_errors`).
        format_weight: bonus for a well-formed boxed answer.
        verifier: a `Verifier`, a verifier name, or None for `math`.
        **verifier_overrides: options of the verifier.

    Raises:
        ConfigError: bad options (unknown split or form, size < 1, ...).
    """
    chosen = tuple(FORMS) if forms is None else forms
    problems = generate(split, size, seed, chosen, digits)
    if isinstance(verifier, Verifier) and verifier_overrides:
        raise ConfigError(f"got a Verifier instance and verifier options {sorted(verifier_overrides)}; "
                          "configure the instance instead")
    inner = verifier if isinstance(verifier, Verifier) else get_verifier(verifier or "math", **verifier_overrides)
    built, reward_range = _build_verifier(IntegerAnswer(inner), "math", {}, format_weight, None)
    tasks = [Task(id=f"calc-{split}-{seed}-{i}", prompt=_prompt(system_prompt, p.question), reference=str(p.answer),
                  metadata={"expression": p.expression, "form": p.form, "split": split, "seed": seed, "index": i})
             for i, p in enumerate(problems)]
    spec = EnvSpec(id="math/calculator-arithmetic-v1", description=f"{split} arithmetic that needs a calculator tool.",
                   reward_range=reward_range, seeding="procedural",
                   dataset=f"rlvr.environments.arithmetic?split={split}&seed={seed}&size={size}"
                           f"&forms={','.join(chosen)}&digits={digits}")
    single = SimpleNamespace(tasks=tasks, verifier=built, spec=spec)
    return _tool_env(single, spec.id, spec.description, max_turns, calculator_timeout_s, hermes, reward_weights,
                     answer_template=BOXED_ANSWER, tool_description=ARITHMETIC_TOOL_DESCRIPTION)
