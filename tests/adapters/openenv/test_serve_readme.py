"""The README's `rlvr serve` client example runs, as written, against a served environment."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import rlvr
from openenv_serving import Serving

pytestmark = pytest.mark.extras

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_generic_client_example_plays_an_episode(serve_env: Serving) -> None:
    section = README.read_text().split("## OpenEnv", 1)[1].split("\n## ", 1)[0]
    (code,) = [m for m in re.findall(r"```python\n(.*?)```", section, re.S) if "GenericEnvClient" in m]
    env = rlvr.make("math/reasoning-gym-v1", size=20)
    try:
        with serve_env(env) as (url, _):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code.replace("http://127.0.0.1:8000", url), "README.md", "exec"), {})
    finally:
        env.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].split()[1:] in (["True", "incorrect"], ["True", "correct"])
