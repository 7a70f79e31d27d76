"""`rlvr verify` survives kill -9: rerun the same command, and every input line is there once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

N_ROWS = 300

SLOW_VERIFIER = textwrap.dedent(
    '''
    import functools
    import time

    from rlvr.core.types import Verdict
    from rlvr.verifiers.base import PooledVerifier, VerifierConfig


    def _score(delay, response, reference):
        time.sleep(delay)
        ok = response.strip() == str(reference).strip()
        return Verdict(status="correct" if ok else "incorrect", reward=float(ok))


    class SlowVerifier(PooledVerifier):
        name = "slow"

        def __init__(self, delay=0.01, **config):
            super().__init__(VerifierConfig(**config))
            self.delay = delay

        def scorer(self):
            return functools.partial(_score, self.delay)
    '''
)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.slow
def test_kill_9_then_resume(tmp_path: Path) -> None:
    (tmp_path / "slow_rlvr_verifier.py").write_text(SLOW_VERIFIER)
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"i": i, "response": str(i), "reference": str(i)}) + "\n" for i in range(N_ROWS)))
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "rlvr.runners.cli", "verify", str(inp), "-o", str(out),
           "--verifier", "slow_rlvr_verifier:SlowVerifier", "--verifier-arg", "delay=0.02", "--batch-size", "4",
           "--workers", "2"]

    proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _lines(out) < 40 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
    written = _lines(out)
    assert 40 <= written < N_ROWS, f"kill came too late to test resuming ({written} rows written)"

    with out.open("a") as f:  # as if the kill landed mid-write
        f.write('{"i": 123, "_line": 124, "verd')

    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["_line"] for r in rows] == list(range(1, N_ROWS + 1))  # each line once, in input order
    assert [r["i"] for r in rows] == list(range(N_ROWS))
    assert all(r["verdict"]["status"] == "correct" for r in rows)
    assert f"{written} / {N_ROWS - written}" in done.stdout
