r"""`TerminalVerifier`: grade terminal tasks so that nothing done inside the sandbox can fake a pass.

Two entry points:

- `grade(reference, workspace_tar, answer, expected_answer)`: the terminal environment's, after
  an episode: the agent's sandbox is already stopped and its working directory exported;
- `verify(response, reference)` (and `verify_batch`, `rlvr verify --verifier terminal`): replay a
  response in a fresh, prepared sandbox, then grade it the same way. A response is a bash script
  (Terminal-Bench / Harbor: the whole text; with ```` ```bash ```` fences, each fence is one
  command in the same persistent shell), or a JSON object `{"commands": [...], "answer": "..."}`
  (or `"answer_command"`: a command run last whose output is the answer);
  for AgentBench-OS question tasks, text without fences is the answer, and with fences the
  answer is in `<answer>...</answer>` or the text after the last fence.

Grading itself is `rlvr.verifiers.terminal.grade` (Terminal-Bench, Harbor) and
`rlvr.verifiers.terminal.agentbench` (AgentBench-OS). Scoring runs in threads of this process
(`ThreadedVerifier`): every untrusted step runs in a sandbox with its own limits and a parent
watchdog, and the verifier's watchdog ends a replay past `timeout_s`, so no response can hang the
caller. At most `max_parallel` gradings run at once (per process).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from rlvr.core.errors import DataError, RlvrError, SandboxError
from rlvr.core.types import Verdict
from rlvr.sandbox.session import ExportError, SessionConfig
from rlvr.verifiers.base import ThreadedVerifier, VerifierConfig
from rlvr.verifiers.terminal.spec import TerminalTask
from rlvr.verifiers.terminal.tasks import load_task
from rlvr.verifiers.terminal.workspace import TaskSession

__all__: list[str] = []


class TerminalConfig(VerifierConfig):
    """Settings of `TerminalVerifier` (plus the shared `VerifierConfig` fields)."""

    timeout_s: float = Field(default=3600.0, gt=0, description="Outer limit of one replayed verification (setup, "
                             "commands, tests), seconds; the task's own agent and test budgets apply inside it.")
    reward: Literal["binary", "fraction"] = Field(
        default="binary", description="'binary': 1.0 only when every test passes; 'fraction': the share of tests "
        "passed (Harbor: the reward file's value).")
    command_timeout_s: float = Field(default=600.0, gt=0, description="Limit of one replayed command (the task's "
                                     "remaining agent budget applies too), seconds.")
    max_parallel: int = Field(default_factory=lambda: max(1, os.cpu_count() or 1), ge=1,
                              description="Most gradings and replays running at once in this process.")
    sandbox: SessionConfig = Field(default_factory=SessionConfig, description="Isolation and limits of the sandboxes.")


_GATES: dict[int, threading.BoundedSemaphore] = {}
_GATES_LOCK = threading.Lock()


def _gate(n: int) -> threading.BoundedSemaphore:
    with _GATES_LOCK:
        if n not in _GATES:
            _GATES[n] = threading.BoundedSemaphore(n)
        return _GATES[n]


class Command(str):
    """A response's `answer_command`: the answer is this command's stripped stdout."""


_FENCE = re.compile(r"^[ \t]*```(?:bash|sh|shell|console)?[ \t]*\r?\n(?P<body>.*?)^[ \t]*```[ \t]*$",
                    re.DOTALL | re.MULTILINE)
_ANSWER = re.compile(r"<answer>(?P<body>.*?)</answer>", re.DOTALL)


def parse_response(response: str, task: TerminalTask) -> tuple[list[str], str | Command]:
    """(commands, answer) of a response to replay (module docstring for the rules).

    The answer is a `Command` when the response names an `answer_command`: the answer is then
    that command's output, run after the others in the same shell.
    """
    text = response.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and ({"commands", "answer", "answer_command"} & set(data)):
            commands = data.get("commands") or []
            commands = [commands] if isinstance(commands, str) else [str(c) for c in commands]
            if data.get("answer_command"):
                return commands, Command(str(data["answer_command"]))
            return commands, str(data.get("answer") or "")
    fences = list(_FENCE.finditer(response))
    tagged = _ANSWER.search(response)
    if task.format == "agentbench":
        if not fences:
            return [], (tagged.group("body") if tagged else response).strip()
        after = response[fences[-1].end():]
        return [m.group("body") for m in fences], (tagged.group("body") if tagged else after).strip()
    if fences:
        return [m.group("body") for m in fences], tagged.group("body").strip() if tagged else ""
    return ([response] if text else []), ""


def oracle_command(task: TerminalTask) -> str:
    """A shell command that writes the task's solution files and runs them, as the oracle does.

    Terminal-Bench's `OracleAgent` copies solution.sh to /oracle and runs `bash /oracle/solution.sh`
    from the working directory; Harbor's copies `solution/` to /solution and runs `solve.sh`.

    Raises:
        ValueError: the task has no replayable solution.
    """
    if task.solution_entry is None:
        raise ValueError(f"task {task.task_id} has no reference solution to replay")
    lines = [f"mkdir -p {task.solution_dir}"]
    for name, text in task.solution_files.items():
        tag = "RLVR_SOLUTION_" + hashlib.sha256(text.encode()).hexdigest()[:12]
        target = f"{task.solution_dir}/{name}"
        lines += [f"mkdir -p \"$(dirname {target})\"", f"cat > {target} <<'{tag}'", text.rstrip("\n"), tag]
    lines.append(f"bash {task.solution_dir}/{task.solution_entry}")
    return "\n".join(lines)


def _grade(config: TerminalConfig, task: TerminalTask, workspace: Path, answer: str,
           expected: str | None) -> Verdict:
    if task.format == "agentbench":
        from rlvr.verifiers.terminal.agentbench_run import grade_agentbench

        return grade_agentbench(task, workspace, answer, expected, config=config.sandbox)
    from rlvr.verifiers.terminal.grade import grade_workspace

    return grade_workspace(task, workspace, config=config.sandbox, site=grader_site(config), reward=config.reward)


def grader_site(config: TerminalConfig) -> tuple[str, ...]:
    """Host directories holding the grader's pytest, readable by the sandbox (a staged copy if needed)."""
    from rlvr.sandbox.isolation import sandbox_python
    from rlvr.sandbox.site_packages import sandbox_site_path

    return sandbox_site_path(("pytest",), sandbox_python(config.sandbox.python))


def score_terminal(config: TerminalConfig, response: str, reference: Any) -> Verdict:
    """Replay `response` in a fresh sandbox of the task `reference` points to, then grade it. Never raises.

    Returns:
        The grade's verdict; `incorrect` when what the commands left cannot be exported; `error` (reward
        None) when the task cannot be read, needs a missing container runtime, or the sandbox failed.
    """
    try:
        return _replay(config, response, reference)
    except RlvrError as exc:
        return Verdict.error(f"terminal verifier: {exc}")


def _replay(config: TerminalConfig, response: str, reference: Any) -> Verdict:
    start = time.monotonic()
    try:
        task = load_task(reference)
    except DataError as exc:
        return Verdict.error(f"terminal verifier: {exc}")
    if task.placement != "local":
        from rlvr.verifiers.terminal.workspace import container_available

        if not container_available():
            return Verdict.error(f"task {task.task_id} needs a container runtime (podman or docker): "
                                 f"{task.placement_reason}")
    commands, answer = parse_response(response, task)
    with _gate(config.max_parallel):
        try:
            with TaskSession(task, config.sandbox) as session:
                deadline = start + task.agent_timeout_s
                for command in commands:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    session.run(command, timeout_s=min(config.command_timeout_s, left))
                if isinstance(answer, Command):
                    left = max(deadline - time.monotonic(), 1.0)
                    answer = session.run(answer, timeout_s=min(config.command_timeout_s, left)).stdout.strip()
                workspace = session.finish()
                verdict = _grade(config, task, workspace, answer, session.expected_answer)
        except ExportError as exc:  # what the commands left cannot be exported: their doing
            return Verdict(status="incorrect", reward=0.0, detail=f"terminal verifier: {exc}",
                           elapsed_s=time.monotonic() - start)
        except (DataError, SandboxError, OSError) as exc:
            return Verdict.error(f"terminal verifier: {type(exc).__name__}: {exc}",
                                 elapsed_s=time.monotonic() - start)
    return verdict.model_copy(update={"elapsed_s": time.monotonic() - start})


class TerminalVerifier(ThreadedVerifier):
    r"""Grade Terminal-Bench, Harbor and AgentBench-OS tasks after the agent phase (module docstring).

    Example:
        >>> v = TerminalVerifier()                                   # doctest: +SKIP
        >>> ref = {"format": "tbench", "task_dir": "/path/to/task"}  # doctest: +SKIP
        >>> v.verify(v.reference_response(ref), ref).status          # doctest: +SKIP
        'correct'
    """

    name: ClassVar[str] = "terminal"
    config_type: ClassVar[type[TerminalConfig]] = TerminalConfig
    config: TerminalConfig

    def scorer(self) -> Callable[[str, Any], Verdict]:
        """`score_terminal` bound to this config."""
        return functools.partial(score_terminal, self.config)

    def concurrency(self, workers: int | None = None) -> int:
        """Replays of a batch running at once: `workers`, else `max_parallel`."""
        return workers or self.config.max_parallel

    def max_in_flight(self) -> int:
        """`max_parallel`: the replays of this verifier running at once, over every caller."""
        return self.config.max_parallel

    def grade(self, reference: Any, workspace_tar: str | Path, answer: str = "",
              expected_answer: str | None = None) -> Verdict:
        """Grade an episode whose agent phase is over: `workspace_tar` from `TaskSession.finish`.

        Args:
            reference: the task's `TerminalReference` (or its dict).
            workspace_tar: the exported working directory.
            answer: the agent's submitted answer (AgentBench-OS question tasks).
            expected_answer: the answer computed before the agent acted (`TaskSession.expected_answer`).
        """
        start = time.monotonic()
        try:
            task = load_task(reference)
        except DataError as exc:
            return Verdict.error(f"terminal verifier: {exc}")
        with _gate(self.config.max_parallel):
            verdict = _grade(self.config, task, Path(workspace_tar), answer, expected_answer)
        return verdict.model_copy(update={"elapsed_s": time.monotonic() - start})

    def reference_response(self, reference: Any) -> str:
        """The task's reference solution as a response.

        The oracle command (Terminal-Bench, Harbor), or `{"commands": ..., "answer": ...}` (AgentBench-OS).

        Raises:
            ValueError: the task has no reference solution.
        """
        task = load_task(reference)
        if task.format == "agentbench":
            from rlvr.verifiers.terminal.agentbench_run import reference_solution

            record = task.agentbench
            if record.evaluation == "compare" and record.match is None and record.example:
                return json.dumps({"commands": [], "answer_command": record.example})  # this episode's own data
            commands, answer = reference_solution(task, self.config.sandbox)
            return json.dumps({"commands": commands, "answer": answer})
        return oracle_command(task)

