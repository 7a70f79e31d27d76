"""Terminal sandbox: a persistent shell versus a fresh bubblewrap sandbox per command.

Three ways to run a stream of agent commands, measured in interleaved rounds on this machine
(ratios within one run are what to compare; absolute numbers move with machine load):

- `persistent`: one `SandboxSession` (bubblewrap, pid-1 supervisor, bash on a pty); each command is
  sourced in the same shell (`SandboxSession.run`); its start-up is reported separately;
- `fresh bwrap`: `LocalSandbox(pool_size=0).run(["bash", "-c", command])`: a new bubblewrap sandbox
  (namespaces, mounts, rlimits via prlimit, wall-clock watchdog) per command; no shell state survives;
- `fresh session`: a new `SandboxSession` per command (start, shell, run, close): what a
  persistent-shell design would cost if it restarted for every command.

Commands: `true` (pure overhead), `echo`, a small pipeline (`seq 1 1000 | sort -r | head -3`) and
`python3 -c 'print(1)'` (an interpreter start). Then one whole episode of a shipped task: prepare
the sandbox (setup steps), replay solution.sh, stop and export, grade in a fresh sandbox.

Usage:
    python benchmarks/terminal_env.py [--commands 200] [--rounds 3] [--task dedupe-emails]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from rlvr.sandbox import LocalSandbox
from rlvr.sandbox.session import SandboxSession

COMMANDS = {"true": "true", "echo": "echo hello", "pipeline": "seq 1 1000 | sort -r | head -3",
            "python3": "python3 -c 'print(1)'"}


def _persistent(session: SandboxSession, command: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        result = session.run(command, timeout_s=30.0)
        times.append(time.perf_counter() - start)
        assert result.exit_code == 0, result
    return times


def _fresh_bwrap(box: LocalSandbox, command: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        result = box.run(["bash", "-c", command], timeout_s=30.0)
        times.append(time.perf_counter() - start)
        assert result.ok, result
    return times


def _fresh_session(command: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        with SandboxSession() as session:
            session.start_shell()
            assert session.run(command, timeout_s=30.0).exit_code == 0
        times.append(time.perf_counter() - start)
    return times


def _ms(values: list[float], q: float) -> float:
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, int(q * len(values)))]


def _episode(task_name: str) -> dict[str, float]:
    from rlvr.environments.terminal_data import TBENCH_SUITE
    from rlvr.verifiers.terminal import TaskSession, TerminalVerifier, load_tbench, oracle_command

    task = load_tbench(TBENCH_SUITE / task_name)
    verifier = TerminalVerifier()
    ref = {"format": "tbench", "task_dir": str(TBENCH_SUITE / task_name)}
    t0 = time.perf_counter()
    session = TaskSession(task).start()
    t1 = time.perf_counter()
    session.run(oracle_command(task), timeout_s=120.0)
    t2 = time.perf_counter()
    tar = session.finish()
    t3 = time.perf_counter()
    verdict = verifier.grade(ref, tar)
    t4 = time.perf_counter()
    session.close()
    assert verdict.status == "correct", verdict.detail
    return {"prepare": t1 - t0, "solution": t2 - t1, "stop + export": t3 - t2, "grade (fresh sandbox)": t4 - t3,
            "episode total": t4 - t0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commands", type=int, default=200, help="commands per method, per command kind, per round")
    parser.add_argument("--fresh-sessions", type=int, default=20, help="commands for the fresh-session method")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--task", default="dedupe-emails", help="shipped task for the whole-episode timing")
    args = parser.parse_args()
    console = Console(width=150)
    box = LocalSandbox(pool_size=0, require_full_isolation=True)
    starts = []
    samples: dict[tuple[str, str], list[float]] = {}
    for _round in range(args.rounds):
        t = time.perf_counter()
        session = SandboxSession().start()
        session.start_shell()
        starts.append(time.perf_counter() - t)
        try:
            for kind, command in COMMANDS.items():
                runs: list[tuple[str, Callable[[], list[float]]]] = [
                    ("persistent", lambda c=command, s=session: _persistent(s, c, args.commands)),
                    ("fresh bwrap", lambda c=command: _fresh_bwrap(box, c, args.commands)),
                    ("fresh session", lambda c=command: _fresh_session(c, args.fresh_sessions)),
                ]
                for method, run in runs:
                    samples.setdefault((kind, method), []).extend(run())
        finally:
            session.close()
    table = Table(title=f"terminal commands ({args.rounds} interleaved rounds; isolation {box.describe()})")
    for column in ("command", "method", "n", "commands/s", "mean ms", "p50 ms", "p95 ms", "vs persistent"):
        table.add_column(column, justify="left" if column in ("command", "method") else "right")
    for kind in COMMANDS:
        base = statistics.mean(samples[(kind, "persistent")])
        for method in ("persistent", "fresh bwrap", "fresh session"):
            values = samples[(kind, method)]
            mean = statistics.mean(values)
            table.add_row(kind, method, str(len(values)), f"{1 / mean:.0f}", f"{1000 * mean:.2f}",
                          f"{_ms(values, 0.5):.2f}", f"{_ms(values, 0.95):.2f}", f"{mean / base:.1f}x")
    console.print(table)
    console.print(f"persistent session start-up (sandbox + supervisor + shell): mean "
                  f"{1000 * statistics.mean(starts):.1f} ms over {len(starts)} starts")
    episode = Table(title=f"one episode of {args.task} (oracle), seconds")
    episode.add_column("stage")
    episode.add_column("s", justify="right")
    for stage, seconds in _episode(args.task).items():
        episode.add_row(stage, f"{seconds:.3f}")
    console.print(episode)


if __name__ == "__main__":
    main()
