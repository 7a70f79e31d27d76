"""What a terminal task is, once read from its source: `TerminalReference` and `TerminalTask`.

A dataset row carries only a `TerminalReference` (JSON): where the trusted task source is. The
verifier and the environment read the source into a `TerminalTask` (`rlvr.verifiers.terminal.tasks.
load_task`): the instruction, how to prepare the working directory (`SetupStep`s, from the
Dockerfile), how to grade (`TestPlan`, from the test script), the reference solution, limits,
and where the task can run (`placement`): `local` (bubblewrap on this machine) or `container`
(its environment needs an image: a base image other than a stock distribution, files or
packages outside the working directory, another user, several services).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__: list[str] = []

_FROZEN = ConfigDict(frozen=True, extra="forbid")

Placement = Literal["local", "container"]


class TerminalReference(BaseModel):
    """A terminal task's ground truth as a dataset row holds it: a pointer to the trusted task source.

    The tests are read from `task_dir` again at every grading, never from a copy the agent saw.
    """

    model_config = _FROZEN

    format: Literal["tbench", "harbor", "agentbench"] = Field(
        description="'tbench': a Terminal-Bench task directory (task.yaml, run-tests.sh, tests/, solution.sh); "
        "'harbor': a Harbor task directory (instruction.md, task.toml, tests/test.sh); 'agentbench': an "
        "AgentBench-OS record shipped in the PyPI package inspect-evals.")
    task_dir: str | None = Field(default=None, description="Absolute path of the task directory (tbench, harbor).")
    split: Literal["dev", "test"] | None = Field(default=None, description="AgentBench-OS split.")
    record_id: int | None = Field(default=None, description="AgentBench-OS record id within its split.")
    data_dir: str | None = Field(default=None, description="AgentBench-OS data folder; None: the installed "
                                 "inspect-evals package's.")

    @model_validator(mode="after")
    def _located(self) -> TerminalReference:
        if self.format in ("tbench", "harbor") and not self.task_dir:
            raise ValueError(f"a {self.format!r} terminal reference needs task_dir (the task's directory)")
        if self.format == "agentbench" and (self.split is None or self.record_id is None):
            raise ValueError("an 'agentbench' terminal reference needs split ('dev' or 'test') and record_id")
        return self


class SetupStep(BaseModel):
    """One step preparing the working directory, in Dockerfile order.

    Kinds: `copy` (host `source` file or directory to sandbox `dest`; a directory's contents
    are copied, as Docker's COPY does; `extract` unpacks a local tar as ADD does), `run` (bash
    `command` in `cwd`), `env` (`name`=`value` for later steps, the agent and the tests),
    `background` (a command started in the background before the agent's first command).
    """

    model_config = _FROZEN

    kind: Literal["copy", "run", "env", "background"]
    source: str | None = None
    dest: str | None = None
    extract: bool = False
    mode: int | None = Field(default=None, description="COPY --chmod mode for copied files.")
    command: str | None = None
    cwd: str | None = None
    name: str | None = None
    value: str | None = None


class TestPlan(BaseModel):
    """How the tests run, derived from the task's test script (`rlvr.verifiers.terminal.testscript`).

    `mode="pytest"`: the grader runs pytest itself on `test_files` (the script's pytest command,
    without its install steps), with the JUnit report on a channel only the grader holds;
    `mode="script"`: the script has steps besides installing and running pytest, so it runs as
    written (installs removed) with the grader's pytest first on PATH, and its reports are read
    afterwards (weaker: programs the script itself starts could rewrite them).
    """

    model_config = _FROZEN

    mode: Literal["pytest", "script"]
    tests_dir: str = Field(description="Host directory of the trusted tests, copied fresh to /tests per grading.")
    test_files: tuple[str, ...] = Field(default=(), description="Test files relative to tests_dir (pytest mode).")
    pytest_args: tuple[str, ...] = Field(default=(), description="Selection options kept from the script (-k ...).")
    selective: bool = Field(default=False, description="The options narrow the tests: the expected set is what ran.")
    script: str | None = Field(default=None, description="Script source for script mode, installs removed.")
    cwd: str = Field(default="/app", description="Working directory of the tests.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment of the tests.")
    reward_file: bool = Field(default=False, description="Harbor: the reward is /logs/verifier/reward.txt or .json.")
    notes: tuple[str, ...] = Field(default=(), description="Script lines not run and why (installs, bookkeeping).")


class TerminalTask(BaseModel):
    """A terminal task read from its source: everything the environment and the grader need."""

    model_config = _FROZEN

    task_id: str
    format: Literal["tbench", "harbor", "agentbench"]
    instruction: str
    workdir: str = Field(default="/app", description="The working directory tree (the first WORKDIR): a tmpfs, "
                         "exported after the agent phase and unpacked for the tests.")
    cwd: str | None = Field(default=None, description="Where the shell and the tests start (the last WORKDIR); "
                            "None: `workdir`.")
    home: str = "/root"
    setup: tuple[SetupStep, ...] = ()
    env: dict[str, str] = Field(default_factory=dict, description="ENV of the image: the agent's and the tests'.")
    tests: TestPlan | None = None
    agentbench: Any = Field(default=None, description="The AgentBench-OS record (`agentbench.AgentBenchTask`).")
    solution_files: dict[str, str] = Field(default_factory=dict, description="Reference solution files "
                                           "(name -> text), run as `bash <solution_dir>/<solution_entry>`.")
    solution_entry: str | None = None
    solution_dir: str = "/oracle"
    agent_timeout_s: float = Field(default=360.0, gt=0, description="Budget of the agent phase, seconds.")
    test_timeout_s: float = Field(default=60.0, gt=0, description="Budget of the tests, seconds.")
    placement: Placement = "local"
    placement_reason: str = Field(default="", description="Why the task needs a container ('' when local).")
    image: str | None = Field(default=None, description="Base image (container provider).")
    dockerfile: str | None = Field(default=None, description="Host path of the Dockerfile (container provider).")
    source: str = Field(default="", description="Where the task was read from (directory or package record).")
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def start_dir(self) -> str:
        """Where the agent's shell and the tests start."""
        return self.cwd or self.workdir

    @property
    def has_solution(self) -> bool:
        """True when the task ships a reference solution the oracle can replay."""
        return self.solution_entry is not None
