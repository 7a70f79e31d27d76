r"""Math environments: GSM8K, MATH (MATH-500) and procedural reasoning-gym tasks.

Each factory returns a `SingleTurnEnv`. Keyword arguments are what `rlvr ... --env-arg KEY=VALUE`
passes (values JSON-decoded by `rlvr.runners.args.parse_env_args`); arguments a factory does not
name go to the verifier (e.g. `timeout_s=5`, `percent="fraction"`).

- `make_gsm8k`: rows `question`/`answer`; the reference is the number after `####`, the full
  solution is kept in `metadata["solution"]`.
- `make_math`: rows `problem` + `answer` (or `solution`, whose last `\boxed{}` is the answer).
- `make_reasoning_gym`: any reasoning-gym generator, offline and seeded (`spec.seeding` is
  'procedural'). Numeric generators are scored by the math verifier; others by the generator's
  own `score_answer` (`verifier="reasoning_gym"`).

`format_weight > 0` wraps the verifier in `FormatReward` (a `format` component for a well-formed,
non-empty final answer) and widens `spec.reward_range` by that weight.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.arithmetic import SPLITS, split_of
from rlvr.environments.loaders import Rows, TaskList, load_rows, require_field
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.verifiers.base import Verifier
from rlvr.verifiers.registry import get_verifier
from rlvr.verifiers.wrappers import FormatReward, last_boxed

__all__ = ["EASY_ARITHMETIC", "gsm8k_answer", "make_easy_arithmetic", "make_gsm8k", "make_math", "make_reasoning_gym"]

MATH_SYSTEM_PROMPT = (
    "Solve the problem step by step. At the end, write your final answer inside \\boxed{}, "
    "for example: The final answer is \\boxed{42}."
)
"""Default system prompt of the math environments (the math verifier reads `\\boxed{}` first)."""

ANSWER_TAG_SYSTEM_PROMPT = (
    "Solve the problem step by step. At the end, give only your final answer between <answer> and "
    "</answer> tags, for example: <answer>42</answer>."
)
"""Default system prompt when scoring with reasoning-gym's own grader (it reads `<answer>` tags)."""

ANSWER_TAG_PATTERN = r"<answer>(.*?)</answer>"
"""Format pattern used by `FormatReward` with the reasoning-gym verifier."""

EASY_ARITHMETIC: dict[str, Any] = {
    "min_terms": 2,
    "max_terms": 2,
    "min_digits": 1,
    "max_digits": 1,
    "operators": ["+", "-"],
    "allow_parentheses": False,
    "allow_negation": False,
}
"""`basic_arithmetic` config easy enough for a ~135M-parameter model to learn (e.g. '7 - 3')."""

NUMERIC_GENERATORS = frozenset({
    "basic_arithmetic", "chain_sum", "products", "decimal_arithmetic", "decimal_chain_sum", "leg_counting",
    "gsm_symbolic", "gcd", "lcm", "count_bits", "count_primes", "simple_equations", "letter_counting",
})
"""reasoning-gym generators whose answers are plain numbers: scored by the math verifier by default."""


def gsm8k_answer(solution: str) -> str | None:
    """The final answer of a GSM8K solution: the text after the last `####`, commas removed."""
    if "####" not in solution:
        return None
    answer = solution.rsplit("####", 1)[1].strip().replace(",", "")
    return answer or None


def _prompt(system_prompt: str | None, user: str) -> tuple[Message, ...]:
    user_msg = Message(role="user", content=user)
    return (Message(role="system", content=system_prompt), user_msg) if system_prompt else (user_msg,)


def _reward_range(verifier: Verifier) -> tuple[float, float]:
    cfg = verifier.config
    names = ("correct_reward", "incorrect_reward", "no_answer_reward")
    values = [float(getattr(cfg, n)) for n in names if isinstance(getattr(cfg, n, None), (int, float))]
    return (min([0.0, *values]), max([1.0, *values]))


def _build_verifier(
    verifier: Verifier | str | None, default: str, overrides: dict[str, Any], format_weight: float, pattern: str | None
) -> tuple[Verifier, tuple[float, float]]:
    """Resolve the verifier argument, wrap it for format rewards, and compute the reward range."""
    if isinstance(verifier, Verifier):
        if overrides:
            raise ConfigError(f"got a Verifier instance and verifier options {sorted(overrides)}; "
                              "configure the instance instead")
        built = verifier
    else:
        try:
            built = get_verifier(verifier or default, **overrides)
        except ConfigError as exc:
            raise ConfigError(f"{exc} (arguments the environment factory does not name go to the verifier)") from exc
    lo, hi = _reward_range(built)
    if format_weight < 0:
        raise ConfigError(f"format_weight must be >= 0, got {format_weight}")
    if format_weight > 0:
        built = FormatReward(built, weight=format_weight, pattern=pattern)
        hi += format_weight
    return built, (lo, hi)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _got(value: Any) -> str:
    return f"got {value!r} ({type(value).__name__})"


def _check_int(name: str, value: Any, minimum: int | None, example: str) -> None:
    """Raise ConfigError unless `value` is an int (>= `minimum` when given), naming the field and a fix."""
    if not _is_int(value) or (minimum is not None and value < minimum):
        kind = "an int" if minimum is None else ("a positive int" if minimum == 1 else f"an int >= {minimum}")
        raise ConfigError(f"{name} must be {kind}, {_got(value)}; e.g. {example} (CLI: --env-arg {example})")


def _check_options(format_weight: Any, system_prompt: Any, verifier: Any, **texts: Any) -> None:
    """Validate the arguments every math factory shares; `texts` are required strings (None allowed for hf_config)."""
    if isinstance(format_weight, bool) or not isinstance(format_weight, (int, float)) or format_weight < 0:
        raise ConfigError(f"format_weight must be a number >= 0, {_got(format_weight)}; e.g. format_weight=0.2")
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise ConfigError(f"system_prompt must be a string (or None for none), {_got(system_prompt)}")
    if verifier is not None and not isinstance(verifier, (str, Verifier)):
        raise ConfigError(f"verifier must be a Verifier, a verifier name such as 'math', or None, {_got(verifier)}")
    for name, value in texts.items():
        if not (isinstance(value, str) and value) and not (value is None and name == "hf_config"):
            raise ConfigError(f"{name} must be a non-empty string, {_got(value)}")


def _check_dataset_args(path: Any, limit: Any) -> None:
    if path is not None and not isinstance(path, (str, Path)):
        raise ConfigError(f"path must be a file path (str or Path) or None, {_got(path)}")
    if limit is not None:
        _check_int("limit", limit, 1, "limit=100")


def _check_rg_args(task: Any, size: Any, seed: Any, format_weight: Any, system_prompt: Any, verifier: Any) -> None:
    _check_int("size", size, 1, "size=1000")
    _check_int("seed", seed, None, "seed=0")
    _check_options(format_weight, system_prompt, verifier, task=task)


def _limit(rows: Rows, limit: int | None) -> Rows:
    if limit is None:
        return rows
    return Rows(rows[:limit], rows.source, rows.locations[:limit])


def make_gsm8k(
    path: str | Path | None = None,
    split: str = "test",
    limit: int | None = None,
    system_prompt: str | None = MATH_SYSTEM_PROMPT,
    format_weight: float = 0.0,
    verifier: Verifier | str | None = None,
    hf_id: str = "openai/gsm8k",
    hf_config: str | None = "main",
    **verifier_overrides: Any,
) -> SingleTurnEnv:
    r"""GSM8K word problems, scored by the math verifier against the number after `####`.

    Args:
        path: local `.jsonl`/`.json`/`.parquet` with `question`/`answer` rows; None reads `hf_id`.
        split: dataset split (`test` or `train`); also part of the task ids.
        limit: keep only the first `limit` rows.
        system_prompt: system message before each question (None or '' for none).
        format_weight: bonus for a well-formed `\boxed{}` answer (0 disables the wrapper).
        verifier: a `Verifier`, a registered verifier name, or None for `math`.
        hf_id: Hugging Face dataset id used when `path` is None.
        hf_config: its config name.
        **verifier_overrides: options of the verifier (e.g. `timeout_s=5`).

    Raises:
        DataError: unreadable file or Hub, or a row without `question` or a `####` answer (names file:line).
        ConfigError: bad options (a wrong type or range; the message names the field).
    """
    _check_dataset_args(path, limit)
    _check_options(format_weight, system_prompt, verifier, split=split, hf_id=hf_id, hf_config=hf_config)
    rows = _limit(load_rows(path, hf_id=hf_id, split=split, hf_config=hf_config), limit)
    tasks: list[Task] = []
    for i, row in enumerate(rows):
        where = rows.where(i)
        question = require_field(row, "question", where)
        solution = require_field(row, "answer", where, (str, int, float))
        answer = gsm8k_answer(str(solution)) if isinstance(solution, str) else str(solution)
        if answer is None:
            raise DataError(f"{where}: field 'answer' has no '#### <number>' final answer")
        tasks.append(Task(id=f"gsm8k-{split}-{i}", prompt=_prompt(system_prompt, question), reference=answer,
                          metadata={"solution": str(solution), "source": where}))
    built, reward_range = _build_verifier(verifier, "math", verifier_overrides, format_weight, None)
    spec = EnvSpec(id="math/gsm8k-v1", description="GSM8K grade-school math word problems.",
                   reward_range=reward_range, dataset=str(path) if path is not None else f"{hf_id}:{hf_config}/{split}")
    return SingleTurnEnv(tasks, built, spec)


def _math_reference(row: dict[str, Any], where: str) -> str:
    answer = row.get("answer")
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        return str(answer)
    if isinstance(answer, str) and answer.strip():
        return answer.strip()
    solution = row.get("solution")
    if isinstance(solution, str):
        boxed = last_boxed(solution)
        if boxed:
            return boxed
        raise DataError(f"{where}: no 'answer' field and field 'solution' has no \\boxed{{}} answer")
    raise DataError(f"{where}: missing field 'answer' (or a 'solution' with \\boxed{{}}); row has keys: "
                    f"{', '.join(sorted(row))}")


def make_math(
    path: str | Path | None = None,
    split: str = "test",
    limit: int | None = None,
    hf_id: str = "HuggingFaceH4/MATH-500",
    hf_config: str | None = None,
    system_prompt: str | None = MATH_SYSTEM_PROMPT,
    format_weight: float = 0.0,
    verifier: Verifier | str | None = None,
    **verifier_overrides: Any,
) -> SingleTurnEnv:
    r"""MATH-style problems (`problem` + `answer`, or `solution` with a `\boxed{}` answer).

    Args:
        path: local `.jsonl`/`.json`/`.parquet` file; None reads `hf_id`.
        split: dataset split; also part of the task ids.
        limit: keep only the first `limit` rows.
        hf_id: Hugging Face dataset id used when `path` is None.
        hf_config: its config name.
        system_prompt: system message before each problem (None or '' for none).
        format_weight: bonus for a well-formed `\boxed{}` answer (0 disables the wrapper).
        verifier: a `Verifier`, a registered verifier name, or None for `math`.
        **verifier_overrides: options of the verifier.

    Raises:
        DataError: unreadable file or Hub, or a row without `problem` or an answer (names file:line).
        ConfigError: bad options (a wrong type or range; the message names the field).
    """
    _check_dataset_args(path, limit)
    _check_options(format_weight, system_prompt, verifier, split=split, hf_id=hf_id, hf_config=hf_config)
    rows = _limit(load_rows(path, hf_id=hf_id, split=split, hf_config=hf_config), limit)
    tasks: list[Task] = []
    for i, row in enumerate(rows):
        where = rows.where(i)
        problem = require_field(row, "problem", where)
        extra = {k: v for k, v in row.items() if k not in ("problem", "answer") and _is_json(v)}
        tasks.append(Task(id=f"math-{split}-{i}", prompt=_prompt(system_prompt, problem),
                          reference=_math_reference(row, where), metadata={**extra, "source": where}))
    built, reward_range = _build_verifier(verifier, "math", verifier_overrides, format_weight, None)
    spec = EnvSpec(id="math/math-v1", description="MATH competition problems (MATH-500 by default).",
                   reward_range=reward_range, dataset=str(path) if path is not None else f"{hf_id}/{split}")
    return SingleTurnEnv(tasks, built, spec)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _rg_config(config: dict[str, Any] | str | None) -> dict[str, Any]:
    if config is None or config == "":
        return {}
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError as exc:
            raise ConfigError(f"config must be a dict or a JSON object string, got {config!r}: {exc}") from exc
    if not isinstance(config, dict):
        raise ConfigError(f"config must be a dict (generator options), got {type(config).__name__}")
    for key in ("seed", "size"):
        if key in config:
            raise ConfigError(f"pass {key}= to the environment, not inside config")
    return dict(config)


def _rg_dataset(task: str, seed: int, size: int, config: dict[str, Any]) -> Any:
    """Build the reasoning-gym dataset, turning its asserts and TypeErrors into ConfigError."""
    import dataclasses

    import reasoning_gym
    from reasoning_gym.factory import DATASETS

    if task not in DATASETS:
        raise ConfigError(f"unknown reasoning-gym task {task!r}; known: {', '.join(sorted(DATASETS))}")
    try:
        return reasoning_gym.create_dataset(task, seed=seed, size=size, **config)
    except (TypeError, ValueError, AssertionError) as exc:
        fields = [f.name for f in dataclasses.fields(DATASETS[task][1]) if f.name not in ("seed", "size")]
        raise ConfigError(f"reasoning-gym {task!r} rejected config {config!r}: {exc or type(exc).__name__}. "
                          f"Its config fields: {', '.join(fields)}") from exc


def make_reasoning_gym(
    task: str = "basic_arithmetic",
    size: int = 1000,
    seed: int = 0,
    config: dict[str, Any] | str | None = None,
    system_prompt: str | None = None,
    format_weight: float = 0.0,
    verifier: Verifier | str | None = None,
    split: str | None = None,
    **verifier_overrides: Any,
) -> SingleTurnEnv:
    r"""Procedural tasks from a reasoning-gym generator; offline and reproducible from `seed`.

    Args:
        task: generator name (e.g. 'basic_arithmetic', 'chain_sum', 'spell_backward').
        size: number of tasks; entries are generated lazily, on first access.
        seed: generation seed: the same (task, config, seed) gives the same tasks.
        config: generator options, a dict or a JSON object string (e.g. `EASY_ARITHMETIC`).
        system_prompt: None picks one for the verifier (`\boxed{}` for math, `<answer>` tags
            for reasoning_gym); '' for no system message.
        format_weight: bonus for a well-formed final answer (0 disables the wrapper).
        verifier: a `Verifier`, 'math', 'reasoning_gym', or None: 'math' for the numeric
            generators in `NUMERIC_GENERATORS`, 'reasoning_gym' otherwise.
        split: None (every generated task, repeats included: reasoning-gym has no splits), or
            'train' / 'validation' / 'test': `size` *distinct* problems whose key falls in that split's
            SHA-256 buckets (`rlvr.environments.arithmetic.split_of`, 80 / 10 / 10 %), so the splits are
            disjoint by construction. The key is the generator's `metadata["expression"]` where it has
            one (`basic_arithmetic`: `3 + 5` asked in two phrasings is one problem), else the question.
        **verifier_overrides: options of the verifier.

    Raises:
        ConfigError: unknown generator, config the generator rejects, or bad options (a wrong
            type or range, e.g. `size="ten"` or `size=-1`; the message names the field); a split that
            holds fewer than `size` distinct problems (a small generator space: lower `size`).
    """
    _check_rg_args(task, size, seed, format_weight, system_prompt, verifier)
    options = _rg_config(config)
    if split is not None and split not in SPLITS:
        raise ConfigError(f"split must be one of {', '.join(SPLITS)} (or left out for every generated task), "
                          f"got {split!r}; e.g. split=test")
    dataset = _rg_dataset(task, seed, size if split is None else _SCAN_PER_TASK * size, options)
    picked = None if split is None else _split_entries(dataset, split, size)
    kind = verifier if isinstance(verifier, str) else None
    if verifier is None:
        kind = "math" if task in NUMERIC_GENERATORS else "reasoning_gym"
    if kind == "reasoning_gym":
        # the grader looks entries up by index: with a split, in the whole scanned range
        verifier_overrides = {"task": task, "dataset_config": options, "seed": seed, "size": len(dataset),
                              **verifier_overrides}
    built, reward_range = _build_verifier(verifier if isinstance(verifier, Verifier) else kind, "math",
                                          verifier_overrides, format_weight,
                                          ANSWER_TAG_PATTERN if kind == "reasoning_gym" else None)
    dict_reference = built.name.startswith("reasoning_gym")
    if system_prompt is None:
        system_prompt = ANSWER_TAG_SYSTEM_PROMPT if dict_reference else MATH_SYSTEM_PROMPT

    def convert(index: int, entry: dict[str, Any]) -> Task:
        answer = str(entry["answer"])
        meta = entry.get("metadata", {})
        return Task(
            id=f"rg-{task}-{seed}-{index}",
            prompt=_prompt(system_prompt, str(entry["question"])),
            reference={"index": index, "answer": answer} if dict_reference else answer,
            metadata={"task": task, "index": index, "seed": seed, "entry": meta if _is_json(meta) else None,
                      **({"split": split} if split is not None else {})},
        )

    where = f"seed={seed}&size={size}" + (f"&split={split}" if split is not None else "")
    spec = EnvSpec(id="math/reasoning-gym-v1", description=f"reasoning-gym {task!r} (procedural, offline).",
                   reward_range=reward_range, seeding="procedural",
                   dataset=f"reasoning_gym:{task}?{where}&config={json.dumps(options, sort_keys=True)}")
    if picked is None:
        return SingleTurnEnv(TaskList(dataset, convert), built, spec)
    return SingleTurnEnv(TaskList(picked, lambda _, item: convert(*item)), built, spec)


_SCAN_PER_TASK = 200
"""With a split, generated entries scanned per task asked for before the split counts as exhausted."""


def _problem_key(entry: dict[str, Any]) -> str:
    """What identifies a reasoning-gym problem across splits: its `metadata["expression"]`, else its question."""
    meta = entry.get("metadata")
    expression = meta.get("expression") if isinstance(meta, dict) else None
    return str(expression) if isinstance(expression, str) else " ".join(str(entry["question"]).split())


def _split_entries(dataset: Any, split: str, size: int) -> list[tuple[int, dict[str, Any]]]:
    """The first `size` (index, entry) pairs of `dataset` with distinct keys in `split`."""
    picked: list[tuple[int, dict[str, Any]]] = []
    seen: set[str] = set()
    for index in range(len(dataset)):
        entry = dataset[index]
        key = _problem_key(entry)
        if key not in seen and split_of(key) == split:
            seen.add(key)
            picked.append((index, entry))
            if len(picked) == size:
                return picked
    raise ConfigError(f"split {split!r} holds only {len(picked)} distinct problems in the first {len(dataset)} "
                      f"generated (size={size} asked): the generator's space is small for this config; lower size "
                      f"to {len(picked)} or less, or widen the config")


def make_easy_arithmetic(size: int = 1000, seed: int = 0, **kwargs: Any) -> SingleTurnEnv:
    """`basic_arithmetic` with `EASY_ARITHMETIC` (two 1-digit terms, + and -): learnable by a 135M model.

    Args:
        size: number of tasks.
        seed: generation seed.
        **kwargs: other `make_reasoning_gym` arguments (`format_weight`, `system_prompt`, ...).
    """
    return make_reasoning_gym(task="basic_arithmetic", size=size, seed=seed, config=dict(EASY_ARITHMETIC), **kwargs)
