"""A task's sandbox, prepared: `TaskSession` applies the setup steps, starts the shell, and exports.

Preparation follows the task's Dockerfile order (`SetupStep`s): files and directories from the
build context are packed into tars on the host (owner root, modes kept) and unpacked inside the
sandbox; RUN steps run in clean bash processes in their WORKDIR with the ENV set so far; the
AgentBench `start` command is left running in the background. A setup step that fails makes the
task unusable: `DataError`, naming the step and its output.

Tasks with `placement="container"` run in a container of their image instead (`sandbox_for`,
`rlvr.sandbox.container`): the image build did the steps.

Only then does the agent's shell start. For AgentBench-OS question tasks the expected answer is
computed here too, by the task's example command in a clean process *before* the agent acts, so
an agent cannot change the files to fit a wrong answer.
"""

from __future__ import annotations

import contextlib
import os
import re
import tarfile
import threading
import weakref
from pathlib import Path
from typing import Any

from rlvr.core.errors import DataError, SandboxError
from rlvr.sandbox.host_process import closed_at_exit
from rlvr.sandbox.isolation import remove_tree, stage_dir
from rlvr.sandbox.session import CommandResult, Mount, SandboxSession, SessionConfig
from rlvr.verifiers.terminal.agentbench_rules import SEED_DIR, expected_needs_copy, seed_dir
from rlvr.verifiers.terminal.spec import SetupStep, TerminalTask
from rlvr.verifiers.terminal.testscript import TESTS_MOUNT

__all__ = ["TaskSession", "container_available", "container_problem"]

SETUP_TIMEOUT_S = 600.0
"""Limit of one setup step (a Dockerfile RUN line), seconds."""

IN_DIR = "/run/rlvr/in"


def expand_env(value: str, env: dict[str, str]) -> str:
    """`$NAME` and `${NAME}` in `value` replaced from `env` (unknown names become '' as in a shell)."""
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)",
                  lambda m: env.get(m.group(1) or m.group(2), ""), value)


def container_available() -> bool:
    """True when a working podman or docker can run the tasks whose placement is 'container'."""
    from rlvr.sandbox.runtimes import container_runtime

    return container_runtime() is not None


def container_problem(task: TerminalTask) -> str | None:
    """Why `task` cannot run in a container here (None when it can): no container runtime, or its base image is absent.

    The base image (the Dockerfile's FROM, or Harbor's prebuilt `docker_image`) must be in the
    container runtime's local store: rlvr never pulls (`podman pull IMAGE` first where a registry is reachable).
    """
    from rlvr.sandbox.runtimes import container_runtime, image_exists

    runtime = container_runtime()
    if runtime is None:
        return "no working podman or docker here"
    if task.image and not image_exists(task.image, runtime=runtime):
        return f"its base image {task.image!r} is not in {os.path.basename(runtime)}'s local store (pull it first)"
    return None


_IMAGE_LOCK = threading.Lock()


def task_image(task: TerminalTask) -> str:
    """The image of a container task: its Dockerfile built once (tag = content hash), or Harbor's prebuilt image.

    Raises:
        SandboxError: no container runtime works here, or the build failed (with its log).
    """
    from rlvr.sandbox.runtimes import build_image, container_runtime

    runtime = container_runtime()
    if runtime is None:
        raise SandboxError(f"task {task.task_id} needs a container ({task.placement_reason}), and no working podman "
                           "or docker was found: install podman (Debian package `podman`) or start a docker daemon")
    if task.dockerfile is None:
        if task.image is None:
            raise SandboxError(f"task {task.task_id} names neither a Dockerfile nor an image")
        return task.image
    with _IMAGE_LOCK:  # concurrent episodes of one task build its image once
        return build_image(task.dockerfile, os.path.dirname(task.dockerfile), runtime=runtime)


def sandbox_for(task: TerminalTask, config: SessionConfig, mounts: list[Mount],
                env: dict[str, str] | None = None) -> SandboxSession:
    """A sandbox for `task`: bubblewrap for local tasks, a container of the task's image for the others."""
    if task.placement != "container":
        return SandboxSession(config, mounts=mounts, env=env)
    from rlvr.sandbox.container import ContainerSession

    return ContainerSession(task_image(task), config, mounts=mounts, env=env)


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def pack_tree(source: Path, out: Path, name: str | None = None, mode: int | None = None) -> None:
    """Write `source` (a directory's contents, or one file as `name`) to the tar `out`, owned by root."""
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        if source.is_dir():
            for path in sorted(source.rglob("*")):
                info = _root_owned(tar.gettarinfo(str(path), arcname=str(path.relative_to(source))))
                if mode is not None and info.isfile():
                    info.mode = mode
                if info.isfile():
                    with path.open("rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
        else:
            info = _root_owned(tar.gettarinfo(str(source), arcname=name or source.name))
            if mode is not None:
                info.mode = mode
            with source.open("rb") as f:
                tar.addfile(info, f)


_TASK_SESSIONS: weakref.WeakSet[TaskSession] = closed_at_exit()  # closed (staging directory removed) at exit


SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/var", "/srv",
               "/home", "/mnt", "/media", "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
"""Where a restored symbolic link may point besides the working directory: the system, never the grader's own
directories (/tests, /logs, /run, /tmp, HOME, /proc)."""


def link_roots(task: TerminalTask) -> list[str]:
    """Directories a symbolic link in the restored working directory may point into (everything else is dropped).

    The grading sandbox holds files the agent never had: the fresh tests (/tests), the grader's
    own directories (/run/rlvr, /logs), its /tmp and HOME. A link into them would let the tests
    read the expected outputs in place of the agent's.
    """
    return [task.workdir, *SYSTEM_DIRS]



class TaskSession:
    """The sandbox of one episode of `task`: prepared, with the agent's shell running.

    Args:
        task: the task.
        config: sandbox limits; its `workdir` and `home` are replaced by the task's.
        expected: compute an AgentBench question's expected answer before the agent acts.
        show_tests: give the agent a writable copy of the task's tests at /tests (grading always
            uses a fresh copy from the task source).

    Attributes:
        expected_answer: AgentBench question tasks: the answer computed before the agent acted.
        notes: what preparation did beyond the steps (skipped installs, background commands).
    """

    def __init__(self, task: TerminalTask, config: SessionConfig | None = None, *, expected: bool = True,
                 show_tests: bool = False) -> None:
        self.task = task
        self._want_expected = expected
        self.show_tests = show_tests and task.tests is not None
        base = config or SessionConfig()
        self.config = base.model_copy(update={"workdir": task.workdir, "home": task.home})
        self.env: dict[str, str] = {}
        self.expected_answer: str | None = None
        self.notes: list[str] = list(task.metadata.get("setup_notes") or [])
        self._stage = stage_dir("rlvr-task-")
        writable = dict.fromkeys(d for d in (task.solution_dir, "/logs") if d not in (task.workdir, task.home, "/tmp"))
        if self.show_tests:
            writable[TESTS_MOUNT] = None
        mounts = [Mount(IN_DIR, self._stage), *(Mount(d, kind="tmpfs", size_mb=64) for d in writable)]
        if task.format == "agentbench":
            mounts.append(Mount(SEED_DIR, seed_dir()))
        self.session = sandbox_for(task, self.config, mounts)
        _TASK_SESSIONS.add(self)
        self.env = dict(self.session.env)

    # -- preparation -----------------------------------------------------------------------
    def start(self) -> TaskSession:
        """Start the sandbox, apply the setup steps, start the shell.

        Raises:
            DataError: a setup step failed (the task's environment is broken).
            SandboxError: the sandbox could not start.
        """
        tars = self._stage_copies()
        try:
            self.session.start()
            for index, step in enumerate(self.task.setup if self.task.placement == "local" else ()):
                self._apply(index, step, tars)  # a container's image already holds what the steps made
            if self.task.agentbench is not None:
                self._agentbench_prepare()
            if self.show_tests:  # a writable copy: what the agent does to it never reaches the grader
                self.session.extract(f"{IN_DIR}/tests.tar", TESTS_MOUNT)
            self.session.env = dict(self.env)
            self.session.start_shell(self.task.start_dir)
        except BaseException:
            self.close()
            raise
        return self

    def _stage_copies(self) -> dict[int, str]:
        tars = {}
        if self.show_tests and self.task.tests is not None:
            pack_tree(Path(self.task.tests.tests_dir), Path(self._stage, "tests.tar"))
            os.chmod(Path(self._stage, "tests.tar"), 0o644)
        for index, step in enumerate(self.task.setup):
            if step.kind != "copy" or step.source is None:
                continue
            source = Path(step.source)
            out = Path(self._stage, f"copy-{index}.tar")
            if step.extract:
                out = Path(self._stage, f"copy-{index}{''.join(source.suffixes)}")
                out.write_bytes(source.read_bytes())
            else:
                pack_tree(source, out, name=os.path.basename(step.dest or source.name), mode=step.mode)
            os.chmod(out, 0o644)
            tars[index] = f"{IN_DIR}/{out.name}"
        return tars

    def _apply(self, index: int, step: SetupStep, tars: dict[int, str]) -> None:
        if step.kind == "env":
            assert step.name is not None
            self.env[step.name] = expand_env(step.value or "", self.env)
            return
        if step.kind == "copy":
            dest = step.dest or self.task.workdir
            target = dest if (step.source and Path(step.source).is_dir()) or step.extract else os.path.dirname(dest)
            self.session.extract(tars[index], target)
            return
        command = step.command or ""
        if step.kind == "background":
            result = self.session.exec(command, cwd=step.cwd or self.task.workdir, env=self.env, background=True)
            self.notes.append(f"started in the background: {command[:80]}")
            if result.error:
                raise DataError(f"{self.task.task_id}: background command {command[:80]!r} failed: {result.error}")
            return
        result = self.session.exec(command, cwd=step.cwd or self.task.workdir, env=self.env, timeout_s=SETUP_TIMEOUT_S)
        if result.error or result.exit_code != 0:
            why = result.error or ("timed out" if result.timed_out else f"exit {result.exit_code}")
            raise DataError(f"{self.task.task_id}: setup step {index + 1} `{command[:120]}` failed ({why}): "
                            f"{(result.stderr or result.stdout).strip()[-600:]}")

    def _agentbench_prepare(self) -> None:
        record: Any = self.task.agentbench
        if record.evaluation == "state" or not record.example or not self._want_expected:
            return
        if expected_needs_copy(record):  # the example writes files: run it where the agent never works
            with TaskSession(self.task, self.config, expected=False) as other:
                result = other.session.exec(record.example, cwd=self.task.start_dir, env=other.env, timeout_s=600.0)
        else:
            result = self.session.exec(record.example, cwd=self.task.start_dir, env=self.env, timeout_s=600.0)
        if result.error or result.exit_code != 0:
            why = result.error or f"exit {result.exit_code}"
            raise DataError(f"{self.task.task_id}: the example command that computes the expected answer failed "
                            f"({why}): {result.stderr.strip()[-300:]}")
        self.expected_answer = result.stdout.strip()

    # -- the agent phase ------------------------------------------------------------------
    def run(self, command: str, timeout_s: float) -> CommandResult:
        """Run one agent command in the persistent shell (see `SandboxSession.run`)."""
        return self.session.run(command, timeout_s=timeout_s)

    def finish(self) -> Path:
        """Stop every process the agent started and export the working directory to a host tar.

        Returns:
            The tar's path (removed by `close`).

        Raises:
            SandboxError: the sandbox is gone or the export failed.
        """
        out = Path(self._stage, "final-workspace.tar")
        self.session.finish(export_to=out)
        return out

    def close(self) -> None:
        """Kill the sandbox and remove the host staging directory."""
        with contextlib.suppress(Exception):
            self.session.close()
        remove_tree(self._stage)

    def __enter__(self) -> TaskSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
