r"""Terminal environments: one persistent sandboxed shell per episode, graded after the episode.

`TerminalEnv` poses a terminal task (Terminal-Bench, Harbor, AgentBench-OS) and gives the policy
two tools: `run(command)` — run bash in the task's sandbox (`rlvr.sandbox.session`), whose shell
keeps its working directory, variables and background jobs across calls — and `submit(answer)`.
Commands may also be written as ```` ```bash ```` blocks; a message without a command is final
(its text is the answer for question tasks), like `submit`. Each command's stdout, stderr and
exit code come back, capped at `max_output_chars`; a command has `command_timeout_s` (Ctrl-C,
then kill), and the episode's commands together have the task's agent budget
(`max_agent_timeout_sec` / `[agent] timeout_sec`; past it the episode is truncated and graded).

When the episode ends (submit, a final message, `max_turns`, or the time budget) every process
the agent started is stopped, the working directory is exported, and `TerminalVerifier.grade`
runs the task's tests in a fresh sandbox against a fresh copy of the trusted tests.

The registered ids and their factories (`terminal/tbench-v1`, `terminal/harbor-v1`,
`terminal/agentbench-os-v1`) are in `rlvr.environments.terminal_data`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rlvr.core.errors import ConfigError, DataError, RlvrError, SandboxError
from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.environments.actions import TextTag
from rlvr.environments.multi_turn import ToolEnv, tool_call_message
from rlvr.environments.tools import Tool, ToolError, run_with_timeout
from rlvr.sandbox.session import CommandResult, ExportError, SessionConfig
from rlvr.verifiers.terminal import TerminalTask, TerminalVerifier, load_task, oracle_command
from rlvr.verifiers.terminal.workspace import TaskSession

__all__: list[str] = []


MAX_OUTPUT_CHARS = 8000
"""Default cap of one command's observation, characters (the first and last halves are kept)."""


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"


_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""ANSI escape sequences (CSI and two-byte ones) and control characters other than tab, newline, CR."""


def clean_text(text: str) -> str:
    """`text` without terminal escape sequences and control bytes (NUL, BEL, ...), for a model to read."""
    return _CONTROL.sub("", text)


def render_result(result: CommandResult, limit: int = MAX_OUTPUT_CHARS) -> str:
    """A command's observation: exit code, stdout, stderr (when any) and the session's notes, capped.

    Terminal escape sequences and control bytes are removed; the first and last halves of a long
    output are kept.
    """
    if result.error:
        return f"Error: the sandbox could not run the command: {result.error}"
    if result.timed_out:
        status = "timed out"
    elif result.exit_code is None or result.exit_code < 0:
        status = "the shell was killed"
    else:
        status = f"exit code {result.exit_code}"
    parts = [f"[{status}]"]
    stdout, stderr = clean_text(result.stdout), clean_text(result.stderr)
    if stdout:
        parts.append(_cap(stdout, limit))
    if stderr.strip():
        parts.append("[stderr]\n" + _cap(stderr, max(limit // 2, 256)))
    if result.dropped_bytes:
        parts.append(f"[{result.dropped_bytes} bytes of output not shown]")
    parts += [f"[{note}]" for note in result.notes]
    return "\n".join(parts)


class TerminalEnv(ToolEnv):
    """A terminal task per episode in its own persistent sandboxed shell (module docstring).

    Args:
        tasks: the dataset (`Task.reference` a `TerminalReference` dict).
        verifier: a `TerminalVerifier`.
        spec: the manifest.
        max_turns: assistant messages per episode.
        command_timeout_s: limit of one command, seconds (the task's remaining budget applies too).
        max_output_chars: cap of one command's observation, characters.
        sandbox: limits of the sandbox (its work directory and HOME come from the task).
        episode_timeout_s: the episode's command-time budget, seconds; None: the task's agent budget.
        text_tags: also read ```` ```bash ```` blocks and `<submit>answer</submit>` from message text.
        hermes: also read Hermes/Qwen `<tool_call>` JSON calls from message text.
        show_tests: give the agent a writable copy of the task's tests at /tests (to run them);
            grading always uses a fresh copy from the trusted task source.
        skipped: (task id, reason) of the tasks left out (they need a container).
        extra_tools: more tools besides `run` and `submit` (e.g. a subclass's file-edit method).

    Raises:
        ConfigError: non-positive limits, or max_turns < 1.
    """

    episode_shared: ClassVar[frozenset[str]] = ToolEnv.episode_shared | {"skipped", "sandbox_config"}

    def __init__(self, tasks: Sequence[Task], verifier: TerminalVerifier, spec: EnvSpec, *, max_turns: int = 30,
                 command_timeout_s: float = 60.0, max_output_chars: int = MAX_OUTPUT_CHARS,
                 sandbox: SessionConfig | None = None, episode_timeout_s: float | None = None,
                 text_tags: bool = True, hermes: bool = False, show_tests: bool = False,
                 skipped: Sequence[tuple[str, str]] = (),
                 extra_tools: Sequence[Tool | Callable[..., Any]] = ()) -> None:
        for name, value in (("command_timeout_s", command_timeout_s), ("max_output_chars", max_output_chars)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"{name} must be a positive number, got {value!r}")
        if episode_timeout_s is not None and not episode_timeout_s > 0:
            raise ConfigError(f"episode_timeout_s must be > 0 seconds or None, got {episode_timeout_s!r}")
        self.command_timeout_s = float(command_timeout_s)
        self.max_output_chars = int(max_output_chars)
        self.sandbox_config = sandbox or verifier.config.sandbox
        self.episode_timeout_s = episode_timeout_s
        self.skipped = list(skipped)
        self.show_tests = show_tests
        tags = [TextTag.fence("bash", tool="run", argument="command"),
                TextTag.fence("sh", tool="run", argument="command"),
                TextTag.xml("submit", tool="submit", argument="answer")] if text_tags else []
        if hermes:
            tags.append(TextTag.hermes())
        tools: list[Tool | Callable[..., Any]] = [Tool(self.run, timeout_s=None), *extra_tools,
                                                  Tool(self.submit, timeout_s=30.0)]
        super().__init__(tasks, verifier, spec, tools, text_tags=tags, max_turns=max_turns,
                         verifier_timeout_s=None)
        self.terminal_verifier = verifier
        self._session: TaskSession | None = None
        self._task_spec: TerminalTask | None = None
        self._answer: str | None = None
        self._used_s = 0.0
        self._out_of_time = False

    # -- tools ------------------------------------------------------------------------------
    async def run(self, command: str) -> str:
        """Run a bash command in the task's terminal and return its output and exit code.

        The shell persists between calls (working directory, variables, background jobs). A
        command that reads from the terminal waits until the time limit; pass input with pipes or
        here-documents instead.

        Args:
            command: the bash command(s) to run (several lines are fine).
        """
        session = self._session
        if session is None:
            raise ToolError("no episode is running")
        left = self._budget() - self._used_s
        if left <= 0:
            self._out_of_time = True
            raise ToolError("the episode's time budget is spent; the work will be graded as it is")
        limit = min(self.command_timeout_s, left)
        start = time.monotonic()
        try:
            result = await run_with_timeout(lambda: session.run(command, limit), limit + 30.0, "the command")
        except TimeoutError as exc:
            raise ToolError(f"the sandbox did not answer: {exc}") from exc
        finally:
            self._used_s += time.monotonic() - start
        if self._used_s >= self._budget():
            self._out_of_time = True
        return render_result(result, self.max_output_chars)

    async def submit(self, answer: str = "") -> str:
        """Finish the task and hand it in for grading.

        Args:
            answer: the answer, when the task asks a question; leave empty otherwise.
        """
        self._answer = answer
        return "Submitted."

    def _budget(self) -> float:
        if self.episode_timeout_s is not None:
            return self.episode_timeout_s
        return self._task_spec.agent_timeout_s if self._task_spec is not None else 360.0

    # -- episode --------------------------------------------------------------------------
    async def reset(self, task: Task | None = None, seed: int | None = None) -> tuple[list[Message], dict[str, Any]]:
        """Start an episode: a fresh sandbox prepared from the task (see `TaskSession`).

        Raises:
            DataError: the task cannot be read or its setup failed.
            SandboxError: the sandbox could not start.
        """
        self._close_session()
        messages, info = await super().reset(task, seed)
        assert self.task is not None
        spec = load_task(self.task.reference)
        self._task_spec, self._answer, self._used_s, self._out_of_time = spec, None, 0.0, False
        session = TaskSession(spec, self.sandbox_config, show_tests=self.show_tests)
        await run_with_timeout(session.start, 1200.0, f"preparing task {spec.task_id}")
        self._session = session
        info.update(placement=spec.placement, workdir=spec.workdir, format=spec.format)
        return messages, info

    async def env_response(self, action: Message) -> tuple[list[Message], bool]:
        """Run the message's commands; `submit`, a message without commands, or the time budget end it."""
        observation, done = await super().env_response(action)
        return observation, done or self._answer is not None or self._out_of_time

    async def step(self, action: Message | str | dict[str, Any]) -> StepResult:
        """One turn (see `MultiTurnEnv.step`); running out of time truncates the episode."""
        result = await super().step(action)
        if self._out_of_time and result.terminated and self._answer is None:
            result = result.model_copy(update={"terminated": False, "truncated": True,
                                               "info": {**result.info, "out_of_time": True}})
        return result

    def final_response(self) -> str:
        """The answer: `submit`'s, else the text of the last assistant message without commands."""
        return self._answer if self._answer is not None else super().final_response()

    async def final_verdict(self) -> Verdict:
        """Stop the agent's processes, export the work directory, grade it in a fresh sandbox."""
        session, self._session = self._session, None
        assert self.task is not None
        if session is None:
            return Verdict.error("the episode has no sandbox (reset was not completed)")
        start = time.monotonic()
        answer = self.final_response()
        try:
            workspace = await run_with_timeout(session.finish, 600.0, "stopping the sandbox")
            spec = self._task_spec
            budget = (spec.test_timeout_s if spec is not None else 600.0) + 120.0
            return await run_with_timeout(
                lambda: self.terminal_verifier.grade(self.task.reference if self.task else {}, workspace, answer,
                                                     session.expected_answer), budget, "the terminal grader")
        except TimeoutError as exc:
            return Verdict.timeout(f"grading did not finish: {exc}", elapsed_s=time.monotonic() - start)
        except ExportError as exc:  # what the agent left cannot be exported (too large, names too long)
            return Verdict(status="incorrect", reward=0.0, detail=str(exc), elapsed_s=time.monotonic() - start)
        except (SandboxError, RlvrError, OSError) as exc:
            return Verdict.error(f"the sandbox failed before grading: {type(exc).__name__}: {exc}",
                                 elapsed_s=time.monotonic() - start)
        finally:
            await asyncio.to_thread(session.close)

    def reference_actions(self, task: Task) -> list[Message] | None:
        """The oracle: write the task's solution files and run them with one `run` call, then `submit`.

        AgentBench-OS question tasks: the reference commands, then `submit` with the expected
        answer (computed by the task's example command in a prepared sandbox).
        """
        try:
            spec = load_task(task.reference)
        except DataError:
            return None
        if spec.format == "agentbench":
            from rlvr.verifiers.terminal.agentbench_run import reference_solution

            live = self._session
            record = spec.agentbench
            if live is not None and self.task is not None and self.task.id == task.id and live.expected_answer:
                # this episode's own expected answer (random inits differ between sessions)
                commands, answer = ([record.example] if record.example else []), live.expected_answer
            else:
                try:
                    commands, answer = reference_solution(spec, self.sandbox_config)
                except (DataError, SandboxError, ValueError):
                    return None
            calls = [tool_call_message("run", {"command": c}, call_id=f"call_{i}") for i, c in enumerate(commands)]
            return [*calls, tool_call_message("submit", {"answer": answer}, call_id="call_submit")]
        if not spec.has_solution:
            return None
        return [tool_call_message("run", {"command": oracle_command(spec)}),
                tool_call_message("submit", {"answer": ""}, call_id="call_1")]

    def __copy__(self) -> TerminalEnv:
        """A copy for another episode: tools re-bound, no sandbox of its own yet."""
        clone = super().__copy__()
        assert isinstance(clone, TerminalEnv)
        clone._session = None
        return clone

    def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def close_episode(self) -> None:
        """Stop a running episode's sandbox (the verifier stays open for other episodes)."""
        self._close_session()

    def close(self) -> None:
        """Stop a running episode's sandbox."""
        self._close_session()
        super().close()

    def placement_summary(self) -> str:
        """Where the tasks run: how many locally, and each skipped one with its reason (`rlvr check`)."""
        lines = [f"{len(self.tasks)} tasks run locally (bubblewrap)"]
        if self.skipped:
            lines.append(f"{len(self.skipped)} need a container and were left out: " + "; ".join(
                f"{tid} ({why})" for tid, why in self.skipped))
        return "; ".join(lines)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._close_session()
