"""Pre-started sandboxed Python workers (`LocalSandbox.run_python` uses them).

Each worker is one sandbox (same isolation as a one-shot run) whose command is the supervisor
(`rlvr/sandbox/guest/rlvr_supervisor.py`): a warm interpreter that forks a fresh child per job, so a job
pays a `fork` instead of a sandbox launch plus an interpreter start. Between jobs the supervisor
kills everything the job left behind and wipes the job directory and /tmp; after
`jobs_per_worker` jobs the worker is replaced by a fresh sandbox (started in the background).

The parent keeps its own watchdog: a supervisor that does not answer within the job's time
limit plus a grace period is killed with its whole sandbox and the job is reported timed out.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import hashlib
import json
import os
import queue
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from rlvr.sandbox.config import ExecResult, Isolation, SandboxConfig
from rlvr.sandbox.guest import SUPERVISOR
from rlvr.sandbox.host_process import (
    StreamReader,
    child_pipe,
    closed_at_exit,
    kill_group,
    read_child_pid,
    wait_gone,
)
from rlvr.sandbox.isolation import remove_tree

__all__ = ["SUPERVISOR_DIED"]

SUPERVISOR_DIED = "the sandbox supervisor died during the job"
"""`ExecResult.error` of a job whose running supervisor went away (the job may have killed it)."""

_GRACE_S = 5.0
_START_TIMEOUT_S = 60.0


def decode_reply(outer: ExecResult, isolation: Any) -> ExecResult:
    """Turn a one-shot supervisor run (`--once`) into the job's `ExecResult`."""
    if outer.error is not None:
        return outer
    if outer.timed_out:
        return ExecResult(timed_out=True, elapsed_s=outer.elapsed_s, isolation=isolation)
    line = outer.stdout.strip().splitlines()[-1:] if outer.stdout.strip() else []
    if not line:
        err = outer.stderr.decode(errors="replace")[-500:]
        return ExecResult(isolation=isolation,
                          error=f"sandbox supervisor gave no reply (exit {outer.exit_code}): {err}")
    return _from_reply(json.loads(line[0]), isolation)


def _from_reply(reply: dict[str, Any], isolation: Any) -> ExecResult:
    return ExecResult(
        exit_code=reply["exit_code"], signal=reply["signal"], timed_out=reply["timed_out"],
        output_limited=reply["output_limited"], stdout=base64.b64decode(reply["stdout"]),
        stderr=base64.b64decode(reply["stderr"]), result=base64.b64decode(reply["result"]),
        elapsed_s=reply["elapsed_s"], isolation=isolation,
    )


class SandboxHost(Protocol):
    """What a pool needs of its sandbox (`LocalSandbox`): where and how to launch one supervisor."""

    config: SandboxConfig
    isolation: Isolation
    python: str

    def make_dirs(self, files: Mapping[str, str | bytes], grader_files: Mapping[str, str | bytes]) -> tuple[str, str]:
        """New work and grader host directories holding `files` and `grader_files`."""

    def host_command(self, level: Isolation, argv: Sequence[str], work: str, grader: str, timeout_s: float,
                     limits: bool = True, extra_env: Mapping[str, str] | None = None,
                     ) -> tuple[list[str], dict[str, str], str | None]:
        """Full host argv, environment and cwd for running `argv` at `level`."""


class _Supervisor:
    """One pre-started worker: a sandboxed supervisor process and its host directories."""

    def __init__(self, box: SandboxHost) -> None:
        self.box = box
        self.jobs = 0
        self.work, self.grader = box.make_dirs({}, {SUPERVISOR.name: SUPERVISOR.read_text()})
        full, env, cwd = box.host_command(box.isolation, [box.python, "-I", f"{{grader}}/{SUPERVISOR.name}"],
                                          self.work, self.grader, 0.0, limits=False)
        info_r, info_w = child_pipe()
        full = [a.replace("{info_fd}", str(info_w)).replace("{result_fd}", "") for a in full]
        if box.isolation != "bwrap":
            env["RLVR_SANDBOX_TMP"] = env["TMPDIR"]
        kwargs: dict[str, Any] = {}
        if os.geteuid() == 0:
            kwargs.update(user=box.config.uid, group=box.config.gid, extra_groups=[])
        try:
            self.proc = subprocess.Popen(
                full, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
                env=env, cwd=cwd, pass_fds=(info_w,), **kwargs,
            )
        finally:
            os.close(info_w)
        self._info_r = info_r
        self._preludes: set[str] = set()  # keys of the preludes this supervisor has already received
        self.child_pid: int | None = None
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self._reader = StreamReader(self.proc.stdout.fileno())
        ready = self._readline(time.monotonic() + _START_TIMEOUT_S)
        if ready is None or not json.loads(ready).get("ready"):
            self.kill()
            raise OSError(f"sandbox worker did not start (exit code {self.proc.poll()})")
        if box.isolation == "bwrap":  # bwrap wrote its info JSON before starting the supervisor
            os.set_blocking(self._info_r, False)
            self.child_pid = read_child_pid(self._info_r)

    def _readline(self, deadline: float) -> bytes | None:
        return self._reader.readline(deadline)

    def run(self, job: dict[str, Any], timeout_s: float) -> ExecResult | None:
        """Run a job; None if the supervisor died or hung (the worker is then dead)."""
        assert self.proc.stdin is not None
        start = time.monotonic()
        self.jobs += 1
        prelude = job.get("prelude")
        if prelude:  # sent once per worker; later jobs name it by key (the verifier's is ~12 KB per job)
            key = hashlib.sha256(prelude.encode()).hexdigest()
            job = {**job, "prelude_key": key}
            if key in self._preludes:
                job["prelude"] = ""
            self._preludes.add(key)
        try:
            self.proc.stdin.write(json.dumps(job).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            self.kill()
            return None
        line = self._readline(start + timeout_s + _GRACE_S)
        if line is None:
            self.kill()
            return None
        reply = json.loads(line)
        if not reply.get("clean", True):  # the job left processes the supervisor could not kill
            self.kill()  # the whole sandbox goes, and its pid namespace with it
        return _from_reply(reply, self.box.isolation)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        kill_group(self.proc)
        self.proc.wait()
        wait_gone(self.child_pid)  # the sandbox's pid namespace is torn down before we return
        with contextlib.suppress(OSError):
            os.close(self._info_r)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        remove_tree(self.work)
        remove_tree(self.grader)


_POOLS: weakref.WeakSet[SandboxPool] = closed_at_exit()  # workers stopped, directories removed, at exit


class SandboxPool:
    """Up to `size` pre-started workers; thread-safe (concurrent runs use different workers).

    Args:
        box: the sandbox whose isolation and limits the workers use.
        size: number of workers kept warm.
        jobs_per_worker: jobs a worker serves before it is replaced.
    """

    def __init__(self, box: SandboxHost, size: int, jobs_per_worker: int) -> None:
        self.box = box
        self.size = size
        self.jobs_per_worker = jobs_per_worker
        self._idle: collections.deque[_Supervisor] = collections.deque()
        self._cond = threading.Condition()
        self._count = 0
        self._closed = False
        self._requests: queue.SimpleQueue[Future[_Supervisor] | None] = queue.SimpleQueue()
        self._spawner = threading.Thread(target=self._spawner_loop, daemon=True, name="rlvr-sandbox-spawner")
        self._spawner.start()
        _POOLS.add(self)

    def _spawner_loop(self) -> None:
        """Start workers on request, always from this one long-lived thread.

        bubblewrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started it
        exits, so a worker started from a short-lived thread would die with that thread.
        """
        while True:
            future = self._requests.get()
            if future is None:
                return
            try:
                future.set_result(_Supervisor(self.box))
            except OSError as exc:
                future.set_exception(exc)

    def _start_worker(self) -> _Supervisor:
        future: Future[_Supervisor] = Future()
        self._requests.put(future)
        return future.result()

    def _spawn_background(self) -> None:
        future: Future[_Supervisor] = Future()

        def done(f: Future[_Supervisor]) -> None:
            if f.exception() is None:
                self._put(f.result())
            else:
                with self._cond:
                    self._count -= 1
                    self._cond.notify()

        future.add_done_callback(done)
        self._requests.put(future)

    def _put(self, worker: _Supervisor) -> None:
        with self._cond:
            if self._closed:
                worker.kill()
                return
            self._idle.append(worker)
            self._cond.notify()

    def _take(self) -> _Supervisor:
        with self._cond:
            while True:
                if self._closed:
                    raise OSError("sandbox pool is closed")
                if self._idle:
                    return self._idle.popleft()
                if self._count < self.size:
                    self._count += 1
                    break
                self._cond.wait()
        try:
            return self._start_worker()
        except OSError:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def warm(self) -> None:
        """Start every worker now and wait until all are ready."""
        taken = []
        with self._cond:
            missing = self.size - self._count
            self._count += missing
        try:
            taken = [self._start_worker() for _ in range(missing)]
        finally:
            for worker in taken:
                self._put(worker)

    def run(self, job: dict[str, Any], timeout_s: float) -> ExecResult:
        """Run one supervisor job; a dead or hung worker is replaced and reported as timeout/error."""
        try:
            worker = self._take()
        except OSError as exc:
            return ExecResult(isolation=self.box.isolation, error=f"could not start a sandbox worker: {exc}")
        start = time.monotonic()
        result = worker.run(job, timeout_s)
        if result is None or not worker.alive or worker.jobs >= self.jobs_per_worker:
            worker.kill()
            self._spawn_background()  # keep the pool pre-started
        else:
            self._put(worker)
        if result is None:
            elapsed = time.monotonic() - start
            if elapsed >= timeout_s:
                return ExecResult(timed_out=True, elapsed_s=elapsed, isolation=self.box.isolation)
            return ExecResult(isolation=self.box.isolation, elapsed_s=elapsed,
                              error=SUPERVISOR_DIED)
        return result

    def close(self) -> None:
        """Kill every idle worker; busy ones are killed when their job returns."""
        with self._cond:
            self._closed = True
            idle, self._idle = list(self._idle), collections.deque()
            self._cond.notify_all()
        for worker in idle:
            worker.kill()
        self._requests.put(None)
