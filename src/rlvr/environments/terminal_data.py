"""Terminal environment factories: `terminal/tbench-v1`, `terminal/harbor-v1`, `terminal/agentbench-os-v1`.

Each reads its task sources (`rlvr.verifiers.terminal.tasks`, `...agentbench`) into `Task` rows whose
reference is a `TerminalReference`, and builds a `TerminalEnv`. Tasks that cannot run here (they need
a container image and none can be used, or their source cannot be read) are left out and listed
with the reason in `env.skipped`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from rlvr.core.errors import ConfigError, DataError
from rlvr.core.types import EnvSpec, Message, Task
from rlvr.environments.terminal import MAX_OUTPUT_CHARS, TerminalEnv
from rlvr.verifiers.registry import VerifierSpec
from rlvr.verifiers.terminal import TerminalReference, TerminalTask, TerminalVerifier, load_task
from rlvr.verifiers.terminal.workspace import container_problem

__all__ = ["TBENCH_SUITE", "make_agentbench_os", "make_harbor", "make_tbench"]

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
                          f"provider, and the verifier options {', '.join(sorted(TerminalConfig.model_fields))}")
    try:
        built = VerifierSpec(name="terminal", config=overrides).build()
    except ConfigError as exc:
        raise ConfigError(f"{env_id}: bad verifier option: {exc}") from exc
    assert isinstance(built, TerminalVerifier)
    return built


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


Provider = Literal["auto", "local", "container"]


def _containers(provider: str) -> bool:
    """Whether tasks that need a container are included ('container' demands a container runtime)."""
    from rlvr.verifiers.terminal.workspace import container_available

    if provider not in ("auto", "local", "container"):
        raise ConfigError(f"provider must be 'auto', 'local' or 'container', got {provider!r}")
    if provider == "local":
        return False
    if container_available():
        return True
    if provider == "container":
        raise ConfigError("provider='container' needs a working podman or docker: install podman (Debian package "
                          "`podman`) or start a docker daemon; provider='auto' leaves those tasks out instead")
    return False


def _build(env_id: str, description: str, references: list[TerminalReference], dataset: str, *,
           system_prompt: str | None, limit: int | None, task_ids: Sequence[str] | str | None, max_turns: int,
           command_timeout_s: float, max_output_chars: int, verifier: TerminalVerifier | None,
           overrides: dict[str, Any], show_tests: bool = False, provider: str = "auto",
           env_class: type[TerminalEnv] = TerminalEnv, **env_options: Any) -> TerminalEnv:
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
    containers = _containers(provider) if needs else False
    for ref, task in loaded:
        if wanted is not None and task.task_id not in wanted:
            continue
        if task.placement != "local":
            why = "no container runtime" if not containers or task.format == "agentbench" else (
                container_problem(task) if provider == "auto" else None)
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
    return env_class(tasks, built, spec, max_turns=max_turns, command_timeout_s=command_timeout_s,
                     max_output_chars=max_output_chars, show_tests=show_tests, skipped=skipped, **env_options)


def make_tbench(tasks_dir: str | Path | None = None, limit: int | None = None,
                task_ids: Sequence[str] | str | None = None, max_turns: int = 30, command_timeout_s: float = 60.0,
                max_output_chars: int = MAX_OUTPUT_CHARS, system_prompt: str | None = TERMINAL_SYSTEM_PROMPT,
                show_tests: bool = False, provider: Provider = "auto", verifier: TerminalVerifier | None = None,
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
        provider: the sandbox provider: 'auto' (local tasks in bubblewrap; tasks that need an image in
            podman/docker when one works here and has their base image, else left out), 'local' (leave those out),
            'container' (require a container runtime; images are built, base images must be pullable).
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
                  verifier=verifier, overrides=verifier_overrides, show_tests=show_tests, provider=provider)


def make_harbor(tasks_dir: str | Path, limit: int | None = None, task_ids: Sequence[str] | str | None = None,
                max_turns: int = 30, command_timeout_s: float = 60.0, max_output_chars: int = MAX_OUTPUT_CHARS,
                system_prompt: str | None = TERMINAL_SYSTEM_PROMPT, show_tests: bool = False,
                provider: Provider = "auto", verifier: TerminalVerifier | None = None,
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
                  verifier=verifier, overrides=verifier_overrides, show_tests=show_tests, provider=provider)


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
