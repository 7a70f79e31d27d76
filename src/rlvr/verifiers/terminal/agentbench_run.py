"""Running and grading AgentBench-OS tasks (`agentbench.AgentBenchTask`) in rlvr's sandboxes.

- `agentbench_task`: the record as a `TerminalTask`: working directory and HOME `/home/agent`,
  the init scripts as setup steps (each in its own clean bash, as each is its own `RUN` line in
  inspect-evals' Dockerfile template; their randomness seeded per task, see `_seeded`), `start`
  left running in the background. Records that do not
  run in an unprivileged local sandbox (`runs_locally=False`) get `placement="container"` and the
  record's `why_not`; the environments list them as skipped.
- `grade_agentbench`: `match` — the submitted answer equals the record's (surrounding whitespace
  ignored); `compare` — `python3 <script> ANSWER EXPECTED [earlier outputs]` for each of the
  record's comparison scripts, in a fresh sandbox, all exit 0 (inspect-evals'
  `compare_answer_with_script`), EXPECTED being `match` or the example's output computed before
  the agent acted; `state` — the record's check script or command over the exported
  `/home/agent`, in a fresh sandbox, exit 0. Checks run with `bash --noprofile --norc` and a
  clean environment, not inspect's `bash --login` (which would read the agent's own ~/.profile).
- `reference_solution`: the oracle's commands and answer.
"""

from __future__ import annotations

import functools
import shlex
import time
from pathlib import Path

from rlvr.core.errors import RlvrError, SandboxError
from rlvr.core.types import Verdict
from rlvr.sandbox.isolation import make_readable, remove_tree, stage_dir
from rlvr.sandbox.session import Mount, SandboxSession, SessionConfig, UnpackError
from rlvr.verifiers.terminal.agentbench import AgentBenchTask, load_agentbench, read_script
from rlvr.verifiers.terminal.agentbench_rules import AGENT_HOME, seeded
from rlvr.verifiers.terminal.spec import SetupStep, TerminalTask
from rlvr.verifiers.terminal.workspace import TaskSession, link_roots

__all__ = ["reference_solution"]

SCRIPTS = "/run/rlvr/agentbench"
_WORKSPACE = f"{SCRIPTS}/workspace.tar"
CHECK_TIMEOUT_S = 600.0
"""Limit of one check or comparison script, seconds (inspect-evals' `CHECK_TIMEOUT`)."""


@functools.lru_cache(maxsize=8)
def _records(data_dir: str | None) -> dict[tuple[str, int], AgentBenchTask]:
    return {(r.split, r.record_id): r for r in load_agentbench("all", data_dir)}


def agentbench_task(split: str, record_id: int, data_dir: str | None = None) -> TerminalTask:
    """The AgentBench-OS record `split`/`record_id` as a `TerminalTask`.

    Raises:
        DataError: no such record. MissingExtraError: inspect-evals is not installed.
    """
    from rlvr.core.errors import DataError

    record = _records(data_dir).get((split, record_id))
    if record is None:
        raise DataError(f"AgentBench-OS has no {split} record {record_id}")
    setup = [SetupStep(kind="run", command=seeded(script, record.task_id), cwd=AGENT_HOME) for script in record.init]
    if record.start:
        setup.append(SetupStep(kind="background", command=record.start, cwd=AGENT_HOME))
    return TerminalTask(
        task_id=record.task_id, format="agentbench", instruction=record.question, workdir=AGENT_HOME, home=AGENT_HOME,
        setup=tuple(setup), agentbench=record, agent_timeout_s=300.0, test_timeout_s=CHECK_TIMEOUT_S,
        placement="local" if record.runs_locally else "container", placement_reason=record.why_not,
        source=f"inspect-evals agent_bench {split} record {record_id}",
        metadata={"labels": record.labels, "evaluation": record.evaluation, "data_dir": data_dir})


def _clean_env() -> dict[str, str]:
    return {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": AGENT_HOME,
            "LANG": "C.UTF-8", "TERM": "dumb", "USER": "root"}


def _stage(record: AgentBenchTask, data_dir: str | None, workspace: Path | None) -> str:
    stage = stage_dir("rlvr-agentbench-")
    names = [*record.compare_scripts, *([record.state_check_file] if record.state_check_file else [])]
    for name in names:
        target = Path(stage, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(read_script(name, data_dir), encoding="utf-8")
    if workspace is not None:
        Path(stage, "workspace.tar").write_bytes(workspace.read_bytes())
    make_readable(stage)
    return stage


def _compare(session: SandboxSession, record: AgentBenchTask, answer: str, expected: str) -> tuple[bool, list[str]]:
    params = [answer, expected]
    lines = []
    for name in record.compare_scripts:
        result = session.exec(f"python3 {SCRIPTS}/{name} {shlex.join(params)}", cwd=AGENT_HOME, env=_clean_env(),
                              timeout_s=CHECK_TIMEOUT_S)
        lines.append(f"{name}: exit {result.exit_code}{' (timed out)' if result.timed_out else ''}")
        if result.error:
            raise SandboxError(result.error)
        if result.exit_code != 0:
            return False, lines
        if result.stdout.strip():
            params.append(result.stdout.strip())
    return True, lines


def grade_agentbench(task: TerminalTask, workspace: Path, answer: str, expected: str | None, *,
                     config: SessionConfig | None = None) -> Verdict:
    """Grade an AgentBench-OS episode (module docstring); `expected` from `TaskSession.expected_answer`."""
    start = time.monotonic()
    record: AgentBenchTask = task.agentbench
    data_dir = _data_dir(task)
    answer = answer.strip()
    if record.evaluation == "match":
        ok = answer == (record.match or "").strip()
        return Verdict(status="correct" if ok else "incorrect", reward=float(ok), extracted=answer,
                       detail=f"answer {answer[:200]!r} {'==' if ok else '!='} expected {record.match!r}",
                       elapsed_s=time.monotonic() - start)
    want = record.match if record.match is not None else expected
    if record.evaluation == "compare" and want is None:
        return Verdict.error("the expected answer was not computed before the agent acted", extracted=answer)
    cfg = (config or SessionConfig()).model_copy(update={"workdir": AGENT_HOME, "home": AGENT_HOME})
    stage = _stage(record, data_dir, workspace if record.evaluation == "state" else None)
    try:
        with SandboxSession(cfg, mounts=[Mount(SCRIPTS, stage)], env=_clean_env()) as session:
            if record.evaluation == "compare":
                assert want is not None
                ok, lines = _compare(session, record, answer, want)
                detail = f"answer {answer[:200]!r}, expected {want[:200]!r}: " + "; ".join(lines)
            else:
                session.extract(_WORKSPACE, AGENT_HOME, link_roots=link_roots(task))
                command = f"bash {SCRIPTS}/{record.state_check_file}" if record.state_check_file else \
                    record.state_check_command or "false"
                result = session.exec(command, cwd=AGENT_HOME, env=_clean_env(), timeout_s=CHECK_TIMEOUT_S)
                if result.error:
                    raise SandboxError(result.error)
                if result.timed_out:
                    return Verdict.timeout("the state check ran past its limit", elapsed_s=time.monotonic() - start)
                ok = result.exit_code == 0
                detail = f"state check `{command[:120]}`: exit {result.exit_code}\n{result.stdout[-400:]}"
    except UnpackError as exc:
        return Verdict(status="incorrect", reward=0.0, detail=f"the home directory could not be restored: {exc}",
                       elapsed_s=time.monotonic() - start)
    except (SandboxError, RlvrError, OSError) as exc:
        return Verdict.error(f"the AgentBench grader failed: {type(exc).__name__}: {exc}",
                             elapsed_s=time.monotonic() - start)
    finally:
        remove_tree(stage)
    return Verdict(status="correct" if ok else "incorrect", reward=float(ok), extracted=answer, detail=detail,
                   elapsed_s=time.monotonic() - start)


def _data_dir(task: TerminalTask) -> str | None:
    return task.metadata.get("data_dir")


def reference_solution(task: TerminalTask, config: SessionConfig | None = None) -> tuple[list[str], str]:
    """(commands, answer) that solve an AgentBench-OS task: the oracle's actions.

    `match`: the record's answer; `compare`: the example command and its output, computed in a
    freshly prepared sandbox; `state`: the record's reference solution script.

    Raises:
        ValueError: the task has no reference solution. DataError / SandboxError: the sandbox failed.
    """
    record: AgentBenchTask = task.agentbench
    if record.evaluation == "match":
        return [], record.match or ""
    if record.evaluation == "state":
        if not record.solution:
            raise ValueError(f"{task.task_id} has no reference solution")
        return [record.solution], ""
    if record.match is not None:
        return ([record.example] if record.example else []), record.match
    with TaskSession(task, config) as session:
        expected = session.expected_answer
    if expected is None:
        raise ValueError(f"{task.task_id}: the example gave no expected answer")
    return ([record.example] if record.example else []), expected
