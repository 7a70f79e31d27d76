"""Terminal verifier: tasks run in a persistent sandboxed shell, graded afterwards in a clean sandbox.

Pipeline: read the task (`tasks`: Terminal-Bench and Harbor directories; `agentbench`: the
AgentBench-OS records of inspect-evals) -> prepare its sandbox (`workspace.TaskSession`: the
Dockerfile's setup steps) -> the agent phase (the environment's commands, or a replayed response)
-> stop every agent process and export the working directory -> grade in a fresh sandbox with a
fresh copy of the trusted tests (`grade`), deciding on the host.
"""

from rlvr.verifiers.terminal.spec import SetupStep, TerminalReference, TerminalTask, TestPlan
from rlvr.verifiers.terminal.tasks import find_task_dirs, load_harbor, load_task, load_tbench
from rlvr.verifiers.terminal.verifier import TerminalConfig, TerminalVerifier, oracle_command, parse_response
from rlvr.verifiers.terminal.workspace import TaskSession

__all__ = [
    "SetupStep",
    "TaskSession",
    "TerminalConfig",
    "TerminalReference",
    "TerminalTask",
    "TerminalVerifier",
    "TestPlan",
    "find_task_dirs",
    "load_harbor",
    "load_task",
    "load_tbench",
    "oracle_command",
    "parse_response",
]
