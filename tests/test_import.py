"""`import rlvr` is light and side-effect free; the CLI module imports no trainer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ["torch", "transformers", "trl", "vllm", "sympy"]

PROBE = """
import json, logging, os, sys
env_before = dict(os.environ)
import {module}
root = logging.getLogger()
print(json.dumps({{
    "heavy": [m for m in {heavy!r} if m in sys.modules],
    "root_handlers": len(root.handlers),
    "root_level": root.level,
    "env_changed": dict(os.environ) != env_before,
}}))
"""


def _probe(module: str, heavy: list[str], cwd: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", PROBE.format(module=module, heavy=heavy)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr  # no warnings or log lines on import
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_import_rlvr_is_light_and_side_effect_free(tmp_path: Path) -> None:
    result = _probe("rlvr", HEAVY, tmp_path)
    assert result == {"heavy": [], "root_handlers": 0, "root_level": 30, "env_changed": False}
    assert list(tmp_path.iterdir()) == []  # no files written


@pytest.mark.parametrize("module", ["rlvr.runners.cli", "rlvr.environments", "rlvr.verifiers.registry"])
def test_cli_and_environments_import_no_trainer(module: str, tmp_path: Path) -> None:
    result = _probe(module, ["torch", "transformers", "trl", "vllm"], tmp_path)
    assert result["heavy"] == [] and result["root_handlers"] == 0
    assert list(tmp_path.iterdir()) == []
