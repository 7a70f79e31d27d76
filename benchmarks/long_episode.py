"""Token bookkeeping cost per turn of a long tool episode: before (whole history per turn) and after (linear).

A 40-turn tool episode of `math/reasoning-gym-tool-v1` (Hermes `<tool_call>` text, calculator
answers) is played once in the episode driver with SmolLM2's real tokenizer and chat template (the
embedded model, `rlvr.runners.models.resolve_model("smollm2")`, loads offline); its turns (assistant
message, sampled ids, observation) are then replayed through two `EpisodeTokens` implementations,
token-in as the trainers run them (each turn conditions on `context_ids()`):

- before: `src/rlvr/adapters/tokens.py` as of `--before-rev` (read with `git show`), which renders
  the whole conversation four times and encodes it twice per environment turn;
- after: `rlvr.rollout.tokens`, which renders a bounded window and encodes what the turn adds,
  plus one whole-episode render when the token fields are taken (`end of episode` row).

The cost of turn k is the time of its `add_model_turn` + `add_env_turn` (median over `--repeat`
replays); renders and encoded characters are counted in a separate replay. The last line is
`ratio=X`: after's cost at turn 40 over its cost at turn 2.

Usage:
    python benchmarks/long_episode.py [--turns 40] [--repeat 7] [--before-rev 7dfcebf~1]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console
from rich.table import Table

from rlvr.core.types import Message
from rlvr.environments.registry import make
from rlvr.rollout import Episode, EpisodeRun, Generation
from rlvr.rollout import tokens as after_tokens

ROOT = Path(__file__).resolve().parents[1]
Turn = tuple[Message, list[int], list[Message]]  # assistant message, sampled ids, observation ([] for the last)


class Counting:
    """Delegates to a tokenizer; counts chat-template renders and encoded characters."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.all_special_ids = inner.all_special_ids
        self.renders = 0
        self.chars = 0

    def apply_chat_template(self, conversation: Any, *args: Any, **kwargs: Any) -> Any:
        self.renders += 1
        return self.inner.apply_chat_template(conversation, *args, **kwargs)

    def encode(self, text: str, *args: Any, **kwargs: Any) -> list[int]:
        self.chars += len(text)
        return list(self.inner.encode(text, *args, **kwargs))

    def decode(self, ids: Any, *args: Any, **kwargs: Any) -> str:
        return str(self.inner.decode(ids, *args, **kwargs))


class ToolCaller:
    """Token-in policy: `turns` calculator calls, then a final answer; ids are the canonical encoding + <|im_end|>."""

    name = "tool-caller"
    accepts_prompt_ids = True

    def __init__(self, tokenizer: Any, tool: str, turns: int) -> None:
        self.tokenizer, self.tool, self.turns = tokenizer, tool, turns
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")

    async def generate(self, messages: Sequence[Message], *, tools: Any = None, prompt_ids: Any = None,
                       episode: Episode | None = None) -> Generation:
        turn = episode.turn if episode is not None else 0
        if turn < self.turns:
            text = (f'<tool_call>\n{{"name": "{self.tool}", "arguments": {{"expression": "{turn} * 17 + 3"}}}}\n'
                    "</tool_call>")
        else:
            text = "The answer is \\boxed{3}."
        ids = [*self.tokenizer.encode(text, add_special_tokens=False), self.end]
        return Generation(message=Message(role="assistant", content=text), prompt_ids=list(prompt_ids or []),
                          completion_ids=ids, finish_reason="stop")


def record_episode(tokenizer: Any, turns: int) -> tuple[list[Message], list[dict[str, Any]] | None, list[Turn]]:
    """Play the episode once in the driver; return its prompt, tool schemas and turns."""
    env = make("math/reasoning-gym-tool-v1", task="basic_arithmetic", size=1, max_turns=turns + 1,
               scoring="inline")
    try:
        tool = env.spec.tools[0]["function"]["name"]
        run = EpisodeRun(env.episode_copy(), env.tasks[0], tokenizer=tokenizer, layout="episode")
        traj = asyncio.run(run.play(ToolCaller(tokenizer, tool, turns)))
        if traj.error is not None or run.tokens is None:
            raise SystemExit(f"the recording episode failed: {traj.error}")
        prompt = traj.messages[: len(run.tokens.prompt)]
        out: list[Turn] = []
        sampled = [s.completion_ids for s in run.tokens.samples]
        rest = traj.messages[len(prompt) :]
        for message in rest:
            if message.role == "assistant":
                out.append((message, sampled[len(out)], []))
            else:
                out[-1][2].append(message)
        return prompt, list(env.spec.tools) or None, out
    finally:
        env.close()


def load_before(rev: str) -> ModuleType:
    """The token module as of `rev` (`git show rev:src/rlvr/adapters/tokens.py`), imported under another name."""
    source = subprocess.run(["git", "show", f"{rev}:src/rlvr/adapters/tokens.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="rlvr-before-")) / "tokens_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("tokens_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tokens_before"] = module
    spec.loader.exec_module(module)
    return module


def replay(make_tokens: Callable[[Any, list[Message]], Any], tokenizer: Any, prompt: list[Message],
           turns: list[Turn]) -> tuple[list[float], float, Any]:
    """Seconds per turn (model + env turn) and for the token fields at the end; the tokens object."""
    history = list(prompt)
    tokens = make_tokens(tokenizer, history)
    per_turn = []
    for message, ids, observation in turns:
        start = time.perf_counter()
        tokens.add_model_turn(message, ids, None, prompt_ids=tokens.context_ids())
        if observation:
            history.extend([message, *observation])  # what env.step does to the environment's history
            tokens.add_env_turn(observation)
        per_turn.append(time.perf_counter() - start)
    start = time.perf_counter()
    fields = tokens.trajectory_fields("episode")
    elapsed = time.perf_counter() - start
    if "tokens" in fields:  # after: one TokenSample; before: its fields flat
        fields = {**fields["tokens"].model_dump(), "info": fields["info"]}
    return per_turn, elapsed, fields


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=40, help="tool turns (each answered by the env)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--before-rev", default="7dfcebf~1", help="git revision of the old algorithm")
    args = parser.parse_args()
    from transformers import AutoTokenizer

    from rlvr.runners.models import resolve_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("smollm2"))
    prompt, tools, turns = record_episode(tokenizer, args.turns)
    before = load_before(args.before_rev)
    impls: dict[str, Callable[[Any, list[Message]], Any]] = {
        "before": lambda tok, hist: before.EpisodeTokens(tok, prompt, tools=tools),
        "after": lambda tok, hist: after_tokens.EpisodeTokens(tok, prompt, tools=tools, history=hist),
    }
    results: dict[str, dict[str, Any]] = {}
    for name, make_tokens in impls.items():
        runs = [replay(make_tokens, tokenizer, prompt, turns) for _ in range(args.repeat)]
        counting = Counting(tokenizer)
        counts = []
        history = list(prompt)
        tokens = make_tokens(counting, history)
        for message, ids, observation in turns:
            r0, c0 = counting.renders, counting.chars
            tokens.add_model_turn(message, ids, None, prompt_ids=tokens.context_ids())
            if observation:
                history.extend([message, *observation])
                tokens.add_env_turn(observation)
            counts.append((counting.renders - r0, counting.chars - c0))
        results[name] = {"turn": [statistics.median(r[0][k] for r in runs) for k in range(len(turns))],
                         "end": statistics.median(r[1] for r in runs), "fields": runs[0][2], "counts": counts}
    if results["before"]["fields"] != results["after"]["fields"]:
        raise SystemExit("before and after give different token fields")
    table = Table(title=f"Token bookkeeping per turn, {args.turns}-turn tool episode, SmolLM2 tokenizer "
                        f"(median of {args.repeat})")
    for column in ("turn", "before µs", "before renders / chars encoded", "after µs",
                   "after renders / chars encoded"):
        table.add_column(column, justify="right")
    for k in (2, 10, args.turns):
        b, a = results["before"], results["after"]
        table.add_row(str(k), f"{b['turn'][k - 1] * 1e6:,.0f}", "{} / {:,}".format(*b["counts"][k - 1]),
                      f"{a['turn'][k - 1] * 1e6:,.0f}", "{} / {:,}".format(*a["counts"][k - 1]))
    for name in ("before", "after"):
        results[name]["total"] = sum(results[name]["turn"]) + results[name]["end"]
    table.add_row("end of episode", f"{results['before']['end'] * 1e6:,.0f}", "",
                  f"{results['after']['end'] * 1e6:,.0f}", "")
    table.add_row("whole episode", f"{results['before']['total'] * 1e6:,.0f}", "",
                  f"{results['after']['total'] * 1e6:,.0f}", "")
    Console().print(table)
    after = results["after"]["turn"]
    print(f"ratio={after[args.turns - 1] / after[1]:.2f}")


if __name__ == "__main__":
    main()
