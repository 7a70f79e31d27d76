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

Registered ids: `terminal/tbench-v1` (a directory of Terminal-Bench tasks, `tasks_dir=`; default:
the suite shipped with rlvr), `terminal/harbor-v1` (`tasks_dir=` of Harbor tasks),
`terminal/agentbench-os-v1` (the AgentBench-OS tasks of the PyPI package `inspect-evals`, extra
`terminal`). Tasks whose environment needs a container image are listed in `env.skipped` with
the reason (`rlvr check` reports them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from rlvr.core.errors import ConfigError, DataError, RlvrError, SandboxError
from rlvr.core.types import EnvSpec, Message, StepResult, Task, Verdict
from rlvr.environments.actions import TextTag
from rlvr.environments.multi_turn import ToolEnv, tool_call_message
from rlvr.environments.tools import Tool, ToolError, run_with_timeout
from rlvr.sandbox.session import CommandResult, ExportError, SessionConfig
from rlvr.verifiers.terminal import TerminalReference, TerminalTask, TerminalVerifier, load_task, oracle_command
from rlvr.verifiers.terminal.workspace import TaskSession, container_problem

__all__ = ["TBENCH_SUITE", "TERMINAL_SYSTEM_PROMPT", "TerminalEnv", "make_agentbench_os", "make_harbor",
           "make_tbench", "render_result"]

TBENCH_SUITE = Path(__file__).with_name("data") / "terminal" / "tbench"
"""The Terminal-Bench-format tasks shipped with rlvr (each with a solution.sh), default of `terminal/tbench-v1`."""

TERMINAL_SYSTEM_PROMPT = (
    "You are an expert Linux user working in a bash terminal inside a sandbox. Solve the task by running shell "
    "commands: call the `run` tool with a command, or write the commands in one ```bash code block per turn. Each "
    "command's output and exit code come back to you. The shell keeps its working directory, variables and "
    "background jobs between commands; there is no network and nothing can be installed. When the task is done, "
    "call `submit` (with your answer if the task asks a question) or reply without a command."
)

_LOG = logging.getLogger(__name__)

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

    Raises:
        ConfigError: non-positive limits, or max_turns < 1.
    """

    episode_shared: ClassVar[frozenset[str]] = ToolEnv.episode_shared | {"skipped", "sandbox_config"}

    def __init__(self, tasks: Sequence[Task], verifier: TerminalVerifier, spec: EnvSpec, *, max_turns: int = 30,
                 command_timeout_s: float = 60.0, max_output_chars: int = MAX_OUTPUT_CHARS,
                 sandbox: SessionConfig | None = None, episode_timeout_s: float | None = None,
                 text_tags: bool = True, hermes: bool = False, show_tests: bool = False,
                 skipped: Sequence[tuple[str, str]] = ()) -> None:
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
        tools = [Tool(self.run, timeout_s=None), Tool(self.submit, timeout_s=30.0)]
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
        if self._answer is not None:
            return self._answer
        if self._last_calls:
            return ""
        return super().final_response()

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


# -- factories ------------------------------------------------------------------------------
def _prompt(spec: TerminalTask, system_prompt: str | None) -> tuple[Message, ...]:
    user = Message(role="user", content=f"{spec.instruction}\n\n(Working directory: {spec.start_dir}.)")
    return (Message(role="system", content=system_prompt), user) if system_prompt else (user,)


def _verifier(verifier: TerminalVerifier | None, overrides: dict[str, Any], env_id: str) -> TerminalVerifier:
    if verifier is not None:
        if overrides:
            raise ConfigError(f"got a verifier and verifier options {sorted(overrides)}; configure the verifier")
        return verifier
    from rlvr.verifiers.terminal import TerminalConfig

    unknown = sorted(set(overrides) - set(TerminalConfig.model_fields))
    if unknown:
        raise ConfigError(f"{env_id}: unknown argument(s) {', '.join(unknown)}; the factory takes tasks_dir, limit, "
                          "task_ids, max_turns, command_timeout_s, max_output_chars, system_prompt, show_tests, "
                          f"backend, and the verifier options {', '.join(sorted(TerminalConfig.model_fields))}")
    try:
        return TerminalVerifier(**overrides)
    except ValueError as exc:
        raise ConfigError(f"{env_id}: bad verifier option: {exc}") from exc


def _ids(task_ids: Sequence[str] | str | None) -> set[str] | None:
    """Task ids as a set: a list, or one string of comma-separated ids (`-a task_ids=a,b` on the command line)."""
    if task_ids is None:
        return None
    if isinstance(task_ids, str):
        return {t.strip() for t in task_ids.split(",") if t.strip()}
    return {str(t) for t in task_ids}


def _check_limit(limit: Any) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit must be a positive int or None, got {limit!r}")


def _budget(task: TerminalTask) -> float:
    """Longest a verification of `task` can take: its agent budget plus its test budget, seconds."""
    return task.agent_timeout_s + task.test_timeout_s


Backend = Literal["auto", "local", "container"]


def _containers(backend: str) -> bool:
    """Whether tasks that need a container are included: 'container' demands an engine, 'auto' uses one if any."""
    from rlvr.verifiers.terminal.workspace import container_available

    if backend not in ("auto", "local", "container"):
        raise ConfigError(f"backend must be 'auto', 'local' or 'container', got {backend!r}")
    if backend == "local":
        return False
    if container_available():
        return True
    if backend == "container":
        raise ConfigError("backend='container' needs a working podman or docker: install podman (Debian package "
                          "`podman`) or start a docker daemon; backend='auto' leaves those tasks out instead")
    return False


def _build(env_id: str, description: str, references: list[TerminalReference], dataset: str, *,
           system_prompt: str | None, limit: int | None, task_ids: Sequence[str] | str | None, max_turns: int,
           command_timeout_s: float, max_output_chars: int, verifier: TerminalVerifier | None,
           overrides: dict[str, Any], show_tests: bool = False, backend: str = "auto") -> TerminalEnv:
    _check_limit(limit)
    built = _verifier(verifier, overrides, env_id)
    wanted = _ids(task_ids)
    tasks: list[Task] = []
    skipped: list[tuple[str, str]] = []
    loaded: list[tuple[TerminalReference, TerminalTask]] = []
    for ref in references:
        try:
            loaded.append((ref, load_task(ref)))
        except DataError as exc:  # one broken task does not take the others down; it is listed with why
            name = Path(ref.task_dir).name if ref.task_dir else f"{ref.split}-{ref.record_id}"
            if wanted is None or name in wanted:
                skipped.append((name, f"unreadable: {exc}"))
                _LOG.warning("%s: task %s left out: %s", env_id, name, exc)
    needs = any(t.placement != "local" and t.format != "agentbench" for _r, t in loaded)
    containers = _containers(backend) if needs else False
    for ref, task in loaded:
        if wanted is not None and task.task_id not in wanted:
            continue
        if task.placement != "local":
            why = "no container backend" if not containers or task.format == "agentbench" else (
                container_problem(task) if backend == "auto" else None)
            if why is not None:
                skipped.append((task.task_id, f"{task.placement_reason} ({why})"))
                continue
        tasks.append(Task(id=task.task_id, prompt=_prompt(task, system_prompt),
                          reference=ref.model_dump(exclude_none=True),
                          metadata={"format": task.format, "placement": task.placement, "workdir": task.workdir,
                                    **{k: v for k, v in task.metadata.items() if k != "setup_notes"}}))
    if wanted is not None and wanted - {t.id for t in tasks} - {s[0] for s in skipped}:
        known = sorted(t.task_id for _r, t in loaded)
        raise ConfigError(f"unknown task ids {sorted(wanted - {t.id for t in tasks} - {s[0] for s in skipped})}; "
                          f"the tasks are: {', '.join(known[:30])}{' ...' if len(known) > 30 else ''}")
    tasks = tasks[:limit] if limit else tasks
    spec = EnvSpec(id=env_id, description=description, max_turns=max_turns, dataset=dataset,
                   resources={"sandbox": "rlvr.sandbox.session.SandboxSession (bubblewrap)",
                              "time_budget_s": max((_budget(load_task(t.reference)) for t in tasks), default=0.0)},
                   seeding="deterministic")
    return TerminalEnv(tasks, built, spec, max_turns=max_turns, command_timeout_s=command_timeout_s,
                       max_output_chars=max_output_chars, show_tests=show_tests, skipped=skipped)


def make_tbench(tasks_dir: str | Path | None = None, limit: int | None = None,
                task_ids: Sequence[str] | str | None = None, max_turns: int = 30, command_timeout_s: float = 60.0,
                max_output_chars: int = MAX_OUTPUT_CHARS, system_prompt: str | None = TERMINAL_SYSTEM_PROMPT,
                show_tests: bool = False, backend: Backend = "auto", verifier: TerminalVerifier | None = None,
                **verifier_overrides: Any) -> TerminalEnv:
    """`terminal/tbench-v1`: a directory of Terminal-Bench tasks (default: the suite shipped with rlvr).

    Args:
        tasks_dir: folder of task folders (each with task.yaml), or one task folder.
        limit: first N tasks (sorted by name).
        task_ids: only these task folder names (a list, or one comma-separated string).
        max_turns: assistant messages per episode.
        command_timeout_s: limit of one command, seconds.
        max_output_chars: cap of one command's observation.
        system_prompt: system message ('' or None for none).
        show_tests: give the agent a writable copy of the task's tests at /tests (grading uses a fresh one).
        backend: 'auto' (local tasks in bubblewrap; tasks that need an image in podman/docker when one
            works here and has their base image, else left out), 'local' (leave those out),
            'container' (require an engine; images are built, base images must be pullable).
        verifier: a `TerminalVerifier` to use as is.
        **verifier_overrides: `TerminalConfig` options (e.g. `reward="fraction"`).

    Raises:
        DataError: the folder holds no Terminal-Bench task, or a task cannot be read.
    """
    from rlvr.verifiers.terminal import find_task_dirs

    root = Path(tasks_dir) if tasks_dir is not None else TBENCH_SUITE
    refs = [TerminalReference(format="tbench", task_dir=str(p)) for p in find_task_dirs(root, "tbench")]
    return _build("terminal/tbench-v1", "Terminal-Bench tasks in a persistent bubblewrap shell, tests graded in a "
                  "fresh sandbox.", refs, str(root), system_prompt=system_prompt, limit=limit, task_ids=task_ids,
                  max_turns=max_turns, command_timeout_s=command_timeout_s, max_output_chars=max_output_chars,
                  verifier=verifier, overrides=verifier_overrides, show_tests=show_tests, backend=backend)


def make_harbor(tasks_dir: str | Path, limit: int | None = None, task_ids: Sequence[str] | str | None = None,
                max_turns: int = 30, command_timeout_s: float = 60.0, max_output_chars: int = MAX_OUTPUT_CHARS,
                system_prompt: str | None = TERMINAL_SYSTEM_PROMPT, show_tests: bool = False,
                backend: Backend = "auto", verifier: TerminalVerifier | None = None,
                **verifier_overrides: Any) -> TerminalEnv:
    """`terminal/harbor-v1`: a directory of Harbor tasks (instruction.md, task.toml, tests/test.sh).

    Arguments as in `make_tbench`; `tasks_dir` is required.

    Raises:
        DataError: the folder holds no Harbor task, or a task cannot be read.
    """
    from rlvr.verifiers.terminal import find_task_dirs

    refs = [TerminalReference(format="harbor", task_dir=str(p)) for p in find_task_dirs(tasks_dir, "harbor")]
    return _build("terminal/harbor-v1", "Harbor tasks in a persistent bubblewrap shell, test.sh graded in a fresh "
                  "sandbox.", refs, str(tasks_dir), system_prompt=system_prompt, limit=limit, task_ids=task_ids,
                  max_turns=max_turns, command_timeout_s=command_timeout_s, max_output_chars=max_output_chars,
                  verifier=verifier, overrides=verifier_overrides, show_tests=show_tests, backend=backend)


def make_agentbench_os(split: Literal["dev", "test", "all"] = "all", path: str | None = None, limit: int | None = None,
                       task_ids: Sequence[str] | str | None = None, max_turns: int = 8,
                       command_timeout_s: float = 60.0,
                       max_output_chars: int = MAX_OUTPUT_CHARS, system_prompt: str | None = TERMINAL_SYSTEM_PROMPT,
                       verifier: TerminalVerifier | None = None, **verifier_overrides: Any) -> TerminalEnv:
    """`terminal/agentbench-os-v1`: AgentBench-OS (PyPI `inspect-evals`, extra `terminal`), self-contained tasks.

    Args:
        split: 'dev' (26 records), 'test' (119) or 'all'.
        path: a folder with inspect-evals' `agent_bench_os*.json` and `scripts/` (default: the installed package).
        limit: first N tasks.
        task_ids: only these task ids (`agentbench-os-<split>-<record id>`).
        max_turns: assistant messages per episode.
        command_timeout_s: limit of one command, seconds.
        max_output_chars: cap of one command's observation.
        system_prompt: system message ('' or None for none).
        verifier: a `TerminalVerifier` to use as is.
        **verifier_overrides: `TerminalConfig` options.

    Raises:
        MissingExtraError: inspect-evals is not installed and no `path` is given.
    """
    from rlvr.verifiers.terminal.agentbench import load_agentbench

    records = load_agentbench(split, path)
    refs = [TerminalReference(format="agentbench", split=r.split, record_id=r.record_id, data_dir=path)
            for r in records]
    return _build("terminal/agentbench-os-v1", "AgentBench-OS shell tasks (inspect-evals) in a persistent "
                  "bubblewrap shell.", refs, path or "pypi:inspect-evals", system_prompt=system_prompt, limit=limit,
                  task_ids=task_ids, max_turns=max_turns, command_timeout_s=command_timeout_s,
                  max_output_chars=max_output_chars, verifier=verifier, overrides=verifier_overrides)
