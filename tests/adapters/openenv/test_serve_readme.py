"""docs/openenv.md's `rlvr serve` client example runs, as written, against a served environment."""

from __future__ import annotations

import contextlib
import io

import pytest

import rlvr
from doc_blocks import DOCS, page_blocks
from openenv_serving import Serving

pytestmark = pytest.mark.extras



def test_the_readme_generic_client_example_plays_an_episode(serve_env: Serving) -> None:
    (code,) = [b.code for b in page_blocks(DOCS / "openenv.md") if b.lang == "python" and "GenericEnvClient" in b.code]
    env = rlvr.make("math/reasoning-gym-v1", size=20)
    try:
        with serve_env(env) as (url, _):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code.replace("http://127.0.0.1:8000", url), "docs/openenv.md", "exec"), {})
    finally:
        env.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].split()[1:] in (["True", "incorrect"], ["True", "correct"])
