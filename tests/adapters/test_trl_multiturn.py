"""TRL multi-turn: `environment_factory` class and `rollout_func`, tested against TRL 1.16's real GRPOTrainer (CPU).

The environments are real rlvr `ToolEnv`/`MultiTurnEnv`s over offline reasoning-gym tasks with the
real math verifier; the policy is a tiny random Llama with the real SmolLM2 tokenizer, given TRL's
shipped `qwen2_5.jinja` tool template (SmolLM2's own template cannot render tool calls).
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

pytestmark = pytest.mark.trl
trl = pytest.importorskip("trl")
pytest.importorskip("datasets")

from rlvr.adapters.trl import to_dataset  # noqa: E402
from rlvr.adapters.trl.agent import (  # noqa: E402
    EpisodeReward,
    environment_factory,
    environment_tools,
    tool_calling_tokenizer,
)
from rlvr.adapters.trl.data import task_from_row  # noqa: E402
from rlvr.adapters.trl.rollout import RolloutReward  # noqa: E402
from rlvr.core.errors import AdapterError, ConfigError  # noqa: E402
from rlvr.core.metrics import EPISODE_METRICS, episode_metrics  # noqa: E402
from rlvr.core.types import EnvSpec, Message, Task, Verdict  # noqa: E402
from rlvr.environments.multi_turn import MultiTurnEnv, ToolEnv  # noqa: E402
from rlvr.verifiers.registry import get_verifier  # noqa: E402

TRL_GC_WARNING = "ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"
EASY = {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1, "operators": ["+", "-"]}
TOOL_ENV_ID = "math/reasoning-gym-tool-v1"
GSM8K_STYLE_ROWS = [  # written by the tests in the openai/grade-school-math format (question, answer with ####)
    {"question": "Ana has 3 boxes with 4 pens each. How many pens does she have?",
     "answer": "Each box has 4 pens, so 3 boxes have <<3*4=12>>12 pens.\n#### 12"},
    {"question": "A train travels 60 km per hour for 2 hours. How far does it go?",
     "answer": "It goes <<60*2=120>>120 km.\n#### 120"},
    {"question": "Tom had 15 apples and ate 6. How many are left?",
     "answer": "He has <<15-6=9>>9 apples left.\n#### 9"},
    {"question": "A shirt costs $8. How much do 5 shirts cost?",
     "answer": "5 shirts cost <<5*8=40>>40 dollars.\n#### 40"},
]


def add(a: int, b: int = 1) -> int:
    """Add two integers.

    Args:
        a: first term.
        b: second term (default 1).
    """
    return a + b


def make_tool_env(size: int = 8, max_turns: int = 4) -> ToolEnv:
    """The offline calculator env `math/reasoning-gym-tool-v1` (easy reasoning-gym arithmetic)."""
    import rlvr

    env: ToolEnv = rlvr.make(TOOL_ENV_ID, size=size, seed=0, max_turns=max_turns)
    return env


class CheckAgainEnv(MultiTurnEnv):
    """A real multi-turn env without tools: asks the policy to check its first answer once."""

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        if self.turn == 1:
            return [Message(role="user", content="Check your answer.")], False
        return [], True


@pytest.fixture
def tool_env() -> Iterator[ToolEnv]:
    env = make_tool_env()
    yield env
    env.close()


@pytest.fixture(scope="module")
def tool_tokenizer(tiny_dir: Path) -> Any:
    from transformers import AutoTokenizer

    tokenizer, replaced = tool_calling_tokenizer(AutoTokenizer.from_pretrained(str(tiny_dir)))
    assert replaced  # SmolLM2's ChatML template renders no tool calls; TRL's qwen2_5 template does
    return tokenizer


def grpo_trainer(tiny_dir: Path, tokenizer: Any, out: Path, dataset: Any, max_completion_length: int = 40,
                 **hooks: Any) -> Any:
    from rlvr.runners.train.grpo import build_grpo_config

    args = build_grpo_config(out, 2, {"num_generations": 2, "per_device_train_batch_size": 4,
                                      "max_completion_length": max_completion_length})
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"  # TRL warns that both hooks are experimental
    return trl.GRPOTrainer(model=str(tiny_dir), processing_class=tokenizer, args=args, train_dataset=dataset, **hooks)


def _normalised(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool schema without what only one generator writes (pydantic: defaults, additionalProperties)."""
    function = schema["function"]
    params = function["parameters"]
    props = {k: {f: v for f, v in p.items() if f != "default"} for k, p in params["properties"].items()}
    return {"name": function["name"], "description": function["description"], "properties": props,
            "required": sorted(params.get("required", []))}


# -- the generated class -------------------------------------------------------------------------
def test_generated_class_exposes_rlvr_tools_with_the_same_schema(tool_env: ToolEnv) -> None:
    import inspect

    from transformers.utils import get_json_schema

    cls = environment_factory(tool_env)
    assert cls.__name__ == "MathReasoningGymToolV1Environment"
    public = [n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction) if not n.startswith("_")]
    assert public == ["calculator", "reset"]  # what TRL turns into tools: every public function but reset/get_reward
    assert not hasattr(cls, "get_reward")  # the reward needs the final answer: EpisodeReward (module docstring)
    [rlvr_tool] = environment_tools(cls)
    trl_schema = get_json_schema(cls.calculator)  # exactly what TRL/transformers render into the prompt
    assert _normalised(trl_schema) == _normalised(rlvr_tool.schema)
    assert _normalised(trl_schema)["properties"] == {"expression": {
        "type": "string", "description": "the expression to evaluate, e.g. '16 - 3 - 4' or '(48 / 2) * 1.5'."}}
    # a tool with a typed default keeps its signature (TRL binds the model's arguments to it)
    spec = tool_env.spec.model_copy(update={"id": "test/add-tool-v1", "tools": ()})
    add_cls = environment_factory(ToolEnv(tool_env.tasks, tool_env.verifier, spec, [add]))
    assert str(inspect.signature(add_cls.add)) == "(self, a: int, b: int = 1)"
    assert _normalised(get_json_schema(add_cls.add)) == _normalised(environment_tools(add_cls)[0].schema) == {
        "name": "add", "description": "Add two integers.", "required": ["a"],
        "properties": {"a": {"type": "integer", "description": "first term."},
                       "b": {"type": "integer", "description": "second term (default 1)."}}}


def test_reset_tool_and_final_answer_round_trip(tool_env: ToolEnv) -> None:
    cls = environment_factory(tool_env)
    rows = list(to_dataset(tool_env))
    first, second = cls(), cls()
    assert first.reset(**rows[0]) is None and second.reset(**rows[1]) is None  # the row prompt is the env prompt
    assert first.task is not None and first.task.id == rows[0]["task_id"] == tool_env.tasks[0].id
    assert first.calculator(expression="2 + 3") == "5" and first.calculator("(48 / 2) * 1.5") == "36"
    refused = first.calculator(expression="__import__('os')")  # the error goes back to the model, no crash
    assert refused.startswith("Error:") and "no imports" in refused
    assert [m.role for m in first.env.messages[-2:]] == ["assistant", "tool"]
    assert first.env.messages[-2].tool_calls[0].name == "calculator"  # the rlvr env saw each call
    assert len(second.env.messages) == len(tool_env.tasks[1].prompt)  # instances never share episode state
    unknown = second.calculator(expr="1")  # TRL passes the model's arguments as they are; rlvr's validation answers
    assert unknown.startswith("Error: invalid arguments for tool 'calculator'") and "unknown argument 'expr'" in unknown
    answer = tool_env.verifier.reference_response(tool_env.tasks[0].reference)
    verdict = first._finish(answer)
    assert verdict.status == "correct" and verdict.reward == 1.0 and first.verdict == verdict
    assert second._finish("no idea").status in ("incorrect", "no_answer")
    first.reset(**rows[0])  # a pooled instance starts over
    assert first.verdict is None and len(first.env.messages) == len(tool_env.tasks[0].prompt)


def test_turn_limit_ends_episode_during_tool_calls(tool_env: ToolEnv) -> None:
    cls = environment_factory(make_tool_env(max_turns=2))
    env = cls()
    env.reset(**to_dataset(tool_env)[0])
    assert env.calculator("1 + 1") == "2"
    env.calculator("2 + 2")  # the second turn reaches max_turns=2: the rlvr env truncates and scores
    assert env.verdict is not None and env.calculator("3").startswith("Error: the episode is over")
    assert env._finish("3") is env.verdict  # the env's truncation rule: the late answer is not scored
    env._rlvr_prototype.close()


def test_episode_reward_masks_error_verdicts(tool_env: ToolEnv) -> None:
    cls = environment_factory(tool_env)
    rows = list(to_dataset(tool_env))
    bad = {**rows[1], "rlvr_reference": "not json {"}
    envs = [cls(), cls(), cls()]
    for env, row in zip(envs, [rows[0], bad, rows[0]], strict=True):
        env.reset(**row)
    assert envs[1].calculator("1").startswith("Error: this task cannot be run")
    answer = tool_env.verifier.reference_response(tool_env.tasks[0].reference)
    completions = [[{"role": "assistant", "content": answer}], [{"role": "assistant", "content": answer}],
                   [{"role": "assistant", "content": "", "tool_calls": [{"type": "function"}]}]]
    metrics: dict[str, list[float]] = {}
    reward = EpisodeReward("rlvr_test")
    got = reward(prompts=[r["prompt"] for r in rows[:3]], completions=completions, environments=envs,
                 log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
    assert got == [1.0, None, 0.0]  # error verdict -> None (TRL masks it), never a fake 0
    assert [v.status for v in reward.last_verdicts] == ["correct", "error", "no_answer"]
    assert metrics["rlvr/rlvr_test/error"] == [pytest.approx(1 / 3)]
    with pytest.raises(AdapterError, match="environments"):
        reward(prompts=["p"], completions=[answer])
    with pytest.raises(AdapterError, match="lacks column"):
        cls().reset(prompt=rows[0]["prompt"])


def test_factory_rejects_envs_without_tools_and_reserved_names() -> None:
    import rlvr

    base = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=2, seed=0)
    try:
        with pytest.raises(ConfigError, match="has no tools"):
            environment_factory(base)

        def reset(x: int) -> int:
            """Clash.

            Args:
                x: a number.
            """
            return x

        clash = ToolEnv(base.tasks, base.verifier, base.spec.model_copy(update={"max_turns": 2}), [reset])
        with pytest.raises(ConfigError, match="reserved"):
            environment_factory(clash)
    finally:
        base.close()
    assert task_from_row({"prompt": "hi", "task_id": 3, "rlvr_reference": '"4"'}).reference == "4"


def test_a_tool_named_run_stays_a_method_and_attribute_names_are_reserved() -> None:
    """The terminal envs' `run` tool: an instance attribute of that name used to shadow it (TRL then got None)."""
    import inspect

    import rlvr

    base = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=2, seed=0)

    def run(command: str) -> str:
        """Run a command.

        Args:
            command: the command.
        """
        return command

    def verdict(x: int) -> int:
        """Clash with an instance attribute.

        Args:
            x: a number.
        """
        return x

    try:
        spec = base.spec.model_copy(update={"max_turns": 2})
        instance = environment_factory(ToolEnv(base.tasks, base.verifier, spec, [run]))()
        methods = {n: getattr(instance, n) for n, _ in inspect.getmembers(type(instance), inspect.isfunction)
                   if not n.startswith("_")}
        assert callable(methods["run"]) and set(methods) == {"reset", "run"}  # what TRL collects as tools
        with pytest.raises(ConfigError, match="reserved"):
            environment_factory(ToolEnv(base.tasks, base.verifier, spec, [verdict]))
    finally:
        base.close()


def test_grpo_trainer_accepts_the_generated_class(tiny_dir: Path, tool_tokenizer: Any, tool_env: ToolEnv,
                                                  tmp_path: Path) -> None:
    from trl.chat_template_utils import parse_response

    cls = environment_factory(tool_env)
    trainer = grpo_trainer(tiny_dir, tool_tokenizer, tmp_path, to_dataset(tool_env),
                           reward_funcs=[EpisodeReward("rlvr_test")], environment_factory=cls)
    assert [t.__name__ for t in trainer.tools] == ["calculator"]  # TRL's own probing of the class
    assert list(trainer.reward_func_names) == ["rlvr_test"]  # no second (get_reward) reward column
    assert trainer._tokenizer.response_template is not None  # add_response_schema recognised the template
    text = tool_tokenizer.apply_chat_template([{"role": "user", "content": "1+1?"}], tools=trainer.tools,
                                              tokenize=False, add_generation_prompt=True)
    assert '"name": "calculator"' in text and "the expression to evaluate" in text
    # TRL's parser (as its tool loop calls it) turns the Qwen2.5 tool-call format into a call of the method
    prompt_ids = tool_tokenizer.encode(text, add_special_tokens=False)
    ids = tool_tokenizer.encode('<tool_call>\n{"name": "calculator", "arguments": {"expression": "7 * 6"}}\n'
                                "</tool_call><|im_end|>", add_special_tokens=False)
    call = parse_response(tool_tokenizer, ids, prefix=prompt_ids, tools=trainer.tools)["tool_calls"][0]["function"]
    env = cls()
    env.reset(**to_dataset(tool_env)[0])
    assert getattr(env, call["name"])(**call["arguments"]) == "42"


@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_trl_tool_loop_calls_rlvr_tools_and_scores_the_final_answer(
        tiny_dir: Path, tool_tokenizer: Any, tool_env: ToolEnv, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """TRL's real generate -> parse -> tool -> regenerate -> reward path, with a scripted policy at the model boundary.

    A tiny random model never writes a tool call, so `_generate_single_turn` (the only model call) replays two
    turns: a Qwen2.5 tool call, then a final answer. Everything else is TRL's own code.
    """
    cls = environment_factory(tool_env)
    reward = EpisodeReward("rlvr_test")
    trainer = grpo_trainer(tiny_dir, tool_tokenizer, tmp_path, to_dataset(tool_env), max_completion_length=96,
                           reward_funcs=[reward], environment_factory=cls)
    encode = lambda text: tool_tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    call = encode('<tool_call>\n{"name": "calculator", "arguments": {"expression": "2 + 3"}}\n</tool_call><|im_end|>')
    answer = encode("So the answer is \\boxed{5}.<|im_end|>")
    turns = iter([call, answer])

    def scripted(prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> tuple[list[list[int]], None]:
        ids = next(turns)
        return [list(ids) for _ in prompt_ids], None

    monkeypatch.setattr(trainer, "_generate_single_turn", scripted)
    rows = to_dataset(tool_env).select([0, 0, 1, 1])
    out = trainer._generate_and_score_completions([dict(r) for r in rows])
    for i, env in enumerate(trainer.environments):
        roles = [m.role for m in env.env.messages[len(env.task.prompt):]]
        assert roles == ["assistant", "tool", "assistant"] and env.env.messages[-2].content == "5"
        assert env.env.messages[-1].content == "So the answer is \\boxed{5}."
        assert env.verdict is reward.last_verdicts[i] and env.verdict.extracted == "5"
        mask = out["tool_mask"][i].tolist()
        ids = out["completion_ids"][i].tolist()
        n = len(call)
        assert mask[:n] == [1] * n and ids[:n] == call  # the model's tokens, as sampled
        zeros = [k for k, m in enumerate(mask[: n + 40]) if m == 0]
        tool_text = tool_tokenizer.decode([ids[k] for k in zeros])
        assert tool_text == ("\n<|im_start|>user\n<tool_response>\n5\n</tool_response><|im_end|>\n"
                             "<|im_start|>assistant\n")  # Qwen2.5 renders tool answers as a user turn
        assert ids[zeros[-1] + 1: zeros[-1] + 1 + len(answer)] == answer
    expected = [tool_env.score(tool_env.tasks[i], "So the answer is \\boxed{5}.").status for i in (0, 0, 1, 1)]
    assert [v.status for v in reward.last_verdicts] == expected
    # the tool-use metrics TRL logs for this step are those of the four episodes: one call each, none failed,
    # two rlvr turns (the call and the final answer)
    metrics = {**trainer._metrics["eval"], **trainer._metrics["train"]}  # the mode follows model.training
    logged = {k.rsplit("/", 1)[1]: v for k, v in metrics.items() if k.startswith("rlvr/rlvr_test/")}
    assert {k: logged[k] for k in EPISODE_METRICS} == {"tool_call_rate": [1.0], "tool_calls": [1.0],
                                                       "tool_errors": [0.0], "turns": [2.0]}
    assert episode_metrics(env.episode.trajectory() for env in trainer.environments[:4]) == {
        k: v[0] for k, v in logged.items() if k in EPISODE_METRICS}


# -- rollout_func ---------------------------------------------------------------------------------
def _segments(mask: Sequence[int]) -> list[tuple[int, int, int]]:
    """(value, start, end) runs of a 0/1 mask."""
    runs: list[tuple[int, int, int]] = []
    for i, m in enumerate(mask):
        if runs and runs[-1][0] == m:
            runs[-1] = (m, runs[-1][1], i + 1)
        else:
            runs.append((m, i, i + 1))
    return runs


@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_rollout_func_masks_exactly_the_environment_tokens(tiny_dir: Path, tool_tokenizer: Any,
                                                           tmp_path: Path) -> None:
    import rlvr
    from rlvr.adapters.trl.rollout import rollout_func

    base = rlvr.make("math/reasoning-gym-v1", task="basic_arithmetic", size=4, seed=0, config=EASY)
    env = CheckAgainEnv(base.tasks, base.verifier, base.spec.model_copy(update={"id": "test/check-again-v1",
                                                                                "max_turns": 2}))
    fn = rollout_func(env, max_turn_tokens=6)
    dataset = to_dataset(env)
    reward = RolloutReward("rlvr_check")
    try:
        trainer = grpo_trainer(tiny_dir, tool_tokenizer, tmp_path, dataset, reward_funcs=[reward], rollout_func=fn)
        prompts = [dataset[0]["prompt"]] * 2 + [dataset[1]["prompt"]] * 2  # as TRL's RepeatSampler gives them
        out = fn(prompts, trainer)
    finally:
        env.close()
    assert set(out) == {"prompt_ids", "completion_ids", "logprobs", "env_mask", "rlvr_verdict", "rlvr_episode"}
    assert out["rlvr_episode"] == [episode_metrics([t]) for t in fn.last_trajectories]
    assert all(len(v) == 4 for v in out.values())
    assert [t.info["sample"] for t in fn.last_trajectories] == [0, 1, 0, 1]  # num_generations per prompt
    assert [t.task_id for t in fn.last_trajectories] == [dataset[0]["task_id"]] * 2 + [dataset[1]["task_id"]] * 2
    for i, traj in enumerate(fn.last_trajectories):
        ids, mask, lps = out["completion_ids"][i], out["env_mask"][i], out["logprobs"][i]
        assert traj.error is None, traj.error
        assert len(ids) == len(mask) == len(lps) and traj.info["token_layout"] == "episode"
        runs = _segments(mask)
        assert [r[0] for r in runs] == [1, 0, 1]  # model turn, the env's turn, model turn
        _, start, end = runs[1]
        env_text = tool_tokenizer.decode(ids[start:end])
        # exactly the template's rendering of the observation: end of the assistant turn the model did not
        # sample (cut by the length limit), the user message, the next generation prompt
        assert env_text == "<|im_end|>\n<|im_start|>user\nCheck your answer.<|im_end|>\n<|im_start|>assistant\n"
        assert all(lp == 0.0 for lp in lps[start:end]) and all(lp < 0.0 for lp in lps[:start])
        assert out["prompt_ids"][i] == traj.tokens.prompt_ids
    logged: dict[str, float] = {}
    rewards = reward(prompts=prompts, completions=["x"] * 4, rlvr_verdict=out["rlvr_verdict"],
                     rlvr_episode=out["rlvr_episode"], log_metric=logged.__setitem__)
    assert rewards == [v.reward for v in reward.last_verdicts] and None not in rewards
    # no tools, and every episode two model turns (the answer, then the check)
    assert {k: logged[f"rlvr/rlvr_check/{k}"] for k in EPISODE_METRICS} == {
        "tool_call_rate": 0.0, "tool_calls": 0.0, "tool_errors": 0.0, "turns": 2.0}
    assert all(t.info["turns"] == 2 for t in fn.last_trajectories)
    assert reward(prompts=["p"], completions=["x"], rlvr_verdict=[Verdict.error("boom").model_dump()]) == [None]
    with pytest.raises(AdapterError, match="not in the trainer's datasets"):
        fn([[{"role": "user", "content": "unknown"}]], trainer)


# -- rlvr train ------------------------------------------------------------------------------------
def _curve_rows(out: Path) -> list[dict[str, str]]:
    import csv

    rows = list(csv.DictReader((out / "reward_curve.csv").read_text().splitlines()))
    assert [r["step"] for r in rows] == ["1", "2"] and rows[0]["correct"] != ""
    assert (out / "model" / "model.safetensors").is_file()
    saved = (out / "model" / "chat_template.jinja")
    template = saved.read_text() if saved.exists() else json.loads(
        (out / "model" / "tokenizer_config.json").read_text()).get("chat_template", "")
    assert "<tool_call>" in template  # the tool template trained with is saved with the model
    return rows


@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_cli_train_gsm8k_tool_env_two_steps(tiny_dir: Path, tmp_path: Path) -> None:
    """`rlvr train --backend trl --env math/gsm8k-tool-v1` (default path: environment_factory) on a local jsonl."""
    from typer.testing import CliRunner

    from rlvr.runners.cli import app

    data = tmp_path / "gsm8k_style.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in GSM8K_STYLE_ROWS))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "train", "--backend", "trl", "--env", "math/gsm8k-tool-v1", "-a", f"path={data}", "--model", str(tiny_dir),
        "--steps", "2", "-o", str(out), "--trainer-arg", "max_completion_length=16",
        "--trainer-arg", "num_generations=2", "--trainer-arg", "per_device_train_batch_size=4"])
    assert result.exit_code == 0, result.output
    assert "training it through TRL's environment_factory" in result.output
    _curve_rows(out)


@pytest.mark.filterwarnings(TRL_GC_WARNING)
def test_train_trl_rollout_func_path_two_steps(tiny_dir: Path, tmp_path: Path) -> None:
    from rlvr.runners.train.config import TrainConfig
    from rlvr.runners.train.trl import train_trl

    # one sequence at a time through the rlvr driver: 2 steps of 1 prompt x 2 samples keep it short on CPU
    result = train_trl(TrainConfig(backend="trl", env=TOOL_ENV_ID, env_args={"size": 8}, model=str(tiny_dir), steps=2,
                                   output=tmp_path / "run", multi_turn="rollout_func",
                                   trainer_args={"max_completion_length": "12", "num_generations": "2",
                                                 "per_device_train_batch_size": "2"}))
    assert result.steps == 2
    logged = [h for h in result.log_history if "reward" in h]
    assert len(logged) == 2 and all("rlvr/rlvr_math_reasoning_gym_tool_v1/no_answer" in h for h in logged)
    assert "tools/call_frequency" not in logged[0]  # the rlvr driver ran the episodes, not TRL's tool loop
    _curve_rows(result.output)
    with pytest.raises(ConfigError, match="multi-turn path must be one of"):
        train_trl(TrainConfig(backend="trl", env=TOOL_ENV_ID, env_args={"size": 8}, model=str(tiny_dir), steps=1,
                              output=tmp_path / "bad", multi_turn="magic", trainer_args={}))


TASKS = [Task(id=f"t{i}", prompt=(Message(role="user", content=f"Say {i}."),), reference=str(i)) for i in range(4)]


class WhoAmIEnv(ToolEnv):
    """A tool env whose tool is a bound method reading the episode's task (like SQLToolEnv.execute_sql)."""

    def __init__(self) -> None:
        super().__init__(TASKS, get_verifier("math"), EnvSpec(id="test/whoami-v1", max_turns=3), [self.whoami])

    def whoami(self) -> str:
        """Name the current task."""
        return "none" if self.task is None else self.task.id


class Point(BaseModel):
    x: int


def _children() -> int:
    psutil = pytest.importorskip("psutil")  # an accelerate dependency, so present wherever TRL is
    return len(psutil.Process().children(recursive=True))


def test_env_class_bound_tools_and_one_verifier_pool_for_many_instances() -> None:
    cls = environment_factory(WhoAmIEnv)  # a class is a factory (before: treated as an instance, AttributeError)
    proto = cls._rlvr_prototype
    try:
        rows = [dict(r) for r in to_dataset(proto)]
        before = _children()
        instances = [cls() for _ in range(20)]  # TRL keeps one per concurrent rollout for the whole run
        for i, inst in enumerate(instances):
            inst.reset(**rows[i % len(rows)])
        assert [inst.whoami() for inst in instances[:4]] == ["t0", "t1", "t2", "t3"]  # each sees its own episode
        completions = [[{"role": "assistant", "content": rf"\boxed{{{i % 4}}}"}] for i in range(20)]
        rewards = EpisodeReward("whoami")(prompts=[None] * 20, completions=completions, environments=instances)
        assert rewards == [1.0] * 20
        assert all(inst.env.verifier is proto.verifier for inst in instances)
        assert _children() - before <= proto.verifier.config.workers  # before: one worker process per instance (20)
        del instances
        gc.collect()
    finally:
        proto.close()


def test_tool_types_trl_cannot_show_fail_at_factory_time() -> None:
    def place(p: Point) -> str:
        """Place a point.

        Args:
            p: the point.
        """
        return str(p.x)

    env = ToolEnv(TASKS, get_verifier("math", scoring="inline"), EnvSpec(id="test/point-v1", max_turns=3), [place])
    with pytest.raises(ConfigError, match=r"'place'.*get_json_schema.*rollout_func"):
        environment_factory(env)  # before: accepted here, then GRPOTrainer failed rendering the prompt
    with pytest.raises(ConfigError, match="not an rlvr Environment"):
        environment_factory(lambda: "not an env")
