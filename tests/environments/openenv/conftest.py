"""Real foreign OpenEnv servers for the `openenv/remote-v1` tests, made with OpenEnv's own template.

`openenv init` generates the echo environment (one text field `message`, never done, max one
session); a copy of it is edited into a "tool" environment (action `message: str` + `repeat: int`,
a reward, done on "stop", the task API with three tasks, up to 4 sessions). Each runs under
`uvicorn server.app:app` on a free loopback port, as a subprocess whose cwd is the generated env.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

try:  # `openenv.core`, not `openenv`: the test folders named openenv are namespace packages on sys.path
    import openenv.core  # noqa: F401
except ImportError:  # the core venv: nothing here is collected
    collect_ignore_glob = ["test_*.py"]
else:
    from openenv_serving import free_port, start_server, stop_server

TOOL_MODELS = '''
from openenv.core.env_server.types import Action, Observation
from pydantic import Field


class ToolAction(Action):
    """Say a message some number of times."""

    message: str = Field(..., description="What to say ('stop' ends the episode)")
    repeat: int = Field(..., ge=1, description="How many times to say it")


class ToolObservation(Observation):
    """What the environment heard."""

    echoed_message: str = Field(default="", description="The message, repeated")
'''

TOOL_ENVIRONMENT = '''
import time
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import State

try:
    from ..models import ToolAction, ToolObservation
except ImportError:
    from models import ToolAction, ToolObservation


class ToolEnvironment(Environment):
    """reward = repeat / 4 per step ('none' gives no reward), done on 'stop'; 'crash' raises, 'sleep' hangs."""

    SUPPORTS_CONCURRENT_SESSIONS: bool = True

    def __init__(self):
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, split: Optional[str] = None,
              index: Optional[int] = None, **kwargs: Any) -> ToolObservation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return ToolObservation(echoed_message=f"task {index or 0}: say things, then stop", done=False)

    def step(self, action: ToolAction) -> ToolObservation:  # type: ignore[override]
        self._state.step_count += 1
        if action.message == "crash":
            raise RuntimeError("the environment crashed")
        if action.message == "sleep":
            time.sleep(5)
        reward = None if action.message == "none" else action.repeat * 0.25
        return ToolObservation(echoed_message=action.message * action.repeat, done=action.message == "stop",
                                  reward=reward)

    @property
    def state(self) -> State:
        return self._state

    def list_splits(self) -> list[str]:
        return ["train"]

    def num_tasks(self, split: str) -> int:
        return 3

    def get_task_range(self, split: str, start: Optional[int], stop: Optional[int]) -> list[dict[str, Any]]:
        return [{"index": i, **({"id": f"custom-{i}"} if i == 2 else {})} for i in range(start or 0, min(stop or 3, 3))]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return self.get_task_range(split, 0, 3)

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        return self.get_task_range(split, index, index + 1)[0]
'''


def openenv_init(name: str, out: Path) -> Path:
    """`openenv init NAME -o OUT` (OpenEnv's own CLI); returns the generated env folder."""
    cli = Path(sys.executable).with_name("openenv")
    subprocess.run([str(cli), "init", name, "-o", str(out)], check=True, capture_output=True, timeout=120)
    return out / name


def start_uvicorn(env_dir: Path) -> tuple[subprocess.Popen[str], str]:
    """`uvicorn server.app:app` on a free loopback port, cwd = the env; returns (process, URL) once healthy."""
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "warning"]
    return start_server(argv, port, cwd=env_dir), f"http://127.0.0.1:{port}"


@pytest.fixture
def closed_url() -> str:
    """A loopback URL where nothing listens."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture(scope="session")
def echo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `openenv init` echo template, as generated (max_concurrent_envs=1)."""
    return openenv_init("echo_env", tmp_path_factory.mktemp("openenv"))


@pytest.fixture(scope="session")
def tool_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the template edited to a two-field action with reward, done and the task API."""
    env = openenv_init("tool_env", tmp_path_factory.mktemp("openenv"))
    (env / "models.py").write_text(TOOL_MODELS)
    (env / "server" / "tool_env_environment.py").write_text(TOOL_ENVIRONMENT)
    app = env / "server" / "app.py"
    app.write_text(app.read_text().replace("max_concurrent_envs=1", "max_concurrent_envs=4"))
    return env


@pytest.fixture(scope="session")
def echo_url(echo_dir: Path) -> Iterator[str]:
    proc, url = start_uvicorn(echo_dir)
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def tool_url(tool_dir: Path) -> Iterator[str]:
    proc, url = start_uvicorn(tool_dir)
    yield url
    stop_server(proc)


@pytest.fixture
def own_tool_server(tool_dir: Path) -> Iterator[Callable[[], tuple[subprocess.Popen[bytes], str]]]:
    """Start private tool servers (a test may kill them); all are stopped afterwards."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> tuple[subprocess.Popen[bytes], str]:
        proc, url = start_uvicorn(tool_dir)
        started.append(proc)
        return proc, url

    yield start
    for proc in started:
        stop_server(proc)



@pytest.fixture(scope="session")
def serve_rlvr() -> Callable[..., Any]:
    """`rlvr serve`'s own test server (`tests/openenv_serving.serving`): `with serve_rlvr(env) as (url, host): ...`
    serves an rlvr env instance on loopback."""
    from openenv_serving import serving

    return serving
