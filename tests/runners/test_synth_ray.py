"""`rlvr synth --engine ray` on a real loopback Ray cluster gives the files of the local engine."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.extras, pytest.mark.slow]

if importlib.util.find_spec("ray") is None:
    pytest.skip("ray is not installed (pip install 'rlvr[ray]')", allow_module_level=True)


def _rows(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        if isinstance(row.get("verdict"), dict):
            row["verdict"].pop("elapsed_s")  # timing differs between engines; everything else must not
    return rows


def test_synth_with_ray_engine_writes_the_local_rows(tmp_path: Path) -> None:
    from rlvr.runners.engine.loopback import loopback_cluster

    base = [sys.executable, "-m", "rlvr.runners.cli", "synth", "--env", "math/reasoning-gym-tool-v1", "-a", "size=4",
            "--policy", "oracle", "-n", "2"]
    local = subprocess.run([*base, "-o", str(tmp_path / "local")], capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr
    with loopback_cluster(nodes=1, cpus_per_node=1) as cluster:
        ray = subprocess.run([*base, "-o", str(tmp_path / "ray"), "--engine", "ray", "--ray-address", cluster.address,
                              "--workers", "1"], env=cluster.env, capture_output=True, text=True, timeout=300)
    assert ray.returncode == 0, ray.stderr
    for name in ("sft.jsonl", "rl.jsonl"):
        assert _rows(tmp_path / "ray" / name) == _rows(tmp_path / "local" / name), name
    assert len(_rows(tmp_path / "ray" / "sft.jsonl")) == 8
