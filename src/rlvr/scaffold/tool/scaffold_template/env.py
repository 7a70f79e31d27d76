r"""scaffold-template: a tool-using rlvr environment -- the policy calls typed tools, then answers.

The task: the total price of a basket, where only the `price` tool knows the prices. Replace
`CATALOGUE` and `price` with your own tools (plain typed functions: `@tool` builds each one's JSON
schema from its signature and docstring), `make_tasks` with your task set, and `reference_actions`
with the calls and answer that solve a task (what `rlvr check` and the oracle policy replay).
The final answer is scored by rlvr's math verifier (`\boxed{N}`); pass your own verifier instead
(see the single-turn template: `rlvr init NAME --kind single`).

Registered under the `rlvr.environments` entry point in pyproject.toml, so after
`pip install -e .` every rlvr command finds it by id: `rlvr check scaffold/template-v1`.
"""

from __future__ import annotations

import random
from typing import Any

from rlvr import EnvSpec, Message, Task
from rlvr.environments.multi_turn import ToolEnv, tool_call_message
from rlvr.environments.tools import ToolError, tool
from rlvr.verifiers import get_verifier

ENV_ID = "scaffold/template-v1"
"""The id this environment is registered under (pyproject.toml `[project.entry-points."rlvr.environments"]`)."""

CATALOGUE = {"apple": 37, "bread": 249, "cheese": 613, "dates": 418, "eggs": 291, "flour": 157, "grapes": 386}
"""Price of each item, cents."""

SYSTEM_PROMPT = ("You can look up prices with the `price` tool. When you know the total, give it in cents as "
                 "\\boxed{N}, with no tool call in that message.")


@tool(timeout_s=2.0)
def price(item: str) -> int:
    """Look up the price of one item.

    Args:
        item: the item's name, e.g. 'apple'.

    Returns:
        The price in cents.
    """
    found = CATALOGUE.get(item.strip().lower())
    if found is None:
        raise ToolError(f"no item {item!r}; the shop sells {', '.join(CATALOGUE)}")
    return found


def make_tasks(size: int, seed: int) -> list[Task]:
    """`size` baskets drawn with `seed`; each task's reference is the total in cents (a string)."""
    rng = random.Random(seed)
    tasks = []
    for i in range(size):
        basket = {item: rng.randint(1, 4) for item in rng.sample(sorted(CATALOGUE), rng.randint(2, 3))}
        listed = " and ".join(f"{n} x {item}" for item, n in basket.items())
        prompt = [Message(role="system", content=SYSTEM_PROMPT),
                  Message(role="user", content=f"What does {listed} cost in total, in cents?")]
        total = sum(CATALOGUE[item] * n for item, n in basket.items())
        tasks.append(Task(id=f"basket-{seed}-{i}", prompt=prompt, reference=str(total), metadata={"basket": basket}))
    return tasks


class ShopEnv(ToolEnv):
    """`ToolEnv` with the `price` tool and a reference solution: look up every price, then answer."""

    def reference_actions(self, task: Task) -> list[Message] | None:
        """One `price` call per item, then the total (`rlvr eval --policy oracle` replays these)."""
        calls = [tool_call_message("price", {"item": item}, call_id=f"call_{i}")
                 for i, item in enumerate(task.metadata["basket"])]
        return [*calls, Message(role="assistant", content=self.verifier.reference_response(task.reference))]


def make_env(size: int = 64, seed: int = 0, max_turns: int = 6, **verifier_options: Any) -> ShopEnv:
    """Build the environment (the entry point's factory; `rlvr ... --env-arg size=8` passes `size=8`).

    Args:
        size: number of tasks.
        seed: seed of the task draw.
        max_turns: assistant messages per episode (tool calls included).
        **verifier_options: options of the math verifier, e.g. `timeout_s=5`, `scoring="inline"`.
    """
    spec = EnvSpec(id=ENV_ID, description="Total price of a basket; prices only through the price tool.",
                   reward_range=(0.0, 1.0), max_turns=max_turns, dataset=f"scaffold_template?size={size}&seed={seed}")
    return ShopEnv(make_tasks(size, seed), get_verifier("math", **verifier_options), spec, tools=[price])
