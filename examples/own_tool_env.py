r"""Your own tool environment: typed `@tool` functions, an episode played by a scripted policy, `rlvr.check`.

The task: how many pages the books of one author have together. Only the tools know: `books_by`
lists an author's titles, `page_count` gives one title's pages. The final answer (`\boxed{N}`, in a
message without a tool call) is scored by rlvr's math verifier. `@tool` builds each tool's OpenAI
schema from its signature and docstring, validates the model's arguments and runs the call under a
time limit; a bad call comes back to the model as an error message, never as a crash.

    python examples/own_tool_env.py

Prints the tools' schemas, the answer to a bad call, one episode played by a policy that reads the tools' answers (the
conversation, its tool-call counts and verdict), then each check of `rlvr.check`; exits 1 if one fails.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
from collections.abc import Sequence
from typing import Any

import rlvr
from rlvr import EnvSpec, Message, Task
from rlvr.core.types import ToolCall
from rlvr.environments import ToolEnv, ToolError, tool
from rlvr.environments.multi_turn import tool_call_message
from rlvr.rollout import Episode, Generation, run_episode
from rlvr.rollout.tokens import ChatTokenizer
from rlvr.verifiers import get_verifier

ENV_ID = "examples/library-v1"
SHELVES = {
    "Ada Brook": {"Salt Roads": 212, "The Quiet Orchard": 348},
    "Ben Okafor": {"Night Ferry": 176, "Glass Harbour": 264, "Ten Winters": 401},
    "Chen Li": {"River of Lamps": 289, "Paper Moons": 133},
}
"""Each author's titles and their page counts."""
PAGES = {title: pages for books in SHELVES.values() for title, pages in books.items()}
SYSTEM_PROMPT = ("Use the tools to look things up. When you know the answer, give it as \\boxed{N} in a message "
                 "without a tool call.")


@tool(timeout_s=2.0)
def books_by(author: str) -> list[str]:
    """List the books of an author.

    Args:
        author: the author's full name, e.g. 'Ada Brook'.

    Returns:
        The titles, in shelf order.
    """
    if author not in SHELVES:
        raise ToolError(f"no author {author!r}; the library has {', '.join(SHELVES)}")
    return list(SHELVES[author])


@tool(timeout_s=2.0)
def page_count(title: str) -> int:
    """The number of pages of one book.

    Args:
        title: the book's exact title.
    """
    if title not in PAGES:
        raise ToolError(f"no book titled {title!r}")
    return PAGES[title]


class LibraryEnv(ToolEnv):
    """`ToolEnv` with a reference solution, which `rlvr.check` replays (the oracle episode)."""

    def reference_actions(self, task: Task) -> list[Message] | None:
        """List the author's books, look up every title in one message, then answer."""
        author = task.metadata["author"]
        lookups = Message(role="assistant", content="", tool_calls=tuple(
            ToolCall(id=f"call_{i}", name="page_count", arguments=json.dumps({"title": title}))
            for i, title in enumerate(SHELVES[author])))
        return [tool_call_message("books_by", {"author": author}), lookups,
                Message(role="assistant", content=self.verifier.reference_response(task.reference))]


def make_env(size: int = 6, seed: int = 0, max_turns: int = 4) -> LibraryEnv:
    """`size` questions drawn with `seed`; up to `max_turns` assistant messages per episode."""
    rng = random.Random(seed)
    tasks = []
    for i in range(size):
        author = rng.choice(sorted(SHELVES))
        prompt = (Message(role="system", content=SYSTEM_PROMPT),
                  Message(role="user", content=f"How many pages do the books of {author} have in total?"))
        tasks.append(Task(id=f"library-{seed}-{i}", prompt=prompt, reference=str(sum(SHELVES[author].values())),
                          metadata={"author": author}))
    spec = EnvSpec(id=ENV_ID, description="Total pages of an author's books, through two tools.",
                   reward_range=(0.0, 1.0), max_turns=max_turns)
    return LibraryEnv(tasks, get_verifier("math"), spec, tools=[books_by, page_count])


class ReadingPolicy:
    """A scripted policy that sees only the conversation, as a model would: ask, read the answers, add up.

    It implements `rlvr.rollout.Policy` (what `rlvr eval` and every trainer adapter drive), without tokens.
    """

    name = "reading"
    tokenizer: ChatTokenizer | None = None
    accepts_prompt_ids = False

    async def generate(self, messages: Sequence[Message], *, tools: Sequence[dict[str, Any]] | None = None,
                       prompt_ids: Sequence[int] | None = None, episode: Episode | None = None) -> Generation:
        """The next assistant message, from what the tools answered so far."""
        answers = [m.content for m in messages if m.role == "tool"]
        if not answers:  # turn 1: which books?
            question = next(m.content for m in messages if m.role == "user")
            author = re.search(r"books of (.+?) have", question)
            return Generation(message=tool_call_message("books_by", {"author": author[1] if author else ""}))
        if len(answers) == 1:  # turn 2: every title's pages, in one message
            titles = json.loads(answers[0])
            return Generation(message=Message(role="assistant", content="", tool_calls=tuple(
                ToolCall(id=f"call_{i}", name="page_count", arguments=json.dumps({"title": t}))
                for i, t in enumerate(titles))))
        return Generation(message=Message(role="assistant",
                                          content=f"In total \\boxed{{{sum(int(a) for a in answers[1:])}}} pages."))


def main() -> int:
    """Register, make, play and check the environment; 0 when the episode and every check passed."""
    rlvr.registry.register(ENV_ID, make_env, description="Total pages of an author's books.")
    env = rlvr.make(ENV_ID, size=6)
    try:
        for schema in env.spec.tools:
            function = schema["function"]
            print(f"tool {function['name']}: required={function['parameters']['required']} "
                  f"{function['description'].splitlines()[0]}")

        env.reset_sync(env.tasks[0])  # a bad call is answered, not raised: the episode goes on
        bad = env.step_sync(tool_call_message("books_by", {"author": "Nobody"}))
        print(f"bad call: {bad.messages[0].content} (terminated={bad.terminated})")

        task = env.tasks[0]
        trajectory = asyncio.run(run_episode(env.episode_copy(), task, ReadingPolicy()))
        for m in trajectory.messages[len(task.prompt):]:
            calls = " ".join(f"{c.name}({c.arguments})" for c in m.tool_calls or ())
            print(f"  {m.role}: {m.content or calls}")
        status = trajectory.verdict.status if trajectory.verdict else "none"
        print(f"episode {task.id}: reference={task.reference} status={status} "
              f"reward={trajectory.reward} turns={len([m for m in trajectory.messages if m.role == 'assistant'])}")

        report = rlvr.check(env, n=6)
        for r in report.results:
            print(f"check {r.name}: {'passed' if r.passed else 'FAILED'} {r.detail}")
        print(f"check passed: {report.passed}")
        return 0 if report.passed and status == "correct" else 1
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(main())
