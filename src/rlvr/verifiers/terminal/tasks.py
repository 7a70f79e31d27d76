"""Reading Terminal-Bench and Harbor task directories into `TerminalTask`s.

- Terminal-Bench (PyPI `terminal-bench` 0.2, `terminal_bench/handlers/trial_handler.py`):
  `task.yaml` (`instruction`, `max_agent_timeout_sec` default 360, `max_test_timeout_sec`
  default 60, `parser_name` default pytest, `run_tests_in_same_shell`), `Dockerfile` (build
  context: the task directory), `docker-compose.yaml`, `run-tests.sh`, `tests/`, `solution.sh`
  (or `solution.yaml`, keystrokes: no replayable solution). The oracle runs
  `bash /oracle/solution.sh` from the working directory, as Terminal-Bench's `OracleAgent` does.
- Harbor (PyPI `harbor`, `harbor/models/task/paths.py`, `config.py`): `instruction.md`,
  `task.toml` (`[agent] timeout_sec`, `[verifier] timeout_sec` default 600 and `env`,
  `[environment] docker_image`, `workdir`, `env`), `environment/Dockerfile` (build context
  `environment/`), `tests/test.sh` writing `/logs/verifier/reward.txt` or `reward.json`,
  `solution/solve.sh` (run as `bash /solution/solve.sh`).

`load_task(reference)` reads a task once per (path, modification time) and caches it, so
grading many rollouts of one task does not re-parse it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path
from typing import Any

from rlvr.core.errors import DataError
from rlvr.verifiers.terminal.dockerfile import read_dockerfile
from rlvr.verifiers.terminal.spec import TerminalReference, TerminalTask
from rlvr.verifiers.terminal.testscript import plan_tests

__all__ = ["load_harbor"]

_MAX_SOLUTION_BYTES = 4 << 20


def task_format(path: Path) -> str | None:
    """'tbench' for a Terminal-Bench task directory, 'harbor' for a Harbor one, else None."""
    if (path / "task.yaml").is_file():
        return "tbench"
    if (path / "task.toml").is_file() and (path / "instruction.md").is_file():
        return "harbor"
    return None


def find_task_dirs(root: str | os.PathLike[str], fmt: str | None = None) -> list[Path]:
    """Task directories directly under `root` (or `root` itself when it is one), sorted by name.

    Raises:
        DataError: `root` is not a directory, or holds no task of the wanted format.
    """
    base = Path(root).expanduser()
    if not base.is_dir():
        raise DataError(f"tasks_dir {str(base)!r} is not a directory; pass the folder that holds the task folders")
    if task_format(base) is not None and (fmt is None or task_format(base) == fmt):
        return [base.resolve()]
    found = sorted(p.resolve() for p in base.iterdir() if p.is_dir() and task_format(p) is not None
                   and (fmt is None or task_format(p) == fmt))
    if not found:
        want = {"tbench": "Terminal-Bench (task.yaml)", "harbor": "Harbor (task.toml + instruction.md)"}.get(
            fmt or "", "task")
        raise DataError(f"no {want} directories found in {str(base)!r}")
    return found


def _yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: cannot read task.yaml ({exc})") from exc
    if not isinstance(data, dict):
        raise DataError(f"{path}: task.yaml must be a mapping with an 'instruction' key")
    return data


def _toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read task.toml ({exc})") from exc


def _number(data: dict[str, Any], key: str, default: float, where: Path) -> float:
    value = data.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise DataError(f"{where}: {key} must be a positive number of seconds, got {value!r}")
    return float(value)


def _solution(files: dict[Path, str]) -> dict[str, str]:
    out = {}
    for path, name in files.items():
        if path.stat().st_size > _MAX_SOLUTION_BYTES:
            raise DataError(f"{path}: the reference solution is larger than {_MAX_SOLUTION_BYTES} bytes")
        out[name] = path.read_text(encoding="utf-8", errors="replace")
    return out


def _compose_services(path: Path) -> int:
    import yaml

    if not path.is_file():
        return 1
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return 1
    services = data.get("services") if isinstance(data, dict) else None
    return len(services) if isinstance(services, dict) else 1


def load_tbench(task_dir: str | os.PathLike[str], python: str | None = None) -> TerminalTask:
    """Read one Terminal-Bench task directory.

    Raises:
        DataError: task.yaml is missing or malformed, or run-tests.sh / the Dockerfile cannot be read.
    """
    from rlvr.sandbox.isolation import sandbox_python

    root = Path(task_dir).resolve()
    config = _yaml(root / "task.yaml")
    instruction = config.get("instruction")
    if not instruction and isinstance(config.get("descriptions"), list):  # the older task.yaml layout
        base = [d for d in config["descriptions"] if isinstance(d, dict) and d.get("key", "base") == "base"]
        instruction = base[0].get("description") if base else None
    if not isinstance(instruction, str) or not instruction.strip():
        raise DataError(f"{root / 'task.yaml'}: 'instruction' must be a non-empty string")
    reasons: list[str] = []
    if config.get("parser_name", "pytest") != "pytest":
        reasons.append(f"parser_name {config['parser_name']!r}: only pytest results are graded")
    if config.get("run_tests_in_same_shell"):
        reasons.append("run_tests_in_same_shell: the tests need the agent's live shell, which rlvr stops first")
    docker = read_dockerfile(root / "Dockerfile", root, python or sandbox_python(None))
    services = _compose_services(root / "docker-compose.yaml")
    if services > 1:
        docker.container_reasons.append(f"docker-compose.yaml defines {services} services")
    workdir = docker.workdir or "/app"
    cwd = docker.cwd or workdir
    run_tests = root / "run-tests.sh"
    if not run_tests.is_file():
        raise DataError(f"{root}: run-tests.sh is missing (Terminal-Bench runs it to grade the task)")
    plan = plan_tests(run_tests.read_text(encoding="utf-8"), root / "tests", cwd=cwd, env=docker.env)
    solution = root / "solution.sh"
    files = _solution({solution: "solution.sh"}) if solution.is_file() else {}
    return TerminalTask(
        task_id=root.name, format="tbench", instruction=instruction.strip(), workdir=workdir, cwd=cwd,
        setup=tuple(docker.steps),
        env=docker.env, tests=plan, solution_files=files, solution_entry="solution.sh" if files else None,
        solution_dir="/oracle", agent_timeout_s=_number(config, "max_agent_timeout_sec", 360.0, root),
        test_timeout_s=_number(config, "max_test_timeout_sec", 60.0, root),
        placement="container" if reasons + docker.container_reasons else "local",
        placement_reason="; ".join(reasons + docker.container_reasons), image=docker.image,
        dockerfile=str(root / "Dockerfile"), source=str(root),
        metadata={k: config[k] for k in ("difficulty", "category", "tags") if k in config} | {
            "setup_notes": docker.notes})


def load_harbor(task_dir: str | os.PathLike[str], python: str | None = None) -> TerminalTask:
    """Read one Harbor task directory.

    Raises:
        DataError: instruction.md, task.toml or tests/test.sh is missing or malformed.
    """
    from rlvr.sandbox.isolation import sandbox_python

    root = Path(task_dir).resolve()
    try:
        instruction = (root / "instruction.md").read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{root}: cannot read instruction.md ({exc})") from exc
    config = _toml(root / "task.toml")
    if config.get("steps"):
        raise DataError(f"{root}: multi-step Harbor tasks are not supported")
    agent, verifier, environment = (config.get(k) or {} for k in ("agent", "verifier", "environment"))
    reasons = []
    if environment.get("docker_image"):
        reasons.append(f"task.toml names a prebuilt image {environment['docker_image']!r}")
    dockerfile = root / "environment" / "Dockerfile"
    if dockerfile.is_file():
        docker = read_dockerfile(dockerfile, root / "environment", python or sandbox_python(None))
    elif not reasons:
        raise DataError(f"{root}: environment/Dockerfile is missing and task.toml names no docker_image")
    else:
        from rlvr.verifiers.terminal.dockerfile import DockerPlan

        docker = DockerPlan(image=environment["docker_image"])
    services = _compose_services(root / "environment" / "docker-compose.yaml")
    if services > 1:
        reasons.append(f"environment/docker-compose.yaml defines {services} services")
    workdir = docker.workdir or environment.get("workdir") or "/app"
    cwd = environment.get("workdir") or docker.cwd or workdir
    env = {**docker.env, **{str(k): str(v) for k, v in (environment.get("env") or {}).items()}}
    test_sh = root / "tests" / "test.sh"
    if not test_sh.is_file():
        raise DataError(f"{root}: tests/test.sh is missing (Harbor runs it to grade the task)")
    plan = plan_tests(test_sh.read_text(encoding="utf-8"), root / "tests", cwd=cwd,
                      env={**env, **{str(k): str(v) for k, v in (verifier.get("env") or {}).items()}},
                      reward_file=True, name="tests/test.sh")
    sol_dir = root / "solution"
    files = _solution({p: str(p.relative_to(sol_dir)) for p in sorted(sol_dir.rglob("*")) if p.is_file()}) \
        if sol_dir.is_dir() else {}
    entry = "solve.sh" if "solve.sh" in files else None
    return TerminalTask(
        task_id=root.name, format="harbor", instruction=instruction.strip(), workdir=workdir, cwd=cwd,
        setup=tuple(docker.steps),
        env=env, tests=plan, solution_files=files if entry else {}, solution_entry=entry, solution_dir="/solution",
        agent_timeout_s=_number(agent, "timeout_sec", 600.0, root), test_timeout_s=_number(verifier, "timeout_sec",
                                                                                            600.0, root),
        placement="container" if reasons + docker.container_reasons else "local",
        placement_reason="; ".join(reasons + docker.container_reasons), image=docker.image,
        dockerfile=str(dockerfile) if dockerfile.is_file() else None, source=str(root),
        metadata={"setup_notes": docker.notes, **(config.get("metadata") or {})})


_SOURCE_FILES = (".", "tests", "task.yaml", "task.toml", "instruction.md", "Dockerfile", "run-tests.sh",
                 "solution.sh", "docker-compose.yaml", "environment/Dockerfile", "tests/test.sh", "solution")
"""What a task is read from: a change to any of them (or to the folders' listings) reads it again."""


def _mtime(path: str) -> float:
    times = []
    for name in _SOURCE_FILES:
        with contextlib.suppress(OSError):
            times.append(os.stat(os.path.join(path, name)).st_mtime_ns)
    return float(max(times, default=0))


@functools.lru_cache(maxsize=1024)
def _load_cached(fmt: str, path: str, mtime: float) -> TerminalTask:
    try:
        return load_tbench(path) if fmt == "tbench" else load_harbor(path)
    except DataError as exc:
        name = Path(path).name
        raise DataError(str(exc) if str(exc).startswith((path, name)) else f"task {name}: {exc}") from exc


def load_task(reference: TerminalReference | dict[str, Any]) -> TerminalTask:
    """The `TerminalTask` a reference points to (cached per path and modification time).

    Raises:
        DataError: the reference is malformed or its source cannot be read.
    """
    ref = reference if isinstance(reference, TerminalReference) else _reference(reference)
    if ref.format == "agentbench":
        from rlvr.verifiers.terminal.agentbench_run import agentbench_task

        assert ref.split is not None and ref.record_id is not None
        return agentbench_task(ref.split, ref.record_id, ref.data_dir)
    assert ref.task_dir is not None
    return _load_cached(ref.format, ref.task_dir, _mtime(ref.task_dir))


def _reference(data: Any) -> TerminalReference:
    from pydantic import ValidationError

    if not isinstance(data, dict):
        raise DataError(f"a terminal reference must be an object like {{'format': 'tbench', 'task_dir': ...}}, got "
                        f"{type(data).__name__}")
    try:
        return TerminalReference.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reference'}: {e['msg']}" for e in exc.errors())
        raise DataError(f"bad terminal reference: {problems}") from exc
